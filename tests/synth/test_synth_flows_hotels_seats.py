"""The flows issue #18 left thin: hotel search on travel sites (search -> filter -> hotel -> rate ->
booking), seat maps on event sites (a taken seat refused by the server), and education prerequisites
enforced by the server, not only the page. One site per genre is built and validated in real Chromium
with only these tasks kept; the wrong action runs for real and fails the checks; posts that go around
the page are refused and store nothing; the same seed gives the same bytes."""
from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from weblica.env.task import load_tasks, save_tasks
from weblica.scoring.checks import evaluate_checks
from weblica.serve.rules import refusal
from weblica.synth.generate import build_site, keep_valid, write_unvalidated
from weblica.synth.genres.events.seats import together
from weblica.synth.genres.travel.nights import free_stays, nights
from weblica.synth.genres.travel.hotels import rates_of
from weblica.synth.intents import INTENTS, MIN_PHRASINGS
from weblica.synth.spec import sample_spec

# genre -> (skill, seed, the intents under test)
SITES = {"travel": ("search", 21, ("hotel-",)),
         "events": ("search", 51, ("events-seats-",)),
         "education": ("search", 41, ("edu-enroll",))}


def _ours(path: Path, prefixes: tuple[str, ...]) -> list:
    return [t for t in load_tasks(path / "tasks.jsonl") if t.metadata.get("intent", "").startswith(prefixes)]


@pytest.fixture(scope="module")
def validated(tmp_path_factory):
    out = tmp_path_factory.mktemp("flow_gaps")
    paths, generated = {}, {}
    for genre, (skill, seed, prefixes) in SITES.items():
        path = write_unvalidated(sample_spec(seed, skill, genre), out)
        tasks = _ours(path, prefixes)
        save_tasks(tasks, path / "tasks.jsonl")
        paths[genre], generated[genre] = path, tasks
    results = asyncio.run(keep_valid(list(paths.values()), concurrency=3))
    return paths, generated, {r.site_id: r for r in results}


def test_intents_are_phrased_and_unambiguous():
    for seed in (21, 22, 23):
        site = build_site(sample_spec(seed, "search", "travel"))
        drafts = [d for d in site.tasks if d.intent.startswith("hotel-")]
        intents = {d.intent for d in drafts}
        assert "hotel-free-cancellation-days" in intents, seed
        assert intents & {"hotel-book-cheapest-refundable", "hotel-book-cheapest-breakfast"}, seed
        for d in drafts:
            assert len(INTENTS[d.intent].phrasings) >= MIN_PHRASINGS
            assert d.instruction[0].isupper() and d.instruction.rstrip()[-1] in ".?", d.instruction
            assert not any(w in d.instruction.lower() for w in ("click", "filter", "sort", "scroll")), d.instruction
        hotels = site.data["hotels"]
        items = {i["name"].lower() for i in site.data.get("items", [])}
        assert len({h["name"] for h in hotels}) == len(hotels) and not items & {h["name"].lower() for h in hotels}
        for h in hotels:  # a refundable rate costs more than the same room's non-refundable one
            for room in h["rooms"]:
                if len(room["rates"]) == 2:
                    assert [r["refundable"] for r in room["rates"]] == [False, True]
                    assert room["rates"][0]["price"] < room["rates"][1]["price"]
    event = {"seats": [{"row": "A", "zone": "VIP", "seats": [{"id": f"A{n}", "taken": n in (3, 6)} for n in range(1, 9)]},
                       {"row": "B", "zone": "VIP", "seats": [{"id": f"B{n}", "taken": False} for n in range(1, 9)]}]}
    assert together(event, "VIP", 2) is None  # A1-A2, A4-A5 and A7-A8: no single answer
    assert together(event, "VIP", 3) is None  # row A has no 3 free together; row B has six blocks of three
    assert together(event, "VIP", 8) == [f"B{n}" for n in range(1, 9)]


def test_rules_refuse_what_the_server_must():
    seats = [{"kind": "free_items", "field": "seats", "by": "event", "max": 4, "offered": {"e1": ["A1", "A2", "A3"]},
              "taken": {"e1": ["A3"]}, "error": "Taken: {items}."}]
    assert refusal(seats, "seat_orders", {"event": "e1", "seats": "A1,A2"}, {}) is None
    assert refusal(seats, "seat_orders", {"event": "e1", "seats": "A2,A3"}, {}) == "Taken: A3."
    assert refusal(seats, "seat_orders", {"event": "e1", "seats": "A1"}, {"seat_orders": [{"event": "e1", "seats": "A1"}]})
    assert refusal(seats, "seat_orders", {"event": "e1", "seats": "A1,A1"}, {})
    assert refusal(seats, "seat_orders", {"event": "e1", "seats": ""}, {})
    assert refusal(seats, "seat_orders", {"event": "e2", "seats": "A1"}, {})
    assert refusal(seats, "seat_orders", {"event": "e1", "seats": ["A9"]}, {})
    needs = [{"kind": "requires", "field": "course", "needs": {"c1": [], "c2": ["X 101"]}, "have": []}]
    assert refusal(needs, "enrollments", {"course": "c1"}, {}) is None
    assert "X 101" in refusal(needs, "enrollments", {"course": "c2"}, {})
    assert refusal(needs, "enrollments", {"course": ["c1"]}, {}) and refusal(needs, "enrollments", {}, {})
    later = [{"kind": "later", "field": "checkout", "than": "checkin"}]
    assert refusal(later, "b", {"checkin": "2026-03-10", "checkout": "2026-03-12"}, {}) is None
    assert refusal(later, "b", {"checkin": "2026-03-10", "checkout": "2026-03-10"}, {})
    assert refusal(later, "b", {"checkin": "2026-03-10"}, {})
    fits = [{"kind": "at_most", "field": "guests", "by": "rate", "limits": {"r1": 2}}]
    assert refusal(fits, "b", {"rate": "r1", "guests": 2}, {}) is None
    assert all(refusal(fits, "b", {"rate": r, "guests": g}, {}) for r, g in [("r1", 3), ("r1", 0), ("r1", "2"), ("r2", 1), ("r1", 1.5)])
    assert refusal([{"kind": "mystery"}], "b", {}, {})  # a rule the server does not know refuses


def test_tasks_are_kept_and_every_negative_rejected(validated):
    paths, generated, results = validated
    for genre, path in paths.items():
        result = results[path.name]
        luck = [f for f in result.failures if "random negative accepted" in f]
        assert result.tasks_kept >= 2 and result.tasks_kept + len(luck) == len(generated[genre]), (genre, result.failures)
        passed = {k: n - result.negatives_rejected.get(k, 0) for k, n in result.negatives_tried.items()}
        assert {k: n for k, n in passed.items() if n} == ({"random": len(luck)} if luck else {}), (genre, passed)
        assert result.negatives_tried.get("maximal", 0) >= 1, genre
    kept = {t.metadata["intent"] for t in load_tasks(paths["travel"] / "tasks.jsonl")}
    assert "hotel-book-best-rated" in kept or "hotel-book-cheapest-refundable" in kept, kept


def _task(path: Path, intent: str):
    return next(t for t in load_tasks(path / "tasks.jsonl") if t.metadata.get("intent") == intent)


def _origin(task) -> str:
    scheme, rest = task.start_url.split("://", 1)
    return f"{scheme}://{rest.split('/', 1)[0]}"


def _rate(path: Path, rate_id: str) -> dict:
    """The travel site's rate `rate_id`, with its room's sold-out nights and what it sleeps (data.json)."""
    hotels = json.loads((path / "data.json").read_text())["hotels"]
    return next(r for h in hotels for r in rates_of(h) if r["id"] == rate_id)


def _free_stay(rate: dict, length: int, avoid: tuple[str, str] | None = None, near: str | None = None) -> dict:
    """A stay of `length` nights the data says the rate's room is free for, other than `avoid`: the one
    whose check-in is nearest `near` (else the earliest), so a test holds for any seed's sold-out nights."""
    import datetime as dt
    stays = [st for st in free_stays(rate, length) if (st["checkin"], st["checkout"]) != avoid]
    pivot = dt.date.fromisoformat(near or stays[0]["checkin"])
    return min(stays, key=lambda st: (abs((dt.date.fromisoformat(st["checkin"]) - pivot).days), st["checkin"]))


def _wrong_plans(paths: dict[str, Path]) -> list:
    """(task, plan, collection, stored count) runs that do the wrong thing for real."""
    cases = []
    travel = next(t for t in load_tasks(paths["travel"] / "tasks.jsonl") if t.metadata["intent"].startswith("hotel-book"))
    checkin = next(c.expected for c in travel.checks if c.path == "hotel_bookings.0.checkin")
    checkout = next(c.expected for c in travel.checks if c.path == "hotel_bookings.0.checkout")
    rate = _rate(paths["travel"], next(c.expected for c in travel.checks if c.path == "hotel_bookings.0.rate"))
    # the same room for as many nights on other dates its room is free (the nearest): wrong dates, stored
    wrong = _free_stay(rate, len(nights(checkin, checkout)), avoid=(checkin, checkout), near=checkin)
    plan = [dict(s, value=wrong["checkin"] if s.get("sel") == "#f-checkin" else wrong["checkout"])
            if s.get("sel") in ("#f-checkin", "#f-checkout") else s for s in travel.metadata["plan"]]
    cases.append((travel, plan, "hotel_bookings", 1))
    seats = _task(paths["events"], "events-seats-together")
    gold = next(c.expected for c in seats.checks if c.path == "seat_orders.0.seats").split(",")
    # the block but its last seat: stored, too few seats
    plan = [s for s in seats.metadata["plan"] if s.get("sel") != f"[data-seat={gold[-1]}]"]
    cases.append((seats, plan, "seat_orders", 1))
    return cases


def test_the_wrong_action_fails_and_posts_around_the_page_are_refused(validated):
    from playwright.async_api import async_playwright

    from weblica.browser.launcher import context_kwargs, launch_browser
    from weblica.serve.backend import SynthBackend
    from weblica.serve.server import SiteServer
    from weblica.synth.player import Compiler, RequestTracker, settle

    paths, _, _ = validated
    events = json.loads((paths["events"] / "data.json").read_text())["events"]
    courses = json.loads((paths["education"] / "data.json").read_text())
    done = set(courses["completed"])
    blocked = next(c for c in courses["courses"] if c["prereq"] and c["prereq"] not in done)
    allowed = next(c for c in courses["courses"] if c["id"] not in done and (c["prereq"] is None or c["prereq"] in done))
    seated = next(e for e in events if e.get("seats"))
    taken = next(s["id"] for r in seated["seats"] for s in r["seats"] if s["taken"])
    free = [s["id"] for r in seated["seats"] for s in r["seats"] if not s["taken"]][:2]
    seat_task = _task(paths["events"], "events-seats-together")
    edu_task = _task(paths["education"], "edu-enroll")
    hotel_task = next(t for t in load_tasks(paths["travel"] / "tasks.jsonl") if t.metadata["intent"].startswith("hotel-book"))
    rate = next(c.expected for c in hotel_task.checks if c.path == "hotel_bookings.0.rate")
    room = _rate(paths["travel"], rate)
    stay = _free_stay(room, 2)  # two nights the data says the room is free
    checkin, checkout = stay["checkin"], stay["checkout"]

    async def post(page, path: str, body: dict) -> tuple[int, dict]:
        method, path = path.split(" ") if " " in path else ("POST", path)
        return tuple(await page.evaluate(
            """async ([method, path, body]) => { const r = await fetch(path, {method, headers: {"Content-Type": "application/json"},
                 body: JSON.stringify(body)}); return [r.status, await r.json()]; }""", [method, path, body]))

    async def run() -> tuple[list, dict]:
        scores, direct = [], {}
        async with async_playwright() as pw:
            browser = await launch_browser(pw)
            try:
                with SiteServer(list(paths.values())) as server:
                    backend = SynthBackend(server)
                    context = await browser.new_context(**context_kwargs(proxy=server.url))
                    for n, (task, plan, stored, count) in enumerate(_wrong_plans(paths)):
                        net = await backend.begin(task, f"wrong-{n}", 0)
                        page = await context.new_page()
                        await page.set_extra_http_headers(net.extra_headers)
                        tracker = RequestTracker(page)
                        await page.goto(task.start_url, wait_until="load")
                        await settle(page, tracker)
                        await Compiler(page, tracker).run(plan)
                        state = await backend.state(task, f"wrong-{n}")
                        scores.append((stored, count, evaluate_checks(task, None, page.url, state)[0], state))
                        await page.close()
                    # posts that bypass the page: refused, nothing stored; allowed ones stored
                    for name, task, steps in [
                        ("edu", edu_task, [("/api/enrollments", {"course": blocked["id"]}),
                                           ("/api/enrollments", {"course": "no-such-course"}),
                                           ("/api/enrollments", {"course": allowed["id"]}),
                                           ("PUT /api/doc/enrollments", [{"course": blocked["id"]}]),
                                           ("PATCH /api/enrollments/r1", {"course": blocked["id"]})]),
                        ("seats", seat_task, [("/api/seat_orders", {"event": seated["id"], "seats": f"{free[0]},{taken}"}),
                                              ("/api/seat_orders", {"event": seated["id"], "seats": ",".join(free)}),
                                              ("/api/seat_orders", {"event": seated["id"], "seats": free[1]}),
                                              ("PATCH /api/seat_orders/r1", {"seats": f"{free[0]},{taken}"})]),
                        ("hotel", hotel_task, [("/api/hotel_bookings", {"rate": rate, "checkin": checkout, "checkout": checkin}),
                                               ("/api/hotel_bookings", {"rate": "h999-r1", "checkin": checkin, "checkout": checkout}),
                                               ("/api/hotel_bookings", {"rate": rate, "checkin": checkin, "checkout": checkout, "guests": room["sleeps"] + 1}),
                                               ("/api/hotel_bookings", {"rate": rate, "checkin": checkin, "checkout": checkout, "guests": room["sleeps"]})])]:
                        net = await backend.begin(task, f"direct-{name}", 0)
                        page = await context.new_page()
                        await page.set_extra_http_headers(net.extra_headers)
                        await page.goto(_origin(task) + "/", wait_until="load")
                        replies = [await post(page, path, body) for path, body in steps]
                        if name == "seats":  # the map shows the seats this episode's order holds as taken
                            await page.goto(_origin(task) + f"/events/{seated['slug']}/seats", wait_until="load")
                            await page.wait_for_function(f"document.querySelector('[data-seat={free[0]}]').disabled")
                        direct[name] = (replies, await backend.state(task, f"direct-{name}"))
                        await page.close()
                    await context.close()
            finally:
                await browser.close()
        return scores, direct

    scores, direct = asyncio.run(run())
    for stored, count, reward, state in scores:
        assert len(state[stored]) == count, state  # the wrong thing was done, and stored
        assert reward == 0.0, state[stored]
    replies, state = direct["edu"]
    assert [r[0] for r in replies] == [409, 409, 200, 409, 409], replies  # nor replaced wholesale, nor patched around
    assert "You cannot enroll yet: complete" in replies[0][1]["error"] and "complete" in replies[4][1]["error"]
    assert [e["course"] for e in state["enrollments"]] == [allowed["id"]]
    replies, state = direct["seats"]
    assert [r[0] for r in replies] == [409, 200, 409, 409], replies  # taken at the start; held by the stored order
    assert taken in replies[0][1]["error"] and free[1] in replies[2][1]["error"]
    assert [o["seats"] for o in state["seat_orders"]] == [",".join(free)]
    replies, state = direct["hotel"]
    assert [r[0] for r in replies] == [409, 409, 409, 200], replies
    assert "sleeps at most" in replies[2][1]["error"]
    assert [b["rate"] for b in state["hotel_bookings"]] == [rate]


@pytest.mark.parametrize("genre", sorted(SITES))
def test_same_seed_same_bytes(genre, tmp_path):
    """This process and another with its own string hash seed (a set's order differs) write the same bundle."""
    import os
    import subprocess
    import sys

    skill, seed, _ = SITES[genre]
    a = write_unvalidated(sample_spec(seed, skill, genre), tmp_path / "a")
    script = ("import sys; from pathlib import Path; from weblica.synth.generate import write_unvalidated; "
              "from weblica.synth.spec import sample_spec\n"
              f"write_unvalidated(sample_spec({seed}, {skill!r}, {genre!r}), Path(sys.argv[1]))")
    hash_seed = "7" if os.environ.get("PYTHONHASHSEED") != "7" else "8"
    subprocess.run([sys.executable, "-c", script, str(tmp_path / "b")], check=True, timeout=120,
                   env={**os.environ, "PYTHONHASHSEED": hash_seed})
    b = tmp_path / "b" / a.name
    files = sorted(p.relative_to(a) for p in a.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(b) for p in b.rglob("*") if p.is_file())
    assert all((a / f).read_bytes() == (b / f).read_bytes() for f in files)
    meta = json.loads((a / "site.json").read_text())
    assert meta["record_rules"], genre  # the server's rules travel in the bundle
