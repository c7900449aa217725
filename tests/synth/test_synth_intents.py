"""The task grammar (weblica/synth/intents): intents and their phrasings, agreement, the lint that
generation applies, de-duplication, difficulty from the oracle, skeleton diversity, composed tasks
(built here without a browser; a few validated in Chromium at the end)."""
from __future__ import annotations

import asyncio
import random
from collections import defaultdict

import pytest

from weblica.env.actions import Action
from weblica.env.task import load_tasks, save_tasks
from weblica.synth.checks import state_count, state_is, url_is
from weblica.synth.generate import build_site, emitted_drafts, keep_valid, write_unvalidated
from weblica.synth.intents import (INTENTS, MIN_PHRASINGS, GrammarError, article, count_of, intent, is_are, is_noun,
                                   listing, phrase, plural)
from weblica.synth.intents import browse, catalog, composed, forms, stateful  # noqa: F401  (declarations)
from weblica.synth.intents.composed import COMPOSED
from weblica.synth.intents.dedupe import dedupe
from weblica.synth.intents.difficulty import EASY_BELOW, MEDIUM_BELOW, Effort, oracle_effort, plan_effort, planned
from weblica.synth.intents.lint import problems
from weblica.synth.intents.skeleton import bundle_names, skeleton, skeleton_share, site_names
from weblica.synth.genres.registry import new_site
from weblica.synth.site import TaskDraft
from weblica.synth.skills import SKILLS
from weblica.synth.spec import categories, compatible_categories, incompatibility, sample_spec, skills


def compatible_categories_skills(category: str) -> list[str]:
    """The skills that fit a category's genre (the catalog's skill x genre compatibility)."""
    return [skill for skill in sorted(skills()) if incompatibility(skill, category) is None]


def bench_specs():
    """One site per skill, as bench/reward.py builds them (seed 0, the skill's compatible categories rotated)."""
    specs = []
    for i, skill in enumerate(sorted(skills())):
        fit = compatible_categories(skill)
        specs.append(sample_spec(i, skill, fit[i % len(fit)]))
    return specs


@pytest.fixture(scope="module")
def bench_sites():
    return [build_site(spec) for spec in bench_specs()]


# ---- intents and phrasing ----------------------------------------------------------------------
def test_every_declared_intent_has_enough_distinct_phrasings():
    assert len(INTENTS) >= 60
    for name, which in INTENTS.items():
        assert len(set(which.phrasings)) >= MIN_PHRASINGS, name
        assert which.name == name


def test_intent_declaration_refuses_too_few_phrasings_and_other_slots():
    with pytest.raises(GrammarError, match="at least"):
        intent("t-few", "Open {item}.", "Show {item}.")
    with pytest.raises(GrammarError, match="different slots"):
        intent("t-slots", "Open {item}.", "Show {item}.", "Go to {item}.", "See {item}.", "Find {other}.")
    # the site's own words ({nouns}) may be left out by a phrasing
    intent("t-site-words", "Open {item}.", "Show the {nouns} of {item}.", "Go to {item}.", "See {item}.", "Find {item}.")
    with pytest.raises(GrammarError, match="needs slot"):
        phrase(INTENTS["t-site-words"], random.Random(0))


def test_phrase_is_deterministic_per_rng_and_uses_every_phrasing_before_repeating():
    which = catalog.ASK_PRICE
    one = [phrase(which, random.Random("s"), item="Swift Pro", price_word="price") for _ in range(1)]
    rng_a, rng_b = random.Random("s"), random.Random("s")
    a = [phrase(which, rng_a, item="Swift Pro", price_word="price") for _ in range(20)]
    b = [phrase(which, rng_b, item="Swift Pro", price_word="price") for _ in range(20)]
    assert a == b and a[0] == one[0]
    n = len(which.phrasings)
    assert len(set(a[:n])) == n  # a full round before any repeats
    assert a != [phrase(which, random.Random("t"), item="Swift Pro", price_word="price") for _ in range(20)]


def test_agreement_helpers():
    assert article("event") == "an event" and article("gadget") == "a gadget"
    assert [plural(n) for n in ("class", "city", "Laptop", "Headphones", "box", "key")] == \
        ["classes", "cities", "Laptops", "Headphones", "boxes", "keys"]
    assert is_are("Languages") == "are" and is_are("Warranty") == "is" and is_are("Status") == "is"
    assert count_of(1, "gadget") == "1 gadget" and count_of(3, "class") == "3 classes"
    assert listing(["a"]) == "a" and listing(["a", "b", "c"]) == "a, b and c"
    assert is_noun("Opening hours") and not is_noun("Suitable for") and not is_noun("Washable")
    fixing = intent("t-fix", "Book a {x}, {y}.", "Book a {x} now, {y}.", "Get a {x}, {y}.", "Find the {x}, {y}.",
                    "See the {x} {y}.")
    texts = {phrase(fixing, random.Random(seed), x="event", y="events") for seed in range(40)}
    assert "Book an event, events." in texts and not any("a event" in t for t in texts)
    doubled = {phrase(fixing, random.Random(s), x="the Hotel", y="hotel") for s in range(40)}
    assert all("the the" not in t.lower() and "hotel hotel" not in t.lower() for t in doubled), doubled


# ---- lint -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("bad,why", [
    ("Book a event for Ana.", "'a' before a vowel"),
    ("Reserve an table for two.", "'an' before a consonant"),
    ("Open the the page of the Swift Pro.", "doubled word"),
    ("Use the search box to find the Swift Pro.", "how-to hint"),
    ("Click the first result.", "how-to hint"),
    ("Scroll down to the Swift Pro and tell me its price.", "how-to hint"),
    ("Its price? It is further down the list.", "how-to hint"),
    ("Which is the cheapest Laptop? Use filters and answer with its name.", "how-to hint"),
    ("Rename the to-do \"Call Ana.", "unbalanced"),
    ("What is the price of the Swift Pro", "final punctuation"),
    ("What is the price of the {item}?", "unfilled slot"),
    ("what is the price?", "lower-case"),
    ("What is the price ?", "space before punctuation"),
])
def test_lint_catches_each_bad_pattern(bad, why):
    assert any(why in p for p in problems(bad)), (bad, problems(bad))


@pytest.mark.parametrize("good", [
    "What is the price of the Swift Pro?", "Book an event for Ana Costa on 12/05/2026.", "Reserve a table for 4.",
    "Find a user guide for the Echo Max.", "Wait an hour, then check the \"Review Review\" to-do.",
    "Send the contact form with the name \"Ana\". The message must be: \"Hello.\"",
])
def test_lint_passes_good_instructions(good):
    assert problems(good) == [], problems(good)


def test_hints_are_allowed_only_when_guided():
    hint = "Use the search box to find the Swift Pro and open its page."
    assert problems(hint) and problems(hint, guided=True) == []


def test_generation_drops_drafts_that_fail_the_lint_and_repeats(bench_sites):
    site = build_site(bench_specs()[0])
    good = site.tasks[0]
    kept_before = len(emitted_drafts(build_site(bench_specs()[0])))
    bad = TaskDraft(instruction="Book a event.", start_path="/", plan=good.plan, checks=good.checks,
                    difficulty="easy", rubric=["x"], intent="t")
    hinted = TaskDraft(instruction="Scroll down and click it.", start_path="/", plan=good.plan, checks=[url_is("x")],
                       difficulty="easy", rubric=["x"], intent="t2")
    repeat = TaskDraft(instruction=good.instruction.upper(), start_path="/", plan=good.plan, checks=good.checks,
                       difficulty="easy", rubric=["x"], intent=good.intent)
    site.tasks += [bad, hinted, repeat]
    emitted = emitted_drafts(site)
    assert len(emitted) == kept_before and not {id(bad), id(hinted), id(repeat)} & {id(d) for d in emitted}
    assert all(d.difficulty == planned(d.plan) for d in emitted)


# ---- what the skills emit -------------------------------------------------------------------------
def test_every_instruction_of_every_skill_passes_lint_and_has_an_intent(bench_sites):
    for site in bench_sites:
        for draft in site.tasks:
            assert draft.intent in INTENTS, (site.spec.skill, draft.instruction)
            assert draft.guided == INTENTS[draft.intent].guided
            assert problems(draft.instruction, draft.guided) == [], (draft.instruction, problems(draft.instruction))
            if not draft.guided:  # no method in an unguided instruction, even read leniently
                assert problems(draft.instruction, guided=False) == []
    guided = [d for s in bench_sites for d in s.tasks if d.guided]
    assert 1 <= len(guided) <= 0.1 * sum(len(s.tasks) for s in bench_sites)


def test_instructions_lint_clean_in_every_category():
    """Every skill in every category (other genre words, fact labels, kinds) phrases cleanly."""
    for skill in sorted(skills()):
        for category in compatible_categories(skill):
            for draft in build_site(sample_spec(5, skill, category)).tasks:
                assert problems(draft.instruction, draft.guided) == [], (skill, category, draft.instruction)


def test_genre_labels_replace_shop_words():
    """With a genre's labels (an employer, a salary), no instruction says "brand", "maker" or "price"."""
    for skill in compatible_categories_skills("jobs"):
        site = new_site(sample_spec(2, skill, "jobs"))
        site.cat = {**site.cat, "labels": {"maker": "employer", "makers": "employers", "price": "salary",
                                           "buy": "Apply", "sells": False}}
        SKILLS[skill](site)
        for draft in site.tasks:
            words = draft.instruction.lower().replace("-", " ").split()
            assert not {"brand", "brands", "maker", "makers", "price"} & {w.strip(".,?!:;()\"") for w in words}, \
                (skill, draft.instruction)


def test_skeleton_masks_names_numbers_dates_and_quotes():
    names = {"Swift Pro", "Zentrix"}
    assert skeleton("What is the price of the Swift Pro?", names) == skeleton("What is the price of the Echo Max?", names)
    assert skeleton("Book the 12:10 slot on 03/04/2026 for $12.50.") == skeleton("Book the 09:00 slot on 05/06/2026 for €8.")
    assert skeleton("Request it from March 2, 2026 until April 9, 2026.") == \
        skeleton("Request it from May 12, 2026 until June 1, 2026.")
    assert skeleton('Delete the to-do "Call Ana".') == skeleton('Delete the to-do "Review the Swift Pro".')
    assert skeleton("Sign in as ana42 with ana@example.test.") == skeleton("Sign in as bo7 with bo@example.test.")
    assert skeleton("What is the price of the Swift Pro?", names) != skeleton("How much is the Swift Pro?", names)


def test_skeleton_share_over_one_site_per_skill(bench_sites):
    pairs = [(d.instruction, site_names(site)) for site in bench_sites for d in site.tasks]
    share = skeleton_share(pairs)
    assert len(pairs) >= 200 and share >= 0.6, share


def test_bundle_names_mask_as_the_builder_does(tmp_path):
    spec = bench_specs()[0]
    path = write_unvalidated(spec, tmp_path)
    assert bundle_names(path) == site_names(build_site(spec))


def test_at_least_30_intents_per_genre():
    for category in sorted(categories()):
        names = {d.intent for skill in compatible_categories_skills(category)
                 for d in build_site(sample_spec(3, skill, category)).tasks}
        assert len(names) >= 30, (category, len(names))


def test_composed_tasks_exist_on_most_skills_sites(bench_sites):
    with_composed = {s.spec.skill for s in bench_sites if any(d.intent in COMPOSED for d in s.tasks)}
    assert len(with_composed) >= len(bench_sites) / 2, with_composed
    for site in bench_sites:
        for draft in site.tasks:
            if draft.intent in COMPOSED:  # a chain: a comparison, then more steps, and an exact check
                assert plan_effort(draft.plan).gestures >= 3, draft.instruction
                assert all(c.type != "answer_match" or c.mode != "exact" or c.confusers for c in draft.checks)


# ---- de-duplication ------------------------------------------------------------------------------
def _draft(text: str, intent_name: str, checks: list) -> TaskDraft:
    return TaskDraft(instruction=text, start_path="/", plan=[], checks=checks, difficulty="easy", rubric=["x"],
                     intent=intent_name)


def test_dedupe_keeps_one_of_the_same_request():
    a = _draft("Open the page of the Swift Pro.", "open-item", [url_is("http://s/item/swift-pro")])
    same_slots = _draft("Take me to the Swift Pro.", "open-item", [url_is("http://s/item/swift-pro")])
    same_text = _draft("open the page of the  Swift Pro.", "other", [url_is("http://s/x")])
    other = _draft("Take me to the Echo Max.", "open-item", [url_is("http://s/item/echo-max")])
    other_intent = _draft("Add the Swift Pro to my cart, quantity 1.", "add-to-cart",
                          [state_is("cart.i1", 1), state_count("cart", 1)])
    assert dedupe([a, same_slots, same_text, other, other_intent]) == [a, other, other_intent]


def test_skills_emit_no_duplicate_requests(bench_sites):
    for site in bench_sites:
        # the same request twice (the cap on one request's fillers, dedupe's `cap`, is another matter)
        assert len(dedupe(site.tasks, cap=False)) == len(site.tasks), site.spec.skill


# ---- difficulty from the oracle ------------------------------------------------------------------
def _actions(*names: str) -> list[Action]:
    args = {"click": {"x": 10.0, "y": 10.0}, "hover": {"x": 1.0, "y": 1.0}, "write": {"text": "x"},
            "scroll": {"direction": "down"}, "done": {"answer": "x"}, "press_keys": {"keys": ["Enter"]}}
    return [Action(n, dict(args[n])) for n in names]


def test_difficulty_from_hand_made_oracles():
    # two clicks on a link and an answer: easy
    plan = [{"op": "click", "sel": "a[href='/table']"}, {"op": "done", "answer": "x"}]
    easy = oracle_effort(_actions("click", "done"), ["Click the link.", "The answer is x."], plan)
    assert (easy.gestures, easy.pages, easy.hidden, easy.distractors, easy.typed) == (2, 2, 0, 0, 0)
    assert easy.level == "easy"
    # the same plan, but the oracle dismissed two pop-ups and scrolled: more work, and counted
    busy = oracle_effort(_actions("click", "click", "scroll", "scroll", "click", "done"),
                         ["Close the pop-up that covers the page.", "Close the pop-up that covers the page.",
                          "Scroll down.", "Scroll down.", "Click.", "Done."], plan)
    assert busy.distractors == 2 and busy.gestures == 6 and busy.score > easy.score
    # a menu hover, then a section: a hidden element revealed
    plan = [{"op": "hover", "sel": "[data-dept=a] .dept-link"}, {"op": "click", "sel": "[data-section='a/b']"},
            {"op": "done", "answer": "x"}]
    revealed = oracle_effort(_actions("hover", "click", "done"), None, plan)
    assert (revealed.pages, revealed.hidden) == (2, 1) and revealed.score == 6.5 and revealed.level == "easy"
    # and on to an item's page and one of its tabs: two reveals over three pages
    plan = plan[:2] + [{"op": "click", "sel": "[data-link=item-i1]"}, {"op": "click", "sel": "[data-tab=t2]"},
                       {"op": "done", "answer": "x"}]
    deeper = oracle_effort(_actions("hover", "click", "click", "click", "done"), None, plan)
    assert (deeper.pages, deeper.hidden) == (3, 2) and deeper.score == 12 and deeper.level == "medium"
    # a checkout: many typed fields over several pages is hard
    plan = [{"op": "click", "sel": "a[href='/items']"}, {"op": "click", "sel": "[data-link=item-i1]"},
            {"op": "click", "sel": "#add-to-cart"}, {"op": "click", "sel": "#cart-link"},
            {"op": "click", "sel": "#to-checkout"}] + [{"op": "fill", "sel": f"#f-{f}", "text": "x"} for f in "abc"] + \
        [{"op": "click", "sel": "#submit"}]
    oracle = _actions(*(["click"] * 5 + ["click", "write"] * 3 + ["click"]))
    hard = oracle_effort(oracle, None, plan)
    assert hard.typed == 3 and hard.pages == 6 and hard.level == "hard"
    # the same checkout typed as the compiler types (one write that clicks its field): the same effort,
    # and an Enter pressed by the write counts as the key press it is
    merged = _actions("click", "click", "click", "click", "click") + \
        [Action("write", {"text": "x", "x": 5.0, "y": 5.0}) for _ in range(3)] + _actions("click")
    assert oracle_effort(merged, None, plan) == hard and len(merged) == len(oracle) - 3
    entered = oracle_effort([Action("write", {"text": "x", "x": 5.0, "y": 5.0, "enter": True})], None, [])
    assert entered == oracle_effort(_actions("click", "write", "press_keys"), None, []) and entered.gestures == 3
    # the thresholds are the documented ones
    assert Effort(EASY_BELOW - 1, 1, 0, 0, 0).level == "easy" and Effort(EASY_BELOW, 1, 0, 0, 0).level == "medium"
    assert Effort(MEDIUM_BELOW, 1, 0, 0, 0).level == "hard"


def test_plan_estimate_counts_the_steps_gestures():
    plan = [{"op": "fill", "sel": "#search-input", "text": "x", "enter": True},
            {"op": "click", "sel": "[data-search-results] [data-link=item-i1]"}]
    effort = plan_effort(plan)
    assert (effort.gestures, effort.pages, effort.typed) == (4, 3, 1)


# ---- composed tasks validate in Chromium -----------------------------------------------------------
def test_composed_tasks_validate_and_get_their_difficulty_from_the_oracle(tmp_path):
    """A composed chain on a cart site (compare, open, add) and on a menu site (open through the menu,
    then read): the oracle plays each, the negatives are rejected, difficulty comes from the oracle."""
    paths, wanted = [], {}
    # the menu chain reads the best-rated entity of a section: on a genre that rates things (the bench's menus
    # site is a clinic, which shows no ratings since issue 38)
    specs = [s for s in bench_specs() if s.skill == "checkout"] + [sample_spec(7, "menus", "electronics")]
    for spec in specs:
        path = write_unvalidated(spec, tmp_path)
        chained = [t for t in load_tasks(path / "tasks.jsonl") if t.metadata.get("intent") in COMPOSED][:1]
        assert chained, spec.skill
        save_tasks(chained, path / "tasks.jsonl")
        paths.append(path)
        wanted[path.name] = chained[0].metadata["intent"]
    results = asyncio.run(keep_valid(paths, concurrency=2))
    typed_at = 0  # oracles with a write that clicks its field
    for result in results:
        assert result.tasks_kept == 1, (result.site_id, result.failures)
        assert sum(result.negatives_rejected.values()) >= 1, result.negatives_tried
        task = load_tasks(result.path / "tasks.jsonl")[0]
        assert task.metadata["intent"] == wanted[result.site_id]
        effort = task.metadata["effort"]
        # the oracle types into a field with one write that clicks it (and presses Enter): its gestures
        gestures = sum(1 + (a.name == "write") * (("x" in a.args) + bool(a.args.get("enter"))) for a in task.oracle)
        typed_at += gestures > len(task.oracle)
        assert effort["gestures"] == gestures and task.difficulty == Effort(
            effort["gestures"], effort["pages"], effort["hidden"], effort["distractors"], effort["typed"]).level
    assert typed_at >= 1  # the checkout chain types a quantity


def test_intents_per_skill_are_varied():
    """No skill leans on one intent: its most used intent is at most 60% of its tasks (the form
    skills and hidden content ask one request each, differently filled, and infeasible asks the price
    of absent and present entities alike, on purpose: they are left out)."""
    counts: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for spec in bench_specs():
        for draft in build_site(spec).tasks:
            counts[spec.skill][draft.intent] += 1
    for skill, per in counts.items():
        if skill in ("forms", "date-picker", "autocomplete", "numeric-widgets", "hidden-content", "infeasible"):
            continue
        assert max(per.values()) <= 0.6 * sum(per.values()), (skill, dict(per))
