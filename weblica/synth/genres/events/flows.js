// part of flows.js: Event tickets: ticket stock per type and zone, and seat maps.
// weblica/site_runtime splices it into flows.js's closure (its $, api, on, ...), without this header.
  // ---- ticket stock: a type's "N left" counts this episode's stored orders for the event, and a seated
  // zone's "N seats left" its free seats less those the episode's orders hold (as the seat map shows
  // them); a type with none left can no longer be chosen. An order is for at least one ticket, each
  // quantity a whole number up to what is left (the server refuses any other order anyway) ----
  function ticketOrder(form) {
    W.handlers["before-submit:" + form.id] = (values) => {
      const fields = $$("input[name^='qty_']", form);
      const bad = fields.find((el) => values[el.name] !== null && !(Number.isInteger(values[el.name])
        && values[el.name] >= 0 && (el.max === "" || values[el.name] <= Number(el.max))));
      const total = fields.reduce((sum, el) => sum + (Number(values[el.name]) || 0), 0);
      const label = bad && $(`label[for="${CSS.escape(bad.id)}"]`, form);
      const msg = bad ? `${label ? label.textContent.replace(/\s*\(.*$/, "") : "Tickets"}: choose a whole number from 0 to ${bad.max || 10}.`
        : total ? "" : "Choose at least one ticket.";
      if (!msg) return true;
      const out = $("[data-form-error]", form);
      out.textContent = msg;
      out.hidden = false;
      return false;
    };
  }
  async function ticketStock() {
    const table = $("[data-ticket-types]"), form = $("form#ticket-form");
    if (!table || !form) return;
    ticketOrder(form);
    const rows = $$("[data-left], [data-zone-free]", table);
    if (!rows.length) return;
    const { data } = await api("GET", "/api/state");
    const event = form.elements.event.value;
    const orders = (data.ticket_orders || []).filter((o) => o.event === event);
    // seats held by the episode's orders of either kind (picked on the map, or "best available")
    const held = [...(data.seat_orders || []).filter((o) => o.event === event), ...orders]
      .flatMap((o) => String(o.seats || "").split(",").map((id) => id.trim()).filter(Boolean));
    for (const row of rows) {
      const name = "qty_" + row.dataset.ticket;
      let left, text;
      if (row.dataset.left !== undefined) {
        left = Math.max(0, Number(row.dataset.left) - orders.reduce((sum, o) => sum + (Number(o[name]) || 0), 0));
        text = left + " left";
      } else {
        const zoneRows = row.dataset.zoneRows.split(" ");
        left = Math.max(0, Number(row.dataset.zoneFree) - held.filter((id) => zoneRows.includes(id.replace(/\d+$/, ""))).length);
        text = left === 1 ? "1 seat left" : left + " seats left";
      }
      $("[data-ticket-left]", row).textContent = left ? text : "Sold out";
      const field = $(`[data-field="${CSS.escape(name)}"]`, form);
      if (!field) continue;
      for (const el of $$("input, button, select", field)) {
        if (el.max !== undefined && el.type === "number") el.max = String(Math.min(Number(el.max) || left, left));
        if (!left) el.disabled = true;
      }
      if (!left) field.classList.add("sold-out");
    }
  }

  // ---- seat maps: seats held by this episode's stored orders show as taken; picking toggles a seat;
  // the form sends the picked seats in map order (the server refuses a taken one) ----
  async function seatMaps() {
    const map = $("[data-seat-map]");
    if (!map) return;
    const form = $("form#seat-form"), input = $("[data-seat-input]", form);
    const seats = $$("[data-seat]", map), max = Number(map.dataset.max || 8);
    const { data } = await api("GET", "/api/state");
    // seats a ticket-type order got as "best available" are held too (the server picked them)
    for (const order of [...(data.seat_orders || []), ...(data.ticket_orders || [])]) {
      if (order.event !== map.dataset.seatMap) continue;
      for (const id of String(order.seats || "").split(",")) {
        const b = $(`[data-seat="${CSS.escape(id.trim())}"]`, map);
        if (b) { b.disabled = true; b.classList.add("taken"); b.setAttribute("aria-pressed", "false"); }
      }
    }
    const update = () => {
      const picked = seats.filter((b) => b.getAttribute("aria-pressed") === "true");
      input.value = picked.map((b) => b.dataset.seat).join(",");
      $("[data-selected-seats]").textContent = picked.length
        ? picked.map((b) => `Row ${b.dataset.seat.replace(/\d+$/, "")} seat ${b.dataset.seat.replace(/^\D+/, "")} (${b.dataset.zone})`).join(", ")
        : "No seats chosen yet.";
      $("[data-seats-total]").textContent = money(picked.reduce((sum, b) => sum + Number(b.dataset.price), 0));
    };
    for (const b of seats) {
      b.addEventListener("click", () => {
        if (b.disabled) return;
        const on = b.getAttribute("aria-pressed") !== "true";
        if (on && seats.filter((x) => x.getAttribute("aria-pressed") === "true").length >= max) return;
        b.setAttribute("aria-pressed", String(on));
        update();
      });
    }
    W.handlers["before-submit:" + form.id] = () => {
      if (input.value) return true;
      const out = $("[data-form-error]", form);
      out.textContent = "Choose at least one seat on the map.";
      out.hidden = false;
      return false;
    };
    update();
  }

