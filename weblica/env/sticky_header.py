"""A site's sticky header as this episode has it, and whether a recorded pointer action meant it.

Synth sites vary the sticky header per episode (synth/static/distractors.js): on a site whose header
sticks, an episode's header sticks whole (`full`, as in episode seed 0, where validation compiles the
oracle), only its lower part (`compact`), only while scrolling up (`reveal`), or not at all (`static`).
The page says so on its body: `data-header-site` (sticky | static), `data-header-mode`,
`data-header-home` (the header's top in the document). No mode covers more of the page than the full
one, so a recorded click on the content still lands; a recorded click or hover on the stuck header,
though, meets content or nothing where this episode's header is elsewhere. `header_fix_before` says
when: then the oracle policy scrolls to the top, where every mode has the header in its place.
"""
from __future__ import annotations

import math
from typing import Any

from weblica.env.actions import VIEWPORT_HEIGHT, Action

# the header of a site whose header sticks: where it is now, its height, its place in the document
HEADER_JS = """() => {
  const b = document.body;
  const h = b && b.dataset.headerSite === 'sticky' ? document.querySelector('.site-header') : null;
  if (!h) return null;
  return {mode: b.dataset.headerMode || 'full', top: h.getBoundingClientRect().top, height: h.offsetHeight,
          home: Number(b.dataset.headerHome) || 0, scroll: window.scrollY};
}"""

SCROLL_TO_HEADER = "Scroll back up to the header."
_POINTER = ("click", "hover", "write")  # a write only where it clicks its field (Action.pointed_at)


def header_fix_before(header: dict[str, Any] | None, action: Action) -> Action | None:
    """The scroll that brings the header back before `action`, or None. It is needed when `action` points
    into the box the whole stuck header would fill at this scroll (where the oracle, compiled with it,
    aimed at the header) and this episode's header is not there."""
    point = action.pointed_at() if header and action.name in _POINTER else None
    if point is None:
        return None
    scroll = float(header.get("scroll", 0))
    full_top = max(0.0, float(header.get("home", 0)) - scroll)  # a stuck header's top, else its own place
    if not full_top <= float(point[1]) < full_top + float(header.get("height", 0)):
        return None
    if abs(float(header.get("top", 0)) - full_top) < 1 or scroll <= 0:
        return None
    return Action("scroll", {"direction": "up", "amount": math.ceil(scroll / VIEWPORT_HEIGHT * 100) / 100 + 0.25})
