"""What a scripted policy may read of the page beyond the screenshot: its visible text and the controls
in the viewport with their pixel centers. Models never get it (it is not part of the prompt); the
adversarial policy uses it to list every candidate on the page and click every control, which is how
the reward's resistance to enumeration and "do everything" is measured."""
from __future__ import annotations

import re
from typing import Any

from weblica.env.popups import OPEN_POPUPS_JS
from weblica.env.sticky_header import HEADER_JS

_SNAPSHOT_JS = """() => {
  const controls = [];
  const sel = 'a[href], button, input:not([type=hidden]), select, textarea, summary, [role=button], [role=option], [data-toggle], [data-delete]';
  for (const el of document.querySelectorAll(sel)) {
    const r = el.getBoundingClientRect();
    if (r.width <= 0 || r.height <= 0) continue;
    const x = r.left + Math.min(r.width / 2, 40), y = r.top + r.height / 2;
    if (x < 0 || y < 0 || x >= innerWidth || y >= innerHeight) continue;
    const hit = document.elementFromPoint(x, y);
    if (!hit || !(hit === el || el.contains(hit) || (hit.tagName === 'LABEL' && hit.control === el))) continue;
    const label = (el.getAttribute('aria-label') || el.innerText || el.value || el.placeholder || '').trim().slice(0, 60);
    controls.push({x, y, tag: el.tagName.toLowerCase(), type: el.type || '', label, href: el.href || '',
                   id: el.id || '', checked: !!el.checked, disabled: !!el.disabled});
  }
  const scroller = document.scrollingElement || document.documentElement;
  return {text: document.body ? document.body.innerText : '', controls, popups: (POPUPS)(), header: (HEADER)(),
          can_scroll: scroller.scrollHeight > innerHeight + scrollY + 1};
}""".replace("(POPUPS)", f"({OPEN_POPUPS_JS})").replace("(HEADER)", f"({HEADER_JS})")


async def page_snapshot(page: Any) -> dict[str, Any]:
    """{"text": visible text, "controls": [{x, y, tag, type, label, href, id, checked, disabled}],
    "popups": open pop-ups (weblica.env.popups), "header": a sticky site's header as this episode has it
    (weblica.env.sticky_header) or None, "can_scroll": bool} of the page; an empty snapshot while the
    document is being replaced."""
    try:
        return await page.evaluate(_SNAPSHOT_JS)
    except Exception:  # navigating: no document to read
        return {"text": "", "controls": [], "popups": [], "header": None, "can_scroll": False}


# ---- candidate answers on a page ---------------------------------------------------------------------
_TOKEN = re.compile(r"[^\s\d]{0,3}\s?\d[\d.,:\u202f' ]*\d(?:\s?[^\s\d,;]{1,4})?|\d")
MAX_CANDIDATES = 400


def candidates(text: str) -> list[str]:
    """Every candidate answer in a page's text: each line, each number-like token in it (prices with
    their currency, times, counts) and each part of a line split at separators, in page order, each once."""
    out: list[str] = []
    for line in text.splitlines():
        line = line.strip()
        if not line:
            continue
        pieces = [line] + [t.strip() for t in _TOKEN.findall(line)] + [p.strip() for p in re.split(r"[·|•,:\t]", line)]
        for piece in pieces:
            if piece and len(piece) <= 120 and piece not in out:
                out.append(piece)
    return out[:MAX_CANDIDATES]


def shaped_like(values: list[str], numeric: bool, longest: int = 40) -> list[str]:
    """The candidates of one shape: with digits (prices, counts, times) or without (names, facts),
    short enough to be a value rather than a sentence."""
    return [v for v in values if bool(re.search(r"\d", v)) == numeric and len(v) <= longest]


def fit(values: list[str], joiner: str, limit: int) -> str:
    """The values joined, as many as fit in `limit` characters (answer checks refuse longer answers)."""
    out: list[str] = []
    size = 0
    for value in values:
        if size + len(value) + len(joiner) > limit:
            break
        out.append(value)
        size += len(value) + len(joiner)
    return joiner.join(out)
