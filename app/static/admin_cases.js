// The case page's decisions, sent as JSON to Caseward's API by send() from admin.js
// (loaded first; inside the Shopify admin, App Bridge adds a fresh session token to each
// fetch). An approval carries the exact digest the page shows: if the proposal or the
// policy changed since the page was made, the API refuses it (409) and nothing is
// approved. The words shown after an answer come from the page, in its language.
"use strict";

(() => {
  function decided(form) {
    // One decision per proposal and page load: the page is read again for the next.
    const proposal = form.closest("[data-proposal]");
    for (const button of proposal.querySelectorAll("button")) button.disabled = true;
  }

  for (const form of document.querySelectorAll("form.approve")) {
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      const output = form.querySelector("output");
      const answer = await send("POST", form.dataset.url, { digest: form.dataset.digest }, output);
      if (answer) {
        output.textContent = answer.action ? form.dataset.queued : form.dataset.waiting;
        decided(form);
      }
    });
  }

  for (const form of document.querySelectorAll("form.reject")) {
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      const output = form.querySelector("output");
      const body = { reason: form.elements.reason.value };
      if (await send("POST", form.dataset.url, body, output)) {
        output.textContent = form.dataset.done;
        decided(form);
      }
    });
  }
})();
