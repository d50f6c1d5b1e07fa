// The owners' controls on the settings and audit pages (and the day's page's Resume button,
// a switch like the others), sent to Caseward's API by send()
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
  function policyBody(form) {
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
    return body;
  }

  function markRefused(form, output) {
    const refused = form.elements[output.dataset.field];
    if (refused && refused.setAttribute) {
      refused.setAttribute("aria-invalid", "true");
      refused.focus();
    }
  }

  for (const form of document.querySelectorAll("form.policy-form")) {
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      const output = form.querySelector("output");
      if (await send("PUT", form.dataset.url, policyBody(form), output)) {
        window.location.reload();
        return;
      }
      markRefused(form, output);
    });
  }

  // The what-if: the form's rules as they stand now, replayed by the API over the shop's
  // last 90 days beside the current policy; nothing is saved. The page draws the four
  // counts with their money and the changed actions, each linking to its case.
  const whatIf = document.getElementById("what-if");
  for (const button of document.querySelectorAll("button.what-if")) {
    button.addEventListener("click", async () => {
      const form = button.form;
      const output = form.querySelector("output");
      const answer = await send("POST", button.dataset.url, policyBody(form), output);
      if (!answer) {
        markRefused(form, output);
        return;
      }
      output.textContent = "";
      drawWhatIf(whatIf, answer);
      whatIf.hidden = false;
    });
  }

  function drawWhatIf(section, answer) {
    const words = JSON.parse(document.getElementById("what-if-words").textContent);
    for (const place of section.querySelectorAll("[data-change]")) {
      const found = answer.classes[place.dataset.change];
      place.querySelector(".count").textContent = String(found.count);
      place.querySelector(".money").textContent = found.money.map((m) => m.display).join(", ");
    }
    section.querySelector(".what-if-replayed").textContent = fill(section.dataset.replayed, {
      count: answer.replayed,
      reconstructed: answer.reconstructed,
    });
    section
      .querySelector(".what-if-items tbody")
      .replaceChildren(...answer.items.map((item) => whatIfRow(section, words, item)));
    const more = section.querySelector(".what-if-more");
    more.textContent = fill(section.dataset.more, {
      shown: answer.items.length,
      total: answer.items_total,
    });
    more.hidden = answer.items.length >= answer.items_total;
  }

  function whatIfRow(section, words, item) {
    const row = document.createElement("tr");
    const where = document.createElement("td");
    if (item.case_id) {
      const link = document.createElement("a");
      link.href = section.dataset.caseLink.replace(section.dataset.anyCase, item.case_id);
      link.textContent = item.reference;
      where.append(link);
    } else {
      where.textContent = item.reference;
    }
    if (item.reconstructed) where.append(` (${section.dataset.rebuilt})`);
    const candidate = item.candidate;
    const why = candidate.failing.length
      ? candidate.failing.map((check) => `${check.check_said}: ${check.said}`).join(" ")
      : candidate.said;
    const cells = [
      words.what_if[item.change],
      words.kind[item.kind] || item.kind,
      item.amount ? item.amount.display : "",
      item.at.slice(0, 10),
      `${words.outcome[item.current.outcome]} → ${words.outcome[candidate.outcome]}`,
      why,
    ];
    row.append(where);
    for (const text of cells) {
      const cell = document.createElement("td");
      cell.textContent = text;
      row.append(cell);
    }
    return row;
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

  // The brakes: ceilings as written ("USD 500.00"; blank: none), whole numbers for the
  // rest (blank: none, or the breaker's rule off). The server checks each again.
  for (const form of document.querySelectorAll("form.brakes")) {
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      const output = form.querySelector("output");
      const money = {};
      for (const name of ["money_per_hour", "money_per_day"]) {
        money[name] = minorUnits(form.elements[name].value);
        if (money[name] === null) {
          output.textContent = form.dataset.badMoney;
          return;
        }
      }
      const whole = (name) => {
        const value = form.elements[name].value.trim();
        return value === "" ? null : Number(value);
      };
      const body = {
        ...money,
        actions_per_hour: whole("actions_per_hour"),
        actions_per_day: whole("actions_per_day"),
        failures_in_a_row: whole("failures_in_a_row"),
        error_percent: whole("error_percent"),
        error_window: whole("error_window"),
      };
      if (await send("PUT", form.dataset.url, body, output)) done(form);
    });
  }

  // Slack: a new address's signing secret is shown here once; a blank address keeps the
  // one set up, and "stop" removes it.
  for (const form of document.querySelectorAll("form.slack")) {
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      const output = form.querySelector("output");
      const kinds = [...form.querySelectorAll('input[name="slack_kinds"]:checked')].map(
        (box) => box.value,
      );
      const address = form.elements.slack_webhook_url.value.trim();
      const body = { slack_kinds: kinds };
      if (event.submitter && event.submitter.value === "remove") {
        body.slack_webhook_url = null;
      } else if (address) {
        body.slack_webhook_url = address;
      }
      const answer = await send("PUT", form.dataset.url, body, output);
      if (!answer) return;
      form.elements.slack_webhook_url.value = "";
      output.textContent = answer.signing_secret ? form.dataset.secret : form.dataset.done;
      const secret = form.querySelector(".slack-secret");
      secret.textContent = answer.signing_secret || "";
      secret.hidden = !answer.signing_secret;
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
