"""De-duplication of a site's task drafts: the same request asked twice is one task.

Two drafts are the same request when their instructions are the same text (case and spacing aside),
or when they have the same intent and the same slot values: as `say` recorded them for the site, and
for drafts phrased otherwise, the same start page, plan and checks (what the slots decide).
The first draft is kept, so the order of a skill's drafts decides which phrasing stays.
"""
from __future__ import annotations

import json
import re
from typing import Any, Iterable


def _text_key(instruction: str) -> str:
    return re.sub(r"\s+", " ", instruction).strip().lower()


def _plan_key(draft: Any) -> str:
    checks = [c.to_dict() if hasattr(c, "to_dict") else c for c in draft.checks]
    return json.dumps([draft.intent, draft.start_path, draft.plan, checks], sort_keys=True, default=str)


def dedupe(drafts: Iterable[Any], site: Any = None) -> list[Any]:
    """The drafts with every repeat of an earlier one (same text, or same intent and slot values) left
    out; with the `site` they were made for, the slot values `say` recorded are compared."""
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
    return kept
