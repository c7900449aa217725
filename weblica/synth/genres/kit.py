"""What the genre flows share: form plans and the state checks of a stored form, and the
task drafts they emit (every instruction phrased from an intent, never written by hand)."""
from __future__ import annotations

import datetime as dt
from typing import Any

from weblica.env.task import Check
from weblica.synth.checks import state_count, state_is
from weblica.synth.intents import Intent, say
from weblica.synth.intents.difficulty import planned
from weblica.synth.site import SiteBuilder, TaskDraft
from weblica.synth.skills.forms import _fill

Plan = list[dict[str, Any]]
# "do everything" runs add at most this many other actions of the same kind (another booking, another save)
MAXIMAL_EXTRAS = 3


def fill(field: dict[str, Any], value: Any, widgets: str) -> dict[str, Any]:
    """The plan step that puts `value` into a form field (dates through the site's date widget)."""
    if field["type"] == "date":
        return {"op": "date" if widgets == "native" else "calendar", "sel": f"#f-{field['name']}", "value": value}
    return _fill(field, value)


def fill_plan(site: SiteBuilder, fields: list[dict[str, Any]], values: dict[str, Any]) -> Plan:
    """Steps that fill the named fields, in the form's order."""
    return [fill(f, values[f["name"]], site.spec.style.widgets) for f in fields if f["name"] in values]


def empty_value(field: dict[str, Any]) -> Any:
    """What a field the task does not name holds when it is submitted untouched."""
    if field["type"] == "checkbox":
        return False
    if field["type"] in ("number", "stepper", "range", "hidden"):
        return field.get("value")
    return ""


def record_checks(collection: str, fields: list[dict[str, Any]], values: dict[str, Any],
                  extra: dict[str, Any] | None = None) -> list[Check]:
    """One record stored, holding the requested values, every other field as it was left: a run that
    fills everything else too, or submits twice, fails."""
    checks = [state_count(collection, 1)]
    for f in fields:
        if f["type"] == "hidden" and f["name"] not in values:
            continue
        value = values.get(f["name"], empty_value(f))
        numeric = isinstance(value, (int, float)) and not isinstance(value, bool)
        checks.append(state_is(f"{collection}.0.{f['name']}", value, "numeric" if numeric else "exact"))
    for key, value in (extra or {}).items():
        checks.append(state_is(f"{collection}.0.{key}", value))
    return checks


def ask(site: SiteBuilder, which: Intent, slots: dict[str, Any], start: str, plan: Plan, answer: str,
        check: Check, wrong: list[str], rubric: str) -> None:
    """A question task: the plan ends by answering `answer`, which `check` accepts and `wrong` are not.
    Its difficulty is computed from the plan (then from the compiled oracle in validation), as for every task."""
    full = plan + [{"op": "done", "answer": answer}]
    site.task(TaskDraft(**say(site, which, **slots), start_path=start, plan=full, checks=[check],
                        difficulty=planned(full), rubric=[rubric], wrong_answers=[w for w in wrong if w != answer][:3]))


def act(site: SiteBuilder, which: Intent, slots: dict[str, Any], start: str, plan: Plan, checks: list[Check],
        rubric: str, maximal: Plan | None = None) -> None:
    """A state task: the plan changes the site's server-side state, which `checks` read; `maximal` is
    the plan with everything else of its kind done too (it must fail)."""
    site.task(TaskDraft(**say(site, which, **slots), start_path=start, plan=plan, checks=checks,
                        difficulty=planned(plan), rubric=[rubric], maximal=maximal or []))


def unique_by(entities: list[dict[str, Any]], key: str, value: Any) -> dict[str, Any] | None:
    """The one entity whose `key` is `value`, or None when none or several are."""
    found = [e for e in entities if e[key] == value]
    return found[0] if len(found) == 1 else None


def amounts(rng: Any, low: float, high: float, decimals: int, count: int) -> list[float]:
    """`count` distinct amounts between low and high in the site's precision (whole units when it has
    no decimals), so "the cheapest" and "how much" have one answer each."""
    seen: set[float] = set()
    out: list[float] = []
    while len(out) < count:
        value = rng.uniform(low, high)
        value = float(round(value)) if decimals == 0 else round(int(value) + rng.choice([0.0, 0.5, 0.99, 0.25, 0.75]), 2)
        if value not in seen:
            seen.add(value)
            out.append(value)
    return out


def day_text(iso: str) -> str:
    """A date as an instruction says it ("March 14")."""
    day = dt.date.fromisoformat(iso)
    return f"{day.strftime('%B')} {day.day}"
