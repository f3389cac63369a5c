// The chat: a multi-turn conversation streamed from /v1/chat/completions,
// rendered as Markdown with highlighted code, with the sampling settings and
// each reply's figures (prompt and cached tokens from `usage`; time to first
// token and tokens per second as this page measured them).
"use strict";

const Chat = (() => {
  const history = [];  // {role, content} of the turns so far
  let running = null;  // the AbortController of the reply being streamed
  let conversation = 0;  // counts "New chat"s: a reply aborted by one is not kept

  const $ = (id) => document.getElementById(id);

  function escapeHtml(text) {
    return text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);
  }

  // Model output is untrusted: raw HTML is shown as text, links may only
  // be http(s) or mailto, and images become links (the page loads nothing
  // from elsewhere).
  function safeUrl(href) {
    return /^(https?:|mailto:)/i.test(href || "") ? href : null;
  }
  marked.use({
    renderer: {
      html: (html) => escapeHtml(html),
      link(href, title, text) {
        const url = safeUrl(href);
        if (!url) return text;
        const titleAttribute = title ? ` title="${escapeHtml(title)}"` : "";
        return `<a href="${escapeHtml(url)}"${titleAttribute} rel="noopener noreferrer" target="_blank">${text}</a>`;
      },
      image(href, title, text) {
        const url = safeUrl(href);
        const label = escapeHtml(text || href || "image");
        return url ? `<a href="${escapeHtml(url)}" rel="noopener noreferrer" target="_blank">[${label}]</a>` : `[${label}]`;
      },
    },
  });
  marked.setOptions({
    gfm: true,
    breaks: true,
    headerIds: false,
    mangle: false,
    langPrefix: "hljs language-",
    highlight(code, language) {
      if (language && hljs.getLanguage(language)) return hljs.highlight(language, code, true).value;
      return escapeHtml(code);
    },
  });

  // A reply cut off inside a code block (still streaming, or at max_tokens)
  // is shown as code: the open fence is closed for rendering.
  function closeOpenFence(text) {
    const fences = text.match(/^ {0,3}(`{3,}|~{3,})/gm) || [];
    if (fences.length % 2 === 0) return text;
    return text + "\n" + fences[fences.length - 1].trim();
  }

  function render(text) {
    return marked.parse(closeOpenFence(text));
  }

  function addMessage(role, text) {
    const element = document.createElement("div");
    element.className = "message " + role;
    const body = document.createElement("div");
    body.className = "body";
    if (role === "user") body.textContent = text;
    else body.innerHTML = render(text);
    element.appendChild(body);
    $("messages").appendChild(element);
    element.scrollIntoView({ block: "end" });
    return element;
  }

  function showError(message) {
    const box = $("chat-error");
    box.textContent = message;
    box.hidden = !message;
  }

  function numberField(id, parse) {
    const raw = $(id).value.trim();
    if (raw === "") return undefined;
    const value = parse(raw);
    return Number.isFinite(value) ? value : undefined;
  }

  function requestBody() {
    const messages = [];
    const system = $("system-prompt").value.trim();
    if (system) messages.push({ role: "system", content: system });
    messages.push(...history);
    const body = {
      messages,
      stream: true,
      stream_options: { include_usage: true },
    };
    const fields = {
      temperature: numberField("temperature", parseFloat),
      top_p: numberField("top-p", parseFloat),
      max_tokens: numberField("max-tokens", (v) => parseInt(v, 10)),
      seed: numberField("seed", (v) => parseInt(v, 10)),
    };
    for (const [name, value] of Object.entries(fields)) if (value !== undefined) body[name] = value;
    return body;
  }

  function figuresText(usage, started, firstToken, finished, finishReason) {
    const parts = [];
    if (usage) {
      const cached = (usage.prompt_tokens_details && usage.prompt_tokens_details.cached_tokens) || 0;
      parts.push(`${usage.prompt_tokens} prompt tokens (${cached} cached)`);
      parts.push(`${usage.completion_tokens} generated`);
    }
    if (firstToken !== null) {
      parts.push(`TTFT ${Math.round(firstToken - started)} ms`);
      const tokens = usage ? usage.completion_tokens : null;
      const seconds = (finished - firstToken) / 1000;
      if (tokens > 1 && seconds > 0) parts.push(`${((tokens - 1) / seconds).toFixed(1)} tokens/s`);
    }
    if (finishReason) parts.push(finishReason);
    return parts.join(" · ");
  }

  function setRunning(controller) {
    running = controller;
    $("send").hidden = controller !== null;
    $("stop").hidden = controller === null;
  }

  async function send(onUnauthorized) {
    const prompt = $("prompt").value;
    if (running || prompt.trim() === "") return;
    showError("");
    $("prompt").value = "";
    history.push({ role: "user", content: prompt });
    addMessage("user", prompt);

    const reply = addMessage("assistant", "");
    reply.classList.add("streaming");
    const body = reply.querySelector(".body");
    // A reasoning model's thinking (`reasoning_content`), folded away above
    // the answer; only the answer goes back into the conversation.
    const thinking = document.createElement("details");
    thinking.className = "reasoning";
    thinking.hidden = true;
    thinking.innerHTML = "<summary>Reasoning</summary><div></div>";
    reply.insertBefore(thinking, body);
    const figures = document.createElement("div");
    figures.className = "figures";
    reply.appendChild(figures);

    let text = "";
    let reasoning = "";
    let usage = null;
    let finishReason = null;
    let firstToken = null;
    let renderQueued = false;
    const started = performance.now();
    const ofConversation = conversation;
    const controller = new AbortController();
    setRunning(controller);
    const paint = () => {
      body.innerHTML = render(text);
      if (reasoning) {
        thinking.hidden = false;
        thinking.lastChild.textContent = reasoning;
      }
    };
    // At most one render a frame, however fast the tokens come.
    const queueRender = () => {
      if (renderQueued) return;
      renderQueued = true;
      requestAnimationFrame(() => {
        renderQueued = false;
        paint();
        reply.scrollIntoView({ block: "end" });
      });
    };
    try {
      await Api.stream("/v1/chat/completions", requestBody(), controller.signal, (chunk) => {
        if (chunk.usage) usage = chunk.usage;
        for (const choice of chunk.choices || []) {
          const delta = choice.delta || {};
          if (delta.content || delta.reasoning_content) {
            if (firstToken === null) firstToken = performance.now();
            text += delta.content || "";
            reasoning += delta.reasoning_content || "";
            queueRender();
          }
          if (choice.finish_reason) finishReason = choice.finish_reason;
        }
      });
    } catch (error) {
      if (error.name === "AbortError") {
        finishReason = "stopped";
      } else {
        showError(error.message);
        if (error.status === 401) onUnauthorized();
        if (text === "" && reasoning === "") {  // nothing came: take the turn back to resend it
          history.pop();
          reply.remove();
          $("prompt").value = prompt;
          setRunning(null);
          return;
        }
        finishReason = "error";
      }
    }
    setRunning(null);
    if (ofConversation !== conversation) return;
    paint();
    reply.classList.remove("streaming");
    history.push({ role: "assistant", content: text });
    figures.textContent = figuresText(usage, started, firstToken, performance.now(), finishReason);
  }

  function init(onUnauthorized) {
    $("composer").addEventListener("submit", (event) => {
      event.preventDefault();
      send(onUnauthorized);
    });
    $("prompt").addEventListener("keydown", (event) => {
      if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
        event.preventDefault();
        send(onUnauthorized);
      }
    });
    $("stop").addEventListener("click", () => running && running.abort());
    $("new-chat").addEventListener("click", () => {
      if (running) running.abort();
      conversation += 1;
      history.length = 0;
      $("messages").replaceChildren();
      showError("");
    });
  }

  return { init, render };
})();
