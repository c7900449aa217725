"""De-duplication of a site's task drafts: the same request asked twice is one task.

Two drafts are the same request when their instructions are the same text (case and spacing aside),
or when they have the same intent and the same slot values: as `say` recorded them for the site, and
for drafts phrased otherwise, the same start page, plan and checks (what the slots decide).
The first draft is kept, so the order of a skill's drafts decides which phrasing stays.

One intent asked from one start page in many fillers ("book an office visit for X at Y", twelve times)
is one request to a person reading the site's tasks: it keeps MAX_REPEATS of them, or as many as the
site needs to reach TASKS_WANTED with its other tasks (a skill that is the whole site, as a contact
form on a shop, keeps its twelve).
"""
from __future__ import annotations

import json
import re
from collections import Counter
from typing import Any, Iterable

MAX_REPEATS = 4  # drafts of one (intent, start page) kept where the site has other tasks enough
TASKS_WANTED = 12  # MIN_TASKS (weblica/synth/generate.py) and two that validation may drop


def _text_key(instruction: str) -> str:
    return re.sub(r"\s+", " ", instruction).strip().lower()


def _plan_key(draft: Any) -> str:
    checks = [c.to_dict() if hasattr(c, "to_dict") else c for c in draft.checks]
    return json.dumps([draft.intent, draft.start_path, draft.plan, checks], sort_keys=True, default=str)


def dedupe(drafts: Iterable[Any], site: Any = None, cap: bool = True) -> list[Any]:
    """The drafts with every repeat of an earlier one (same text, or same intent and slot values) left
    out; with the `site` they were made for, the slot values `say` recorded are compared. With `cap`,
    each (intent, start page, check) group is then cut to its `repeat_limit`."""
    from weblica.synth.intents import asked

    seen: set[str] = set()
    kept = []
    for draft in drafts:
        keys = {"text:" + _text_key(draft.instruction)}
        if draft.intent:
            keys.add("plan:" + _plan_key(draft))
            slots = asked(site, draft.instruction) if site is not None else None
            if slots is not None:
                keys.add("slots:" + slots)
        if keys & seen:
            continue
        seen |= keys
        kept.append(draft)
    return capped(kept) if cap else kept


def repeat_key(draft: Any) -> tuple[str, str, str]:
    """What makes drafts one request in different fillers: the intent, the page it starts on and how it
    is checked (an infeasible "What is the price of X?" and its feasible controls are two requests)."""
    checks = sorted(f"{getattr(c, 'type', '')}:{getattr(c, 'mode', '')}" for c in draft.checks)
    return draft.intent or "text:" + _text_key(draft.instruction), draft.start_path, " ".join(checks)


def repeat_limit(group: int, total: int) -> int:
    """How many drafts of a group of `group` (one intent, one start page) a site of `total` keeps."""
    return max(MAX_REPEATS, TASKS_WANTED - (total - group))


def capped(drafts: list[Any]) -> list[Any]:
    """The drafts with each (intent, start page) group cut to its `repeat_limit`, the first ones kept
    (a skill orders its drafts by level, so the kept ones span the levels)."""
    sizes = Counter(repeat_key(d) for d in drafts)
    left = {key: repeat_limit(n, len(drafts)) for key, n in sizes.items()}
    out = []
    for draft in drafts:
        key = repeat_key(draft)
        if left[key] > 0:
            left[key] -= 1
            out.append(draft)
    return out
