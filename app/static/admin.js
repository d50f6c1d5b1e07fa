// The embedded admin's forms, sent as JSON to Caseward's API. Inside the Shopify admin,
// App Bridge adds a fresh session token to every fetch from this page, so no credential
// is ever written into the page or its address. Answers update the page in place. The
// words come from the page (its data- attributes), which takes them from the catalogue.
"use strict";

// "%(name)s" in a catalogue message, filled as the server's gettext fills it.
function fill(message, values) {
  return message.replace(/%\((\w+)\)s/g, (_, name) => String(values[name]));
}

// The page's own locale (its <html lang>, as the admin gave it): the API says its
// refusals in that language, with money and numbers as the locale writes them.
function pageHeaders() {
  const headers = { "Content-Type": "application/json" };
  const locale = document.documentElement.lang;
  if (locale) headers["Accept-Language"] = locale;
  return headers;
}

// What a refused request says: the API's own sentence, else the page's word for it; and
// the field it names, if any, kept on ``output`` for the form to mark.
async function refusal(response, output) {
  const answer = await response.json().catch(() => ({}));
  output.dataset.field = (answer.error && answer.error.field) || "";
  return (
    (answer.error && answer.error.message) ||
    fill(document.body.dataset.refused, { status: response.status })
  );
}

async function send(method, url, body, output) {
  output.textContent = "…";
  const response = await fetch(url, {
    method,
    headers: pageHeaders(),
    body: JSON.stringify(body),
  });
  if (!response.ok) {
    output.textContent = await refusal(response, output);
    return null;
  }
  return response.json().catch(() => ({}));
}

const stripeKey = document.getElementById("stripe-key");
const writes = document.getElementById("writes");

if (stripeKey) {
  stripeKey.addEventListener("submit", async (event) => {
    event.preventDefault();
    const output = stripeKey.querySelector("output");
    const body = {
      api_key: stripeKey.elements.api_key.value,
      livemode: stripeKey.elements.livemode.checked,
    };
    if (event.submitter && event.submitter.value === "test") {
      const report = await send("POST", stripeKey.dataset.test, body, output);
      if (report) output.textContent = report.message;
      return;
    }
    const saved = await send("PUT", stripeKey.dataset.save, body, output);
    if (saved) {
      const words = stripeKey.dataset;
      output.textContent = fill(words.connected, {
        key: saved.key,
        mode: saved.livemode ? words.live : words.testMode,
      });
      stripeKey.elements.api_key.value = "";
      if (writes) {
        writes.querySelector("button").disabled = false;
        writes.querySelector("output").textContent = "";
      }
    }
  });
}

if (writes) {
  writes.addEventListener("submit", async (event) => {
    event.preventDefault();
    const output = writes.querySelector("output");
    const answer = await send("PUT", writes.dataset.put, { enabled: true }, output);
    if (answer && answer.writes_enabled) {
      output.textContent = writes.dataset.done;
      writes.querySelector("button").disabled = true;
    }
  });
}
