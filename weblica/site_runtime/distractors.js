// weblica synth distractors: each episode's pop-ups, sticky header and lazy loading, drawn from (site id,
// episode seed).
// The site's menu and phrasings come from the page (#weblica-distractors, distractors.html.j2); the episode
// seed from /_weblica/episode.js (the site server answers it from the env's seed header; 0 without one).
// Every choice comes from a seeded PRNG, never Math.random or the clock; timings use the page's clock and
// events, which the env drives in virtual time. Contract (weblica/synth/distractors.py): [data-distractor],
// data-blocking, [data-close], data-dismiss="escape"|"outside".
(() => {
  "use strict";
  const source = document.getElementById("weblica-distractors");
  if (!source) return;
  const cfg = JSON.parse(source.textContent);
  const episode = window.WEBLICA_EPISODE || { seed: 0 };
  const BLOCKING = new Set(["center", "center-top", "full"]);
  const esc = (s) => String(s).replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c]));

  // FNV-1a over the key, then mulberry32: the same (site, seed, kind) draws the same variant in every engine
  function hash(text) {
    let h = 0x811c9dc5;
    for (let i = 0; i < text.length; i++) { h ^= text.charCodeAt(i); h = Math.imul(h, 0x01000193); }
    return h >>> 0;
  }
  function prng(seed) {
    let a = seed >>> 0;
    return () => {
      a = (a + 0x6d2b79f5) | 0;
      let t = Math.imul(a ^ (a >>> 15), 1 | a);
      t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
  }

  function variant(kind, menu) {
    const rng = prng(hash(`${cfg.site}|${episode.seed >>> 0}|${kind}`));
    const pick = (xs) => xs[Math.floor(rng() * xs.length)];
    const int = (lo, hi) => lo + Math.floor(rng() * (hi - lo + 1));
    const texts = cfg.texts[kind], common = cfg.texts.common;
    const v = { kind, shown: rng() < menu.show, position: pick(menu.positions) };
    v.blocking = BLOCKING.has(v.position);
    v.timing = pick(menu.timings);
    // a blocking one comes after clicks, never on a delay: a rule from when validation ran a real clock.
    // Validation runs the env's virtual clock now, so a delay would land at a fixed step too, but blocking
    // pop-ups on a delay have not been validated (weblica/synth/distractors.py)
    if (v.blocking && v.timing === "delay") v.timing = "clicks";
    v.control = pick(menu.controls);
    if (!v.blocking && (v.control === "escape" || v.control === "outside")) v.control = "x";
    if (kind !== "cookie" && (v.control === "accept" || v.control === "reject")) v.control = "decline";
    if (v.position === "full" && v.control === "outside") v.control = "link";  // a full page has no outside
    v.size = pick(["s", "m", "l"]);
    v.inset = int(6, 56);
    v.shift = int(0, 140);
    v.clicks = int(1, 3);
    v.depth = int(150, 900);
    v.delay = int(1200, 6000);
    v.title = pick(texts.title);
    v.body = pick(texts.body);
    v.xLeft = rng() < 0.3;
    v.xLabel = pick(common.x);
    v.withX = v.control === "x" || (v.control !== "escape" && v.control !== "outside" && rng() < 0.4);
    v.primary = v.control === "accept" ? pick(texts.accept) : v.control === "reject" ? pick(texts.reject)
      : v.control === "decline" ? pick(texts.decline) : v.control === "link" ? pick(texts.link) : "";
    v.decoy = rng() < 0.7 ? pick(texts.decoy) : "";
    v.decoyFirst = rng() < 0.5;
    v.hint = v.control === "escape" ? pick(common.escape) : v.control === "outside" ? pick(common.outside) : "";
    v.escape = v.control === "escape" || (v.blocking && rng() < 0.5);  // many real dialogs also close on Esc
    return v;
  }

  const WIDTH = { s: 300, m: 380, l: 480 };
  function place(root, panel, v) {
    const w = WIDTH[v.size], s = root.style, p = panel.style, i = v.inset + "px";
    switch (v.position) {
      case "bar-bottom": case "bar-top":
        s.left = "0"; s.right = "0"; s[v.position === "bar-top" ? "top" : "bottom"] = "0";
        p.padding = `${8 + (v.inset % 16)}px ${16 + v.shift}px`; break;
      case "corner-br": case "corner-bl":
        s.bottom = (v.inset + v.lift + v.stack * 230) + "px"; s[v.position === "corner-br" ? "right" : "left"] = (v.inset + v.shift / 4) + "px"; s.width = w + "px"; break;
      case "side-right": case "side-left":
        s.top = (70 + v.shift + v.stack * 200) + "px"; s[v.position === "side-right" ? "right" : "left"] = "0"; s.width = (w - 40) + "px"; break;
      case "center":
        p.left = "50%"; p.top = (18 + v.shift / 7) + "%"; p.width = (w + 80) + "px";
        p.transform = `translateX(calc(-50% + ${v.inset * 2 - 56}px))`; break;
      case "center-top":
        p.left = "50%"; p.top = (v.inset + 24) + "px"; p.width = (w + 120) + "px";
        p.transform = `translateX(calc(-50% + ${v.shift - 70}px))`; break;
      case "full": break;
    }
  }

  function build(v) {
    const root = document.createElement("div");
    root.dataset.distractor = v.kind;
    root.className = `dx dx-${v.kind} dx-${v.position} dx-size-${v.size}` + (v.blocking ? " dx-backdrop" : "")
      + (v.position.startsWith("bar-") ? " dx-bar" : "") + (v.position === "full" ? " dx-full" : "");
    if (v.blocking) root.dataset.blocking = "";
    if (v.control === "escape" || v.control === "outside") root.dataset.dismiss = v.control;
    root.hidden = true;
    const closer = v.primary ? (v.control === "link"
      ? `<a href="#" role="button" data-close>${esc(v.primary)}</a>`
      : `<button type="button" data-close${v.control === "accept" ? ' class="dx-primary"' : ""}>${esc(v.primary)}</button>`) : "";
    const decoy = v.decoy ? `<button type="button" data-decoy${v.control === "accept" ? "" : ' class="dx-primary"'}>${esc(v.decoy)}</button>` : "";
    const field = v.kind === "promo" && v.decoy ? '<input class="dx-field" type="email" placeholder="Email address" aria-label="Email address">' : "";
    const actions = v.decoyFirst ? field + decoy + closer : closer + field + decoy;
    root.innerHTML = `<div class="dx-panel" role="dialog" aria-label="${esc(v.title)}">` +
      (v.withX ? `<button type="button" class="dx-x" data-close aria-label="${esc(v.xLabel)}" style="${v.xLeft ? "left" : "right"}:4px">×</button>` : "") +
      `<p class="dx-title">${esc(v.title)}</p><p class="dx-body">${esc(v.body)}</p>` +
      `<div class="dx-actions">${actions}</div>` + (v.hint ? `<p class="dx-hint">${esc(v.hint)}</p>` : "") +
      '<p class="dx-note" hidden></p></div>';
    place(root, root.firstElementChild, v);
    return root;
  }

  // ---- showing and dismissing: dismissed for the rest of the episode (a fresh browser context each) ----
  const open = [];
  const clicksKey = "weblica-dx-clicks";
  function mount(v) {
    const key = "weblica-dismissed-" + v.kind;
    if (sessionStorage.getItem(key)) return null;
    const root = build(v);
    const entry = { v, root, done: false };
    const dismiss = (ev) => {
      if (ev) ev.preventDefault();
      sessionStorage.setItem(key, "1"); root.hidden = true; entry.done = true;
    };
    entry.dismiss = dismiss;
    root.querySelectorAll("[data-close]").forEach((el) => el.addEventListener("click", dismiss));
    const note = root.querySelector(".dx-note");
    root.querySelectorAll("[data-decoy]").forEach((el) => el.addEventListener("click", () => {
      note.textContent = v.kind === "promo" ? "Please enter a valid email address." : "Saved. You can change this later.";
      note.hidden = false;
    }));
    if (v.control === "outside" || v.blocking) {
      root.addEventListener("click", (ev) => { if (ev.target === root && v.control === "outside") dismiss(ev); });
    }
    if (v.kind === "chat") {  // the launcher stays; it opens the chat again (a real widget does)
      const launcher = document.createElement("button");
      launcher.type = "button"; launcher.className = "dx-launcher"; launcher.textContent = v.title;
      launcher.style[v.position === "corner-br" ? "right" : "left"] = (v.inset + v.shift / 4) + "px";
      root.style.bottom = (64 + v.lift + v.stack * 230) + "px";
      launcher.style.bottom = (8 + v.lift) + "px";
      launcher.addEventListener("click", () => { root.hidden = !root.hidden; });
      document.body.appendChild(launcher);
    }
    document.body.appendChild(root);
    open.push(entry);
    return entry;
  }
  const show = (entry) => { if (!entry.done && !entry.shown) { entry.shown = true; entry.root.hidden = false; } };

  // two non-blocking ones never share a corner or an edge: another of the site's positions, else stacked
  function arrange(list) {
    const used = {};
    for (const v of list) {
      v.stack = 0; v.lift = 0;
      if (v.blocking) continue;
      if (used[v.position]) {
        const free = cfg.overlays[v.kind].positions.find((p) => !BLOCKING.has(p) && !used[p]);
        if (free) v.position = free; else v.stack = used[v.position];
      }
      used[v.position] = (used[v.position] || 0) + 1;
    }
    if (used["bar-bottom"]) for (const v of list) if (v.position.startsWith("corner-")) v.lift = 72;
  }
  // ---- this episode's sticky header and lazy loading (weblica/synth/distractors.py: STRUCTURE) ----
  // The site's knobs are the body's classes (base.html.j2). Episode seed 0, the one validation compiles
  // oracles in, keeps the site's own behaviour: a sticky site's whole header sticks, a lazy site's rows
  // past the twelfth wait until 40 px into view. Other seeds never cover more of the page than that
  // (the header never sticks on a site whose header does not; rows never wait longer), so a click the
  // oracle recorded lands on what it did; where such a click was on the stuck header, and this episode's
  // header is not there, the oracle policy scrolls back to it (weblica/env/sticky_header.py).
  function structure() {
    const body = document.body, header = document.querySelector(".site-header");
    const seed = episode.seed >>> 0;
    const rng = prng(hash(`${cfg.site}|${seed}|structure`));
    const pick = (xs) => xs[Math.floor(rng() * xs.length)];
    const sticky = !!header && body.classList.contains("sticky"), lazySite = body.classList.contains("lazy");
    const s = { header: sticky ? "full" : "static", lazy: lazySite ? "rows" : "none", margin: -40, from: 12 };
    if (seed !== 0) {
      if (sticky) s.header = pick(["full", "full", "compact", "compact", "reveal", "static"]);
      s.lazy = pick(lazySite ? ["rows", "rows", "images", "none"] : ["none", "none", "rows", "images"]);
      s.margin = pick(lazySite && s.lazy === "rows" ? [-40, 0, 120, 320] : [0, 120, 320]);
      s.from = s.margin < 0 ? 12 : pick([4, 8, 12, 20]);  // a row 40 px short of view waits only where it did
    }
    body.dataset.headerSite = sticky ? "sticky" : "static";
    body.dataset.headerMode = s.header;
    if (header) body.dataset.headerHome = String(Math.round(header.getBoundingClientRect().top + window.scrollY));
    body.dataset.lazyMode = s.lazy;
    if (s.lazy !== "none") body.dataset.lazyMargin = String(s.margin);
    if (s.header !== "static") stick(header, s);
    else body.classList.remove("sticky");
    if (s.lazy !== "none") lazyRows(s, seed);
    else body.classList.remove("lazy");
    window.WEBLICA_STRUCTURE = s;
  }

  // full: the whole header sticks; compact: only its lower part (a multi-row header's first row, a bar's top
  // padding rides above the viewport: CSS sticky keeps its place in the flow, so nothing below moves);
  // reveal: it hides while the page scrolls down and comes back on the way up
  function stick(header, s) {
    document.body.classList.add("sticky");
    if (s.header === "compact") {
      const measure = () => {
        const rows = header.querySelectorAll(":scope > .utility-bar, :scope > .hdr-row");
        const full = header.offsetHeight, first = rows.length > 1 ? rows[0].offsetHeight : 0;
        const cut = first && first < full - 36 ? first + 6 : parseFloat(getComputedStyle(header).paddingTop) || 0;
        header.style.top = -Math.round(Math.min(cut, full - 36)) + "px";
      };
      if (document.readyState === "complete") measure(); else window.addEventListener("load", measure);
    } else if (s.header === "reveal") {
      let last = window.scrollY;
      window.addEventListener("scroll", () => {
        const y = window.scrollY;
        if (y > last && y > header.offsetHeight) header.style.transform = "translateY(-100%)";
        else if (y < last) header.style.transform = "";
        last = y;
      }, { passive: true });
    }
  }

  // rows: listing rows (and, short of a 40 px wait, the start page's sections) stay blank until near;
  // images: they show, their pictures wait. Seed 0 keeps the template's data-lazy rows; other seeds
  // make rows from the `from`-th of each list lazy, except those in view when the page opens (nothing
  // on the first screen waits for a frame)
  function lazyRows(s, seed) {
    const body = document.body;
    if (s.lazy === "rows") body.classList.add("lazy");
    else body.classList.remove("lazy");
    if (seed !== 0) {
      const fold = window.innerHeight + Math.max(s.margin, 0) + 200;
      const below = (el) => el.getBoundingClientRect().top > fold;
      for (const el of document.querySelectorAll("[data-item]")) {
        const index = Array.prototype.indexOf.call(el.parentElement.children, el);
        if (index >= s.from && below(el)) el.dataset.lazy = "";
        else delete el.dataset.lazy;
      }
      if (s.margin >= 0) {
        for (const sec of document.querySelectorAll("main section.sec")) if (below(sec)) sec.dataset.lazy = "";
      }
    }
    const waiting = Array.from(document.querySelectorAll("[data-lazy]")).filter((el) => !el.parentElement.closest("[data-lazy]"));
    const pictures = (el) => el.querySelectorAll("img");
    if (s.lazy === "images") for (const el of waiting) pictures(el).forEach((img) => { img.style.visibility = "hidden"; });
    const io = new IntersectionObserver((entries) => {
      for (const e of entries) {
        if (!e.isIntersecting) continue;
        e.target.dataset.shown = "1";
        e.target.querySelectorAll("[data-lazy]").forEach((inner) => { inner.dataset.shown = "1"; });
        pictures(e.target).forEach((img) => { img.style.visibility = ""; });
        io.unobserve(e.target);
      }
    }, { rootMargin: `0px 0px ${s.margin}px 0px` });
    waiting.forEach((el) => io.observe(el));
  }
  structure();

  const drawn = Object.keys(cfg.overlays).sort().map((kind) => variant(kind, cfg.overlays[kind])).filter((v) => v.shown);
  arrange(drawn);
  const entries = [];
  for (const v of drawn) {
    const entry = mount(v);
    if (entry) entries.push(entry);
  }
  const clicks = () => Number(sessionStorage.getItem(clicksKey) || 0);
  for (const e of entries) {
    const v = e.v;
    if (v.timing === "load") show(e);
    else if (v.timing === "clicks" && clicks() >= v.clicks) show(e);
    else if (v.timing === "delay") setTimeout(() => show(e), v.delay);
  }
  // the N-th click of the episode (counted across its pages) shows the "after N clicks" ones
  window.addEventListener("click", (ev) => {
    if (!ev.isTrusted) return;
    const n = clicks() + 1;
    sessionStorage.setItem(clicksKey, String(n));
    for (const e of entries) if (e.v.timing === "clicks" && n >= e.v.clicks) show(e);
  });
  window.addEventListener("scroll", () => {
    for (const e of entries) if (e.v.timing === "scroll" && window.scrollY >= e.v.depth) show(e);
  }, { passive: true });
  window.addEventListener("keydown", (ev) => {
    if (ev.key !== "Escape") return;
    for (let i = entries.length - 1; i >= 0; i--) {  // the topmost open one that closes on Esc
      const e = entries[i];
      if (!e.root.hidden && e.v.escape) { e.dismiss(); ev.preventDefault(); return; }
    }
  });
})();
