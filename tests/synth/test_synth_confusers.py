"""The generator feeds every answer check its confusers from the site's data and does not emit a task
whose gold is not unique (a tie for cheapest, a count another group also gives). No browser."""
from __future__ import annotations

import pytest

from weblica.synth.generate import build_site
from weblica.synth.genres.registry import new_site
from weblica.synth.site import SiteBuilder
from weblica.synth.skills import SKILLS
from weblica.synth.skills.common import count_confusers, unique_extreme
from weblica.synth.spec import sample_spec, skills

ANSWER_SKILLS = ("search", "table-reasoning", "multi-page", "hidden-content", "infeasible", "filter-sort",
                 "pagination", "menus", "booking", "store-locator")


@pytest.mark.parametrize("skill", ANSWER_SKILLS)
def test_every_answer_check_carries_confusers_from_the_data(skill):
    for seed in (0, 1, 2):
        site = build_site(sample_spec(seed, skill))
        answer_checks = [c for d in site.tasks for c in d.checks if c.type == "answer_match"]
        assert answer_checks, skill
        for check in answer_checks:
            if check.mode == "refusal":
                continue
            assert check.confusers and check.confusers_from == "data", (skill, check)
            assert check.expected not in check.confusers, (skill, check)
            if check.mode == "numeric" and isinstance(check.expected, float) and check.expected != int(check.expected):
                assert check.locale == site.locale


def test_numbers_carry_the_site_locale_and_counts_their_neighbours():
    site = build_site(sample_spec(3, "filter-sort"))
    counts = [c for d in site.tasks for c in d.checks if c.type == "answer_match" and c.unit]
    assert counts, "a count task with its unit"
    for check in counts:
        gold = int(check.expected)
        assert gold + 1 in check.confusers and (gold == 0 or gold - 1 in check.confusers), check
    prices = [c for d in site.tasks for c in d.checks if c.type == "answer_match" and c.locale]
    assert prices and all(c.locale == site.spec.style.locale for c in prices)


def _table_site(seed: int, tie: str | None) -> SiteBuilder:
    """A table-reasoning site, optionally with a constructed tie in its data before the tasks are made."""
    site = new_site(sample_spec(seed, "table-reasoning"))
    items = site.items(24)  # the skill asks for the same 24 items: it gets these (and the same rng state)
    if tie == "cheapest":
        ranked = sorted(items, key=lambda i: i["price"])
        ranked[1]["price"] = ranked[0]["price"]
    elif tie == "counts":  # every type listed equally often: a count of one type is a count of any
        kinds = sorted({i["kind"] for i in items})[:2]
        for index, item in enumerate(items):
            item["kind"] = kinds[index % 2]
    SKILLS["table-reasoning"](site)
    return site


def test_a_tie_for_cheapest_is_not_emitted():
    question = "cheapest-overall"  # the intent, whichever phrasing asks it
    plain = _table_site(7, None)
    assert any(question == d.intent for d in plain.tasks)
    tied = _table_site(7, "cheapest")
    assert not any(question == d.intent for d in tied.tasks)
    # the rest of the site is still built
    assert any(d.intent == "priciest-overall" for d in tied.tasks)


def test_a_count_that_another_group_also_gives_is_not_emitted():
    question = "count-kind-listed"
    plain = next(s for s in (_table_site(seed, None) for seed in range(10))
                 if any(question == d.intent for d in s.tasks))
    equal = _table_site(plain.spec.seed, "counts")
    assert not any(question == d.intent for d in equal.tasks)


def test_unique_extreme_and_count_confusers():
    rows = [{"p": 3}, {"p": 1}, {"p": 1}, {"p": 5}]
    assert unique_extreme(rows, "p") is None and unique_extreme(rows, "p", highest=True) == {"p": 5}
    assert count_confusers(2, [4, 7]) == [1, 3, 4, 7]
    assert count_confusers(0, [3]) == [1, 3]
    assert count_confusers(2, [2, 5]) is None


def test_skills_still_make_enough_tasks():
    """Skipping ambiguous golds must not starve a site: validation keeps a site with >= 10 tasks."""
    for skill in sorted(skills()):
        for seed in range(6):
            assert len(build_site(sample_spec(seed, skill)).tasks) >= 10, (skill, seed)
