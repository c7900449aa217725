"""Catalog volume (issue 18): sites hold 50-300 entities with unique names, a long /items listing is
paged and its plans click the right page, and sites built that way still validate in Chromium."""
from __future__ import annotations

import asyncio
import json
import random
import re

import pytest

from weblica.env.task import load_tasks, save_tasks
from weblica.synth.data import FIRST_NAMES, LAST_NAMES, slugify
from weblica.synth.entities import absent_names, entity_names, name_capacity
from weblica.synth.generate import build_site, keep_valid, write_unvalidated
from weblica.synth.site import render_site
from weblica.synth.skills.common import LISTING_PAGE, ONE_PAGE, SPARE_NAMES
from weblica.synth.spec import categories, compatible_categories, sample_spec

SAMPLED = ["checkout", "multi-page", "search", "pagination", "table-reasoning", "filter-sort", "forms", "menus",
           "booking", "infeasible"]
PEOPLE = (FIRST_NAMES, LAST_NAMES)


@pytest.fixture(scope="module")
def sites():
    """Two sites per sampled skill, categories rotated (built, not written: no browser, no images)."""
    out = []
    for i, skill in enumerate(SAMPLED):
        fit = compatible_categories(skill)
        for k in range(2):
            out.append(build_site(sample_spec(300 + 2 * i + k, skill, fit[(3 * i + k) % len(fit)])))
    return out


def test_catalogs_hold_50_to_300_entities_with_unique_names(sites):
    sizes = []
    for site in sites:
        items = site.data["items"]
        names = [i["name"] for i in items]
        assert 50 <= len(items) <= 300, (site.spec.site_id, len(items))
        assert len(set(names)) == len(names), site.spec.site_id
        assert len({i["slug"] for i in items}) == len(items) == len({i["id"] for i in items}), site.spec.site_id
        assert len({i["price"] for i in items}) == len(items), site.spec.site_id  # "cheapest" stays untied
        if site.spec.skill == "table-reasoning":  # one table shows them all: under 100
            assert len(items) <= ONE_PAGE, site.spec.site_id
        sizes.append(len(items))
    assert len(set(sizes)) >= len(sizes) // 2  # drawn per site, not one fixed size
    assert max(sizes) > 100


def test_a_catalog_at_the_genres_capacity_keeps_names_unique_and_spares_absent_ones():
    """The largest catalog a genre allows: every name once, and names left for "not on the site" tasks."""
    for cid, cat in categories().items():
        capacity = name_capacity(cat, PEOPLE, SPARE_NAMES)
        assert capacity >= 50, cid
        chosen = entity_names(cat, random.Random(cid), capacity, PEOPLE)
        names = [e["name"] for e in chosen]
        assert len(names) == capacity and len(set(names)) == capacity, cid
        assert len({slugify(n) for n in names}) == capacity, cid
        assert len(absent_names(cat, set(names), PEOPLE)) >= 4, cid


def test_the_items_listing_is_paged_and_plans_click_the_items_page(sites):
    site = next(s for s in sites if s.spec.skill == "checkout")
    items = site.data["items"]
    assert len(items) > 2 * LISTING_PAGE
    listing = [p for p in site.pages if p == "/items" or p.startswith("/items/page/")]
    pages = -(-len(items) // LISTING_PAGE)
    assert sorted(listing) == sorted(["/items"] + [f"/items/page/{n}" for n in range(2, pages + 1)])
    files = render_site(site)
    seen: list[str] = []
    for n in range(1, pages + 1):
        html = files["items.html" if n == 1 else f"items/page/{n}.html"].decode()
        ids = re.findall(r'data-link="?item-(i\d+)', html)
        assert 0 < len(set(ids)) <= LISTING_PAGE
        seen += list(dict.fromkeys(ids))
        # the pager names every page, each a file of the bundle
        for target in set(re.findall(r'href="(/items(?:/page/\d+)?)"', html)):
            assert ("items.html" if target == "/items" else target.lstrip("/") + ".html") in files
    assert seen == [i["id"] for i in items]  # each entity on exactly one page, in catalog order
    paged = [t for t in site.tasks if any(s.get("sel", "").startswith("[data-pager=") for s in t.plan)]
    assert paged, "no task reaches an entity past the first page"
    for task in paged:
        for step, after in zip(task.plan, task.plan[1:]):
            if step.get("sel", "").startswith("[data-pager="):
                page = int(re.search(r"\d+", step["sel"]).group())
                item = re.search(r"item-(i\d+)", after["sel"]).group(1)
                assert [i["id"] for i in items].index(item) // LISTING_PAGE + 1 == page


def test_the_same_seed_gives_the_same_large_catalog():
    spec = sample_spec(301, "checkout", "fashion")
    a, b = build_site(spec), build_site(spec)
    assert json.dumps(a.data, sort_keys=True) == json.dumps(b.data, sort_keys=True)
    assert [t.plan for t in a.tasks] == [t.plan for t in b.tasks]


def test_large_catalog_sites_validate_in_chromium(tmp_path):
    """A shop whose cart tasks walk the paged listing, and a long pager, keep their tasks in Chromium."""
    paths = []
    for spec in (sample_spec(5, "checkout", "electronics"), sample_spec(3, "pagination", "electronics")):
        path = write_unvalidated(spec, tmp_path)
        tasks = load_tasks(path / "tasks.jsonl")
        far = [t for t in tasks if any(str(s.get("sel", "")).startswith("[data-pager=") for s in t.metadata["plan"])]
        assert far, spec.site_id
        save_tasks(far[:2], path / "tasks.jsonl")
        paths.append(path)
    results = asyncio.run(keep_valid(paths, concurrency=2))
    for result in results:
        assert result.tasks_kept == 2, (result.site_id, result.failures)
        assert len(json.loads((result.path / "data.json").read_text())["items"]) > 2 * LISTING_PAGE


def test_the_faceted_listing_shows_48_then_more_and_a_filter_starts_again(tmp_path):
    """A faceted listing of a large catalog: the first 48 results, the full count, "Show more" adds 48
    and hides at the end; choosing a type lists only that type, from its first results."""
    from playwright.async_api import async_playwright

    from weblica.browser.launcher import context_kwargs, launch_browser
    from weblica.serve.server import SiteServer

    path = write_unvalidated(sample_spec(1, "filter-sort", "electronics"), tmp_path)
    data = json.loads((path / "data.json").read_text())
    total = len(data["items"])
    assert total > 96
    base = json.loads((path / "site.json").read_text())["spec"]["base_url"]
    kinds = sorted({i["kind"] for i in data["items"]})
    kind_total = sum(i["kind"] == kinds[0] for i in data["items"])

    async def run() -> list:
        async with async_playwright() as pw:
            browser = await launch_browser(pw)
            try:
                with SiteServer([path]) as server:
                    page = await (await browser.new_context(**context_kwargs(proxy=server.url))).new_page()
                    await page.goto(base + "/items", wait_until="load")
                    await page.wait_for_selector("[data-results] [data-item]")
                    rows = lambda: page.locator("[data-results] [data-item]").count()  # noqa: E731
                    # el.click(): the site's cookie banner may cover the page; the widget is under test

                    async def press(sel: str) -> None:
                        await page.locator(sel).evaluate("(el) => el.click()")
                    seen = [await rows(), await page.text_content("[data-result-count]")]
                    await press("#facets-more")
                    seen.append(await rows())
                    for _ in range(10):  # bounded: a button that never hides fails the count below
                        if not await page.locator("#facets-more").is_visible():
                            break
                        await press("#facets-more")
                    seen.append(await rows())
                    await press("#kind-1")
                    seen += [await rows(), await page.text_content("[data-result-count]")]
                    return seen
            finally:
                await browser.close()

    first, count, second, everything, filtered, filtered_count = asyncio.run(run())
    assert (first, count, second, everything) == (48, f"{total} results", 96, total)
    assert filtered == min(48, kind_total) and filtered_count == f"{kind_total} results"
