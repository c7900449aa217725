"""Catalogs, specs and procedural builds (no browser): every skill x category builds with computed tasks."""
from __future__ import annotations

import re
from collections import Counter

import pytest

from weblica.env.task import Check
from weblica.scoring.checks import run_check
from weblica.synth.checks import answer_count, answer_infeasible, answer_number
from weblica.synth.generate import build_site
from weblica.synth.intents.difficulty import planned
from weblica.synth.site import render_site
from weblica.synth.spec import CatalogError, categories, compatible_categories, sample_spec, skills, style_space

REQUIRED_SKILLS = ["search", "filter-sort", "pagination", "forms", "date-picker", "numeric-widgets", "autocomplete",
                   "menus", "hidden-content", "table-reasoning", "checkout", "account", "crud", "booking",
                   "store-locator", "drag-reorder", "multi-page", "infeasible"]


def test_catalogs_cover_the_space():
    assert set(REQUIRED_SKILLS) <= set(skills()) and len(skills()) >= 18
    for sid, entry in skills().items():
        assert re.fullmatch(r"[a-z]+(-[a-z]+)*", sid)
        assert entry["site_must_contain"] and entry["checked_by"] and entry["checks"]
    assert len(categories()) >= 18
    for cat in categories().values():
        nouns = [n for ns in cat["kinds"].values() for n in ns]
        # enough unique entity names (a person-named genre draws from the first x last name pool)
        assert "{first}" in cat["name"] or len(cat["adjectives"]) * len(nouns) >= 50
        assert cat["kinds"] and cat["makers"] and cat["facts"] and cat["departments"] and cat["attr"]
    space = style_space()
    assert {"mode", "density", "archetype", "widgets", "locale"} <= set(space["axes"])
    assert len(space["aesthetics"]) >= 12
    assert set(space["distractors"]) == {"cookie_banner", "promo_modal", "chat_widget", "slide_in", "interstitial",
                                         "sticky_header", "lazy_loading"}


def test_sampling_is_seeded_and_unknown_ids_name_the_choices():
    assert sample_spec(5).to_dict() == sample_spec(5).to_dict()
    assert len({sample_spec(s).site_id for s in range(20)}) == 20
    assert sample_spec(1, skill="forms").skill == "forms"
    with pytest.raises(CatalogError, match="forms"):
        sample_spec(1, skill="no-such-skill")


def test_difficulty_levels_spread_over_the_catalog():
    levels = Counter(t.difficulty for skill in sorted(REQUIRED_SKILLS) for t in build_site(sample_spec(11, skill)).tasks)
    assert set(levels) == {"easy", "medium", "hard"} and min(levels.values()) >= 0.1 * sum(levels.values()), levels


def passes(check: Check, answer: str, instruction: str = "") -> bool:
    return run_check(check, answer, "", None, instruction=instruction).passed


@pytest.mark.parametrize("skill", sorted(REQUIRED_SKILLS))
def test_every_skill_builds_in_every_compatible_category(skill):
    for category in compatible_categories(skill):
        site = build_site(sample_spec(11, skill, category))
        assert len(site.tasks) >= 10, (skill, category)
        # difficulty is computed from what a task takes (weblica/synth/intents/difficulty.py), not typed
        assert all(t.difficulty == planned(t.plan) for t in site.tasks), (skill, category)
        for draft in site.tasks:
            assert draft.checks and draft.plan and draft.rubric
            assert {c.type for c in draft.checks} <= {"answer_match", "url_match", "state_match"}
            done = [s for s in draft.plan if s["op"] == "done"]
            for check in draft.checks:  # the plan's own answer passes, the listed wrong answers do not
                if check.type == "answer_match":
                    assert done and passes(check, done[-1]["answer"], draft.instruction), draft.instruction
                    for wrong in draft.wrong_answers:
                        assert not passes(check, wrong, draft.instruction), (draft.instruction, wrong)


def test_answer_checks_accept_every_locale_notation_and_nothing_else():
    check = answer_number(1234.5, 2)
    for ok in ["$1,234.50", "1.234,50 €", "1 234,50 €", "1234.5", "It costs £1,234.50."]:
        assert passes(check, ok), ok
    for bad in ["1,234.55", "11234.50", "234.50", "1,234", ""]:
        assert not passes(check, bad), bad
    assert passes(answer_count(7), "7 results") and not passes(answer_count(7), "17 results")
    assert passes(answer_infeasible(), "Sorry, this item does not exist on the site")
    assert not passes(answer_infeasible(), "The price is $12.00")


def _structure(skill: str, style: str) -> str:
    files = render_site(build_site(sample_spec(3, skill, "books", style)))
    return files["index.html"].decode() + files.get("contact.html", b"").decode()


def test_styles_change_layout_and_widgets_not_only_colour():
    seen_arch, seen_widgets = set(), set()
    for seed in range(12):
        spec = sample_spec(seed, "forms", "travel")
        html = render_site(build_site(spec))["contact.html"].decode()
        seen_arch.add(re.search(r'class="arch-([a-z-]+)', html).group(1))
        seen_widgets.add("custom" if "data-custom-select" in html else "native" if "<select" in html else "?")
    assert len(seen_arch) >= 3 and seen_widgets == {"custom", "native"}
    # the government-plain aesthetic pins native widgets and table listings
    gov = render_site(build_site(sample_spec(3, "search", "books", "government-plain")))["index.html"].decode()
    assert 'class="items-table"' in gov
    assert sample_spec(3, "forms", "books", "government-plain").style.widgets == "native"
