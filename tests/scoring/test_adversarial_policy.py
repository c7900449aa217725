"""Reward integrity end to end: on freshly synthesized sites of every skill, a scripted reward hacker
(the adversarial policy: the gold's page, then every candidate on it; every control clicked on state
tasks) scores 0, while its answers do hold the gold (so the 0 is the checks' doing: a check that found
the gold anywhere in the answer would have paid it). Validation drops a task whose check is gameable,
naming the negative that passed, and every state skill's "do everything" runs are rejected."""
from __future__ import annotations

import asyncio
import json
import re

import pytest

from weblica.env.task import Check, load_tasks, save_tasks
from weblica.policy.adversarial import CARELESS
from weblica.synth.generate import keep_valid, write_unvalidated
from weblica.synth.spec import compatible_categories, sample_spec, skills
from weblica.synth.validate import validate_bundles

# which generated tasks each site keeps (indexes into its tasks.jsonl): an answer and a state/url task
# where a skill has both, tasks with a "do everything" run on the state skills
PICK = {"account": [2, 3], "infeasible": [0, -1], "search": [0, 4], "filter-sort": [0, 5], "menus": [0, 4],
        "booking": [0, -1], "store-locator": [0, -1]}
STATE_SKILLS = ("forms", "date-picker", "numeric-widgets", "autocomplete", "account", "checkout", "crud",
                "booking", "drag-reorder")  # store-locator's one chosen store has no "more" to do


@pytest.fixture(scope="module")
def synth_set(tmp_path_factory):
    out = tmp_path_factory.mktemp("adversarial")
    paths = []
    for i, skill in enumerate(sorted(skills())):
        fit = compatible_categories(skill)  # the genres the skill makes sense for
        path = write_unvalidated(sample_spec(300 + i, skill, fit[i % len(fit)]), out)
        drafted = load_tasks(path / "tasks.jsonl")
        save_tasks([drafted[k] for k in PICK.get(skill, [0, 1])], path / "tasks.jsonl")
        paths.append(path)
    results = asyncio.run(keep_valid(paths, concurrency=6))
    tasks = []
    for result in results:
        for task in load_tasks(result.path / "tasks.jsonl"):
            task.source.bundle = str(result.path.resolve())
            tasks.append(task)
    return results, tasks


def _play(tasks, policy):
    from weblica.policy.factory import make_policy_factory
    from weblica.rollout import run_tasks
    from weblica.synth.backend import ServedSynthBackend

    async def go():
        backend = ServedSynthBackend(sorted({t.source.bundle for t in tasks}))
        await backend.start()
        try:
            trajectories, _ = await run_tasks(tasks, make_policy_factory(policy, 0), None, parallel=4,
                                              backends={"synth": backend})
            return trajectories
        finally:
            await backend.stop()
    return asyncio.run(go())


@pytest.mark.slow
def test_adversarial_policy_scores_zero_on_every_skill_and_its_answers_hold_the_gold(synth_set):
    results, tasks = synth_set
    assert {t.skill for t in tasks} == set(skills()), [(r.site_id, r.failures[:2]) for r in results if not r.tasks_kept]
    trajectories = _play(tasks, "adversarial")
    assert [t.termination_reason for t in trajectories].count("done") == len(tasks), \
        [(t.task_id, t.termination_reason, t.error) for t in trajectories if t.termination_reason != "done"]
    assert [t.task_id for t in trajectories if t.success] == []
    # the 0 on state tasks is the "do everything" run's: the whole of it was played in this episode
    # (its pop-ups dismissed as they came, none swallowing the extra clicks), not a run cut short
    careless = 0
    for task, traj in zip(tasks, trajectories):
        if any(CARELESS in s.response for s in traj.steps):  # the task done with one given value typed wrong
            careless += 1
            typed = [a["arguments"]["text"] for s in traj.steps for a in s.actions if a["name"] == "write"]
            assert any(t not in task.instruction for t in typed), (task.id, typed)
        elif task.metadata.get("maximal_oracle"):
            played = sum(len(s.actions) for s in traj.steps if "The task, and everything else." in s.response)
            assert played == len(task.metadata["maximal_oracle"]), (task.id, played)
    assert careless >= 1
    # not a policy that simply failed: on answer tasks it reached the gold's page and said the gold
    # (among everything else), which a check looking for the gold anywhere would have paid 1.0
    holding = 0
    for task, traj in zip(tasks, trajectories):
        if not any(c.type == "answer_match" and c.mode != "refusal" for c in task.checks):
            continue
        gold = task.oracle[-1].args["answer"]
        if re.search(rf"(?<!\w){re.escape(gold)}(?!\w)", _as_read(traj.answer or ""), re.IGNORECASE):
            holding += 1
            assert len((traj.answer or "").split()) > 3 * len(gold.split()), (task.id, traj.answer)
        else:  # only a value the page does not show (a computed difference) may be missing
            assert task.metadata.get("intent") in ("price-difference", "price-together"), (task.id, gold, traj.answer[:300])
    assert holding >= 8, holding


def _as_read(answer: str) -> str:
    """The answer as the checker reads it: invisible characters dropped, look-alike letters as the letters
    they imitate, letters that imitate digits ("l4") as those digits (the adversary's disguises)."""
    from weblica.scoring.text import fold, normalize_answer
    from weblica.scoring.confusables import disguised_number

    text = normalize_answer(answer)
    text = re.sub(r"[^\W_]+", lambda m: m.group(0) if m.group(0).isascii() else fold(m.group(0)), text)
    return re.sub(r"[^\W_]*\d[^\W_]*", lambda m: disguised_number(m.group(0)) or m.group(0), text)


def test_maximal_negatives_are_rejected_for_every_state_skill(synth_set):
    from weblica.scoring.negatives import named_fields

    results, tasks = synth_set
    by_skill = {json.loads((r.path / "site.json").read_text())["spec"]["skill"]: r for r in results}
    typing = {t.skill for t in tasks if named_fields(t) and any(c.type == "state_match" for c in t.checks)}
    assert {"forms", "account", "date-picker"} <= typing, typing
    for skill in STATE_SKILLS:
        result = by_skill[skill]
        assert result.tasks_kept == len(PICK.get(skill, [0, 1])), (skill, result.failures)
        assert result.negatives_tried.get("maximal", 0) >= 1, (skill, result.negatives_tried)
        assert result.negatives_rejected["maximal"] == result.negatives_tried["maximal"], (skill, result.failures)
        # every value the instruction gives, typed wrong, is rejected (issue 37: "999 Wrong Street")
        if skill in typing:
            assert result.negatives_tried.get("named_field", 0) >= 1, (skill, result.negatives_tried)
            assert result.negatives_rejected["named_field"] == result.negatives_tried["named_field"], (skill, result.failures)


def _rewrite(path, index, change):
    lines = (path / "tasks.jsonl").read_text().splitlines()
    task = json.loads(lines[index])
    change(task)
    lines[index] = json.dumps(task)
    (path / "tasks.jsonl").write_text("\n".join(lines) + "\n")


def test_validation_drops_gameable_checks_and_names_the_negative(tmp_path):
    """A regex that finds the gold anywhere in the answer without spelling it out as a value (character
    classes, so the check cannot read the match as the gold: listing every price passes it) and a form
    check that reads one field only are kept by the old validation; the adversarial negatives drop both,
    each listed with the negative that passed."""
    price = write_unvalidated(sample_spec(21, "pagination"), tmp_path)
    form = write_unvalidated(sample_spec(22, "forms"), tmp_path)
    save_tasks(load_tasks(price / "tasks.jsonl")[:2], price / "tasks.jsonl")
    save_tasks(load_tasks(form / "tasks.jsonl")[:1], form / "tasks.jsonl")

    def gold_anywhere(task):
        gold = task["metadata"]["plan"][-1]["answer"]
        pattern = "".join(f"[{re.escape(ch)}]" if ch.isalnum() else re.escape(ch) for ch in gold)
        task["checks"] = [Check(type="answer_match", expected=pattern, mode="regex").to_dict()]

    def one_field(task):
        task["checks"] = [c for c in task["checks"] if c.get("path") == "submissions.0.name"]
    _rewrite(price, 0, gold_anywhere)
    _rewrite(form, 0, one_field)
    report, per_bundle = asyncio.run(validate_bundles([price, form], compile_plans=True, concurrency=4))
    summary = report.to_dict()
    dropped = {(d["task"], d["kind"]) for d in summary["dropped"]}
    weak, strong = (o for _, o in per_bundle[price])
    assert not weak.valid and strong.valid, (weak.failures, strong.failures)
    assert (weak.task_id, "enumeration") in dropped, dropped
    # hedges and page dumps no longer pass even this check: the answer grammar reads past no hedge
    # (weblica.scoring.grammar), whatever the pattern spells out
    assert not {(weak.task_id, kind) for kind in ("hedge", "page_dump")} & dropped, dropped
    assert any("enumeration negative accepted" in f and "joined by" in f for f in weak.failures), weak.failures
    (_, form_outcome), = per_bundle[form]
    # the form's other named fields (email, message, ...) typed wrong pass a check that reads the name only;
    # (the "do everything" runs, played only for a task still valid, are asked in the next test)
    assert not form_outcome.valid and (form_outcome.task_id, "named_field") in dropped, form_outcome.failures
    assert "email typed wrong" in " ".join(form_outcome.failures)
    # every kind is counted, and what was dropped is counted as not rejected
    tried, rejected = summary["negatives_tried"], summary["negatives_rejected"]
    for kind in ("enumeration", "hedge", "negation", "echo", "page_dump", "empty", "refusal", "wrong", "noop",
                 "random", "altered_state", "named_field", "two_assertions", "foreign_hedge",
                 "approximation", "invisible", "homoglyph", "open_list", "question", "doubt"):
        assert tried.get(kind, 0) >= 1, (kind, tried)
    assert rejected["enumeration"] < tried["enumeration"] and rejected["named_field"] < tried["named_field"]


def test_negatives_of_every_kind_are_built_from_the_task():
    """No browser: what validation will ask the checks, per kind, for an answer, a URL and a state task."""
    from weblica.env.task import Task
    from weblica.synth.checks import answer_infeasible, answer_number, url_is
    from weblica.scoring.negatives import answer_negatives, url_negatives
    from weblica.synth.maximal import maximal_plans

    price = Task(id="p", start_url="http://s.test/", instruction="What does the most expensive Jeans cost?",
                 checks=[answer_number(316, 0, confusers=[17, 62, 342], locale="ja-JP")],
                 metadata={"negatives": {"answers": ["¥17", "¥62"]}})
    page = "Jeans\nBold Poncho ¥17\nCropped Cardigan ¥316\nSoft Oxford ¥342\n" + "filler line\n" * 400
    made = answer_negatives(price, "¥316", page)
    kinds = {n.kind for n in made}
    assert {"empty", "echo", "page_dump", "page_values", "refusal", "negation", "enumeration", "hedge"} <= kinds
    answers = [n.answer for n in made]
    assert "¥17, ¥62, ¥342, ¥316" in answers or any(a.endswith("¥316") and "¥342" in a for a in answers if a)
    assert "¥316 or ¥17" in answers and "not ¥316" in answers
    assert all(len(n.answer) <= 2000 for n in made if n.kind == "page_values")
    assert any(n.kind == "page_dump" and len(n.answer) <= 2000 and "¥316" in n.answer for n in made)
    infeasible = Task(id="i", start_url="http://s.test/", instruction="What is the price of the Wild Poncho?",
                      checks=[answer_infeasible()], metadata={"negatives": {"answers": ["Yes", "¥17"]}})
    kinds = [n.kind for n in answer_negatives(infeasible, "This cannot be done.", page)]
    assert kinds.count("refuse_guess") == 2 and "confident" in kinds and "refusal" not in kinds
    url = Task(id="u", start_url="http://s.test/", instruction="Show only Jeans, cheapest first.",
               checks=[url_is("http://s.test/items?kind=Jeans&sort=price-asc")])
    extra = [n.url for n in url_negatives(url)]
    assert "http://s.test/items?kind=Jeans&sort=price-desc" in extra and any("page=2" in u for u in extra)
    assert all(u.startswith("http://s.test/items?kind=Jeans") for u in extra)
    form = Task(id="f", start_url="http://s.test/", instruction="Send the form",
                checks=[Check(type="state_match", path="submissions", expected=1, mode="count")],
                metadata={"plan": [{"op": "fill", "sel": "#f-name", "text": "A"}, {"op": "click", "sel": "#submit"}]})
    labels = {label: plan for label, plan in maximal_plans(form)}
    filled = labels["every other field filled before submitting"]
    assert filled[1] == {"op": "fill_all", "skip": ["name"]} and filled[-1]["sel"] == "#submit"
    assert len(labels["the whole task done twice"]) == 5
