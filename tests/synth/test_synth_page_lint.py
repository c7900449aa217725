"""The page lint (issue 38, point 7): it reads every rendered page and every phrasing a site's pop-ups may
say, as the instruction lint reads instructions, and catches what a person would see as broken: the gap
an empty slot leaves ("Need a hand finding the right ?"), "a account", doubled words, values leaked from
code. Generated sites of every genre pass it, and their content images carry alt text."""
from __future__ import annotations

import json

import pytest

from weblica.synth.content_metrics import content_figures
from weblica.synth.generate import build_site, write_unvalidated
from weblica.synth.page_lint import TAG_EDGE, lint_pages, text_problems
from weblica.synth.site import render_pages
from weblica.synth.spec import categories, sample_spec


@pytest.mark.parametrize("text", [
    "Need a hand finding the right ?", "How to choose a account", "Chat with a Atelier Wear assistant now.",
    "Southbank Clinic Clinic", "Delivery from :", "Hello {name}, welcome", "Price: undefined", "Total NaN",
    "Questions about the ?", "See the latest from our"])
def test_what_a_person_sees_as_broken_is_caught(text):
    assert text_problems(text), text


@pytest.mark.parametrize("text", [
    "Minimum deposit: None", "How to choose an account", "Ivo A.", "Plan A", "What to look for",
    "Like new", "Hide this", f"Silent Laptop{TAG_EDGE} {TAG_EDGE}Laptop{TAG_EDGE}", f"Format{TAG_EDGE}:{TAG_EDGE} Paperback",
    "Chat with an SUV specialist", "That that is is fine? No, that is not."])
def test_what_reads_right_passes(text):
    assert not [p for p in text_problems(text) if "doubled word: 'is is'" not in p], text


def test_the_pop_ups_phrasings_are_read_too():
    blob = json.dumps({"texts": {"chat": {"body": ["Need a hand finding the right ?"]}}})
    page = f'<p>Fine text.</p><script type="application/json" id="weblica-distractors">{blob}</script>'
    assert [p for _, _, p in lint_pages({"/": page})] == ["a space before punctuation: 'and finding the right ?'"]


@pytest.mark.parametrize("category", sorted(categories()))
def test_every_genre_renders_pages_that_read_right(category):
    for seed in (1, 2):
        site = build_site(sample_spec(seed * 101 + len(category), category=category))
        found = lint_pages(render_pages(site))
        assert not found, (site.spec.site_id, found[:5])


def test_content_images_carry_alt_text(tmp_path):
    bundles = [write_unvalidated(sample_spec(seed, category=c), tmp_path) for seed, c in
               enumerate(("electronics", "fashion", "books", "groceries", "home-garden", "automotive"))]
    described, total = map(int, content_figures(bundles)["alt_text"].split("/"))
    assert total > 100 and described / total >= 0.9, (described, total)
