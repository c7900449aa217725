"""The "do everything" runs validation plays against a state task: the plans a reward-maximizing learner
would follow to be paid for more than the task (every other field filled, the task done twice, everything
else on the site done) and, for a password a site never stores, the plan with that password typed wrong.
The checks must reject every end state they reach (weblica.synth.validate.Validator.maximal_run)."""
from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from weblica.scoring.negatives import named_fields

if TYPE_CHECKING:
    from weblica.env.task import Task

NAMED_FIELD_PLAYED = "one named field wrong, played:"  # the label of a played wrong-field run


def _touched_fields(plan: list[dict[str, Any]]) -> list[str]:
    """The form field names a plan sets (#f-NAME, a radio #NAME-k, a stepper's #f-NAME [data-step-up])."""
    names = []
    for step in plan:
        sel = str(step.get("sel", ""))
        match = re.match(r"#f-([\w-]+)", sel) or re.match(r"#([\w-]+?)-\d+$", sel)
        if match and match.group(1) not in names:
            names.append(match.group(1))
    return names


def maximal_plans(task: "Task") -> list[tuple[str, list[dict[str, Any]]]]:
    """The "do everything" runs of a state task, as plans: the oracle's plan with every field it leaves
    alone filled before each submit, the plan done twice, and the skill's own "do everything" plan (the
    task's steps plus every other item added, record toggled, slot booked). Empty without state checks."""
    if not any(c.type == "state_match" for c in task.checks):
        return []
    plan = [s for s in task.metadata.get("plan", []) if s.get("op") != "done"]
    if not plan:
        return []
    out = []
    if any(s.get("op") == "click" and s.get("sel") == "#submit" for s in plan):
        touched, filled = _touched_fields(plan), []
        for step in plan:
            if step.get("op") == "click" and step.get("sel") == "#submit":
                filled.append({"op": "fill_all", "skip": touched})
            filled.append(step)
        out.append(("every other field filled before submitting", filled))
    out.append(("the whole task done twice", plan + [{"op": "goto", "url": task.start_url}] + plan))
    everything = task.metadata.get("maximal")
    if everything:
        out.append(("everything else on the site done too", list(everything)))
    # a password the site never stores (a login's) is judged by playing it wrong: the login must fail
    for index, name, value in named_fields(task, plan):
        if "password" in name:
            wrong = [dict(step) for step in plan]
            key = "text" if "text" in wrong[index] else "value"
            wrong[index][key] = value + "9"
            out.append((f"{NAMED_FIELD_PLAYED} {name}", wrong))
    return out
