// weblica synth widgets: facets, paging, menus, calendars, sliders, steppers, autocomplete, cart,
// records, bookings, store map and sortable lists. Each wires itself up only where its markup exists.
(() => {
  "use strict";
  const W = window.WEBLICA;
  const { $, $$, api, money, esc, catalog, go } = W;
  // chained handlers: one that throws must not stop the ones after it (the error still surfaces)
  const on = (key, fn) => { const prev = W.handlers[key]; W.handlers[key] = prev ? () => { try { prev(); } finally { fn(); } } : fn; };

  // ---- filter + sort: the URL is the state (canonical parameter order) ----
  on("page:facets", async () => {
    const form = $("[data-facets]");
    const data = await catalog();
    const params = new URLSearchParams(location.search);
    const kinds = new Set(params.getAll("kind"));
    $$("[data-kind]", form).forEach((el) => {
      const v = el.dataset.kind;
      if (el.type === "checkbox") el.checked = kinds.has(v); else el.setAttribute("aria-pressed", String(kinds.has(v)));
    });
    const setVal = (name, v) => { const el = form.elements[name]; if (el && v !== null) el.value = v; };
    setVal("maker", params.get("maker")); setVal("max", params.get("max")); setVal("sort", params.get("sort"));
    const sortLabel = $("#f-sort [data-cs-trigger]");
    // the first FACET_PAGE results show, "Show more" adds as many again (a shop's long result list);
    // changing a filter starts again from the first results
    const FACET_PAGE = 48;
    let limit = FACET_PAGE;
    const moreButton = $("#facets-more");
    function read() {
      const chosen = $$("[data-kind]", form).filter((el) => el.type === "checkbox" ? el.checked : el.getAttribute("aria-pressed") === "true").map((el) => el.dataset.kind).sort();
      return { kinds: chosen, maker: form.elements.maker.value, max: form.elements.max.value, sort: form.elements.sort.value };
    }
    function render() {
      const f = read();
      const q = new URLSearchParams();
      f.kinds.forEach((k) => q.append("kind", k));
      if (f.maker) q.set("maker", f.maker);
      if (f.max) q.set("max", f.max);
      if (f.sort) q.set("sort", f.sort);
      history.replaceState(null, "", "/items" + (q.toString() ? "?" + q.toString() : ""));
      let items = data.items.filter((it) => (!f.kinds.length || f.kinds.includes(it.kind)) && (!f.maker || it.maker === f.maker) && (!f.max || it.price <= Number(f.max)));
      const cmp = { "price-asc": (a, b) => a.price - b.price, "price-desc": (a, b) => b.price - a.price,
        "rating-desc": (a, b) => b.rating - a.rating || a.price - b.price, "name-asc": (a, b) => a.name.localeCompare(b.name) }[f.sort];
      if (cmp) items = items.slice().sort(cmp);
      $("[data-result-count]").textContent = `${items.length} ${items.length === 1 ? "result" : "results"}`;
      $("[data-results]").innerHTML = items.slice(0, limit).map(W.itemRow).join("") || "<li>No matches.</li>";
      // display, not only [hidden]: a style's button rule would show a hidden button
      if (moreButton) { moreButton.hidden = items.length <= limit; moreButton.style.display = moreButton.hidden ? "none" : ""; }
    }
    const refilter = () => { limit = FACET_PAGE; render(); };
    $$("[data-kind]", form).forEach((el) => el.addEventListener(el.type === "checkbox" ? "change" : "click", () => {
      if (el.type !== "checkbox") el.setAttribute("aria-pressed", String(el.getAttribute("aria-pressed") !== "true"));
      refilter();
    }));
    form.addEventListener("change", refilter);
    form.addEventListener("input", refilter);
    form.addEventListener("submit", (e) => { e.preventDefault(); refilter(); });
    if (moreButton) moreButton.addEventListener("click", () => { limit += FACET_PAGE; render(); });
    render();
  });

  // ---- load more / infinite scroll: the next page of the catalog's order is appended ----
  on("page:paged", async () => {
    const list = $("[data-paged]");
    if (!list) return;
    const data = await catalog();
    const size = Number(list.dataset.pageSize);
    let shown = $$("li", list).length;
    const sentinel = $("[data-sentinel]");
    let io = null;
    const more = () => {
      const next = data.items.slice(shown, shown + size);
      list.insertAdjacentHTML("beforeend", next.map(W.itemRow).join(""));
      shown += next.length;
      $("[data-shown-count]").textContent = String(shown);
      if (shown >= data.items.length) {
        const b = $("#load-more"); if (b) b.hidden = true;
        if (io) io.disconnect();
        if (sentinel) sentinel.remove();
      } else if (io) {
        // an observer reports changes only: if the new rows did not push the sentinel out of view it
        // stays "intersecting" and would never fire again, so observe afresh (that reports the current
        // state) and keep loading while the sentinel is still visible
        io.unobserve(sentinel); io.observe(sentinel);
      }
    };
    const button = $("#load-more");
    if (button) button.addEventListener("click", more);
    if (sentinel) {
      io = new IntersectionObserver((es) => { if (es.some((e) => e.isIntersecting)) more(); });
      io.observe(sentinel);
    }
  });

  // ---- click-to-expand tree menus ----
  on("*", () => {
    for (const btn of $$("[data-tree-toggle]")) {
      btn.addEventListener("click", () => {
        const list = $(`[data-tree="${btn.dataset.treeToggle}"]`);
        list.hidden = !list.hidden;
        btn.setAttribute("aria-expanded", String(!list.hidden));
      });
    }
  });

  // ---- custom calendar: month grid with navigation; the ISO date lives in a hidden input ----
  const pad = (n) => String(n).padStart(2, "0");
  function calendar(box) {
    const input = $("input[type=hidden]", box), pop = $(".dp-pop", box), label = $("[data-dp-label]", box);
    const months = (window.SITE.locale || {}).month_names || [];
    let [y, m] = box.dataset.month.split("-").map(Number);
    // a booking window (data-min / data-max, ISO dates): its days alone are offered, and the months
    // page no further than it, as a real booking calendar does (the server refuses a date outside)
    const lo = box.dataset.min || "", hi = box.dataset.max || "";
    const prev = $("[data-dp-prev]", box), next = $("[data-dp-next]", box);
    const shown = () => `${y}-${pad(m)}`;
    function draw() {
      $("[data-dp-month]", box).textContent = `${months[m - 1] || m} ${y}`;
      prev.disabled = Boolean(lo) && shown() <= lo.slice(0, 7);
      next.disabled = Boolean(hi) && shown() >= hi.slice(0, 7);
      const first = new Date(Date.UTC(y, m - 1, 1)).getUTCDay();
      const days = new Date(Date.UTC(y, m, 0)).getUTCDate();
      let html = ["Mo", "Tu", "We", "Th", "Fr", "Sa", "Su"].map((d) => `<span class="dp-dow">${d}</span>`).join("");
      for (let i = 0; i < (first + 6) % 7; i++) html += "<span></span>";
      for (let d = 1; d <= days; d++) {
        const iso = `${y}-${pad(m)}-${pad(d)}`;
        const out = (lo && iso < lo) || (hi && iso > hi) ? " disabled" : "";
        html += `<button type="button" class="dp-day${iso === input.value ? " selected" : ""}" data-date="${iso}"${out}>${d}</button>`;
      }
      $(".dp-grid", box).innerHTML = html;
    }
    $("[data-dp-open]", box).addEventListener("click", () => { pop.hidden = !pop.hidden; draw(); });
    prev.addEventListener("click", () => { if (prev.disabled) return; m -= 1; if (m < 1) { m = 12; y -= 1; } draw(); });
    next.addEventListener("click", () => { if (next.disabled) return; m += 1; if (m > 12) { m = 1; y += 1; } draw(); });
    $(".dp-grid", box).addEventListener("click", (e) => {
      const b = e.target.closest("[data-date]");
      if (!b || b.disabled) return;
      input.value = b.dataset.date; label.textContent = b.dataset.date; pop.hidden = true;
    });
  }
  on("*", () => $$("[data-datepicker]").forEach(calendar));

  // ---- custom slider (click the track or use arrow keys on the thumb) and steppers ----
  function slider(box) {
    // the value readout sits in the field's label, beside the slider box rather than inside it
    const field = box.closest("[data-field]") || box.parentElement;
    const input = $("input[type=hidden]", box), track = $(".cs-track", box), thumb = $(".cs-thumb", box), out = $("[data-slider-value]", field);
    const min = Number(box.dataset.min), max = Number(box.dataset.max), step = Number(box.dataset.step);
    const set = (v) => {
      v = Math.min(max, Math.max(min, Math.round((v - min) / step) * step + min));
      input.value = String(v); if (out) out.textContent = box.dataset.money ? money(v) : String(v);
      thumb.style.left = `${((v - min) / (max - min)) * 100}%`;
      thumb.setAttribute("aria-valuenow", String(v));
    };
    set(Number(input.value));
    const fromX = (x) => { const r = track.getBoundingClientRect(); set(min + ((x - r.left) / r.width) * (max - min)); };
    let dragging = false;
    track.addEventListener("pointerdown", (e) => { if (e.target !== thumb) fromX(e.clientX); dragging = true; });
    document.addEventListener("pointermove", (e) => { if (dragging) fromX(e.clientX); });
    document.addEventListener("pointerup", () => { dragging = false; });
    thumb.addEventListener("keydown", (e) => {
      const d = { ArrowRight: step, ArrowUp: step, ArrowLeft: -step, ArrowDown: -step }[e.key];
      if (d) { e.preventDefault(); set(Number(input.value) + d); }
    });
  }
  on("*", () => $$("[data-slider]").forEach(slider));
  on("*", () => {
    for (const box of $$("[data-stepper]")) {
      const input = $("input", box), out = $("[data-stepper-value]", box);
      const min = Number(box.dataset.min), max = Number(box.dataset.max);
      const set = (v) => { v = Math.min(max, Math.max(min, v)); input.value = String(v); out.textContent = String(v); };
      $("[data-step-down]", box).addEventListener("click", () => set(Number(input.value) - 1));
      $("[data-step-up]", box).addEventListener("click", () => set(Number(input.value) + 1));
    }
  });

  // ---- autocomplete: suggestions must be picked; typed text alone is not a value ----
  on("*", async () => {
    const boxes = $$("[data-ac]");
    if (!boxes.length) return;
    const data = await catalog();
    for (const box of boxes) {
      const text = $("input[type=text]", box), hidden = $("input[type=hidden]", box), list = $(".ac-list", box);
      const options = data.ac_options[box.dataset.ac] || [];
      text.addEventListener("input", () => {
        hidden.value = "";
        const q = text.value.trim().toLowerCase();
        const hits = q ? options.filter((o) => o.toLowerCase().includes(q)).slice(0, 8) : [];
        list.innerHTML = hits.map((o) => `<li role="option" data-value="${esc(o)}">${esc(o)}</li>`).join("");
        list.hidden = hits.length === 0;
      });
      list.addEventListener("click", (e) => {
        const li = e.target.closest("[data-value]");
        if (!li) return;
        hidden.value = li.dataset.value; text.value = li.dataset.value; list.hidden = true;
      });
    }
  });

  // ---- cart page and checkout ----
  on("page:cart", async () => {
    const [{ data: state }, data] = await Promise.all([api("GET", "/api/state"), catalog()]);
    const cart = state.cart || {};
    const byId = Object.fromEntries(data.items.map((i) => [i.id, i]));
    const ids = Object.keys(cart).filter((id) => cart[id] > 0);
    let total = 0;
    $("[data-cart-lines]").innerHTML = ids.map((id) => {
      const it = byId[id]; total += it.price * cart[id];
      return `<tr data-line="${id}"><td>${esc(it.name)}</td><td>${cart[id]}</td><td>${money(it.price * cart[id])}</td>` +
        `<td><button type="button" data-remove="${id}">Remove</button></td></tr>`;
    }).join("") || `<tr><td colspan="4">Your cart is empty.</td></tr>`;
    $("[data-cart-total]").textContent = money(total);
    $$("[data-remove]").forEach((b) => b.addEventListener("click", async () => {
      delete cart[b.dataset.remove]; await api("PUT", "/api/doc/cart", cart); location.reload();
    }));
  });
  W.handlers["before-submit:checkout-form"] = (values) => { values.items = W._cart || {}; };
  on("page:checkout", async () => { const { data } = await api("GET", "/api/state"); W._cart = data.cart || {}; });
  on("page:order-done", async () => { await api("PUT", "/api/doc/cart", {}); W.cartCount(); });

  // ---- account pages: the settings form knows who is logged in ----
  on("page:settings", async () => {
    const { data } = await api("GET", "/api/state");
    const user = (data.session || {}).user;
    $("[data-logged-in]").hidden = !user; $("[data-logged-out]").hidden = !!user;
    if (user) { $("[data-user-name]").textContent = user; $("#settings-form").elements.user.value = user; }
  });

  // ---- records (to-do, address book): add, edit, complete, delete against the state API ----
  on("page:records", async () => {
    const box = $("[data-records]");
    async function draw() {
      const { data } = await api("GET", "/api/state");
      box.innerHTML = (data.records || []).map((r) => `<li class="record${r.done ? " done" : ""}" data-record="${r.id}">` +
        `<input type="checkbox" data-toggle="${r.id}" aria-label="Done"${r.done ? " checked" : ""}>` +
        `<span class="grow" data-title>${esc(r.title)}</span><span class="muted">${esc(r.note || "")}</span>` +
        `<button type="button" data-edit="${r.id}">Edit</button><button type="button" data-delete="${r.id}">Delete</button></li>`).join("");
      $("[data-record-count]").textContent = String((data.records || []).length);
    }
    box.addEventListener("click", async (e) => {
      const t = e.target;
      if (t.dataset.delete) { await api("DELETE", `/api/records/${t.dataset.delete}`); await draw(); }
      else if (t.dataset.toggle) { await api("PATCH", `/api/records/${t.dataset.toggle}`, { done: t.checked }); await draw(); }
      else if (t.dataset.edit) {
        const li = t.closest("[data-record]"), title = $("[data-title]", li);
        title.innerHTML = `<input type="text" data-edit-input value="${esc(title.textContent)}"> <button type="button" data-save="${t.dataset.edit}">Save</button>`;
      } else if (t.dataset.save) {
        const value = $("[data-edit-input]", t.closest("[data-record]")).value.trim();
        if (value) { await api("PATCH", `/api/records/${t.dataset.save}`, { title: value }); await draw(); }
      }
    });
    $("#add-record").addEventListener("submit", async (e) => {
      e.preventDefault();
      const title = e.target.elements.title.value.trim();
      if (!title) return;
      const { data } = await api("GET", "/api/state");
      const n = (data.records || []).reduce((a, r) => Math.max(a, Number(String(r.id).slice(1)) || 0), 0) + 1;
      await api("POST", "/api/records", { id: `r${n}`, title, done: false, note: "" });
      e.target.reset(); await draw();
    });
    await draw();
  });

  // ---- bookings ----
  on("page:offers", () => {
    $$("[data-book]").forEach((b) => b.addEventListener("click", async () => {
      const res = await api("POST", "/api/bookings", { offer: b.dataset.book, time: b.dataset.time, day: b.dataset.day, price: Number(b.dataset.price) });
      if (res.ok) go("/booked?offer=" + encodeURIComponent(b.dataset.book));
    }));
  });

  // ---- store map: pins open a card; "set as my store" is saved ----
  on("page:stores", () => {
    $$("[data-pin]").forEach((pin) => pin.addEventListener("click", () => {
      $$("[data-card]").forEach((c) => { c.hidden = c.dataset.card !== pin.dataset.pin; });
    }));
    $$("[data-choose]").forEach((b) => b.addEventListener("click", async () => {
      await api("PUT", "/api/doc/mystore", { id: b.dataset.choose, name: b.dataset.name });
      $("[data-mystore]").textContent = b.dataset.name;
    }));
  });

  // ---- sortable list with pointer events (works with any press-move-release) ----
  on("page:reorder", () => {
    const list = $("[data-sortable]");
    let dragged = null;
    list.addEventListener("pointerdown", (e) => {
      const handle = e.target.closest("[data-handle]");
      if (!handle) return;
      e.preventDefault(); dragged = handle.closest("[data-id]"); dragged.classList.add("dragging");
    });
    document.addEventListener("pointerup", (e) => {
      if (!dragged) return;
      const target = $$("[data-id]", list).find((li) => { const r = li.getBoundingClientRect(); return e.clientY >= r.top && e.clientY <= r.bottom; });
      if (target && target !== dragged) {
        const r = target.getBoundingClientRect();
        list.insertBefore(dragged, e.clientY < r.top + r.height / 2 ? target : target.nextSibling);
      }
      dragged.classList.remove("dragging"); dragged = null;
      $$("[data-id]", list).forEach((li, i) => { $("[data-pos]", li).textContent = String(i + 1); });
    });
    $("#save-order").addEventListener("click", async () => {
      await api("PUT", "/api/doc/order", { ids: $$("[data-id]", list).map((li) => li.dataset.id) });
      $("[data-saved]").hidden = false;
    });
  });
})();
(() => {
  "use strict";
  const W = window.WEBLICA;
  // date ranges: the end must come after the start
  W.handlers["before-submit:request-form"] = (values, form) => {
    if (values.start && values.end && values.end <= values.start) {
      const box = form.querySelector("[data-form-error]");
      box.textContent = "The end date must be after the start date."; box.hidden = false;
      return false;
    }
    return true;
  };
})();
