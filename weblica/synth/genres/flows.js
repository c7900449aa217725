// Genre flows (weblica/synth/genres): result lists filtered and sorted by the URL's query, stepped
// forms, a confirm step before a change is stored, values taken from the query, save buttons.
// Everything is declared by data-* attributes; the site runtime (site.js) calls the handlers.
(() => {
  "use strict";
  const W = window.WEBLICA;
  const { $, $$, api, esc, go, money } = W;
  const on = (key, fn) => { const prev = W.handlers[key]; W.handlers[key] = prev ? () => { try { prev(); } finally { fn(); } } : fn; };
  const params = () => new URLSearchParams(location.search);

  // ---- result lists: rows carry data-v-<param>; the list says how each query parameter filters ----
  function compare(a, b) {
    const x = Number(a), y = Number(b);
    return a !== "" && b !== "" && !isNaN(x) && !isNaN(y) ? x - y : String(a).localeCompare(String(b));
  }
  function keeps(row, name, rule, value) {
    const have = row.getAttribute("data-v-" + name);
    if (have === null) return true;
    if (rule === "text") {
      const hay = have.toLowerCase();
      return value.toLowerCase().split(/\s+/).filter(Boolean).every((w) => hay.includes(w));
    }
    if (rule === "has") return have.toLowerCase().split("|").includes(value.toLowerCase());
    if (rule === "ge") return compare(have, value) >= 0;
    if (rule === "le") return compare(have, value) <= 0;
    if (rule === "flag") return value !== "yes" && value !== "true" && value !== "on" ? true : have === "yes";
    return have.toLowerCase() === value.toLowerCase();
  }
  function prefill(form, q) {
    for (const [name, value] of q.entries()) {
      const el = form.elements[name];
      if (!el || el.length !== undefined && !el.tagName) continue;
      if (el.type === "checkbox") { el.checked = true; continue; }
      el.value = value;
      const select = el.closest("[data-custom-select]");
      const opt = select && $(`[role=option][data-value="${CSS.escape(value)}"]`, select);
      if (opt) $("[data-cs-trigger]", select).textContent = opt.textContent;
      const picker = el.closest("[data-datepicker]");
      if (picker && $("[data-dp-label]", picker)) $("[data-dp-label]", picker).textContent = value;
    }
  }
  function resultLists() {
    const q = params();
    for (const form of $$("form[data-filter-form]")) prefill(form, q);
    for (const list of $$("[data-rows]")) {
      const rules = JSON.parse(list.dataset.rules || "{}");
      const required = (list.dataset.require || "").split(",").filter(Boolean);
      const missing = required.some((name) => !q.get(name));
      const rows = $$("[data-row]", list);
      let shown = 0, soldOut = 0;
      for (const row of rows) {
        const ok = !missing && Object.entries(rules).every(([name, rule]) => !q.get(name) || keeps(row, name, rule, q.get(name)));
        const open = !row.hasAttribute("data-unavailable");  // hotelNights(): nothing free for the stay
        row.hidden = !(ok && open);
        shown += ok && open ? 1 : 0;
        soldOut += ok && !open ? 1 : 0;
      }
      const sort = q.get("sort");
      if (sort) {
        const key = sort.replace(/^-/, ""), sign = sort.startsWith("-") ? -1 : 1;
        const body = rows.length ? rows[0].parentElement : null;
        rows.slice().sort((a, b) => sign * compare(a.getAttribute("data-s-" + key) || "", b.getAttribute("data-s-" + key) || ""))
          .forEach((row) => body.appendChild(row));
      }
      const scope = list.closest("[data-results]") || document;
      $$("[data-row-count]", scope).forEach((el) => { el.textContent = String(shown); });
      $$("[data-need-query]", scope).forEach((el) => { el.hidden = !missing; });
      $$("[data-no-rows]", scope).forEach((el) => { el.hidden = missing || shown > 0; });
      $$("[data-sold-out-count]", scope).forEach((el) => { el.textContent = String(soldOut); });
      $$("[data-sold-out-note]", scope).forEach((el) => { el.hidden = !soldOut; });
    }
    for (const link of $$("a[data-sort]")) {
      const next = params();
      next.set("sort", link.dataset.sort);
      link.href = location.pathname + "?" + next.toString();
      if (q.get("sort") === link.dataset.sort) link.setAttribute("aria-current", "true");
    }
  }

  // ---- stepped forms: one fieldset at a time; Next checks the step's required fields ----
  function steppedForms() {
    for (const form of $$("form[data-steps]")) {
      const steps = $$("fieldset[data-step]", form);
      const show = (i) => {
        steps.forEach((s, k) => { s.hidden = k !== i; });
        $$("[data-step-marker]", form.parentElement).forEach((m, k) => m.setAttribute("aria-current", String(k === i)));
        for (const out of $$("[data-review]", form)) {
          const el = form.elements[out.dataset.review];
          if (!el) continue;
          let text = el.type === "checkbox" ? (el.checked ? "Yes" : "No") : el.value;
          if (el.tagName === "SELECT" && el.selectedIndex > 0) text = el.options[el.selectedIndex].text;
          if (el.length !== undefined && !el.tagName) text = (Array.from(el).find((r) => r.checked) || {}).value || "";
          out.textContent = text || "—";
        }
      };
      steps.forEach((step, i) => {
        $$("[data-next]", step).forEach((b) => b.addEventListener("click", () => {
          let ok = true;
          for (const el of $$("[name]", step)) {
            const err = $(`[data-error-for="${el.name}"]`, step);
            const empty = (el.required || el.dataset.required !== undefined) && !String(el.value).trim()
              && !(el.type === "radio" && $$(`input[name="${el.name}"]`, step).some((r) => r.checked));
            if (err) { err.hidden = !empty; err.textContent = empty ? "This field is required." : ""; }
            if (empty) ok = false;
          }
          if (ok) show(i + 1);
        }));
        $$("[data-prev]", step).forEach((b) => b.addEventListener("click", () => show(i - 1)));
      });
      show(0);
    }
  }

  // ---- values from the query: a booking form knows which slot or fare it is for ----
  function fromQuery() {
    const q = params();
    for (const el of $$("input[data-from-query]")) el.value = q.get(el.dataset.fromQuery) || "";
    for (const el of $$("[data-if-query]")) {
      const [name, value] = el.dataset.ifQuery.split("=");
      el.hidden = q.get(name) !== value;
    }
    for (const el of $$("[data-unless-query]")) el.hidden = !!q.get(el.dataset.unlessQuery);
  }

  // ---- confirm step: the draft is shown, and stored only when confirmed ----
  async function confirmStep() {
    const box = $("[data-confirm-doc]");
    if (!box) return;
    const { data } = await api("GET", "/api/state");
    const draft = data[box.dataset.confirmDoc];
    $$("[data-no-draft]").forEach((el) => { el.hidden = !!draft; });
    box.hidden = !draft;
    if (!draft) return;
    const labels = JSON.parse(box.dataset.labels || "{}");
    for (const out of $$("[data-draft]", box)) {
      const value = draft[out.dataset.draft];
      out.textContent = out.hasAttribute("data-money") ? money(Number(value)) : ((labels[out.dataset.draft] || {})[value] || value || "—");
    }
    $("#confirm", box).addEventListener("click", async () => {
      const res = await api("POST", "/api/" + box.dataset.collection, draft);
      if (!res.ok) return;
      await api("PUT", "/api/doc/" + box.dataset.confirmDoc, null);
      go(box.dataset.done);
    });
  }

  // ---- save buttons and the saved list ----
  async function saving() {
    const buttons = $$("[data-save-to]"), lists = $$("[data-saved-list]");
    if (!buttons.length && !lists.length) return;
    const { data } = await api("GET", "/api/state");
    for (const b of buttons) {
      const saved = () => (data[b.dataset.saveTo] || []).some((r) => r[b.dataset.key] === b.dataset.value);
      const mark = () => { if (saved()) { b.textContent = "Saved ✓"; b.setAttribute("aria-pressed", "true"); } };
      mark();
      b.addEventListener("click", async () => {
        if (saved()) return;
        const record = { [b.dataset.key]: b.dataset.value, title: b.dataset.title, href: location.pathname };
        const res = await api("POST", "/api/" + b.dataset.saveTo, record);
        if (res.ok) { (data[b.dataset.saveTo] = data[b.dataset.saveTo] || []).push(res.data.record); mark(); }
      });
    }
    for (const list of lists) {
      const records = data[list.dataset.savedList] || [];
      list.innerHTML = records.map((r) => `<li><a href="${esc(r.href)}">${esc(r.title)}</a>${r.seats ? " · seats " + esc(String(r.seats).split(",").join(", ")) : ""}</li>`).join("")
        || `<li class="muted">${esc(list.dataset.emptyText || "Nothing saved yet.")}</li>`;
    }
  }

  // the genres' parts (genres/<genre>/flows.js) replace the next line, in its order (weblica/site_runtime);
  // they define the functions of theirs that the handler line calls
  // @parts: travel events government education real_estate saas transit
  on("*", () => { hotelNights(); resultLists(); steppedForms(); fromQuery(); eligibility(); prerequisites(); mortgage(); confirmStep(); saving(); boards(); planner(); stays(); seatMaps(); ticketStock(); bookedOut(); });
})();
