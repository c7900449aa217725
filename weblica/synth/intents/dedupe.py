"""De-duplication of a site's task drafts: the same request asked twice is one task.

Two drafts are the same request when their instructions are the same text (case and spacing aside),
or when they have the same intent and the same slot values. The slot values of a draft are what its
checks and start page hold (the item, the quantity, the expected URL or state, the gold and its
confusers): two drafts of one intent with equal checks ask for the same thing in other words.
The first draft is kept, so the order of a skill's drafts decides which phrasing stays.
"""
from __future__ import annotations

import json
import re
from typing import Any, Iterable


def _text_key(instruction: str) -> str:
    return re.sub(r"\s+", " ", instruction).strip().lower()


def _slots_key(draft: Any) -> str:
    checks = [c.to_dict() if hasattr(c, "to_dict") else c for c in draft.checks]
    return json.dumps([draft.intent, draft.start_path, checks], sort_keys=True, default=str)


def dedupe(drafts: Iterable[Any]) -> list[Any]:
    """The drafts with every repeat of an earlier one (same text, or same intent and slot values) left out."""
    seen: set[str] = set()
    kept = []
    for draft in drafts:
        keys = {"text:" + _text_key(draft.instruction)}
        if draft.intent:
            keys.add("slots:" + _slots_key(draft))
        if keys & seen:
            continue
        seen |= keys
        kept.append(draft)
    return kept
