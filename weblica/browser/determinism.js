// weblica determinism layer: runs at document start in every frame, before page scripts.
// Seeded Math.random and crypto; the clock itself is Playwright's fake clock (installed per context).
// __WEBLICA_SEED__ is replaced by the episode seed (an unsigned 32-bit integer).
(() => {
  if (window.__weblicaDeterminism) return;
  const SEED = __WEBLICA_SEED__ >>> 0;
  // sfc32 seeded through splitmix32: fast, well mixed, and reproducible in every engine.
  function splitmix(a) {
    return function () {
      a = (a + 0x9e3779b9) | 0;
      let t = a ^ (a >>> 16);
      t = Math.imul(t, 0x21f0aaad);
      t = t ^ (t >>> 15);
      t = Math.imul(t, 0x735a2d97);
      return (t ^ (t >>> 15)) >>> 0;
    };
  }
  function sfc32(seed) {
    const sm = splitmix(seed);
    let a = sm(), b = sm(), c = sm(), d = sm();
    return function () {
      a >>>= 0; b >>>= 0; c >>>= 0; d >>>= 0;
      let t = (a + b) | 0;
      a = b ^ (b >>> 9);
      b = (c + (c << 3)) | 0;
      c = (c << 21) | (c >>> 11);
      d = (d + 1) | 0;
      t = (t + d) | 0;
      c = (c + t) | 0;
      return t >>> 0;
    };
  }
  const nextRandom = sfc32(SEED);
  const nextCrypto = sfc32(SEED ^ 0x5bd1e995);
  const define = (obj, name, fn) => {
    try {
      Object.defineProperty(obj, name, { value: fn, configurable: true, writable: true });
    } catch (e) { /* frozen objects in exotic frames: leave them */ }
  };
  define(Math, "random", function random() { return nextRandom() / 4294967296; });
  if (typeof Crypto !== "undefined" && Crypto.prototype) {
    const fill = function getRandomValues(array) {
      if (!ArrayBuffer.isView(array)) throw new TypeError("getRandomValues: argument is not a typed array");
      if (array.byteLength > 65536) throw new DOMException("quota exceeded", "QuotaExceededError");
      const bytes = new Uint8Array(array.buffer, array.byteOffset, array.byteLength);
      for (let i = 0; i < bytes.length; i += 4) {
        let word = nextCrypto();
        for (let j = 0; j < 4 && i + j < bytes.length; j++) { bytes[i + j] = word & 0xff; word >>>= 8; }
      }
      return array;
    };
    define(Crypto.prototype, "getRandomValues", fill);
    define(Crypto.prototype, "randomUUID", function randomUUID() {
      const b = fill.call(this, new Uint8Array(16));
      b[6] = (b[6] & 0x0f) | 0x40;
      b[8] = (b[8] & 0x3f) | 0x80;
      const h = Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
      return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
    });
  }
  // Playwright's fake performance.now keeps a real-time origin per document; tie it to the fake Date
  // instead, so it reads the same virtual milliseconds in every run.
  if (typeof Performance !== "undefined") {
    const origin = Date.now();
    const now = function now() { return Date.now() - origin; };
    define(Performance.prototype, "now", now);
    define(performance, "now", now);
  }
  // What the page can read about the machine: its core count and memory are this machine's own (2 here,
  // 16 elsewhere), which a site's scripts may put in a request or branch on; report one machine everywhere.
  if (typeof Navigator !== "undefined" && Navigator.prototype) {
    const fixed = (name, value) => {
      if (!(name in Navigator.prototype)) return;
      try {
        Object.defineProperty(Navigator.prototype, name, { get: () => value, configurable: true });
      } catch (e) { /* frozen objects in exotic frames: leave them */ }
    };
    fixed("hardwareConcurrency", 4);
    fixed("deviceMemory", 8);
  }
  // The network a page sees: Chromium adds noise to navigator.connection's downlink (9.9 in one context,
  // 10 in the next, on one machine); a page that sizes its images by it would differ run to run.
  if (typeof NetworkInformation !== "undefined" && NetworkInformation.prototype) {
    const net = { effectiveType: "4g", downlink: 10, rtt: 50, saveData: false, type: "ethernet", downlinkMax: Infinity };
    for (const [name, value] of Object.entries(net)) {
      if (!(name in NetworkInformation.prototype)) continue;
      try {
        Object.defineProperty(NetworkInformation.prototype, name, { get: () => value, configurable: true });
      } catch (e) { /* leave it */ }
    }
  }
  // The storage quota follows this machine's disk or memory; the usage is the page's own doing.
  if (typeof StorageManager !== "undefined" && StorageManager.prototype && StorageManager.prototype.estimate) {
    const estimate = StorageManager.prototype.estimate;
    define(StorageManager.prototype, "estimate", function () {
      return estimate.call(this).then((e) => ({ ...e, quota: 10737418240 }));
    });
  }
  // Animations, transitions and the caret off; generic families mapped onto the shipped fonts.
  const css = `*, *::before, *::after {
      animation-duration: 0s !important; animation-delay: 0s !important;
      animation-iteration-count: 1 !important; animation-play-state: paused !important;
      transition: none !important; caret-color: transparent !important;
      scroll-behavior: auto !important; }`;
  const addStyle = () => {
    const root = document.head || document.documentElement;
    if (!root || document.getElementById("__weblica_determinism")) return;
    const style = document.createElement("style");
    style.id = "__weblica_determinism";
    style.textContent = css;
    root.appendChild(style);
  };
  if (document.documentElement) addStyle();
  document.addEventListener("DOMContentLoaded", addStyle, { once: true });
  new MutationObserver((_, obs) => { if (document.head) { addStyle(); obs.disconnect(); } })
    .observe(document, { childList: true, subtree: true });
  window.__weblicaDeterminism = { seed: SEED };
})();
