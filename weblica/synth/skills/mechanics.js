// weblica synth: the modern web's mechanics (weblica/synth/skills/mechanics.py). A bundle file of the
// sites whose skill uses them, not a runtime script: the runtime's digest, and so every other site's
// bytes, stay as they were. It runs after the runtime (/assets/site.js) and uses its state API, so a
// driver's settle sees its calls in flight (WEBLICA.status). Timers (the toast, the countdown) run on
// the page's clock, which the env drives.
(() => {
  "use strict";
  const W = window.WEBLICA;
  const $ = (sel, root = document) => root.querySelector(sel);
  const $$ = (sel, root = document) => Array.from(root.querySelectorAll(sel));
  const state = () => W.api("GET", "/api/state").then((r) => r.data || {});

  // ---- a toast: the feedback after a save, gone a few seconds later ----
  function toast(text) {
    const box = $("[data-toast]");
    if (!box) return;
    box.textContent = text;
    box.hidden = false;
    clearTimeout(toast.timer);
    toast.timer = setTimeout(() => { box.hidden = true; }, 3000);
  }

  // ---- new tabs: a button that opens its page with window.open (links use target=_blank) ----
  for (const btn of $$("[data-open]")) btn.addEventListener("click", () => window.open(btn.dataset.open, "_blank"));

  // ---- web components: a quantity stepper and a switch, each with an open shadow root ----
  class QtyStepper extends HTMLElement {
    connectedCallback() {
      if (this.shadowRoot) return;
      const root = this.attachShadow({ mode: "open" });
      root.innerHTML = `<style>:host{display:inline-flex;align-items:center;gap:.4em}
        button{width:2.2em;height:2.2em;font:inherit;font-weight:700;cursor:pointer;border:1px solid #888;border-radius:6px;background:#f4f4f4;color:#111}
        output{min-width:2em;text-align:center;font-weight:700}</style>
        <button type="button" data-down aria-label="Fewer">−</button><output data-value>0</output>
        <button type="button" data-up aria-label="More">+</button>`;
      this.value = Number(this.getAttribute("value") || 0);
      $("[data-down]", root).addEventListener("click", () => this.set(this.value - 1));
      $("[data-up]", root).addEventListener("click", () => this.set(this.value + 1));
      this.set(this.value);
    }
    set(v) {
      this.value = Math.max(0, Math.min(9, v));
      $("[data-value]", this.shadowRoot).textContent = String(this.value);
    }
  }
  class ToggleSwitch extends HTMLElement {
    connectedCallback() {
      if (this.shadowRoot) return;
      const root = this.attachShadow({ mode: "open" });
      root.innerHTML = `<style>button{font:inherit;padding:.3em .8em;border-radius:999px;border:1px solid #888;cursor:pointer;background:#eee;color:#111}
        button[aria-checked=true]{background:#1a7f37;color:#fff}</style>
        <button type="button" role="switch" data-switch aria-checked="false"><slot></slot>: <span data-word>Off</span></button>`;
      this.on = false;
      $("[data-switch]", root).addEventListener("click", () => this.toggle());
    }
    toggle() {
      this.on = !this.on;
      $("[data-switch]", this.shadowRoot).setAttribute("aria-checked", String(this.on));
      $("[data-word]", this.shadowRoot).textContent = this.on ? "On" : "Off";
    }
  }
  if (!customElements.get("qty-stepper")) customElements.define("qty-stepper", QtyStepper);
  if (!customElements.get("toggle-switch")) customElements.define("toggle-switch", ToggleSwitch);
  const sheet = $("#save-sheet");
  if (sheet) sheet.addEventListener("click", async () => {
    const lines = {};
    for (const s of $$("qty-stepper[data-item]")) lines[s.dataset.item] = s.value;
    const gift = $("toggle-switch#gift-wrap");
    const res = await W.api("PUT", "/api/doc/sheet", { lines, gift_wrap: !!(gift && gift.on) });
    toast(res.ok ? "Order sheet saved" : "Could not save the order sheet");
    if (res.ok) $("[data-saved-sheet]").hidden = false;
  });

  // ---- a sign-in wall: the account page sends a visitor without a session to sign in first ----
  const wall = $("[data-auth-wall]");
  if (wall) state().then((s) => {
    const user = s.session && s.session.user;
    if (!user) { W.go("/signin?next=" + encodeURIComponent(location.pathname)); return; }
    const account = (s.users || []).find((u) => u.username === user);
    const key = account ? account.id : user;
    const p = (s.profiles || {})[key] || {};
    for (const el of $$("[data-profile]")) el.textContent = p[el.dataset.profile] || "";
    const street = $("#p-street"), city = $("#p-city"), notify = $("#p-notify");
    street.value = p.street || ""; city.value = p.city || ""; notify.checked = !!p.notifications;
    wall.hidden = false;
    $("#profile-form").addEventListener("submit", async (ev) => {
      ev.preventDefault();
      const profiles = { ...(s.profiles || {}) };
      profiles[key] = { ...p, street: street.value.trim(), city: city.value.trim(), notifications: notify.checked };
      const res = await W.api("PUT", "/api/doc/profiles", profiles);
      toast(res.ok ? "Account details saved" : "Could not save");
      if (res.ok) $("[data-saved-profile]").hidden = false;
    });
  });
  const signin = $("#signin-form");
  if (signin) signin.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const res = await W.api("POST", "/api/login", { username: $("#s-email").value.trim(), password: $("#s-password").value });
    if (!res.ok) { const e = $("[data-signin-error]"); e.textContent = "Wrong email or password."; e.hidden = false; return; }
    const next = new URLSearchParams(location.search).get("next") || "/";
    W.go(next.startsWith("/") && !next.startsWith("//") ? next : "/");
  });

  // ---- a consent wall that blocks the page until it is answered (stored server-side) ----
  const consent = $("[data-consent-wall]");
  if (consent) {
    const answer = async (analytics, marketing, choice) => {
      const res = await W.api("PUT", "/api/doc/consent", { analytics, marketing, choice });
      if (res.ok) consent.hidden = true;
    };
    state().then((s) => { consent.hidden = !!s.consent; });
    $("#consent-accept").addEventListener("click", () => answer(true, true, "all"));
    $("#consent-reject").addEventListener("click", (ev) => { ev.preventDefault(); answer(false, false, "essential"); });
    $("#consent-manage").addEventListener("click", () => { $("[data-consent-choices]").hidden = false; });
    $("#consent-save").addEventListener("click", () => answer($("#c-analytics").checked, $("#c-marketing").checked, "custom"));
  }

  // ---- a countdown that pressures ("the offer ends in 09:59"), on the page's clock ----
  for (const el of $$("[data-countdown]")) {
    let left = Number(el.dataset.countdown);
    const show = () => { el.textContent = `${String(Math.floor(left / 60)).padStart(2, "0")}:${String(left % 60).padStart(2, "0")}`; };
    const tick = () => { left = left > 0 ? left - 1 : Number(el.dataset.countdown); show(); setTimeout(tick, 1000); };
    show();
    setTimeout(tick, 1000);
  }

  // ---- unsubscribing behind a confirmshaming dialog ----
  const unsub = $("#unsubscribe");
  if (unsub) {
    const shame = $("[data-shame]"), status = $("[data-sub-status]");
    state().then((s) => { status.textContent = (s.newsletter || {}).subscribed ? "You are subscribed to the weekly newsletter." : "You are not subscribed."; });
    unsub.addEventListener("click", () => { shame.hidden = false; });
    $("#keep-subscription").addEventListener("click", () => { shame.hidden = true; });
    $("#confirm-unsubscribe").addEventListener("click", async (ev) => {
      ev.preventDefault();
      const res = await W.api("PUT", "/api/doc/newsletter", { subscribed: false });
      shame.hidden = true;
      if (res.ok) { status.textContent = "You are not subscribed."; toast("You have been unsubscribed"); }
    });
  }
})();
