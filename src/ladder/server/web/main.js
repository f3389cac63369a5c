// The page's start: the tabs, and the API key asked for once when the
// server wants one (a 401 from /v1/models), kept for this tab.
"use strict";

(() => {
  const $ = (id) => document.getElementById(id);

  function showView(view) {
    for (const tab of document.querySelectorAll(".tab")) {
      tab.classList.toggle("active", tab.dataset.view === view);
    }
    $("view-chat").hidden = view !== "chat";
    $("view-dashboard").hidden = view !== "dashboard";
    if (view === "dashboard") Dashboard.start();
    else Dashboard.stop();
  }

  // Resolves once /v1/models answers, asking for a key while it says 401.
  async function connect() {
    try {
      const models = await Api.getJson("/v1/models");
      const model = models.data && models.data[0];
      $("model-name").textContent = model ? model.id : "";
      $("change-key").hidden = !Api.hasKey();
      return true;
    } catch (error) {
      if (error.status === 401) {
        askForKey(Api.hasKey() ? "That key was refused: " + error.message : "");
      } else {
        $("chat-error").textContent = "cannot reach the server: " + error.message;
        $("chat-error").hidden = false;
      }
      return false;
    }
  }

  function askForKey(message) {
    $("key-error").textContent = message;
    $("key-error").hidden = !message;
    const dialog = $("key-dialog");
    if (!dialog.open) dialog.showModal();
    $("api-key").focus();
  }

  function init() {
    for (const tab of document.querySelectorAll(".tab")) {
      tab.addEventListener("click", () => showView(tab.dataset.view));
    }
    $("key-form").addEventListener("submit", async (event) => {
      event.preventDefault();
      Api.setKey($("api-key").value.trim());
      if (await connect()) {
        $("key-dialog").close();
        $("chat-error").hidden = true;
      }
    });
    $("key-dialog").addEventListener("cancel", (event) => event.preventDefault());
    $("change-key").addEventListener("click", () => askForKey(""));
    Chat.init(() => askForKey("The server refused the key: type it again."));
    connect();
  }

  init();
})();
