// Lightweight page-state probes for action feedback. Evaluated as one function: (args) => state.
// With args.quiet the state is read after two real task turns (MessageChannel is not faked by the
// clock) and `quiet` says whether the DOM-mutation counter stood still meanwhile: one round trip both
// ends a settle and describes the settled page. With args.advance it first runs the page's fake clock
// (Playwright's) that many virtual milliseconds: one round trip advances time, settles and describes.
(args) => {
  const read = (args) => {
    const clip = (s, n) => { s = (s || "").replace(/\s+/g, " ").trim(); return s.length > n ? s.slice(0, n - 1) + "…" : s; };
    const implicitRole = (el) => {
      const tag = el.tagName.toLowerCase();
      if (tag === "a" && el.hasAttribute("href")) return "link";
      if (tag === "button" || tag === "summary") return "button";
      if (tag === "select") return el.multiple ? "listbox" : "combobox";
      if (tag === "textarea") return "textbox";
      if (tag === "input") {
        const t = (el.getAttribute("type") || "text").toLowerCase();
        if (["button", "submit", "reset", "image"].includes(t)) return "button";
        if (t === "checkbox") return "checkbox";
        if (t === "radio") return "radio";
        if (t === "range") return "slider";
        if (t === "number") return "spinbutton";
        if (t === "search") return "searchbox";
        if (el.hasAttribute("list")) return "combobox";
        return "textbox";
      }
      if (/^h[1-6]$/.test(tag)) return "heading";
      if (tag === "img") return "img";
      if (tag === "li") return "listitem";
      if (tag === "option") return "option";
      return "";
    };
    const editable = (el) => !!el && (el.isContentEditable ||
      (el.tagName === "INPUT" && !["button", "submit", "reset", "image", "checkbox", "radio", "file", "hidden", "range", "color"]
        .includes((el.type || "").toLowerCase())) || el.tagName === "TEXTAREA" || el.tagName === "SELECT");
    const describe = (el) => {
      if (!el || el.nodeType !== 1) return null;
      const label = el.getAttribute("aria-label") || el.getAttribute("placeholder") || el.getAttribute("title") ||
        el.getAttribute("alt") || (el.labels && el.labels[0] && el.labels[0].innerText) || el.getAttribute("name") || "";
      const text = ["INPUT", "TEXTAREA", "SELECT"].includes(el.tagName) ? "" : (el.innerText || el.textContent || "");
      let value = null;
      if (el.isContentEditable) value = el.innerText;
      else if ("value" in el && ["INPUT", "TEXTAREA", "SELECT"].includes(el.tagName)) value = String(el.value);
      return { tag: el.tagName.toLowerCase(), role: el.getAttribute("role") || implicitRole(el), text: clip(text, 60),
               label: clip(label, 40), id: el.id || "", value: value, editable: editable(el),
               type: el.tagName === "INPUT" ? el.type : "" };
    };
    const scrollableAt = (el) => {
      for (let n = el; n && n !== document.body && n !== document.documentElement; n = n.parentElement) {
        const st = getComputedStyle(n);
        if ((/(auto|scroll)/.test(st.overflowY) && n.scrollHeight > n.clientHeight) ||
            (/(auto|scroll)/.test(st.overflowX) && n.scrollWidth > n.clientWidth)) return n;
      }
      return null;
    };
    const out = { focused: null, at: null, scroll: [window.scrollX, window.scrollY],
                  mutations: window.__weblicaMutations || 0, title: document.title };
    // the focused element through open shadow roots and same-origin frames: a field of an embedded
    // payment form is focused inside its iframe, and `write` must find it there
    let active = document.activeElement;
    for (let i = 0; i < 8 && active; i++) {
      if (active.shadowRoot && active.shadowRoot.activeElement) active = active.shadowRoot.activeElement;
      else if (active.tagName === "IFRAME" && active.contentDocument && active.contentDocument.activeElement
               && active.contentDocument.activeElement !== active.contentDocument.body) active = active.contentDocument.activeElement;
      else break;
    }
    if (active && active !== document.body && active !== document.documentElement) out.focused = describe(active);
    if (args && args.x !== undefined) {
      let el = document.elementFromPoint(args.x, args.y);
      // a point inside a same-origin iframe names the element there (the frame's offset taken off)
      for (let i = 0, ox = 0, oy = 0; i < 8 && el && el.tagName === "IFRAME" && el.contentDocument; i++) {
        const f = el.getBoundingClientRect();
        ox += f.left + el.clientLeft; oy += f.top + el.clientTop;
        const inner = el.contentDocument.elementFromPoint(args.x - ox, args.y - oy);
        if (!inner) break;
        el = inner;
      }
      out.at = describe(el);
      const box = el ? scrollableAt(el) : null;
      out.elementScroll = box ? [box.scrollLeft, box.scrollTop] : null;
    }
    return out;
  };
  if (!(args && args.quiet)) return read(args);
  const clock = globalThis.__pwClock;
  const advance = (args.advance && clock) ? clock.controller.runFor(args.advance).catch(() => {}) : Promise.resolve();
  return advance.then(() => new Promise((resolve) => {
    const before = window.__weblicaMutations || 0;
    const ch = new MessageChannel();
    let turns = 0;
    ch.port1.onmessage = () => {
      if (++turns < 2) { ch.port2.postMessage(0); return; }
      const state = read(args);
      state.quiet = state.mutations === before;
      state.advanced = !!(args.advance && clock);
      resolve(state);
    };
    ch.port2.postMessage(0);
  }));
}
