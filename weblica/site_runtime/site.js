// weblica synth site runtime: framework-free behaviour shared by every generated site.
// Pages declare what they need with data-* attributes; this file wires them up. No timers are used,
// so pages behave the same under the env's frozen clock.
(() => {
  "use strict";
  const SITE = window.SITE || {};
  const $ = (sel, root = document) => root.querySelector(sel);
  const $$ = (sel, root = document) => Array.from(root.querySelectorAll(sel));
  const esc = (s) => String(s).replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c]));

  // `busy` counts the page's own work in flight (state calls, form submissions) and `leaving` marks a
  // navigation it started, so a driver can tell "settled" from "about to change" without guessing.
  const status = { busy: 0, leaving: false };
  window.addEventListener("pagehide", () => { status.leaving = true; });
  async function api(method, path, body) {
    status.busy += 1;
    try {
      const res = await fetch(path, {
        method, headers: { "Content-Type": "application/json" },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      let data = {};
      try { data = await res.json(); } catch (e) { data = {}; }
      return { ok: res.ok, status: res.status, data };
    } finally {
      // a driver asks in a task of its own, after every microtask: a redirect chained on this result
      // has set `leaving` by then, and a follow-up call has raised `busy` again
      status.busy -= 1;
    }
  }
  // link clicks and plain form submissions navigate a moment later: say so now
  document.addEventListener("click", (e) => {
    const a = e.target.closest && e.target.closest("a[href]");
    if (a && !e.defaultPrevented && !a.getAttribute("href").startsWith("#")) status.leaving = true;
  });
  document.addEventListener("submit", (e) => { if (!e.defaultPrevented) status.leaving = true; });
  function money(v) {
    const f = SITE.locale || { currency: "$", position: "prefix", decimals: 2, thousands: ",", decimal: "." };
    const parts = Math.abs(v).toFixed(f.decimals).split(".");
    const whole = parts[0].replace(/\B(?=(\d{3})+(?!\d))/g, f.thousands);
    const text = (v < 0 ? "-" : "") + whole + (f.decimals ? f.decimal + parts[1] : "");
    return f.position === "prefix" ? f.currency + text : text + " " + f.currency;
  }
  let catalogPromise = null;
  function catalog() {
    if (!catalogPromise) {
      status.busy += 1;
      catalogPromise = fetch("/assets/catalog.json").then((r) => r.json())
        .finally(() => { status.busy -= 1; });
    }
    return catalogPromise;
  }
  function go(url) { status.leaving = true; window.location.assign(url); }
  const W = (window.WEBLICA = { api, money, catalog, esc, $, $$, go, status, handlers: {} });

  // distractors (cookie banners, pop-ups, chat...): weblica/site_runtime/distractors.js

  // lazy loading and the sticky header vary per episode: weblica/site_runtime/distractors.js

  // ---- forms: client-side validation, JSON submission to the state API, redirect ----
  const EMAIL = /^[^@\s]+@[^@\s]+\.[a-z]{2,}$/i;
  function formValues(form) {
    const out = {};
    for (const el of form.elements) {
      if (!el.name) continue;
      if (el.type === "checkbox") out[el.name] = el.checked;
      else if (el.type === "radio") { if (el.checked) out[el.name] = el.value; else if (!(el.name in out)) out[el.name] = ""; }
      else if (el.type === "number" || el.type === "range" || el.dataset.number !== undefined) out[el.name] = el.value === "" ? null : Number(el.value);
      else out[el.name] = el.value.trim();
    }
    return out;
  }
  function validate(form) {
    let ok = true;
    $$("[data-error-for]", form).forEach((e) => { e.hidden = true; });
    for (const el of form.elements) {
      if (!el.name) continue;
      const required = el.required || el.dataset.required !== undefined;
      let msg = "";
      if (el.type === "radio") {
        if (required && !$$(`input[name="${el.name}"]`, form).some((r) => r.checked)) msg = "Please choose one option.";
      } else if (required && !String(el.value).trim()) msg = "This field is required.";
      else if (el.type === "email" && el.value && !EMAIL.test(el.value.trim())) msg = "Enter a valid email address.";
      else if (el.dataset.minlength && el.value.length < Number(el.dataset.minlength)) msg = `Use at least ${el.dataset.minlength} characters.`;
      if (msg) {
        ok = false;
        const err = $(`[data-error-for="${el.name}"]`, form);
        if (err) { err.textContent = msg; err.hidden = false; }
      }
    }
    return ok;
  }
  function forms() {
    for (const form of $$("form[data-api]")) {
      form.addEventListener("submit", async (ev) => {
        ev.preventDefault();
        const errBox = $("[data-form-error]", form);
        if (!validate(form)) { if (errBox) { errBox.textContent = "Please fix the highlighted fields."; errBox.hidden = false; } return; }
        const hook = W.handlers["before-submit:" + form.id];
        const values = formValues(form);
        if (hook && hook(values, form) === false) return;
        const res = await api(form.dataset.method || "POST", form.dataset.api, values);
        if (!res.ok) { if (errBox) { errBox.textContent = res.data.error || "Something went wrong."; errBox.hidden = false; } return; }
        if (form.dataset.redirect) go(form.dataset.redirect);
      });
    }
  }

  // ---- custom select: a button that opens an option list; the value lives in a hidden input ----
  function customSelects() {
    for (const box of $$("[data-custom-select]")) {
      const trigger = $("[data-cs-trigger]", box), list = $(".cs-options", box), input = $("input[type=hidden]", box);
      trigger.addEventListener("click", () => { list.hidden = !list.hidden; });
      for (const opt of $$("[role=option]", list)) {
        opt.addEventListener("click", () => {
          input.value = opt.dataset.value; trigger.textContent = opt.textContent; list.hidden = true;
          input.dispatchEvent(new Event("change", { bubbles: true }));
        });
      }
    }
  }

  // ---- hidden content: tabs and modals ----
  function tabs() {
    for (const box of $$("[data-tabs]")) {
      for (const tab of $$("[role=tab]", box)) {
        tab.addEventListener("click", () => {
          $$("[role=tab]", box).forEach((t) => t.setAttribute("aria-selected", String(t === tab)));
          $$("[role=tabpanel]", box).forEach((p) => { p.hidden = p.dataset.panel !== tab.dataset.tab; });
        });
      }
    }
    for (const btn of $$("[data-open-modal]")) {
      const modal = $(`[data-modal="${btn.dataset.openModal}"]`);
      btn.addEventListener("click", () => { modal.hidden = false; });
      $$("[data-close-modal]", modal).forEach((c) => c.addEventListener("click", () => { modal.hidden = true; }));
    }
  }

  // ---- search results rendered from the public catalog ----
  function itemRow(it) {
    return `<li class="item" data-item="${it.id}"><img src="${esc(it.image)}" alt="" width="72" height="48">` +
      `<div class="item-body"><a class="item-name" href="/item/${it.slug}" data-link="item-${it.id}">${esc(it.name)}</a>` +
      `<span class="item-meta">${esc(it.kind)} · ${esc(it.maker)}</span><span class="price">${money(it.price)}</span>` +
      `<span class="rating">★ ${it.rating.toFixed(1)}</span></div></li>`;
  }
  W.itemRow = itemRow;
  W.matches = (it, q) => {
    const words = q.toLowerCase().split(/\s+/).filter(Boolean);
    const hay = `${it.name} ${it.kind} ${it.maker}`.toLowerCase();
    return words.length > 0 && words.every((w) => hay.includes(w));
  };
  async function searchPage() {
    const q = new URLSearchParams(location.search).get("q") || "";
    const input = $("#search-input");
    if (input) input.value = q;
    const box = $("[data-search-results]");
    const summary = $("[data-search-summary]");
    if (!q.trim()) return;
    const data = await catalog();
    const hits = data.items.filter((it) => W.matches(it, q));
    summary.textContent = `${hits.length} result${hits.length === 1 ? "" : "s"} for “${q}”`;
    box.innerHTML = hits.map(itemRow).join("") || "<li>No results.</li>";
  }
  W.handlers["page:search"] = searchPage;

  // ---- cart ----
  async function cartCount() {
    const el = $("[data-cart-count]");
    if (!el) return;
    const { data } = await api("GET", "/api/state");
    const cart = data.cart || {};
    el.textContent = String(Object.values(cart).reduce((a, b) => a + b, 0));
  }
  W.cartCount = cartCount;
  function addToCart() {
    const btn = $("[data-add-to-cart]");
    if (!btn) return;
    btn.addEventListener("click", async () => {
      const qty = Math.max(1, Math.min(9, Number($("#qty").value) || 1));
      const { data } = await api("GET", "/api/state");
      const cart = data.cart || {};
      cart[btn.dataset.addToCart] = (cart[btn.dataset.addToCart] || 0) + qty;
      await api("PUT", "/api/doc/cart", cart);
      $("[data-added]").hidden = false;
      await cartCount();
    });
  }

  // ---- the hamburger header's drawer: the toggle opens it, Escape or a click outside closes it ----
  function drawer() {
    const btn = $("[data-drawer-toggle]"), panel = $("[data-drawer]");
    if (!btn || !panel) return;
    const set = (open) => { panel.hidden = !open; btn.setAttribute("aria-expanded", String(open)); };
    btn.addEventListener("click", (e) => { e.stopPropagation(); set(panel.hidden); });
    document.addEventListener("keydown", (e) => { if (e.key === "Escape") set(false); });
    document.addEventListener("click", (e) => { if (!panel.hidden && !panel.contains(e.target)) set(false); });
  }

  document.addEventListener("DOMContentLoaded", () => {
    forms(); customSelects(); tabs(); addToCart(); cartCount(); drawer();
    const page = document.body.dataset.page;
    for (const [key, fn] of Object.entries(W.handlers)) {
      if (key === "page:" + page || key === "*") fn();
    }
  });
})();
