"""Genres (issue #18 point 1): every category has its own entity model, names agree with their kind,
near-duplicate names stay distinct under the answer checks, and skills only meet genres they fit.
No browser: sites are built in memory (generate.build_site) and bundles written without validation."""
from __future__ import annotations

import random
import re
import shutil
import subprocess
import sys

import pytest

from weblica.scoring.checks import run_check
from weblica.synth import images
from weblica.synth.data import FIRST_NAMES, LAST_NAMES, make_items
from weblica.synth.entities import absent_names, entity_names, is_person_named, kind_nouns, near_duplicates
from weblica.synth.generate import build_site, write_unvalidated
from weblica.synth.skills.common import name_check
from weblica.synth.spec import (CatalogError, categories, compatible_categories, incompatibility, read_genres,
                                sample_spec, skills, synth_dir)
from weblica.synth.splits import allowed

NEW = {"government", "news", "saas", "classifieds", "local-services", "transit"}
OLD = {"electronics", "fashion", "groceries", "travel", "real-estate", "restaurants", "books", "banking", "healthcare",
       "education", "automotive", "events", "fitness", "pets", "home-garden", "jobs", "music"}
NON_SELLING = {"banking", "government", "healthcare", "jobs", "news", "saas", "transit", "education"}
SHOP_WORDS = re.compile(r"\b(makers?|cart|basket|pick-up|checkout|add to)\b", re.I)
PEOPLE = (FIRST_NAMES, LAST_NAMES)


def test_at_least_18_categories_each_with_its_own_entity_model_and_labels():
    cats = categories()
    assert OLD | NEW <= set(cats) and len(cats) >= 18
    for cid, cat in cats.items():
        labels = cat["labels"]
        assert {"maker", "makers", "price", "buy", "sells"} <= set(labels), cid
        assert labels["sells"] is (cid not in NON_SELLING), cid
        assert len(cat["kinds"]) >= 5 and cat["entity"] and cat["currency"], cid
        assert len(cat["makers"]) == len(set(cat["makers"])) >= 4, cid
    # entities and their labels differ between genres, not one shop schema renamed
    assert len({c["entity"] for c in cats.values()}) >= 15
    assert len({c["labels"]["maker"] for c in cats.values()}) >= 15
    assert len({c["labels"]["price"] for c in cats.values()}) >= 10
    assert cats["healthcare"]["entity"] == "doctor" and cats["jobs"]["labels"]["price"] == "salary"


def _shown_texts(site) -> list[str]:
    """Every text the skill and genre code put on pages: titles, headings, intros, blurbs, form labels,
    options and buttons, nav entries, the genre's labels (templates only add their own fixed words)."""
    out = [v for v in site.labels.values() if isinstance(v, str)] + [text for text, _ in site.nav]
    for template, context in site.pages.values():
        for key in ("title", "heading", "intro", "blurb", "text", "submit_label", "submit"):
            if isinstance(context.get(key), str):
                out.append(context[key])
        for field in context.get("fields") or []:
            out += [str(field.get("label", ""))] + [str(o) for o in field.get("options", [])]
    return out


@pytest.mark.parametrize("category", sorted(NON_SELLING))
def test_genres_that_sell_nothing_show_no_buy_action_and_no_maker(category):
    assert incompatibility("checkout", category) is not None
    for skill in compatible_categories_skills(category):
        site = build_site(sample_spec(4, skill, category))
        assert "cart" not in site.features, skill
        bad = [t for t in _shown_texts(site) if SHOP_WORDS.search(t)]
        assert bad == [], (skill, bad)


def compatible_categories_skills(category: str) -> list[str]:
    return [s for s in sorted(skills()) if incompatibility(s, category) is None]


def test_no_genre_calls_its_makers_makers():
    for category in categories():
        site = build_site(sample_spec(2, "multi-page", category))
        assert not [t for t in _shown_texts(site) if re.search(r"\bmakers?\b", t, re.I)], category


@pytest.mark.parametrize("seed", [0, 7])
def test_every_name_is_drawn_from_its_own_kinds_nouns(seed):
    for cid, cat in categories().items():
        nouns = kind_nouns(cat)
        owner = {n: k for k, ns in nouns.items() for n in ns}
        spec = sample_spec(seed, "pagination", cid)
        items = make_items(spec, random.Random(seed), 44)
        for item in items:
            assert owner[item["noun"]] == item["kind"], (cid, item["name"], item["kind"])
            if is_person_named(cat):
                assert re.fullmatch(r"Dr\. [A-Z][a-z]+ [A-Z][a-z]+", item["name"]), item["name"]
            else:
                # the noun stands in the name as whole words, after an adjective of the genre
                assert re.search(rf"(^| ){re.escape(item['noun'])}( |$)", item["name"]), (cid, item)
                assert any(item["name"].startswith(a + " ") for a in cat["adjectives"]), item["name"]
                # no other kind's noun ends the base name ("Classic Chino" is never filed under Sneakers)
                others = [n for k, ns in nouns.items() if k != item["kind"] for n in ns]
                assert not any(re.search(rf"(^| ){re.escape(n)}$", item["name"]) for n in others), item["name"]
        names = [i["name"] for i in items]
        assert len(set(names)) == len(names) and len({i["slug"] for i in items}) == len(items), cid


def test_near_duplicates_exist_and_the_answer_checks_tell_them_apart():
    for cid, cat in categories().items():
        entities = entity_names(cat, random.Random(cid), 30, PEOPLE)
        names = [e["name"] for e in entities]
        assert near_duplicates(names), cid
        variants = [(a, b) for a, b in near_duplicates(names) if a.startswith(b + " ") or b.startswith(a + " ")]
        assert bool(variants) == bool(cat.get("variants")), cid
        for a, b in variants:
            short, long = sorted((a, b), key=len)
            assert run_check(name_check(short, names), short, "", None).passed, (cid, short)
            assert not run_check(name_check(short, names), long, "", None).passed, (cid, short, long)
            assert run_check(name_check(long, names), long, "", None).passed, (cid, long)
            assert not run_check(name_check(long, names), short, "", None).passed, (cid, long, short)
        # an infeasible task never asks for a name that begins a present one (its search would show it)
        absent = absent_names(cat, set(names), PEOPLE)
        assert absent and not any(n.startswith(x + " ") for x in absent[:50] for n in names)


def test_an_incompatible_skill_and_category_is_refused_with_the_compatible_ones():
    with pytest.raises(CatalogError) as err:
        sample_spec(1, "checkout", "banking")
    message = str(err.value)
    assert "checkout" in message and "banking" in message and "sells" in message
    listed = message.split("compatible categories: ")[1].split(", ")
    assert listed == compatible_categories("checkout") and "electronics" in listed and "banking" not in listed
    for skill, category in [("booking", "news"), ("store-locator", "saas"), ("date-picker", "groceries")]:
        with pytest.raises(CatalogError, match=f"does not fit category '{category}'"):
            sample_spec(3, skill, category)
    assert sample_spec(1, "booking", "healthcare").category == "healthcare"


def test_the_cli_names_the_compatible_categories_in_one_line(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "weblica.cli", "synth", "--skill", "checkout", "--category", "jobs",
                           "--no-validate", "--out", str(tmp_path)], capture_output=True, text=True, timeout=120)
    assert proc.returncode != 0 and not list(tmp_path.iterdir())
    assert "compatible categories: " in proc.stderr and "electronics" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_sample_spec_never_draws_an_incompatible_pair():
    pairs = set()
    for seed in range(400):
        spec = sample_spec(seed)
        assert incompatibility(spec.skill, spec.category) is None, (spec.skill, spec.category)
        pairs.add((spec.skill, spec.category))
    for skill in ("checkout", "booking", "store-locator", "date-picker"):
        for split in (None, "train", "val"):
            drawn = {sample_spec(s, skill, split=split).category for s in range(60)}
            assert drawn <= set(compatible_categories(skill)) and len(drawn) >= 2, (skill, split, drawn)
    for category in ("news", "saas", "jobs", "classifieds"):  # a category asked for alone gets a skill it fits
        drawn = {sample_spec(s, category=category).skill for s in range(60)}
        assert not drawn & {"checkout", "booking", "store-locator", "date-picker"} and len(drawn) >= 8
    assert len(pairs) >= 150


def test_every_skill_has_compatible_categories_in_both_splits():
    for skill in skills():
        for split in ("train", "val"):
            assert compatible_categories(skill, allowed(split, "category", sorted(categories()))), (skill, split)


def test_every_kind_maps_to_an_image_family():
    for cid, cat in categories().items():
        for kind in cat["kinds"]:
            assert images.family_of(kind) != images.FALLBACK, (cid, kind)
    assert images.family_of("Graphic design") == "course" and images.family_of("Design") == "person"
    assert images.family_of("Dentistry") == "person" and images.family_of("Sports") == "ticket"
    assert images.family_of("Politics") == "document" and images.family_of("Tram") == "ticket"


def test_a_new_genre_bundle_is_byte_identical_for_one_seed(tmp_path):
    spec = sample_spec(9, "search", "transit")
    trees = []
    for name in ("a", "b"):
        root = write_unvalidated(spec, tmp_path / name)
        trees.append({p.relative_to(root): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()})
    assert trees[0] == trees[1] and len(trees[0]) > 30
    assert sample_spec(9, "search", "transit").to_dict() == spec.to_dict()


def test_a_broken_genre_file_is_refused_naming_the_file_and_the_fix(tmp_path):
    shutil.copytree(synth_dir() / "genres", tmp_path / "genres", ignore=shutil.ignore_patterns("*.py", "__pycache__"))
    path = tmp_path / "genres" / "fashion" / "genre.yaml"
    text = path.read_text()
    path.write_text(text.replace("Trousers: [Chinos, Jeans, Trousers]", "Trousers: [Chinos, Jeans, Sneakers]"))
    with pytest.raises(CatalogError, match=r"fashion/genre\.yaml: a noun belongs to two kinds"):
        read_genres(tmp_path / "genres")
    path.write_text(text.replace("traits: [cart, places]", "traits: [cart, shipping]"))
    with pytest.raises(CatalogError, match="unknown traits"):
        read_genres(tmp_path / "genres")
    path.write_text("\n".join(l for l in text.splitlines() if not l.startswith("labels:")))
    with pytest.raises(CatalogError, match="missing labels"):
        read_genres(tmp_path / "genres")
    path.write_text(text)
    assert read_genres(tmp_path / "genres") == categories() and "fashion" in categories()


def test_name_tasks_try_the_near_duplicate_as_a_wrong_answer():
    """Name tasks whose wrong answers are drawn from the other names (skills.common.others) list a
    one-word-apart twin of the gold first; validation plays it and the check must reject it."""
    from weblica.synth.entities import one_word_apart
    from weblica.synth.skills.common import others

    names = ["Eco Sedan", "Grand Van", "Metro Coupe", "Trail Crossover", "Sport Roadster", "Trail Crossover GTX"]
    assert others(names, "Trail Crossover", 2) == ["Trail Crossover GTX", "Eco Sedan"]
    assert others(names, "Trail Crossover GTX", 1) == ["Trail Crossover"]
    tried = 0
    for category in ("automotive", "jobs", "electronics", "government"):
        for skill in ("table-reasoning", "filter-sort", "infeasible"):
            site = build_site(sample_spec(5, skill, category))
            names = [i["name"] for i in site.data["items"]]
            for draft in site.tasks:
                done = [s for s in draft.plan if s["op"] == "done"]
                if not done or done[-1]["answer"] not in names:
                    continue
                twins = [w for w in draft.wrong_answers if one_word_apart(w, done[-1]["answer"]) and w in names]
                check = next(c for c in draft.checks if c.type == "answer_match")
                for twin in twins:
                    assert not run_check(check, twin, "", None, instruction=draft.instruction).passed, twin
                tried += bool(twins)
    assert tried >= 8
