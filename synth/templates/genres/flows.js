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

  // ---- eligibility: the questionnaire's rules decide, and the result is shown with its reason ----
  function eligibility() {
    for (const form of $$("form[data-eligibility]")) {
      const rules = JSON.parse(form.dataset.eligibility);
      W.handlers["before-submit:" + form.id] = (values) => {
        let reason = rules.pass;
        for (const rule of rules.rules) {
          const v = values[rule.field];
          const fails = rule.op === "is" ? v !== rule.value : rule.op === "min" ? !(Number(v) >= rule.value) : !(Number(v) <= rule.value);
          if (fails) { reason = rule.reason; values.result = "Not eligible"; break; }
        }
        if (!values.result) values.result = "Eligible";
        values.service = rules.service;
        const out = $("[data-eligibility-result]");
        out.hidden = false;
        $("[data-result]", out).textContent = values.result;
        $("[data-reason]", out).textContent = reason;
        return true;
      };
    }
  }

  // ---- prerequisites: an enrollment form refuses (stores nothing) while a required course is missing ----
  function prerequisites() {
    for (const form of $$("form[data-prereq]")) {
      const rule = JSON.parse(form.dataset.prereq);
      W.handlers["before-submit:" + form.id] = () => {
        const missing = rule.needs.filter((c) => !rule.done.includes(c));
        const out = $("[data-prereq-error]", form);
        if (!missing.length) return true;
        out.textContent = "You cannot enroll yet: complete " + missing.join(", ") + " first.";
        out.hidden = false;
        return false;
      };
    }
  }

  // ---- mortgage calculator: the monthly payment of a fixed-rate loan (genres/real_estate.py has the same formula) ----
  function mortgage() {
    for (const form of $$("form[data-mortgage]")) {
      prefill(form, params());
      const out = $("[data-monthly]", form.parentElement);
      form.addEventListener("submit", (ev) => {
        ev.preventDefault();
        const v = (name) => Number(form.elements[name].value);
        const principal = v("price") - v("down"), r = v("rate") / 1200, n = v("years") * 12;
        if (!(principal > 0) || !(n > 0) || !(r >= 0)) { out.textContent = "Enter a price above the down payment and a term."; return; }
        const monthly = r === 0 ? principal / n : principal * r / (1 - Math.pow(1 + r, -n));
        out.textContent = money(monthly) + " a month";
      });
    }
  }

  // ---- boards: stored card moves put each card in its column; a saved document refills its form ----
  async function boards() {
    const board = $("[data-board]"), cols = $$("[data-card-column]"), docs = $$("form[data-doc-form]");
    if (!board && !cols.length && !docs.length) return;
    const { data } = await api("GET", "/api/state");
    for (const move of data.card_moves || []) {
      for (const el of cols) if (el.dataset.cardColumn === move.card) el.textContent = move.column;
      const card = board && $(`[data-card="${CSS.escape(String(move.card))}"]`, board);
      const column = board && $(`[data-column="${CSS.escape(String(move.column))}"] [data-cards]`, board);
      if (card && column) column.appendChild(card);
    }
    if (board) for (const col of $$("[data-column]", board)) $("[data-column-count]", col).textContent = String($$("[data-card]", col).length);
    for (const form of docs) {
      const doc = data[form.dataset.docForm];
      if (!doc || doc.project !== (form.elements.project || {}).value) continue;
      for (const el of form.elements) if (el.type === "checkbox" && el.name in doc) el.checked = !!doc[el.name];
    }
  }

  // ---- journey planner: itineraries with at most one change from the timetable in data-network;
  // weblica/synth/genres/transit.py itineraries() computes the same list in the same order ----
  function planner() {
    const box = $("[data-planner]");
    if (!box) return;
    const q = params(), from = q.get("from"), to = q.get("to"), after = q.get("after");
    if (!from || !to || !after) return;
    const net = JSON.parse(box.dataset.network), min = (t) => Number(t.slice(0, 2)) * 60 + Number(t.slice(3, 5));
    const hhmm = (m) => String(Math.floor(m / 60)).padStart(2, "0") + ":" + String(m % 60).padStart(2, "0");
    const start = min(after), out = [];
    for (const a of net.lines) {
      const i = a.stops.indexOf(from);
      if (i < 0) continue;
      for (const s of a.starts) {
        const dep = s + a.offsets[i];
        if (dep < start) continue;
        for (let j = i + 1; j < a.stops.length; j++) {
          const stop = a.stops[j], arr1 = s + a.offsets[j];
          if (stop === to) { out.push({ dep, arr: arr1, changes: 0, legs: [[a.name, from, stop, dep, arr1]] }); continue; }
          for (const b of net.lines) {
            if (b === a) continue;
            const x = b.stops.indexOf(stop), y = b.stops.indexOf(to);
            if (x < 0 || y < 0 || x >= y) continue;
            const next = b.starts.find((t) => t + b.offsets[x] >= arr1 + net.change);
            if (next === undefined) continue;
            const arr = next + b.offsets[y];
            out.push({ dep, arr, changes: 1, legs: [[a.name, from, stop, dep, arr1], [b.name, stop, to, next + b.offsets[x], arr]] });
          }
        }
      }
    }
    const py = (legs) => "[" + legs.map((l) => "[" + l.map((v) => typeof v === "string" ? `'${v}'` : v).join(", ") + "]").join(", ") + "]";
    out.sort((u, v) => u.arr - v.arr || v.dep - u.dep || u.changes - v.changes || (py(u.legs) < py(v.legs) ? -1 : py(u.legs) > py(v.legs) ? 1 : 0));
    const seen = new Set(), best = [];
    for (const o of out) { const k = o.dep + "-" + o.arr; if (!seen.has(k)) { seen.add(k); best.push(o); } }
    const list = $("[data-itineraries]", box);
    const shown = best.slice(0, net.shown);
    $("[data-no-itinerary]", box).hidden = shown.length > 0;
    list.innerHTML = shown.map((o) => `<li class="panel" data-itinerary="${hhmm(o.dep).replace(":", "")}-${hhmm(o.arr).replace(":", "")}">` +
      `<strong>${hhmm(o.dep)} → ${hhmm(o.arr)}</strong> · ${o.arr - o.dep} min · ${o.changes ? "1 change" : "direct"}<ul>` +
      o.legs.map((l) => `<li>${esc(l[0])}: ${esc(l[1])} ${hhmm(l[3])} → ${esc(l[2])} ${hhmm(l[4])}</li>`).join("") +
      `</ul><button type="button" class="button" data-save-journey>Save journey</button></li>`).join("");
    shown.forEach((o, k) => {
      const b = $("[data-save-journey]", list.children[k]);
      b.addEventListener("click", async () => {
        if (b.getAttribute("aria-pressed") === "true") return;
        const res = await api("POST", "/api/saved_journeys", { from, to, depart: hhmm(o.dep), arrive: hhmm(o.arr), changes: o.changes });
        if (res.ok) { b.textContent = "Saved ✓"; b.setAttribute("aria-pressed", "true"); }
      });
    });
    box.dataset.planned = "true";
  }

  // @parts: the hotel and ticket flows (flows_hotels.js, flows_tickets.js) go here, in that order (genres/kit.py use_script)
  on("*", () => { hotelNights(); resultLists(); steppedForms(); fromQuery(); eligibility(); prerequisites(); mortgage(); confirmStep(); saving(); boards(); planner(); stays(); seatMaps(); ticketStock(); bookedOut(); });
})();
