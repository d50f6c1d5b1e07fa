// Caseward's storefront chat: a launcher button and a chat panel on the shop's own pages.
//
// The widget talks only to Caseward through Shopify's app proxy on the page's origin
// (/apps/caseward/...), in JSON. Shopify strips cookies on the way, so the conversation
// token lives in localStorage and travels in the body or the query. While the panel is
// open and the tab visible it asks for the chat again after the server's poll_after.
// The merchant's app embed block sets the accent colours, the corner and the greeting
// as data attributes on the root element, and the storefront's locale (data-locale),
// which every request carries as ?locale= so the app answers in the shopper's language.
// The widget's own words are English here; every chat answer carries them in the
// shopper's language (labels), which replace these and are remembered per locale, so the
// next page starts in that language. Whatever the server sends is shown through
// textContent, never parsed as HTML.
//
// The sequence of a conversation: open -> GET /chat (the greeting, or the stored
// conversation) -> POST /chat/messages (the first one creates the conversation; its
// token is stored) -> polls while open -> when not verified, "Verify it's you": order
// number (filled in when the shopper already wrote one) and email -> POST
// /chat/verification -> six-digit code -> POST /chat/verification/code (a wrong code: 400
// naming the field, shown beside it) -> the shop's offered choices and "Talk to a person"
// as buttons.

const PROXY = "/apps/caseward";
const STORAGE_KEY = "caseward-chat:conversation";
const LABELS_KEY = "caseward-chat:labels:";
const COLOUR = /^#(?:[0-9a-f]{3}|[0-9a-f]{6})$/i;
// A 429 is retried after Retry-After this many times before the shopper is told to wait.
const RETRIES_AFTER_429 = 3;
const DEFAULT_POLL_SECONDS = 5;

// A word with %(name)s is filled in here (fill); the app's labels keep the placeholders.
const WORDS = {
  open: "Chat with us",
  title: "Chat with us",
  close: "Close chat",
  greeting: "Hi! How can we help?",
  conversation: "Conversation",
  you: "You",
  shop: "Shop",
  message: "Your message",
  send: "Send",
  person: "Talk to a person",
  verify: "Verify it's you",
  verifyIntro: "To talk about an order, confirm its number and the email it was placed with.",
  order: "Order number",
  email: "Email",
  sendCode: "Send me a code",
  sentTo: "We sent a code to %(to)s.",
  yourEmail: "the order's email",
  code: "Six-digit code",
  checkCode: "Verify",
  otherOrder: "Use another order or email",
  verified: "You're verified.",
  yourCase: "Your case",
  caseHeading: "Case %(reference)s: %(status)s",
  wait: "We're busy right now. Please wait: we'll try again in %(seconds)s seconds.",
  waitOne: "We're busy right now. Please wait: we'll try again in a second.",
  later: "We're still busy. Please try again in a minute.",
  unreachable: "We couldn't reach the shop just now. Please try again in a moment.",
};

const fill = (word, values) =>
  word.replace(/%\((\w+)\)s/g, (placeholder, name) => (name in values ? String(values[name]) : placeholder));

function put(node, name, value) {
  if (name === "text") node.textContent = value;
  else node.setAttribute(name, value);
}

function el(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (name === "text") node.textContent = value;
    else if (value === true) node.setAttribute(name, "");
    else if (value !== false && value !== null && value !== undefined) node.setAttribute(name, value);
  }
  node.append(...children);
  return node;
}

function stored() {
  try {
    return localStorage.getItem(STORAGE_KEY);
  } catch {
    return null; // storage refused (private mode): the chat still works for this page
  }
}

function store(token) {
  try {
    if (token) localStorage.setItem(STORAGE_KEY, token);
    else localStorage.removeItem(STORAGE_KEY);
  } catch {
    // the conversation then lasts as long as the page
  }
}

function recalled(locale) {
  try {
    return JSON.parse(localStorage.getItem(LABELS_KEY + locale)) || {};
  } catch {
    return {};
  }
}

function remember(locale, labels) {
  try {
    localStorage.setItem(LABELS_KEY + locale, JSON.stringify(labels));
  } catch {
    // the next page starts in English until its first answer
  }
}

const pause = (seconds) => new Promise((resolve) => setTimeout(resolve, seconds * 1000));

function retryAfter(response) {
  const seconds = Number.parseInt(response.headers.get("Retry-After") || "", 10);
  return Math.min(Math.max(Number.isFinite(seconds) ? seconds : DEFAULT_POLL_SECONDS, 1), 120);
}

function failure(message, field = null) {
  return Object.assign(new Error(message), { field });
}

function mount(root, index) {
  const id = (name) => `caseward-chat-${index}-${name}`;
  const settings = root.dataset;
  if (COLOUR.test(settings.accent || "")) root.style.setProperty("--cw-accent", settings.accent);
  if (COLOUR.test(settings.accentText || "")) {
    root.style.setProperty("--cw-on-accent", settings.accentText);
  }
  root.classList.add(settings.position === "bottom-left" ? "cw-left" : "cw-right");
  const locale = settings.locale || "";

  let conversation = stored();
  let state = null;
  let open = false;
  let timer = 0;
  let asked = 0; // every answer carrying the chat is numbered, so a late poll never wins
  let shown = 0;
  let pollFailed = false;
  const seen = new Set();
  const rendered = { case: "", choices: "" };
  const words = { ...WORDS };
  const worded = []; // [node, attribute or "text", word]: said again when the words change

  function word(node, name, key) {
    worded.push([node, name, key]);
    put(node, name, words[key]);
    return node;
  }

  // -- the parts ----------------------------------------------------------------------
  const launcher = word(
    el("button", { type: "button", class: "cw-launcher", "aria-expanded": "false", "aria-controls": id("panel") }),
    "text",
    "open",
  );
  const close = word(el("button", { type: "button", class: "cw-close" }), "aria-label", "close");
  close.append(el("span", { "aria-hidden": "true", text: "\u00d7" }));
  const greeting = el("p", { class: "cw-greeting", text: settings.greeting || WORDS.greeting });
  const caseBox = word(
    el("section", { class: "cw-case", "aria-live": "polite", hidden: true }),
    "aria-label",
    "yourCase",
  );
  const list = word(el("ol", { class: "cw-messages", "aria-live": "polite" }), "aria-label", "conversation");
  const choices = el("div", { class: "cw-choices", hidden: true });
  const person = word(el("button", { type: "button", class: "cw-button cw-secondary", hidden: true }), "text", "person");
  const notice = el("p", { class: "cw-notice", role: "status" });

  // A labelled input; label is the key of its word.
  function field(name, label, attributes) {
    const input = el(attributes.rows ? "textarea" : "input", {
      id: id(name),
      name,
      "aria-describedby": id(`${name}-error`),
      required: true,
      ...attributes,
    });
    const error = el("p", { class: "cw-field-error", id: id(`${name}-error`), hidden: true });
    return el("div", { class: "cw-field" }, word(el("label", { for: id(name) }), "text", label), input, error);
  }

  function form(className, ...children) {
    return el("form", { class: className }, ...children, el("p", { class: "cw-form-error", hidden: true }));
  }

  const verifyToggle = word(
    el("button", { type: "button", class: "cw-link", "aria-expanded": "false", "aria-controls": id("verify") }),
    "text",
    "verify",
  );
  const details = form(
    "cw-form",
    word(el("p", { class: "cw-hint" }), "text", "verifyIntro"),
    field("order", "order", { type: "text", autocomplete: "off", maxlength: "32" }),
    field("email", "email", { type: "email", autocomplete: "email", maxlength: "254" }),
    word(el("button", { type: "submit", class: "cw-button" }), "text", "sendCode"),
  );
  const sent = el("p", { class: "cw-hint", role: "status" });
  const anotherOrder = word(el("button", { type: "button", class: "cw-link" }), "text", "otherOrder");
  const codeForm = form(
    "cw-form",
    sent,
    field("code", "code", {
      type: "text",
      inputmode: "numeric",
      autocomplete: "one-time-code",
      pattern: "[0-9]{6}",
      maxlength: "6",
    }),
    word(el("button", { type: "submit", class: "cw-button" }), "text", "checkCode"),
    anotherOrder,
  );
  codeForm.hidden = true;
  const verifySteps = el("div", { id: id("verify"), hidden: true }, details, codeForm);
  const verified = word(el("p", { class: "cw-verified", hidden: true }), "text", "verified");
  const verify = el("section", { class: "cw-verify", hidden: true }, verifyToggle, verifySteps);

  const compose = form(
    "cw-compose",
    field("text", "message", { rows: "2", maxlength: "2000" }),
    word(el("button", { type: "submit", class: "cw-button" }), "text", "send"),
  );
  const text = compose.elements.namedItem("text");

  const body = el("div", { class: "cw-body" }, greeting, caseBox, list, choices, person, verified, verify);
  const panel = el(
    "section",
    { id: id("panel"), class: "cw-panel", role: "dialog", "aria-labelledby": id("title"), hidden: true },
    el("header", { class: "cw-header" }, word(el("h2", { id: id("title") }), "text", "title"), close),
    body,
    notice,
    compose,
  );
  root.append(panel, launcher);

  // The app's words for the shopper, once they differ from those shown.
  function relabel(labels) {
    const changed = Object.keys(WORDS).filter(
      (key) => typeof labels[key] === "string" && labels[key] !== words[key],
    );
    if (changed.length === 0) return;
    for (const key of changed) words[key] = labels[key];
    for (const [node, name, key] of worded) put(node, name, words[key]);
    rendered.case = ""; // its heading is said in the words
    if (state) showCase(state.case || null);
    remember(locale, labels);
  }
  relabel(recalled(locale));

  // -- talking to the app -------------------------------------------------------------
  async function call(method, path, payload, wanted = () => true) {
    for (let attempt = 0; ; attempt += 1) {
      const url = new URL(PROXY + path, location.origin);
      if (locale) url.searchParams.set("locale", locale);
      let response;
      try {
        response = await fetch(url, {
          method,
          headers: payload
            ? { Accept: "application/json", "Content-Type": "application/json" }
            : { Accept: "application/json" },
          body: payload ? JSON.stringify(payload) : undefined,
        });
      } catch {
        throw failure(words.unreachable);
      }
      if (response.status === 429) {
        if (attempt >= RETRIES_AFTER_429) throw failure(words.later);
        const seconds = retryAfter(response);
        notice.textContent = seconds === 1 ? words.waitOne : fill(words.wait, { seconds });
        await pause(seconds);
        notice.textContent = "";
        if (!wanted()) return null;
        continue;
      }
      const answer = await response.json().catch(() => null);
      if (response.ok) return answer;
      const error = answer && answer.error;
      // A refusal (4xx) says why in the shopper's language; a failure of the app is ours to say.
      throw failure(
        response.status < 500 && error && typeof error.message === "string" ? error.message : words.unreachable,
        error && typeof error.field === "string" ? error.field : null,
      );
    }
  }

  async function chat(method, path, payload, wanted) {
    const ticket = ++asked;
    const answer = await call(method, path, payload, wanted);
    if (answer && ticket > shown) {
      shown = ticket;
      show(answer);
    }
  }

  function showError(where, error) {
    const input = error.field ? where.elements.namedItem(error.field) : null;
    const target = input
      ? document.getElementById(input.getAttribute("aria-describedby"))
      : where.querySelector(".cw-form-error");
    target.textContent = error.message;
    target.hidden = false;
    if (input) {
      input.setAttribute("aria-invalid", "true");
      input.focus();
    }
  }

  function clearErrors(where) {
    for (const node of where.querySelectorAll(".cw-field-error, .cw-form-error")) {
      node.hidden = true;
      node.textContent = "";
    }
    for (const node of where.querySelectorAll("[aria-invalid]")) node.removeAttribute("aria-invalid");
    notice.textContent = "";
  }

  // A form's request: an error naming a field is shown beside it, others under the form.
  async function submit(where, request) {
    clearErrors(where);
    const button = where.querySelector("button[type=submit]");
    if (button) button.disabled = true;
    try {
      await request();
    } catch (error) {
      showError(where, error);
    } finally {
      if (button) button.disabled = false;
    }
  }

  // A button's request (a choice, a person): errors are shown in the notice.
  async function act(request) {
    notice.textContent = "";
    try {
      await request();
    } catch (error) {
      notice.textContent = error.message;
    }
  }

  // -- showing the chat ---------------------------------------------------------------
  function show(next) {
    state = next;
    const token = typeof next.conversation === "string" && next.conversation ? next.conversation : null;
    if (token !== conversation) {
      list.replaceChildren();
      seen.clear();
    }
    conversation = token;
    store(token);
    if (next.labels) relabel(next.labels);
    greeting.textContent = settings.greeting || next.greeting || WORDS.greeting;
    showMessages(Array.isArray(next.messages) ? next.messages : []);
    showCase(next.case || null);
    showChoices(Array.isArray(next.choices) ? next.choices : []);
    person.hidden = !next.can_ask_for_person;
    const identity = next.identity || {};
    verified.hidden = !identity.verified;
    verify.hidden = Boolean(identity.verified) || !conversation;
    // The order number the shopper already wrote, so they never type it twice.
    const order = details.elements.namedItem("order");
    const written = next.verification && next.verification.order;
    if (typeof written === "string" && !order.value) order.value = written;
    schedule();
  }

  function showMessages(messages) {
    let added = false;
    for (const message of messages) {
      if (!message || seen.has(message.id)) continue;
      seen.add(message.id);
      added = true;
      const mine = message.from === "customer";
      const item = el(
        "li",
        { class: mine ? "cw-message cw-mine" : "cw-message cw-theirs" },
        el("span", { class: "cw-hidden", text: `${mine ? words.you : words.shop}: ` }),
        el("span", { class: "cw-text", text: String(message.text ?? "") }),
      );
      const at = new Date(message.at);
      if (!Number.isNaN(at.getTime())) {
        const time = at.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
        item.append(el("time", { datetime: message.at, text: time }));
      }
      list.append(item);
    }
    if (added) body.scrollTop = body.scrollHeight;
  }

  function showCase(current) {
    const key = JSON.stringify(current);
    if (key === rendered.case) return;
    rendered.case = key;
    caseBox.hidden = !current;
    if (!current) return caseBox.replaceChildren();
    const updates = el("ul", { class: "cw-updates" });
    for (const update of Array.isArray(current.updates) ? current.updates : []) {
      updates.append(el("li", { "data-status": String(update.status), text: String(update.text ?? "") }));
    }
    caseBox.replaceChildren(
      el("h3", {
        text: fill(words.caseHeading, { reference: current.reference, status: current.status_text ?? "" }),
      }),
      updates,
    );
  }

  function showChoices(offered) {
    const key = JSON.stringify(offered);
    if (key === rendered.choices) return;
    rendered.choices = key;
    choices.hidden = offered.length === 0;
    choices.replaceChildren(
      ...offered.map((choice) => {
        const button = el("button", { type: "button", class: "cw-button cw-secondary", text: String(choice.label) });
        button.addEventListener("click", () =>
          act(() => chat("POST", "/chat/choices", { conversation, choice: choice.id })),
        );
        return button;
      }),
    );
  }

  // -- polling while open and visible -------------------------------------------------
  const polling = () => open && !document.hidden;

  function schedule() {
    clearTimeout(timer);
    if (!polling() || !conversation) return;
    const seconds = Number(state && state.poll_after) || DEFAULT_POLL_SECONDS;
    timer = setTimeout(refresh, Math.max(seconds, 1) * 1000);
  }

  async function refresh() {
    clearTimeout(timer);
    const query = conversation ? `?conversation=${encodeURIComponent(conversation)}` : "";
    try {
      await chat("GET", `/chat${query}`, null, polling);
      if (pollFailed) notice.textContent = "";
      pollFailed = false;
    } catch (error) {
      notice.textContent = error.message;
      pollFailed = true;
      schedule();
    }
  }

  function setOpen(next) {
    open = next;
    launcher.setAttribute("aria-expanded", String(next));
    panel.hidden = !next;
    root.classList.toggle("cw-open", next);
    if (next) {
      text.focus();
      refresh();
    } else {
      clearTimeout(timer);
    }
  }

  // -- what the shopper does ----------------------------------------------------------
  launcher.addEventListener("click", () => setOpen(!open));
  close.addEventListener("click", () => {
    setOpen(false);
    launcher.focus();
  });
  panel.addEventListener("keydown", (event) => {
    if (event.key !== "Escape") return;
    event.preventDefault();
    setOpen(false);
    launcher.focus();
  });
  document.addEventListener("visibilitychange", () => {
    if (document.hidden) clearTimeout(timer);
    else if (open) refresh();
  });

  text.addEventListener("keydown", (event) => {
    // Enter sends, Shift+Enter starts a new line.
    if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      compose.requestSubmit();
    }
  });
  compose.addEventListener("submit", (event) => {
    event.preventDefault();
    const words = text.value.trim();
    if (!words) return;
    submit(compose, async () => {
      await chat("POST", "/chat/messages", { conversation, text: words });
      text.value = "";
    });
  });
  person.addEventListener("click", () => act(() => chat("POST", "/chat/person", { conversation })));

  verifyToggle.addEventListener("click", () => {
    const expanded = verifySteps.hidden;
    verifySteps.hidden = !expanded;
    verifyToggle.setAttribute("aria-expanded", String(expanded));
    if (expanded) (details.hidden ? codeForm : details).querySelector("input").focus();
  });
  details.addEventListener("submit", (event) => {
    event.preventDefault();
    const order = details.elements.namedItem("order").value.trim();
    const email = details.elements.namedItem("email").value.trim();
    submit(details, async () => {
      const answer = await call("POST", "/chat/verification", { conversation, order, email });
      details.hidden = true;
      codeForm.hidden = false;
      sent.textContent = fill(words.sentTo, { to: answer && answer.to ? answer.to : words.yourEmail });
      codeForm.elements.namedItem("code").focus();
    });
  });
  anotherOrder.addEventListener("click", () => {
    clearErrors(codeForm);
    codeForm.hidden = true;
    details.hidden = false;
    details.elements.namedItem("order").focus();
  });
  codeForm.addEventListener("submit", (event) => {
    event.preventDefault();
    const code = codeForm.elements.namedItem("code").value.trim();
    submit(codeForm, async () => {
      await chat("POST", "/chat/verification/code", { conversation, code });
      codeForm.reset();
    });
  });
}

document.querySelectorAll("[data-caseward-chat]").forEach(mount);
