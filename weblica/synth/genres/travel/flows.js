// part of flows.js: Hotel stays: nights, sold-out rates, rooms booked out by this episode's bookings, stay links and forms.
// weblica/site_runtime splices it into flows.js's closure (its $, api, on, ...), without this header.
  // ---- hotel availability (weblica/synth/genres/travel/nights.py): a stay's nights are the dates from
  // the check-in up to the night before the check-out; a room sold out on one of them cannot be had.
  // A results row is priced by its rooms free for the stay (what the filters and sorts read), and a
  // hotel with none is left out; null: the query holds no valid stay ----
  function stayNights(checkin, checkout) {
    const iso = /^\d{4}-\d{2}-\d{2}$/;
    if (!iso.test(checkin || "") || !iso.test(checkout || "") || checkout <= checkin) return null;
    const out = [];
    let t = Date.UTC(+checkin.slice(0, 4), +checkin.slice(5, 7) - 1, +checkin.slice(8, 10));
    for (let d = checkin; d < checkout && out.length < 366; t += 86400000, d = new Date(t).toISOString().slice(0, 10)) out.push(d);
    return out;
  }
  const soldOutOn = (stay, out) => stay !== null && out.some((d) => stay.includes(d));
  function hotelNights() {
    const q = params();
    if (!q.get("checkin") || !q.get("checkout")) return;
    const stay = stayNights(q.get("checkin"), q.get("checkout"));
    for (const row of $$("[data-room-nights]")) {
      const rooms = stay ? JSON.parse(row.dataset.roomNights).filter((r) => !soldOutOn(stay, r.out)) : [];
      if (!rooms.length) { row.setAttribute("data-unavailable", ""); continue; }
      const from = Math.min(...rooms.map((r) => r.from));
      row.setAttribute("data-v-max_price", String(from));
      row.setAttribute("data-s-price", String(from));
      row.setAttribute("data-v-guests", String(Math.max(...rooms.map((r) => r.sleeps))));
      $$("[data-from-price]", row).forEach((el) => { el.textContent = money(from); });
    }
  }
  function soldOutRates() {
    const q = params();
    const stay = stayNights(q.get("checkin"), q.get("checkout"));
    for (const el of $$("[data-nights-out]")) {
      const out = soldOutOn(stay, el.dataset.nightsOut.split(" ").filter(Boolean));
      $$("[data-sold-out]", el).forEach((x) => { x.hidden = !out; });
      if (out) $$("[data-reserve]", el).forEach((a) => { a.hidden = true; a.style.display = "none"; });
    }
  }

  // ---- rooms booked out: this episode's stored bookings use one room of their type a night; a night on
  // which they hold every room there is counts as sold out, for the results, the Reserve links and the
  // booking form. A booking's rate is "h<hotel>-r<n>"; its room is named on the pages that show it ----
  async function bookedOut() {
    const rooms = $$("[data-room][data-rooms-free]"), rows = $$("[data-room-nights]");
    if (!rooms.length && !rows.length) return;
    const { data } = await api("GET", "/api/state");
    const bookings = data.hotel_bookings || [];
    if (!bookings.length) return;
    const roomOf = {};
    for (const el of rooms) roomOf[el.dataset.rate || (el.dataset.ifQuery || "").replace(/^rate=/, "")] = el.dataset.room;
    for (const row of rows) for (const [rate, room] of JSON.parse(row.dataset.rateRooms || "[]")) roomOf[rate] = room;
    const held = {};
    for (const b of bookings) {
      const room = roomOf[b.rate];
      if (!room) continue;
      for (const night of stayNights(b.checkin, b.checkout) || []) held[room + " " + night] = (held[room + " " + night] || 0) + 1;
    }
    const full = (room, free) => Object.keys(held).filter((k) => k.startsWith(room + " ") && held[k] >= Number(free))
      .map((k) => k.slice(room.length + 1));
    for (const el of rooms) {
      el.dataset.nightsOut = [...new Set(el.dataset.nightsOut.split(" ").filter(Boolean).concat(full(el.dataset.room, el.dataset.roomsFree)))].sort().join(" ");
    }
    let changed = false;
    for (const row of rows) {
      const nights = JSON.parse(row.dataset.roomNights);
      for (const r of nights) if (r.key) r.out = [...new Set(r.out.concat(full(r.key, r.rooms)))].sort();
      const now = JSON.stringify(nights);
      changed = changed || now !== JSON.stringify(JSON.parse(row.dataset.roomNights));
      row.dataset.roomNights = now;
    }
    soldOutRates();
    if (changed) { hotelNights(); resultLists(); }  // re-priced: filtered and sorted again
  }

  // ---- hotels: links and forms carry the stay (dates, guests) from the query; rates show the stay's
  // total; a room too small for the party cannot be reserved; check-out must follow check-in ----
  function stays() {
    const q = params();
    for (const a of $$("a[data-carry]")) {
      const url = new URL(a.getAttribute("href"), location.href);
      for (const name of a.dataset.carry.split(",")) if (q.get(name)) url.searchParams.set(name, q.get(name));
      a.setAttribute("href", url.pathname + url.search);
    }
    for (const form of $$("form[data-prefill]")) {
      const keep = new URLSearchParams();
      for (const name of form.dataset.prefill.split(",")) if (q.get(name)) keep.set(name, q.get(name));
      prefill(form, keep);
      W.handlers["before-submit:" + form.id] = (values) => {
        const out = $("[data-form-error]", form);
        if (!(values.checkin && values.checkout && values.checkout > values.checkin)) {
          out.textContent = "Check-out must be after check-in.";
          out.hidden = false;
          return false;
        }
        const rate = $$("[data-nights-out]").find((el) => el.dataset.ifQuery === "rate=" + values.rate);
        const stay = stayNights(values.checkin, values.checkout);
        const nights = rate ? rate.dataset.nightsOut.split(" ").filter((d) => stay && stay.includes(d)) : [];
        if (!nights.length) return true;
        out.textContent = "Sorry, this room is sold out on the night of " + nights.join(", ") + "; choose other dates or another room.";
        out.hidden = false;
        return false;
      };
    }
    const nights = (stayNights(q.get("checkin"), q.get("checkout")) || []).length;
    if (nights > 0) {
      $$("[data-stay-summary]").forEach((el) => { el.hidden = false; });
      $$("[data-stay-dates]").forEach((el) => { el.textContent = q.get("checkin") + " – " + q.get("checkout"); });
      $$("[data-stay-nights]").forEach((el) => { el.textContent = String(nights); });
      for (const el of $$("[data-night-price]")) {
        const total = $("[data-stay-total]", el.closest("tr, section") || document);
        if (total) total.textContent = money(nights * Number(el.dataset.nightPrice)) + " for " + nights + " night" + (nights > 1 ? "s" : "");
      }
    }
    const guests = Number(q.get("guests") || 0);
    for (const row of $$("tr[data-sleeps]")) {
      const small = guests > Number(row.dataset.sleeps);
      $$("[data-reserve]", row).forEach((a) => { a.hidden = small; a.style.display = small ? "none" : ""; });
      $$("[data-too-small]", row).forEach((el) => { el.hidden = !small; });
    }
    soldOutRates();  // after the party check, which shows the Reserve links it keeps
  }

