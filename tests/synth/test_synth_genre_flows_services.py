"""Genre flows of saas, transit, classifieds and local services: one site per genre built and validated
in real Chromium (its flow tasks kept, every negative tried rejected), the wrong action (another card,
itinerary, ad or slot) fails the state checks after a real run, and the same seed gives the same bytes."""
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
GENRES = {"saas": ("search", 31, "saas-"), "classifieds": ("forms", 41, "ads-"),
          "local-services": ("search", 51, "services-"),
          "transit": ("search", 61, "transit-")}


def flow_tasks(path: Path, prefix: str) -> list:
    return [t for t in load_tasks(path / "tasks.jsonl") if t.metadata.get("intent", "").startswith(prefix)]


def _data(path: Path) -> dict:
    return json.loads((path / "data.json").read_text())


def _task(path: Path, intent: str):
    return next(t for t in load_tasks(path / "tasks.jsonl") if t.metadata.get("intent") == intent)


def wrong_saas(path: Path) -> tuple[object, list[dict], str]:
    """The soonest-due card task done on another card of the same column."""
    task = _task(path, "saas-move-earliest-due")
    card = next(c.expected for c in task.checks if c.path == "card_moves.0.card")
    project = next(p for p in _data(path)["projects"] if any(k["id"] == card for k in p["cards"]))
    column = next(k["column"] for k in project["cards"] if k["id"] == card)
    other = next(k["id"] for k in project["cards"] if k["column"] == column and k["id"] != card)
    plan = [dict(s, sel=f"[data-card-link={other}]") if s.get("sel") == f"[data-card-link={card}]" else s
            for s in task.metadata["plan"]]
    return task, plan, "card_moves"


def wrong_classifieds(path: Path) -> tuple[object, list[dict], str]:
    """The cheapest-ad message sent to another ad of the same category and location."""
    task = _task(path, "ads-message-cheapest")
    ad = next(c.expected for c in task.checks if c.path == "messages.0.ad")
    ads = _data(path)["ads"]
    mine = next(a for a in ads if a["id"] == ad)
    other = next(a for a in ads if a["id"] != ad and (a["category"], a["location"]) == (mine["category"], mine["location"]))
    sel = f"[data-row={ad}] [data-ad-link]"
    return task, [dict(s, sel=f"[data-row={other['id']}] [data-ad-link]") if s.get("sel") == sel else s
                  for s in task.metadata["plan"]], "messages"


def wrong_local_services(path: Path) -> tuple[object, list[dict], str]:
    """The best-rated provider's visit booked in another slot than its first free one, or with another
    provider when it has no other free slot."""
    task = _task(path, "services-book-best-rated")
    slot = next(c.expected for c in task.checks if c.path == "visits.0.slot")
    slots = [s for p in _data(path)["providers"] for s in p["slots"] if s["open"]]
    other = next(s for s in slots if s["id"] != slot)
    plan = task.metadata["plan"]
    at = next(i for i, s in enumerate(plan) if s.get("sel") == f"[data-slot-link={slot}]")
    form_url = task.start_url.replace("/pros", f"/visits/new?slot={other['id']}")
    return task, [{"op": "goto", "url": form_url}] + plan[at + 1:], "visits"


def wrong_transit(path: Path) -> tuple[object, list[dict], str]:
    """The planner's second journey saved instead of the first-arriving one."""
    task = _task(path, "transit-save-fastest")
    plan = task.metadata["plan"]
    return task, plan[:-1] + [{"op": "click", "sel": "[data-itinerary]:nth-child(2) [data-save-journey]"}], "saved_journeys"


WRONG = {"transit": wrong_transit, "saas": wrong_saas, "classifieds": wrong_classifieds, "local-services": wrong_local_services}


@pytest.fixture(scope="module")
def validated(tmp_path_factory):
    """One site per genre, only its flow's tasks kept in the bundle, all validated in one browser."""
    out = tmp_path_factory.mktemp("flows-services")
    paths, generated = {}, {}
    for genre, (skill, seed, prefix) in GENRES.items():
        path = write_unvalidated(sample_spec(seed, skill, genre), out)
        tasks = flow_tasks(path, prefix)
        save_tasks(tasks, path / "tasks.jsonl")
        paths[genre], generated[genre] = path, tasks
    results = asyncio.run(keep_valid(list(paths.values()), concurrency=4))
    return paths, generated, {r.site_id: r for r in results}


def test_every_genre_has_a_registered_flow_with_grammatical_intents():
    assert set(GENRES) <= set(FLOWS)
    for genre, (skill, seed, prefix) in GENRES.items():
        for s in (seed, seed + 1, seed + 2):
            site = build_site(sample_spec(s, skill, genre))
            drafts = [d for d in site.tasks if d.intent.startswith(prefix)]
            assert 3 <= len(drafts) <= 6, (genre, s, len(drafts))
            assert any(d.checks[0].type == "state_match" for d in drafts), genre
            assert all(d.difficulty == planned(d.plan) for d in drafts), genre  # computed, never typed
            for d in drafts:
                assert len(INTENTS[d.intent].phrasings) >= MIN_PHRASINGS
                assert d.instruction[0].isupper() and d.instruction.rstrip()[-1] in ".?", d.instruction
                low = d.instruction.lower()
                assert "maker" not in low and "cart" not in low and " a a" not in low, d.instruction
                assert not any(w in low for w in ("click", "use the search", "scroll")), d.instruction


def test_flow_tasks_are_kept_and_every_negative_rejected(validated):
    paths, generated, results = validated
    for genre, path in paths.items():
        result = results[path.name]
        assert result.tasks_kept == len(generated[genre]) >= 3, (genre, result.failures)
        kept = load_tasks(path / "tasks.jsonl")
        assert all(t.oracle for t in kept)
        assert result.negatives_tried == result.negatives_rejected, (genre, result.negatives_tried)
        assert result.negatives_tried.get("noop") == len(kept)
        assert result.negatives_tried.get("maximal", 0) >= 1, genre
        assert result.negatives_tried.get("altered_state", 0) >= 3, genre


def test_the_wrong_action_fails_the_state_checks(validated):
    """Each wrong plan runs in Chromium against the real site server: it stores something, and the
    task's checks reject what it stored."""
    from playwright.async_api import async_playwright

    from weblica.browser.launcher import context_kwargs, launch_browser
    from weblica.serve.backend import SynthBackend
    from weblica.serve.server import SiteServer
    from weblica.synth.player import Compiler, RequestTracker, settle

    paths, _, _ = validated
    cases = [(genre, *WRONG[genre](path)) for genre, path in paths.items()]

    async def run() -> list[tuple[str, float, list]]:
        scores = []
        async with async_playwright() as pw:
            browser = await launch_browser(pw)
            try:
                with SiteServer(list(paths.values())) as server:
                    backend = SynthBackend(server)
                    context = await browser.new_context(**context_kwargs(proxy=server.url))
                    for genre, task, plan, stored in cases:
                        net = await backend.begin(task, f"wrong-{genre}", 0)
                        page = await context.new_page()
                        await page.set_extra_http_headers(net.extra_headers)
                        tracker = RequestTracker(page)
                        await page.goto(task.start_url, wait_until="load")
                        await settle(page, tracker)
                        await Compiler(page, tracker).run(plan)
                        state = await backend.state(task, f"wrong-{genre}")
                        scores.append((genre, evaluate_checks(task, None, page.url, state)[0], state[stored]))
                        await page.close()
                    await context.close()
            finally:
                await browser.close()
        return scores

    for genre, reward, stored in asyncio.run(run()):
        assert len(stored) == 1, (genre, stored)  # the wrong thing was really done
        assert reward == 0.0, (genre, stored)


@pytest.mark.parametrize("genre", sorted(GENRES))
def test_same_seed_same_bytes(genre, tmp_path):
    skill, seed, _ = GENRES[genre]
    a = write_unvalidated(sample_spec(seed, skill, genre), tmp_path / "a")
    b = write_unvalidated(sample_spec(seed, skill, genre), tmp_path / "b")
    files_a = sorted(p.relative_to(a) for p in a.rglob("*") if p.is_file())
    assert files_a == sorted(p.relative_to(b) for p in b.rglob("*") if p.is_file())
    assert all((a / f).read_bytes() == (b / f).read_bytes() for f in files_a)
    other = write_unvalidated(sample_spec(seed + 1, skill, genre), tmp_path / "c")
    assert _data(other) != _data(a)


def test_the_planner_page_lists_the_itineraries_the_gold_is_computed_from(validated):
    """flows.js planner() and transit.itineraries() agree on a dozen queries of the real site (the
    gold of the planner tasks comes from the Python side)."""
    import random

    from playwright.async_api import async_playwright

    from weblica.browser.launcher import context_kwargs, launch_browser
    from weblica.serve.server import SiteServer
    from weblica.synth.genres.transit.flow import SHOWN, hhmm, itineraries

    paths, _, _ = validated
    path = paths["transit"]
    lines = _data(path)["lines"]
    stops = sorted({s for line in lines for s in line["stops"]})
    rng = random.Random(7)
    queries = [(*rng.sample(stops, 2), f"0{6 + k % 3}:{rng.choice(['00', '20', '40'])}") for k in range(12)]

    async def run() -> list[list[str]]:
        seen = []
        async with async_playwright() as pw:
            browser = await launch_browser(pw)
            try:
                with SiteServer([path]) as server:
                    context = await browser.new_context(**context_kwargs(proxy=server.url))
                    page = await context.new_page()
                    for origin, destination, after in queries:
                        await page.goto(f"http://{path.name}.synth.test/planner?from={origin}&to={destination}&after={after}")
                        await page.wait_for_selector("[data-planner][data-planned]", state="attached", timeout=5000)
                        seen.append(await page.eval_on_selector_all("[data-itinerary]", "els => els.map(e => e.dataset.itinerary)"))
                    await context.close()
            finally:
                await browser.close()
        return seen

    found = 0
    for (origin, destination, after), shown in zip(queries, asyncio.run(run())):
        gold = itineraries(lines, origin, destination, int(after[:2]) * 60 + int(after[3:]))[:SHOWN]
        assert shown == [f"{hhmm(o['dep'])}-{hhmm(o['arr'])}".replace(":", "") for o in gold], (origin, destination, after)
        found += bool(gold)
    assert found >= 3  # most queries have a journey: the comparison is not of empty lists
