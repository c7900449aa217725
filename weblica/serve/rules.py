"""Server-side rules of a synth site's records: what the site's backend refuses to store, whatever the
page did (a seat someone holds, a course whose prerequisite is missing). A real site checks on the
server too; an agent that posts around the page's own checks must be refused, and nothing stored.

A bundle's `site.json` lists them under `record_rules`: collection -> rules, each a dict with `kind`:
- `requires`: `needs` maps each allowed value of `field` to what it needs, `have` is what the user has;
  a value not in `needs` is refused, as is one whose needs are not all had.
- `free_items`: `field` holds items (a list, or one comma-separated string); per value of the record's
  `by` field, `offered` lists the items there are and `taken` those already held; an item not offered,
  taken, held by a stored record of the collection with the same `by` value, or given twice is refused,
  as is a record with none or more than `max`.
- `later`: the `field` value (an ISO date) must come after the `than` field's, both present.
- `at_most`: the `field` value, a whole number of at least 1, may not exceed `limits[record[by]]`.
Each rule may carry `error`, the message shown (`{missing}` / `{items}` / `{limit}` filled in)."""
from __future__ import annotations

from typing import Any

Rule = dict[str, Any]


def items_of(value: Any) -> list[str]:
    """The items a record field holds: a list's strings, or a comma-separated string's parts."""
    if isinstance(value, list):
        return [str(v).strip() for v in value]
    return [part.strip() for part in str(value or "").split(",") if part.strip()]


def _requires(rule: Rule, record: dict[str, Any], state: dict[str, Any]) -> str | None:
    value = record.get(rule["field"])
    needs = rule.get("needs", {})
    if not isinstance(value, str) or value not in needs:
        return f"There is no such {rule.get('noun', 'choice')}."
    missing = [n for n in needs[value] if n not in rule.get("have", [])]
    if missing:
        return rule.get("error", "Not allowed yet: {missing} first.").format(missing=", ".join(missing))
    return None


def _free_items(rule: Rule, record: dict[str, Any], state: dict[str, Any]) -> str | None:
    key = str(record.get(rule["by"], ""))
    offered = set(rule.get("offered", {}).get(key, []))
    wanted = items_of(record.get(rule["field"]))
    if not offered:
        return f"Nothing can be chosen for '{key[:40]}'."
    if not wanted or len(wanted) > rule.get("max", 10 ** 6):
        return f"Choose between 1 and {rule.get('max', len(offered))}."
    if len(set(wanted)) != len(wanted) or any(w not in offered for w in wanted):
        return "That choice is not available."
    held = set(rule.get("taken", {}).get(key, []))
    for other in state.get(rule["collection"], []):
        if isinstance(other, dict) and str(other.get(rule["by"], "")) == key:
            held.update(items_of(other.get(rule["field"])))
    clash = [w for w in wanted if w in held]
    if clash:
        return rule.get("error", "Already taken: {items}.").format(items=", ".join(clash))
    return None


def _later(rule: Rule, record: dict[str, Any], state: dict[str, Any]) -> str | None:
    late, early = record.get(rule["field"]), record.get(rule["than"])
    if not (isinstance(late, str) and isinstance(early, str) and len(late) == len(early) == 10 and late > early):
        return rule.get("error", f"{rule['field']} must come after {rule['than']}.")
    return None


def _at_most(rule: Rule, record: dict[str, Any], state: dict[str, Any]) -> str | None:
    limit = rule.get("limits", {}).get(str(record.get(rule["by"], "")))
    value = record.get(rule["field"])
    if limit is None:
        return "That choice is not available."
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != int(value) or not 1 <= value <= limit:
        return rule.get("error", "At most {limit}.").format(limit=limit)
    return None


KINDS = {"requires": _requires, "free_items": _free_items, "later": _later, "at_most": _at_most}


def refusal(rules: list[Rule], collection: str, record: dict[str, Any], state: dict[str, Any]) -> str | None:
    """Why the backend refuses to store `record` in `collection` (None when every rule allows it).
    A rule of a kind this server does not know refuses: an unsure check fails."""
    for rule in rules:
        check = KINDS.get(rule.get("kind", ""))
        if check is None:
            return f"This site's rule '{rule.get('kind')}' is unknown to the server; nothing was stored."
        reason = check({**rule, "collection": collection}, record, state)
        if reason:
            return reason
    return None
