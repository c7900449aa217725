// part of flows.js: The journey planner: itineraries from the timetable.
// weblica/site_runtime splices it into flows.js's closure (its $, api, on, ...), without this header.
  // ---- journey planner: itineraries with at most one change from the timetable in data-network;
  // weblica/synth/genres/transit/flow.py itineraries() computes the same list in the same order ----
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

