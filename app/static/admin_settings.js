// The owners' controls on the settings and audit pages, sent to Caseward's API by send()
// from admin.js (loaded first; App Bridge adds a fresh session token to each fetch). The
// API checks the role again and audits each change; the page only asks. The words shown
// after an answer come from the page, in its language.
"use strict";

(() => {
  const digitsElement = document.getElementById("currency-digits");
  const currencyDigits = digitsElement ? JSON.parse(digitsElement.textContent) : {};

  // "USD 480.00, JPY 5000" as minor units ({usd: 48000, jpy: 5000}), exactly as the
  // server counts them; null when a part is not a known currency and an exact amount.
  function minorUnits(text) {
    const limits = {};
    for (const part of text.split(",").map((piece) => piece.trim()).filter(Boolean)) {
      const match = /^([A-Za-z]{3})\s+(\d{1,12})(?:\.(\d+))?$/.exec(part);
      if (!match) return null;
      const code = match[1].toLowerCase();
      const digits = currencyDigits[code];
      const fraction = match[3] || "";
      if (digits === undefined || fraction.length > digits) return null;
      limits[code] = Number(match[2] + fraction.padEnd(digits, "0"));
    }
    return limits;
  }

  function done(form) {
    form.querySelector("output").textContent = form.dataset.done;
  }

  for (const form of document.querySelectorAll("form.switch")) {
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      const output = form.querySelector("output");
      const body = JSON.parse(form.dataset.body);
      if (await send(form.dataset.method, form.dataset.url, body, output)) {
        done(form);
        // The page shows the state it was made with: read it again to change it back.
        form.querySelector("button").disabled = true;
      }
    });
  }

  // The policy's form: amounts, days and percents as written; the server reads them and
  // refuses the first it cannot, naming it: that field is marked and described.
  for (const form of document.querySelectorAll("form.policy-form")) {
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      const output = form.querySelector("output");
      for (const marked of form.querySelectorAll("[aria-invalid]")) {
        marked.removeAttribute("aria-invalid");
      }
      const body = { enabled_kinds: [] };
      for (const input of form.elements) {
        if (!input.name) continue;
        if (input.name === "enabled_kinds") {
          if (input.checked) body.enabled_kinds.push(input.value);
        } else if (input.type === "checkbox") {
          body[input.name] = input.checked;
        } else {
          body[input.name] = input.value;
        }
      }
      if (await send("PUT", form.dataset.url, body, output)) {
        window.location.reload();
        return;
      }
      const refused = form.elements[output.dataset.field];
      if (refused && refused.setAttribute) {
        refused.setAttribute("aria-invalid", "true");
        refused.focus();
      }
    });
  }

  for (const form of document.querySelectorAll("form.staff-member")) {
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      const output = form.querySelector("output");
      const limits = minorUnits(form.elements.approval_limits.value);
      if (limits === null) {
        output.textContent = form.dataset.badLimits;
        return;
      }
      const body = { role: form.elements.role.value, approval_limits: limits };
      if (await send("PUT", form.dataset.url, body, output)) done(form);
    });
  }

  // Gorgias: the answer's secret is shown here once, with where it goes.
  for (const form of document.querySelectorAll("form.gorgias")) {
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      const output = form.querySelector("output");
      const body = {
        domain: form.elements.domain.value,
        username: form.elements.username.value,
        api_key: form.elements.api_key.value,
      };
      const answer = await send("PUT", form.dataset.url, body, output);
      if (!answer) return;
      form.elements.api_key.value = "";
      output.textContent = answer.integration_secret ? form.dataset.secret : form.dataset.kept;
      const setup = form.querySelector(".gorgias-setup");
      setup.textContent = [answer.integration_secret, answer.events_url, answer.sidebar_url]
        .filter(Boolean)
        .join("\n");
      setup.hidden = false;
    });
  }

  // Agents: the new credential's secret is shown here once; revoking takes effect at once.
  for (const form of document.querySelectorAll("form.agent-issue")) {
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      const output = form.querySelector("output");
      const ceiling = form.elements.ceiling.value.trim();
      const limits = ceiling ? minorUnits(ceiling) : null;
      if (ceiling && limits === null) {
        output.textContent = form.dataset.badCeiling;
        return;
      }
      const checked = (name) =>
        [...form.querySelectorAll(`input[name="${name}"]:checked`)].map((box) => box.value);
      const body = {
        name: form.elements.name.value,
        allowed_kinds: checked("allowed_kinds"),
        allowed_tools: checked("allowed_tools"),
        ceiling: limits,
      };
      const answer = await send("POST", form.dataset.url, body, output);
      if (!answer) return;
      output.textContent = form.dataset.secret;
      const secret = form.querySelector(".agent-secret");
      secret.textContent = answer.secret;
      secret.hidden = false;
    });
  }

  for (const form of document.querySelectorAll("form.agent-revoke")) {
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      if (await send("DELETE", form.dataset.url, undefined, form.querySelector("output"))) {
        done(form);
        form.querySelector("button").disabled = true;
      }
    });
  }

  // A download needs the session token too, so it is fetched, then saved from memory.
  for (const button of document.querySelectorAll("button.export")) {
    button.addEventListener("click", async () => {
      const output = button.parentElement.querySelector("output");
      output.textContent = "…";
      const response = await fetch(button.dataset.url, { headers: pageHeaders() });
      if (!response.ok) {
        output.textContent = await refusal(response);
        return;
      }
      const named = /filename="([^"]+)"/.exec(response.headers.get("Content-Disposition") || "");
      const link = document.createElement("a");
      link.href = URL.createObjectURL(await response.blob());
      link.download = named ? named[1] : "caseward-audit";
      document.body.append(link);
      link.click();
      link.remove();
      URL.revokeObjectURL(link.href);
      output.textContent = "";
    });
  }
})();
