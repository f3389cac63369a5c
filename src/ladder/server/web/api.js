// Calls to the server's own API. Same origin only (the page's CSP allows
// nothing else); with an API key, every call carries it as a Bearer token.
"use strict";

const Api = (() => {
  const storageName = "ladder.apiKey";  // this tab only: gone when it closes
  let apiKey = sessionStorage.getItem(storageName) || "";

  class ApiError extends Error {
    constructor(status, message) {
      super(message);
      this.status = status;
    }
  }

  function headers(extra = {}) {
    const out = { ...extra };
    if (apiKey) out.Authorization = "Bearer " + apiKey;
    return out;
  }

  async function errorOf(response) {
    let message = `${response.status} ${response.statusText}`;
    try {
      const body = await response.json();
      if (body && body.error && body.error.message) message = body.error.message;
    } catch (_) {
      // not JSON: the status line says enough
    }
    return new ApiError(response.status, message);
  }

  async function get(path) {
    const response = await fetch(path, { headers: headers(), cache: "no-store" });
    if (!response.ok) throw await errorOf(response);
    return response;
  }

  // Server-sent events of a streamed completion: onChunk gets each JSON
  // chunk as it arrives; resolves after [DONE], rejects on an error (an
  // AbortError when signal aborts it).
  async function stream(path, body, signal, onChunk) {
    const response = await fetch(path, {
      method: "POST",
      headers: headers({ "Content-Type": "application/json", Accept: "text/event-stream" }),
      body: JSON.stringify(body),
      signal,
    });
    if (!response.ok) throw await errorOf(response);
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    let buffered = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffered += decoder.decode(value, { stream: true }).replace(/\r\n/g, "\n");
      let end;
      while ((end = buffered.indexOf("\n\n")) >= 0) {
        const event = buffered.slice(0, end);
        buffered = buffered.slice(end + 2);
        const data = event.split("\n")
          .filter((line) => line.startsWith("data:"))
          .map((line) => line.slice(5).replace(/^ /, ""))
          .join("\n");
        if (!data) continue;
        if (data === "[DONE]") return;
        const chunk = JSON.parse(data);
        if (chunk.error) throw new ApiError(500, chunk.error.message);  // the engine failed
        onChunk(chunk);
      }
    }
    throw new ApiError(0, "the stream ended before [DONE]");
  }

  return {
    ApiError,
    hasKey: () => apiKey !== "",
    setKey(key) {
      apiKey = key;
      if (key) sessionStorage.setItem(storageName, key);
      else sessionStorage.removeItem(storageName);
    },
    async getJson(path) { return (await get(path)).json(); },
    async getText(path) { return (await get(path)).text(); },
    stream,
  };
})();
