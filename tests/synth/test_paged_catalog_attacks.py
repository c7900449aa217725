"""Attacks on the large, paged catalogs (issue 18.2): page numbers a user or agent types by hand (past the
end, 0, negative, not a number, huge, zero-padded) give the site's 404 page and never another page's
entities; every entity a task's gold or checks name is on a page of the site; and where the catalog
holds near-duplicates ("Fresh Sourdough" and "Fresh Sourdough XL") an answer naming the other one of the
pair fails while the gold passes."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from weblica.scoring.answer import check_answer
from weblica.synth.generate import build_site, write_unvalidated
from weblica.synth.site import draft_to_task
from weblica.synth.skills.common import LISTING_PAGE
from weblica.synth.spec import compatible_categories, sample_spec

SHOP = Path(__file__).resolve().parents[2] / "sites" / "checkout-groceries-0bebe201"  # committed, paged /items
SKILLS = ["checkout", "multi-page", "search", "pagination", "table-reasoning", "filter-sort", "menus", "forms"]


@pytest.fixture(scope="module")
def built():
    """Two sites per skill over rotating categories (built in memory: no browser)."""
    out = []
    for i, skill in enumerate(SKILLS):
        fit = compatible_categories(skill)
        for k in range(2):
            out.append(build_site(sample_spec(700 + 2 * i + k, skill, fit[(5 * i + 3 * k) % len(fit)])))
    return out


def _tasks(site):
    return [draft_to_task(site, n + 1, d) for n, d in enumerate(site.tasks)]


@pytest.fixture(scope="module")
def shop(tmp_path_factory):
    from weblica.serve.app import ServeConfig, create_app

    path = SHOP if SHOP.exists() else write_unvalidated(sample_spec(5, "checkout", "groceries"),
                                                         tmp_path_factory.mktemp("shop"))
    meta = json.loads((path / "site.json").read_text())
    items = json.loads((path / "data.json").read_text())["items"]
    app = create_app(ServeConfig(sites=[path]))
    return app.test_client(), meta["spec"]["host"], items


def test_typed_page_numbers_past_the_end_or_malformed_give_the_404_page(shop):
    client, host, items = shop
    pages = -(-len(items) // LISTING_PAGE)
    assert pages >= 3
    ok = client.get(f"/items/page/{pages}", base_url=f"http://{host}")
    assert ok.status_code == 200 and items[-1]["name"] in ok.get_data(as_text=True)
    assert client.get(f"/items/page/{pages}/", base_url=f"http://{host}").status_code == 200
    for bad in [pages + 1, 0, 1, -1, -2, "abc", "2.5", "02", " 2", "%32%00", 10 ** 30, "9" * 300, "2e1", "0x2",
                "..%2F..%2Fsite.json", "2%2F..%2F..%2F..%2Fsite"]:
        response = client.get(f"/items/page/{bad}", base_url=f"http://{host}")
        assert response.status_code in (400, 404), (bad, response.status_code)
        text = response.get_data(as_text=True)
        assert not any(i["name"] in text for i in items), bad  # never another page's entities
    # a query string is not a pager: /items?page=3 is the first page, as it was
    first = client.get("/items?page=3", base_url=f"http://{host}").get_data(as_text=True)
    assert items[0]["name"] in first and items[3 * LISTING_PAGE - 1]["name"] not in first


def test_every_entity_a_task_names_is_on_a_page_of_the_site(built):
    """Every entity a task's checks name (by id in a state check, by name in an answer check) has its page,
    and is listed on exactly one page of the paged /items (or on the one-page listing)."""
    named = 0
    for site in built:
        items = site.data["items"]
        by_id, by_name = {i["id"]: i for i in items}, {i["name"]: i for i in items}
        for task in _tasks(site):
            for check in task.checks:
                values = check.expected if isinstance(check.expected, list) else [check.expected]
                for value in values:
                    item = by_id.get(value) if isinstance(value, str) else None
                    if item is None and check.type == "answer_match" and isinstance(value, str):
                        item = by_name.get(value)
                    if item is None:
                        continue
                    named += 1
                    assert f"/item/{item['slug']}" in site.pages, (site.spec.site_id, task.id, value)
        size = site.data.get("listing_page_size")
        if size and "/items" in site.pages:  # the paged listing: page p holds items[(p-1)*size : p*size]
            pages = [p for p in site.pages if p == "/items" or p.startswith("/items/page/")]
            assert len(pages) == -(-len(items) // size), site.spec.site_id
    assert named >= 20, named


def _near_pairs(site):
    names = {i["name"] for i in site.data["items"]}
    variants = [str(v) for v in site.cat.get("variants") or []]
    return {(base, f"{base} {v}") for base in names for v in variants if f"{base} {v}" in names}


def test_the_catalogs_hold_near_duplicates_and_their_names_stay_unique(built):
    pairs = [p for site in built for p in _near_pairs(site)]
    assert len(pairs) >= 10
    for site in built:
        names = [i["name"] for i in site.data["items"]]
        assert len(set(names)) == len(names)
        assert len({n.casefold() for n in names}) == len(names), site.spec.site_id  # not even by case


def test_an_answer_naming_the_other_near_duplicate_fails(built):
    tried = 0
    for site in built:
        partner: dict[str, list[str]] = {}
        for base, variant in _near_pairs(site):
            partner.setdefault(base, []).append(variant)
            partner.setdefault(variant, []).append(base)
        for task in _tasks(site):
            for check in task.checks:
                if check.type != "answer_match" or check.mode != "exact" or not isinstance(check.expected, str):
                    continue
                for other in partner.get(check.expected, []):
                    tried += 1
                    where = (site.spec.site_id, task.id, check.expected, other)
                    assert check_answer(check, check.expected, instruction=task.instruction).passed, where
                    assert not check_answer(check, other, instruction=task.instruction).passed, where
                    assert not check_answer(check, f"It is the {other}.", instruction=task.instruction).passed, where
                    hedge = f"{check.expected} or {other}"
                    assert not check_answer(check, hedge, instruction=task.instruction).passed, where
    print(f'near-duplicate answer checks tried: {tried}')
    assert tried >= 3, tried


def test_a_task_that_names_an_entity_names_it_whole(built):
    """An instruction that names the base of a near-duplicate pair does not read as naming the variant: the
    variant's extra word is never the next word after the base name in the instruction."""
    for site in built:
        for base, variant in _near_pairs(site):
            extra = variant[len(base) + 1:]
            for task in _tasks(site):
                if base in task.instruction and variant not in task.instruction:
                    following = task.instruction.split(base, 1)[1]
                    assert not re.match(rf"\s+{re.escape(extra)}\b", following), (task.id, task.instruction)


AGGREGATES = ("cheapest-of-kind", "top-price-of-kind", "cheapest-kind-to-cart", "count-kind-under")


def test_aggregate_golds_range_over_the_whole_catalog_not_its_first_page():
    """'The cheapest X', 'the most expensive X', 'how many X up to P' on catalogs of several pages: each
    gold is the aggregate over every entity of the kind (the listing pages past the first included)."""
    from weblica.scoring import numbers as A
    from weblica.scoring import text as T

    checked = 0
    for skill in ("filter-sort", "checkout", "multi-page", "table-reasoning"):
        fit = compatible_categories(skill)
        for k in range(4):
            site = build_site(sample_spec(910 + k, skill, fit[(7 * k) % len(fit)]))
            items = site.data["items"]
            by_id, by_name = {i["id"]: i for i in items}, {i["name"]: i for i in items}

            def kinds_named(text: str) -> set[str]:  # 'scarves' names the kind Scarf
                low = text.lower()
                return {i["kind"] for i in items for w in (i["kind"], i["noun"])
                        if re.search(r"\b" + re.escape(w.lower()[:max(3, len(w) - 1)]), low)}

            def of(kind: str) -> list[float]:
                return [i["price"] for i in items if i["kind"] == kind]
            for d in site.tasks:
                if d.intent not in AGGREGATES:
                    continue
                checked += 1
                where = (site.spec.site_id, d.instruction)
                gold = d.checks[0].expected
                if d.intent == "cheapest-of-kind":
                    assert by_name[gold]["price"] == min(of(by_name[gold]["kind"])), where
                elif d.intent == "cheapest-kind-to-cart":
                    item = by_id[d.checks[0].path.split(".")[1]]
                    assert item["price"] == min(of(item["kind"])), where
                elif d.intent == "top-price-of-kind":
                    assert any(float(gold) == max(of(kind)) for kind in kinds_named(d.instruction)), where
                else:
                    limits = [n.value for n in A.find_numbers(T.normalize_answer(d.instruction), None)]
                    assert any(sum(p <= t for p in of(kind)) == float(gold)
                               for kind in kinds_named(d.instruction) for t in limits), where
    assert checked >= 20, checked
