"""Genre flows of real estate, news, education, events and restaurants (weblica/synth/genres): one site
per genre built and validated in real Chromium; the flow's tasks are kept (oracles pass, every negative
rejected), the wrong action fails the state checks, and the same seed gives the same bytes."""
from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from weblica.env.task import load_tasks, save_tasks
from weblica.scoring.checks import evaluate_checks
from weblica.synth.intents.difficulty import planned
from weblica.synth.generate import build_site, keep_valid, write_unvalidated
from weblica.synth.genres.registry import FLOWS
from weblica.synth.intents import INTENTS, MIN_PHRASINGS
from weblica.synth.spec import sample_spec

# genre -> (skill the site is built with, seed, prefix of the flow's intents)
GENRES = {"restaurants": ("search", 33, "food-"), "education": ("search", 41, "edu-"),
          "events": ("search", 51, "events-"), "real-estate": ("search", 61, "homes-"),
          "news": ("search", 71, "news-")}


def flow_tasks(path: Path, prefix: str) -> list:
    return [t for t in load_tasks(path / "tasks.jsonl") if t.metadata.get("intent", "").startswith(prefix)]


@pytest.fixture(scope="module")
def validated(tmp_path_factory):
    out = tmp_path_factory.mktemp("flows_more")
    paths, generated = {}, {}
    for genre, (skill, seed, prefix) in GENRES.items():
        path = write_unvalidated(sample_spec(seed, skill, genre), out)
        tasks = flow_tasks(path, prefix)
        save_tasks(tasks, path / "tasks.jsonl")
        paths[genre], generated[genre] = path, tasks
    results = asyncio.run(keep_valid(list(paths.values()), concurrency=4))
    return paths, generated, {r.site_id: r for r in results}


@pytest.mark.parametrize("genre", sorted(GENRES))
def test_flow_is_registered_with_grammatical_intents(genre):
    skill, seed, prefix = GENRES[genre]
    assert genre in FLOWS
    for s in (seed, seed + 1, seed + 2):
        site = build_site(sample_spec(s, skill, genre))
        drafts = [d for d in site.tasks if d.intent.startswith(prefix)]
        assert 3 <= len(drafts) <= 6, (genre, s, len(drafts))
        assert any(d.checks[0].type == "state_match" for d in drafts), genre
        assert all(d.difficulty == planned(d.plan) for d in drafts), genre  # computed, never typed
        for d in drafts:
            assert len(INTENTS[d.intent].phrasings) >= MIN_PHRASINGS
            assert d.instruction[0].isupper() and d.instruction.rstrip()[-1] in ".?", d.instruction
            assert "maker" not in d.instruction.lower(), d.instruction
            assert not any(w in d.instruction.lower() for w in ("click", "use the search", "scroll")), d.instruction


def test_other_categories_get_none_of_these_pages():
    site = build_site(sample_spec(3, "search", "books"))
    assert not any(p.startswith(("/menu", "/dishes", "/courses", "/homes", "/mortgage", "/events", "/venues",
                                 "/news", "/articles", "/authors")) for p in site.pages)


def test_flow_tasks_are_kept_and_every_negative_rejected(validated):
    paths, generated, results = validated
    for genre, path in paths.items():
        result = results[path.name]
        # a random run that happens to land on a small count's gold is a drop validation must make (the
        # generator's last stage), not a flow bug; any other failure is
        luck = [f for f in result.failures if "random negative accepted" in f]
        assert result.tasks_kept >= 3 and result.tasks_kept + len(luck) == len(generated[genre]), \
            (genre, result.failures)
        kept = load_tasks(path / "tasks.jsonl")
        assert all(t.oracle for t in kept)
        passed = {k: n - result.negatives_rejected.get(k, 0) for k, n in result.negatives_tried.items()}
        assert {k: n for k, n in passed.items() if n} == ({"random": len(luck)} if luck else {}), (genre, passed)
        assert result.negatives_tried.get("noop") == len(kept) + len(luck)
        assert result.negatives_tried.get("maximal", 0) >= 1, genre
        assert result.negatives_tried.get("altered_state", 0) >= 3, genre


def _root(task) -> str:
    """The site's origin (a task starts on a flow page such as /courses)."""
    scheme, rest = task.start_url.split("://", 1)
    return f"{scheme}://{rest.split('/', 1)[0]}"


def _task(path: Path, intent: str):
    return next(t for t in load_tasks(path / "tasks.jsonl") if t.metadata.get("intent") == intent)


def _wrong_restaurants(path: Path, data: dict):
    """Another size of the same dish: a basket line is stored, not the one asked for."""
    task = _task(path, "food-order-delivery")
    size = next(c.expected for c in task.checks if c.path == "basket.0.size")
    sizes = [s["name"] for d in data["dishes"] for s in d["sizes"]]
    index = sizes.index(size) % 3 + 1
    other = 1 if index != 1 else 2
    plan = [dict(s, sel=f"#size-{other}") if s.get("sel", "").startswith("#size-") else s
            for s in task.metadata["plan"]]
    return [(task, plan, "basket", 1)]


def _wrong_education(path: Path, data: dict):
    """Another course the student may take: it is stored, and fails; a course whose prerequisite is
    missing: the enrollment is refused, nothing is stored."""
    task = _task(path, "edu-enroll")
    course = next(c.expected for c in task.checks if c.path == "enrollments.0.course")
    done = set(data["completed"])
    base = _root(task)
    other = next(c for c in data["courses"] if c["id"] != course and c["id"] not in done
                 and (c["prereq"] is None or c["prereq"] in done))
    blocked = next(c for c in data["courses"] if c["prereq"] and c["prereq"] not in done)
    return [(task, [{"op": "goto", "url": f"{base}/courses/{other['slug']}"}, {"op": "click", "sel": "#enroll"}],
             "enrollments", 1),
            (task, [{"op": "goto", "url": f"{base}/courses/{blocked['slug']}"}, {"op": "click", "sel": "#enroll"},
                    {"op": "reach", "sel": "[data-prereq-error]"}], "enrollments", 0)]


def _wrong_events(path: Path, data: dict):
    """The same quantities for another event: an order is stored, for the wrong event."""
    task = _task(path, "events-buy-tickets")
    event = next(c.expected for c in task.checks if c.path == "ticket_orders.0.event")
    wanted = {c.path.split(".")[-1]: c.expected for c in task.checks if c.path.startswith("ticket_orders.0.qty_")}
    other = next(e for e in data["events"] if e["id"] != event and
                 all(not t["sold_out"] for t in e["tickets"]))
    start = _root(task)
    steps = [s for s in task.metadata["plan"] if s.get("sel", "").startswith("#f-")]
    return [(task, [{"op": "goto", "url": f"{start}/events/{other['slug']}"}] + steps +
             [{"op": "click", "sel": "#buy-tickets"}], "ticket_orders", 1)] if wanted else []


def _wrong_real_estate(path: Path, data: dict):
    """The same viewing booked at another home of the same type and neighbourhood (not the cheapest)."""
    task = _task(path, "homes-tour-cheapest")
    home = next(c.expected for c in task.checks if c.path == "tours.0.listing")
    best = next(h for h in data["homes"] if h["id"] == home)
    other = next(h for h in data["homes"] if h["id"] != home and (h["kind"], h["district"]) == (best["kind"], best["district"]))
    plan = [dict(s, sel=f"[data-row={other['id']}] [data-home-link]") if "[data-home-link]" in s.get("sel", "") else
            dict(s, value=f"{other['tour_days'][0]} 10:00") if s.get("sel") == "#f-slot" else s
            for s in task.metadata["plan"]]
    return [(task, plan, "tours", 1)]


def _wrong_news(path: Path, data: dict):
    """The same comment under the author's older article of that section."""
    task = _task(path, "news-comment-latest-by-author")
    article = next(c.expected for c in task.checks if c.path == "comments.0.article")
    latest = next(a for a in data["articles"] if a["id"] == article)
    older = next(a for a in data["articles"] if a["id"] != article and
                 (a["author"], a["section"]) == (latest["author"], latest["section"]))
    start = _root(task)
    steps = [s for s in task.metadata["plan"] if s.get("sel", "").startswith("#f-")]
    return [(task, [{"op": "goto", "url": f"{start}/articles/{older['slug']}"}] + steps +
             [{"op": "click", "sel": "#post-comment"}], "comments", 1)]


def test_mortgage_formula_matches_the_calculator():
    from weblica.synth.genres.real_estate.flow import monthly_payment
    assert round(monthly_payment(300000, 60000, 6, 30), 2) == 1438.92  # the standard amortization table
    assert monthly_payment(1200, 0, 0, 1) == 100


WRONG = {"restaurants": _wrong_restaurants, "education": _wrong_education, "events": _wrong_events,
         "real-estate": _wrong_real_estate, "news": _wrong_news}


def test_the_wrong_action_fails_the_state_checks(validated):
    """Each wrong plan runs in Chromium against the real site server: it stores something, and the
    task's checks reject what it stored."""
    from playwright.async_api import async_playwright

    from weblica.browser.launcher import context_kwargs, launch_browser
    from weblica.serve.backend import SynthBackend
    from weblica.serve.server import SiteServer
    from weblica.synth.player import Compiler, RequestTracker, settle

    paths, _, _ = validated
    cases = [(g, *case) for g, p in paths.items() if g in WRONG
             for case in WRONG[g](p, json.loads((p / "data.json").read_text()))]

    async def run() -> list:
        scores = []
        async with async_playwright() as pw:
            browser = await launch_browser(pw)
            try:
                with SiteServer(list(paths.values())) as server:
                    backend = SynthBackend(server)
                    context = await browser.new_context(**context_kwargs(proxy=server.url))
                    for n, (genre, task, plan, stored, count) in enumerate(cases):
                        net = await backend.begin(task, f"wrong-{genre}-{n}", 0)
                        page = await context.new_page()
                        await page.set_extra_http_headers(net.extra_headers)
                        tracker = RequestTracker(page)
                        await page.goto(task.start_url, wait_until="load")
                        await settle(page, tracker)
                        await Compiler(page, tracker).run(plan)
                        state = await backend.state(task, f"wrong-{genre}-{n}")
                        text = await page.inner_text("body")
                        scores.append((genre, stored, count, evaluate_checks(task, None, page.url, state)[0], state, text))
                        await page.close()
                    await context.close()
            finally:
                await browser.close()
        return scores

    for genre, stored, count, reward, state, text in asyncio.run(run()):
        assert len(state[stored]) == count, (genre, state)  # the wrong thing was done (or refused)
        if genre == "education" and count == 0:
            assert "You cannot enroll yet: complete" in text  # the refusal says why
        assert reward == 0.0, (genre, state[stored])


@pytest.mark.parametrize("genre", sorted(GENRES))
def test_same_seed_same_bytes(genre, tmp_path):
    skill, seed, _ = GENRES[genre]
    a = write_unvalidated(sample_spec(seed, skill, genre), tmp_path / "a")
    b = write_unvalidated(sample_spec(seed, skill, genre), tmp_path / "b")
    files_a = sorted(p.relative_to(a) for p in a.rglob("*") if p.is_file())
    assert files_a == sorted(p.relative_to(b) for p in b.rglob("*") if p.is_file())
    assert all((a / f).read_bytes() == (b / f).read_bytes() for f in files_a)
