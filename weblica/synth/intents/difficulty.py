"""Task difficulty, computed from what doing the task takes, never typed by hand.

The measure is the task's effort: the oracle's gestures (one an action, but a write that clicks its
field and presses Enter is the three it does in its one step), the pages it goes through, the hidden
elements it has to reveal, the distractors it dismisses and the fields it types into. Generation
first estimates it from the plan (a draft has no oracle yet), and `generate.keep_valid` recomputes it
from the compiled oracle, which also holds the scrolls and the pop-up dismissals the plan cannot know.

    score = gestures + 1.5 * (pages - 1) + 2 * hidden + 1 * distractors + 1 * typed
    easy: score < EASY_BELOW (8)      a few clicks on one or two pages
    medium: score < MEDIUM_BELOW (14) a few pages, or one reveal, or a short form
    hard: otherwise                   long walks, several reveals, many typed fields, chains of skills

The thresholds are the terciles of the oracle scores of one validated site per skill (233 tasks,
bench/reward.py's sites: 8.0 and 12.5), so the three levels come out about equally often there
(73 / 92 / 68).
Pages are the URL changes of the plan (the oracle's actions are pixels and keys, they name no URL):
a click on a link (`a[href=…]`, `[data-link=…]`, `[data-section=…]`, `[data-pager=…]`), a form's
submit, a search sent with Enter and a `goto`. Hidden elements are what a plain look at the page does
not show: hovers, tabs, accordion panels, modals, tooltips, tree toggles, a date picker's popup,
load-more and scroll-until loops. Distractors dismissed are the oracle's "Close the pop-up…" actions.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Sequence

EASY_BELOW = 8.0
MEDIUM_BELOW = 14.0
DISMISS_THOUGHT = "Close the pop-up"  # how the plan compiler names a distractor dismissal (player.py)

_NAVIGATES = ("a[href=", "[data-link=", "[data-section=", "[data-pager=", "#submit", "#to-checkout", "#cart-link",
              "[data-book=")
_REVEALS = ("[data-tab=", "[data-acc=", "[data-open-modal", "[data-tip=", "[data-tree-toggle=", "[data-dp-open]")
# the gestures a plan step takes (before scrolls and dismissals, which only the oracle knows)
_GESTURES = {"click": 1, "hover": 1, "fill": 2, "select": 2, "keys": 1, "range": 2, "calendar": 3, "date": 2,
            "drag": 1, "click_until": 3, "scroll_until": 3, "reach": 0, "done": 1, "goto": 1}


@dataclass(frozen=True)
class Effort:
    gestures: int
    pages: int  # distinct pages the task goes through, the start page included
    hidden: int
    distractors: int
    typed: int

    @property
    def score(self) -> float:
        return (self.gestures + 1.5 * max(0, self.pages - 1) + 2 * self.hidden + self.distractors
                + self.typed)

    @property
    def level(self) -> str:
        return "easy" if self.score < EASY_BELOW else "medium" if self.score < MEDIUM_BELOW else "hard"

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "score": self.score}


def _navigates(step: dict[str, Any]) -> bool:
    if step["op"] == "goto" or (step["op"] == "fill" and step.get("enter")):
        return True
    return step["op"] == "click" and any(step.get("sel", "").startswith(n) or f" {n}" in step.get("sel", "")
                                         for n in _NAVIGATES)


def _reveals(step: dict[str, Any]) -> bool:
    if step["op"] in ("hover", "click_until", "scroll_until", "calendar"):
        return True
    return step["op"] == "click" and any(r in step.get("sel", "") for r in _REVEALS)


def _pages_and_hidden(plan: Sequence[dict[str, Any]]) -> tuple[int, int]:
    return 1 + sum(map(_navigates, plan)), sum(map(_reveals, plan))


def plan_effort(plan: Sequence[dict[str, Any]]) -> Effort:
    """The effort a plan announces: its steps' gestures, before the oracle adds scrolls and dismissals."""
    pages, hidden = _pages_and_hidden(plan)
    gestures = sum(_GESTURES.get(step["op"], 1) + (1 if step.get("enter") else 0) for step in plan)
    typed = sum(step["op"] in ("fill", "date") for step in plan)
    return Effort(gestures, pages, hidden, 0, typed)


def oracle_effort(oracle: Sequence[Any], thoughts: Sequence[str] | None = None,
                  plan: Sequence[dict[str, Any]] = ()) -> Effort:
    """The effort of the compiled oracle (a list of Actions), with its thoughts (the dismissals) and
    the plan it was compiled from (the pages and reveals)."""
    pages, hidden = _pages_and_hidden(plan)
    calls = [(a.name, a.args) if hasattr(a, "name") else (a["name"], a.get("arguments") or {}) for a in oracle]
    dismissed = sum(t.startswith(DISMISS_THOUGHT) for t in thoughts or ())
    return Effort(sum(map(_gestures, calls)), pages, hidden, dismissed, sum(name == "write" for name, _ in calls))


def _gestures(call: tuple[str, dict[str, Any]]) -> int:
    """What an action takes: a write that clicks its field and presses Enter is three gestures in one
    step (the click, the typing, the Enter), as a click, a write and an Enter are in three."""
    name, args = call
    return 1 + (name == "write") * (("x" in args) + bool(args.get("enter")))


def planned(plan: Sequence[dict[str, Any]]) -> str:
    """The difficulty a draft gets at generation; keep_valid replaces it with the oracle's."""
    return plan_effort(plan).level


def difficulty(oracle: Sequence[Any], thoughts: Sequence[str] | None = None, plan: Sequence[dict[str, Any]] = ()) -> str:
    return oracle_effort(oracle, thoughts, plan).level
