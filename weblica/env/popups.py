"""Pop-ups that are open on a page, and which of them is in the way of the next action.

Synth sites mark their distractors (cookie notices, offers, chat windows, interstitials: see
weblica/synth/distractors.py) as `[data-distractor]`; `data-blocking` covers the whole page, `[data-close]`
closes one, `data-dismiss="escape"|"outside"` names one that Escape or a click beside it closes. The
synth oracle's compiler (weblica/synth/player.py) and the oracle policy both ask this one reading, so
an oracle replayed in another episode (other pop-ups, elsewhere) dismisses what it meets there.
"""
from __future__ import annotations

import json
from typing import Any

from weblica.env.actions import Action

# Each open one, in document order: kind, blocking, z-index, its box, and how to dismiss it (a close
# control that is really on top, else Escape, else a point on its backdrop outside its panel).
OPEN_POPUPS_JS = """() => {
  const out = [];
  for (const d of document.querySelectorAll('[data-distractor]')) {
    if (d.hidden) continue;
    const r = d.getBoundingClientRect();
    if (r.width <= 0 || r.height <= 0) continue;
    let close = null;
    for (const btn of d.querySelectorAll('[data-close]')) {
      const b = btn.getBoundingClientRect();
      if (b.width <= 0 || b.height <= 0) continue;
      const x = b.left + b.width / 2, y = b.top + b.height / 2;
      const hit = document.elementFromPoint(x, y);
      if (hit && (hit === btn || btn.contains(hit))) {
        close = {x, y, label: (btn.getAttribute('aria-label') || btn.textContent || '').trim().slice(0, 60)};
        break;
      }
    }
    let outside = null;
    if (!close && d.dataset.dismiss === 'outside') {
      const spots = [[16, innerHeight - 16], [innerWidth - 16, innerHeight - 16], [16, 16], [innerWidth - 16, 16]];
      const spot = spots.find(([x, y]) => document.elementFromPoint(x, y) === d);
      if (spot) outside = {x: spot[0], y: spot[1]};
    }
    out.push({kind: d.dataset.distractor, blocking: d.dataset.blocking !== undefined,
              z: Number(getComputedStyle(d).zIndex) || 0,
              box: {left: r.left, top: r.top, right: r.right, bottom: r.bottom},
              close, escape: d.dataset.dismiss === 'escape', outside});
  }
  return out;
}"""


def in_the_way(popups: list[dict[str, Any]], point: tuple[float, float] | None = None) -> dict[str, Any] | None:
    """How to dismiss the pop-up that stands in the way, or None: the topmost blocking one, else a
    non-blocking one whose box holds `point` (where the next action lands). The answer is
    {kind, x, y, label} for a click on its close control, {kind, key: "Escape"}, or {kind, x, y,
    outside: True} for a click beside its panel; None also when the one in the way offers no way out."""
    blocking = [p for p in popups if p.get("blocking")]
    if blocking:
        chosen = max(enumerate(blocking), key=lambda ip: (ip[1].get("z", 0), ip[0]))[1]
    elif point is not None:
        x, y = point
        over = [p for p in popups if p["box"]["left"] <= x <= p["box"]["right"] and p["box"]["top"] <= y <= p["box"]["bottom"]]
        chosen = max(enumerate(over), key=lambda ip: (ip[1].get("z", 0), ip[0]))[1] if over else None
    else:
        chosen = None
    if chosen is None:
        return None
    if chosen.get("close"):
        return {"kind": chosen["kind"], **chosen["close"]}
    if chosen.get("escape"):
        return {"kind": chosen["kind"], "key": "Escape"}
    if chosen.get("outside"):
        return {"kind": chosen["kind"], **chosen["outside"], "outside": True}
    return None


# how a thought names each kind; every dismissal thought starts with DISMISS (the oracle policy can tell
# a recorded dismissal from the task's own steps)
NAMES = {"cookie": "cookie notice", "promo": "pop-up offer", "chat": "chat window", "slidein": "slide-in panel",
         "interstitial": "full-page announcement"}
DISMISS = "Dismiss the "
LEGACY_DISMISS = "Close the pop-up that covers the page."  # what bundles of before this module recorded


def dismissal_thought(kind: str, label: str = "", key: str | None = None, outside: bool = False) -> str:
    """The oracle's thought for dismissing a distractor of `kind`, naming the control it uses."""
    what = DISMISS + NAMES.get(kind, "pop-up") + " that is in the way"
    if key:
        return f"{what}: press {key}."
    if outside:
        return f"{what}: click outside it."
    return f"{what}: click {json.dumps(label, ensure_ascii=False)}." if label and label != "×" else f"{what}: click its close button."


def dismissal_before(popups: list[dict[str, Any]], action: Action) -> tuple[Action, str] | None:
    """The dismissal (action, thought) to play before `action` when a pop-up of this episode is in its
    way, else None. Only a pointer is stopped by a pop-up: keys go to the focused field under it (and a
    click to dismiss one first would take that focus away); a write that clicks its field is a pointer."""
    point = action.pointed_at()
    if point is None:
        return None
    how = in_the_way(popups or [], point)
    if how is None:
        return None
    thought = dismissal_thought(how["kind"], how.get("label", ""), how.get("key"), bool(how.get("outside")))
    dismissal = Action("press_keys", {"keys": [how["key"]]}) if how.get("key") else \
        Action("click", {"x": float(round(how["x"])), "y": float(round(how["y"]))})
    return dismissal, thought


def is_dismissal(thought: str) -> bool:
    """Whether a recorded thought is a pop-up dismissal (of the episode it was recorded in)."""
    return thought.startswith((DISMISS, LEGACY_DISMISS))


def without_dismissals(actions: list[Action], thoughts: list[str] | None) -> list[Action]:
    """A compiled run without its recorded dismissals: replayed in another episode they are clicks on
    whatever lies under where that episode's pop-ups were (a link, a delete button), so a replayer
    dismisses this episode's own as they come (`dismissal_before`). Without thoughts, the run as it is."""
    if not thoughts or len(thoughts) != len(actions):
        return list(actions)
    return [a for a, t in zip(actions, thoughts) if not is_dismissal(t)]


def dismissal_of_any(popups: list[dict[str, Any]]) -> tuple[Action, str] | None:
    """The dismissal of an open pop-up, blocking first, else the topmost one that offers a way out; None
    when none is open (or none can be closed). For a player that clicks whatever it sees: a pop-up
    hides the controls under it from a page reading, and one that comes mid-turn swallows clicks."""
    ordered = sorted(enumerate(popups or []), key=lambda ip: (not ip[1].get("blocking"), -ip[1].get("z", 0), -ip[0]))
    for _, popup in ordered:
        box = popup["box"]
        found = dismissal_before([popup], Action("click", {"x": (box["left"] + box["right"]) / 2,
                                                           "y": (box["top"] + box["bottom"]) / 2}))
        if found is not None:
            return found
    return None
