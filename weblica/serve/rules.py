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
- `open_dates`: `from` and `to` are ISO dates, `to` after `from`; none of the nights between (the `from`
  date up to the day before `to`) is in `closed[record[by]]`; with `room_of` (a `by` value -> its room)
  and `rooms` (room -> how many there are), nor is one on which the collection's stored records of the
  same room already hold every room. A stay of more than `max_nights` (default MAX_NIGHTS, the pages'
  cap too) is refused, and with `first_night` / `last_night` (ISO dates: the nights the site's calendar
  offers) so is one with a night outside them.
- `later`: the `field` value (an ISO date) must come after the `than` field's, both present.
- `at_most`: the `field` value, a whole number of at least 1, may not exceed `limits[record[by]]`.
- `in_stock`: `counts` maps each quantity field to what it buys (a ticket type); the `by` value must be
  in `left`, every quantity a whole number of 0 or more (digits in a string count as that number), at
  least one of them above 0 (`empty`, the message for an order of nothing), and a field in
  `left[record[by]]` plus what the collection's stored records with the same `by` value hold of it may
  not exceed that number (a field not listed there, as a seated zone, is not limited by this rule);
  with `prefix` ("qty_"), a record field that starts with it and is not in `counts` (a quantity of an
  `item` there is none of) is refused.
Each rule may carry `error`, the message shown (`{missing}` / `{items}` / `{limit}` / `{left}` filled in).
`checked_rules` reads a bundle's `record_rules` before the server serves it: a malformed one stops the
server with one line naming the file (rules that cannot be read must not quietly allow everything)."""
from __future__ import annotations

import datetime as dt
import math
from typing import Any

from weblica.scoring.dates import parse_iso_date
from weblica.stay_nights import MAX_NIGHTS, stay_nights

Rule = dict[str, Any]


class RuleError(ValueError):
    """A bundle's `site.json` (its `record_rules`) that the server cannot serve; the message names the file."""


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


def _held(rule: Rule, key: str, state: dict[str, Any]) -> set[str]:
    """The items of `key`'s pool held now: taken at the start, or by a stored record of the rule's
    collection or of the collections that share the pool."""
    held = set(rule.get("taken", {}).get(key, []))
    for name in [rule["collection"], *rule.get("shared", [])]:
        for other in state.get(name, []):
            if isinstance(other, dict) and str(other.get(rule["by"], "")) == key:
                held.update(items_of(other.get(rule["field"])))
    return held


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
    held = _held(rule, key, state)
    clash = [w for w in wanted if w in held]
    if clash:
        return rule.get("error", "Already taken: {items}.").format(items=", ".join(clash))
    return None


def _iso_date(value: Any) -> tuple[int, int, int] | None:
    """A calendar date written exactly YYYY-MM-DD, else None ('2026-02-30', '20260312', ' 2026-03-12' and
    'zzzzzzzzzz' are none): what is stored is what the checks and the page read."""
    if not isinstance(value, str) or len(value) != 10 or value[4] != "-" or value[7] != "-":
        return None
    return parse_iso_date(value)


def _later(rule: Rule, record: dict[str, Any], state: dict[str, Any]) -> str | None:
    late, early = _iso_date(record.get(rule["field"])), _iso_date(record.get(rule["than"]))
    if late is None or early is None or late <= early:
        return rule.get("error", f"{rule['field']} must come after {rule['than']}.")
    return None


def _at_most(rule: Rule, record: dict[str, Any], state: dict[str, Any]) -> str | None:
    limit = rule.get("limits", {}).get(str(record.get(rule["by"], "")))
    value = record.get(rule["field"])
    if limit is None:
        return "That choice is not available."
    whole = isinstance(value, int) or isinstance(value, float) and math.isfinite(value) and value.is_integer()
    if isinstance(value, bool) or not whole or not 1 <= value <= limit:
        return rule.get("error", "At most {limit}.").format(limit=limit)
    return None


def best_block(rows: list[list[str]], held: set[str], count: int) -> list[str] | None:
    """The best `count` free items of a zone: in the front-most row that has `count` adjacent free ones,
    the block nearest the row's centre (the lower seats on a tie); when no row has them together, the
    free items front to back, each row's nearest its centre first; None when fewer are free."""
    for row in rows:
        centre = (len(row) - 1) / 2
        starts = [i for i in range(len(row) - count + 1) if not held & set(row[i:i + count])]
        if starts:
            best = min(starts, key=lambda i: (abs(i + (count - 1) / 2 - centre), i))
            return row[best:best + count]
    free = [item for row in rows for _, _, item in sorted(
        (abs(i - (len(row) - 1) / 2), i, item) for i, item in enumerate(row) if item not in held)]
    return free[:count] if len(free) >= count else None


MAX_QUANTITY = 10 ** 6 - 1  # a larger quantity is no order a form sends (and 1e400 reads as infinity)


def _quantity(value: Any) -> int | None:
    """A quantity a form sends (a number, or ASCII digits in a string; absent or empty is 0); None
    otherwise ("²" and "٣" are digits to str.isdigit, not to a form)."""
    if value is None or value == "":
        return 0
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)) and 0 <= value <= MAX_QUANTITY and value == int(value):
        return int(value)
    if isinstance(value, str) and value.strip().isascii() and value.strip().isdigit() and len(value.strip()) < 7:
        return int(value.strip())
    return None


def _best_items(rule: Rule, record: dict[str, Any], state: dict[str, Any]) -> str | None:
    key = str(record.get(rule["by"], ""))
    zones = rule.get("rows", {}).get(key)
    if not zones:
        record.pop(rule["field"], None)  # not seated: nothing on a map to hold
        return None
    held = _held(rule, key, state)
    picked: list[str] = []
    for count_field, zone in rule.get("counts", {}).items():
        count = _quantity(record.get(count_field))
        if count is None:
            return "Ticket quantities must be whole numbers of 0 or more."
        if not count:
            continue
        block = best_block(zones.get(zone, []), held | set(picked), count)
        if block is None:
            free = sum(item not in held for row in zones.get(zone, []) for item in row)
            return rule.get("error", "Only {free} left in {zone}.").format(free=free, zone=zone, count=count)
        picked += block
    record[rule["field"]] = ",".join(picked)
    return None


def _in_stock(rule: Rule, record: dict[str, Any], state: dict[str, Any]) -> str | None:
    key = str(record.get(rule["by"], ""))
    left = rule.get("left", {}).get(key)
    if left is None:
        return f"There is no such {rule.get('noun', 'choice')}."
    counts = rule.get("counts", {})
    prefix = rule.get("prefix")
    if prefix and any(str(f).startswith(prefix) and f not in counts for f in record):
        return f"There is no such {rule.get('item', 'ticket type')}."
    wanted = {f: _quantity(record.get(f)) for f in counts}
    if any(q is None for q in wanted.values()):
        return "Ticket quantities must be whole numbers of 0 or more."
    if not sum(wanted.values()):
        return rule.get("empty", "Choose at least one ticket.")
    for name, count in wanted.items():
        if name not in left or not count:
            continue
        held = sum(_quantity(other.get(name)) or 0 for other in state.get(rule["collection"], [])
                   if isinstance(other, dict) and str(other.get(rule["by"], "")) == key)
        if held + count > left[name]:
            return rule.get("error", "Only {left} {what} left ({count} asked for).").format(
                left=max(left[name] - held, 0), what=counts[name], count=count)
    return None


def _booked_out(rule: Rule, key: str, nights: list[str], state: dict[str, Any]) -> list[str]:
    """The nights of the stay on which the stored records of `key`'s room (any of its rates) already
    hold every room there is. A stored stay holds each of these nights from its check-in up to its
    check-out, however long it is (ISO dates compare as strings)."""
    room_of = rule["room_of"]
    held: dict[str, int] = {}
    for other in state.get(rule["collection"], []):
        if not isinstance(other, dict) or room_of.get(str(other.get(rule["by"], ""))) != room_of[key]:
            continue
        start, end = _iso_date(other.get(rule["from"])), _iso_date(other.get(rule["to"]))
        if start is None or end is None:  # junk stored dates hold no night
            continue
        for night in nights:
            if other[rule["from"]] <= night < other[rule["to"]]:
                held[night] = held.get(night, 0) + 1
    rooms = rule.get("rooms", {}).get(room_of[key], 0)
    return [night for night in nights if held.get(night, 0) >= rooms]


def _open_dates(rule: Rule, record: dict[str, Any], state: dict[str, Any]) -> str | None:
    start, end = record.get(rule["from"]), record.get(rule["to"])
    if _iso_date(start) is None or _iso_date(end) is None:  # "20260312", a week date: not the form's dates
        return f"{rule['from']} and {rule['to']} must be dates (YYYY-MM-DD)."
    first, last = dt.date.fromisoformat(start), dt.date.fromisoformat(end)
    if last <= first:
        return f"{rule['to']} must come after {rule['from']}."
    longest = rule.get("max_nights", MAX_NIGHTS)
    if (last - first).days > longest:
        return f"A stay can be at most {longest} nights."
    key = str(record.get(rule["by"], ""))
    closed = sorted(d for d in rule.get("closed", {}).get(key, []) if start <= d < end)
    if closed:
        return rule.get("error", "Sold out on {dates}.").format(dates=", ".join(closed))
    nights = stay_nights(first, last)
    opened, closing = rule.get("first_night", nights[0]), rule.get("last_night", nights[-1])
    if nights[0] < opened or nights[-1] > closing:  # a stay the site's calendar never offers
        return f"Stays can be booked for the nights of {opened} to {closing} only."
    if key in rule.get("room_of", {}):
        full = _booked_out(rule, key, nights, state)
        if full:
            return rule.get("error", "Sold out on {dates}.").format(dates=", ".join(full))
    return None


KINDS = {"requires": _requires, "free_items": _free_items, "later": _later, "at_most": _at_most,
         "best_items": _best_items, "open_dates": _open_dates, "in_stock": _in_stock}


def refusal(rules: list[Rule], collection: str, record: dict[str, Any], state: dict[str, Any]) -> str | None:
    """Why the backend refuses to store `record` in `collection` (None when every rule allows it); a
    `best_items` rule that allows it has written the items it picked into `record`.
    A rule of a kind this server does not know refuses: an unsure check fails."""
    for rule in rules:
        check = KINDS.get(rule.get("kind", ""))
        if check is None:
            return f"This site's rule '{rule.get('kind')}' is unknown to the server; nothing was stored."
        reason = check({**rule, "collection": collection}, record, state)
        if reason:
            return reason
    return None


# what each kind reads from its rule: key -> (the type it must have, whether the rule must give it)
_SHAPES: dict[str, dict[str, tuple[type | tuple[type, ...], bool]]] = {
    "requires": {"field": (str, True), "needs": (dict, True), "have": (list, False), "noun": (str, False)},
    "free_items": {"field": (str, True), "by": (str, True), "offered": (dict, True), "taken": (dict, False),
                   "max": (int, False), "shared": (list, False)},
    "best_items": {"field": (str, True), "by": (str, True), "rows": (dict, True), "counts": (dict, True),
                   "taken": (dict, False), "shared": (list, False)},
    "open_dates": {"by": (str, True), "from": (str, True), "to": (str, True), "closed": (dict, False),
                   "room_of": (dict, False), "rooms": (dict, False),
                   "first_night": (str, False), "last_night": (str, False), "max_nights": (int, False)},
    "in_stock": {"by": (str, True), "left": (dict, True), "counts": (dict, True), "noun": (str, False),
                 "prefix": (str, False), "item": (str, False), "empty": (str, False)},
    "later": {"field": (str, True), "than": (str, True)},
    "at_most": {"field": (str, True), "by": (str, True), "limits": (dict, True)},
}
_LISTS_OF = {"requires": "needs", "free_items": "offered", "open_dates": "closed"}  # maps of lists of strings


def _rule_problem(rule: Any) -> str | None:
    if not isinstance(rule, dict):
        return f"a rule must be an object with 'kind', got {type(rule).__name__}"
    kind = rule.get("kind")
    if kind not in _SHAPES:
        return f"rule kind {str(kind)[:40]!r} is unknown (known: {', '.join(KINDS)})"
    for key, (want, required) in {**_SHAPES[kind], "error": (str, False)}.items():
        if key not in rule:
            if required:
                return f"a '{kind}' rule needs '{key}'"
            continue
        if not isinstance(rule[key], want) or isinstance(rule[key], bool):
            return (f"'{kind}' rule's '{key}' must be a {getattr(want, '__name__', 'value')}, "
                    f"got {type(rule[key]).__name__}")
    if not all(isinstance(name, str) for name in rule.get("shared", [])):
        return f"'{kind}' rule's 'shared' must list collection names"
    if kind == "best_items" and not all(isinstance(zones, dict) and all(
            isinstance(rows, list) and all(isinstance(row, list) for row in rows) for rows in zones.values())
            for zones in rule["rows"].values()):
        return "'best_items' rule's 'rows' must map each value to zones of rows (lists of item lists)"
    for key in (_LISTS_OF.get(kind), "taken" if kind in ("free_items", "best_items") else None):
        for value in (rule.get(key) or {}).values() if key else ():
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                return f"'{kind}' rule's '{key}' must map each value to a list of strings"
    if kind == "in_stock" and not all(isinstance(per, dict) and all(isinstance(n, int) and not isinstance(n, bool)
                                                                    for n in per.values()) for per in rule["left"].values()):
        return "'in_stock' rule's 'left' must map each value to quantity fields and whole numbers"
    if kind == "open_dates" and not all(isinstance(n, int) and not isinstance(n, bool)
                                        for n in rule.get("rooms", {}).values()):
        return "'open_dates' rule's 'rooms' must map each room to a whole number"
    if kind == "open_dates" and not all(isinstance(room, str) for room in rule.get("room_of", {}).values()):
        return "'open_dates' rule's 'room_of' must map each value to a room name"
    if kind == "open_dates" and not all(_iso_date(rule[k]) for k in ("first_night", "last_night") if k in rule):
        return "'open_dates' rule's 'first_night' and 'last_night' must be dates (YYYY-MM-DD)"
    if kind == "open_dates" and not 1 <= rule.get("max_nights", 1) <= MAX_NIGHTS:
        return f"'open_dates' rule's 'max_nights' must be a whole number from 1 to {MAX_NIGHTS}"
    if kind == "at_most" and not all(isinstance(v, int) and not isinstance(v, bool) for v in rule["limits"].values()):
        return "'at_most' rule's 'limits' must map each value to a whole number"
    return None


def checked_rules(raw: Any, where: str) -> dict[str, list[Rule]]:
    """A bundle's `record_rules` (collection -> rules) as the server applies them; a RuleError naming
    `where` (the site.json) for anything the rule kinds above cannot read."""
    if raw is None:
        return {}
    fix = f"fix record_rules in {where} or regenerate the site with `weblica synth`"
    if not isinstance(raw, dict):
        raise RuleError(f"{where}: record_rules must be an object (collection -> list of rules), "
                        f"got {type(raw).__name__}; {fix}")
    for collection, rules in raw.items():
        if not isinstance(rules, list):
            raise RuleError(f"{where}: record_rules.{collection} must be a list of rules, "
                            f"got {type(rules).__name__}; {fix}")
        for index, rule in enumerate(rules):
            problem = _rule_problem(rule)
            if problem:
                raise RuleError(f"{where}: record_rules.{collection}[{index}]: {problem}; {fix}")
    return raw
