"""Ticket-type capacity on events without a seat map (issue #18 point 1): each ticket type has a number
left, drawn per site and shown on the event page ("12 left" / "Sold out"); the server refuses an order
for more than is left (the episode's earlier orders count, a patch too) with a clear message and stores
nothing; a type with none left cannot be chosen on the page; tasks never ask for more than is left.
Played on a real site server, in real Chromium, through the page and posted around it."""
from __future__ import annotations

import asyncio
import json

import pytest

from weblica.env.task import load_tasks, save_tasks
from weblica.serve.rules import refusal
from weblica.synth.generate import build_site, keep_valid, write_unvalidated
from weblica.synth.genres.events.flow import _fields, available
from weblica.synth.genres.kit import fill_plan
from weblica.synth.spec import sample_spec
from tests_helpers import fetch_json, synth_episode

SEED = 60  # its ticket order falls on an unseated event with 3 reserved seats left

STOCK = [{"kind": "in_stock", "by": "event", "counts": {"qty_ga": "General admission", "qty_vip": "VIP"},
          "left": {"e1": {"qty_ga": 5, "qty_vip": 0}, "e2": {"qty_ga": 2}},
          "error": "Only {left} {what} left ({count} asked for)."}]


def test_the_in_stock_rule_counts_earlier_orders_and_refuses_bad_quantities():
    assert refusal(STOCK, "orders", {"event": "e1", "qty_ga": 5}, {}) is None
    assert refusal(STOCK, "orders", {"event": "e1", "qty_ga": 6}, {}) == "Only 5 General admission left (6 asked for)."
    state = {"orders": [{"event": "e1", "qty_ga": 2}, {"event": "e1", "qty_ga": "1"}, {"event": "e2", "qty_ga": 2}]}
    assert refusal(STOCK, "orders", {"event": "e1", "qty_ga": 2}, state) is None  # 3 held of 5
    assert refusal(STOCK, "orders", {"event": "e1", "qty_ga": "3"}, state) == "Only 2 General admission left (3 asked for)."
    assert refusal(STOCK, "orders", {"event": "e1", "qty_vip": 1}, {}) == "Only 0 VIP left (1 asked for)."  # sold out
    assert refusal(STOCK, "orders", {"event": "e2", "qty_ga": 1}, state) == "Only 0 General admission left (1 asked for)."
    assert refusal(STOCK, "orders", {"event": "e2", "qty_vip": 9}, state) is None  # not a limited type there
    assert refusal(STOCK, "orders", {"event": "e9", "qty_ga": 1}, state) == "There is no such choice."
    assert refusal(STOCK, "orders", {"qty_ga": 1}, state) == "There is no such choice."
    assert refusal(STOCK, "orders", {"event": "e1", "qty_ga": 0, "qty_vip": 0}, {}) == "Choose at least one ticket."
    assert refusal(STOCK, "orders", {"event": "e1"}, {}) == "Choose at least one ticket."  # an order of nothing
    for bad in (-1, 1e9, 1.5, "two", "-1", True, [2], "²", float("inf")):
        assert "whole numbers" in refusal(STOCK, "orders", {"event": "e1", "qty_ga": bad}, {}), bad


def test_every_unseated_type_has_a_number_left_and_tasks_fit_it():
    for seed in range(60, 66):
        site = build_site(sample_spec(seed, "search", "events"))
        events = {e["id"]: e for e in site.data["events"]}
        rule = next(r for r in site.record_rules["ticket_orders"] if r["kind"] == "in_stock")
        for event in events.values():
            for t in event["tickets"]:
                seated = bool(event.get("seats")) and t["name"] != "General admission"
                assert ("left" in t) != seated, (seed, event["id"], t)
                if not seated:
                    assert (t["left"] == 0) == t["sold_out"] and rule["left"][event["id"]][f"qty_{t['slug']}"] == t["left"]
                else:  # a seated zone's count on the event page is its free seats on the map
                    assert t["free_seats"] == available(event, t) and (t["free_seats"] == 0) == t["sold_out"]
                    assert t["zone_rows"] == [r["row"] for r in event["seats"] if r["zone"] == t["name"]]
            names = {f["name"]: f for f in _fields(event)}  # a type with none left has no quantity to set
            assert all((f"qty_{t['slug']}" in names) == (available(event, t) > 0) for t in event["tickets"])
            assert all(names[f"qty_{t['slug']}"]["max"] <= available(event, t) for t in event["tickets"] if available(event, t))
        for draft in site.tasks:
            qty = {c.path.split(".")[-1]: c.expected for c in draft.checks if ".qty_" in (c.path or "")}
            if draft.intent == "events-buy-tickets":
                event = events[next(c.expected for c in draft.checks if c.path == "ticket_orders.0.event")]
                for t in event["tickets"]:  # the order, and the "buy everything" run's one more of each, fit
                    assert qty.get(f"qty_{t['slug']}", 0) + 1 <= max(available(event, t), 1), (seed, t, qty)
            if draft.intent == "events-ticket-total":
                count = int(draft.instruction.split()[next(i for i, w in enumerate(draft.instruction.split()) if w.isdigit())])
                assert any(t["name"].lower().split()[0] in draft.instruction.lower() and count <= available(e, t)
                           for e in events.values() if e["name"] in draft.instruction for t in e["tickets"]), draft.instruction


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """An events site with its ticket-order and ticket-price tasks, validated in real Chromium."""
    spec = sample_spec(SEED, "search", "events")
    path = write_unvalidated(spec, tmp_path_factory.mktemp("ticket_capacity"))
    tasks = [t for t in load_tasks(path / "tasks.jsonl")
             if t.metadata.get("intent", "") in ("events-buy-tickets", "events-ticket-total")]
    save_tasks(tasks, path / "tasks.jsonl")
    result = asyncio.run(keep_valid([path], concurrency=1))[0]
    return path, tasks, result, build_site(spec)


def test_the_order_task_is_kept_and_every_negative_rejected(site):
    path, tasks, result, builder = site
    buy = next(t for t in tasks if t.metadata["intent"] == "events-buy-tickets")
    event = next(e for e in builder.data["events"] if e["id"] == next(
        c.expected for c in buy.checks if c.path == "ticket_orders.0.event"))
    assert not event.get("seats") and all("left" in t for t in event["tickets"])
    assert result.tasks_kept == len(tasks) == 2, result.failures
    assert result.negatives_tried == result.negatives_rejected and result.negatives_tried.get("maximal")


def test_orders_past_what_is_left_are_refused_and_the_page_shows_it(site):
    path, tasks, _, builder = site
    buy = next(t for t in tasks if t.metadata["intent"] == "events-buy-tickets")
    origin = "http://" + json.loads((path / "site.json").read_text())["spec"]["host"]
    event = next(e for e in builder.data["events"] if e["id"] == next(
        c.expected for c in buy.checks if c.path == "ticket_orders.0.event"))
    # the type with the fewest left (but some) and a type with plenty
    few = min((t for t in event["tickets"] if t["left"] >= 2), key=lambda t: t["left"])
    many = max(event["tickets"], key=lambda t: t["left"])
    out = next((t for t in event["tickets"] if t["left"] == 0), None)
    qf, qm, n = f"qty_{few['slug']}", f"qty_{many['slug']}", few["left"]
    person = {"event": event["id"], "name": "Ana Berg", "email": "ana@example.test"}

    async def play(page, backend):
        url = f"{origin}/events/{event['slug']}"
        await page.goto(url, wait_until="load")
        seen = {"before": await page.locator("[data-ticket-types]").inner_text()}
        posts = [("POST", "/api/ticket_orders", {**person, qf: n + 1}),        # more than there are
                 ("POST", "/api/ticket_orders", {**person, qf: n - 1}),        # r1: fits
                 ("POST", "/api/ticket_orders", {**person, qf: 2}),            # with r1, past what is left
                 ("PATCH", "/api/ticket_orders/r1", {qf: n + 1}),               # a patch past it
                 ("PATCH", "/api/ticket_orders/r1", {qf: n}),                   # r1 takes them all (not counting itself)
                 ("POST", "/api/ticket_orders", {**person, qf: -1}),
                 ("POST", "/api/ticket_orders", {**person, qm: 1e9}),
                 ("POST", "/api/ticket_orders", {**person, qf: "1"}),          # digits count as the number: none left
                 ("POST", "/api/ticket_orders", {**person, qf: 0, qm: "3"})]   # r2: 0 of the sold-out type, 3 of the other
        if out is not None:
            posts.append(("POST", "/api/ticket_orders", {**person, f"qty_{out['slug']}": 1}))  # not on the page, still refused
        posts.append(("POST", "/api/ticket_orders", {**person, "event": "e999", qm: 1}))  # no such event
        seen["posts"] = [await fetch_json(page, *p) for p in posts]
        seen["state"] = await backend.state(buy, "stock")
        await page.goto(url, wait_until="load")
        await page.wait_for_function(f"document.querySelector('[data-ticket={few['slug']}] [data-ticket-left]').textContent === 'Sold out'")
        seen["after"] = await page.locator("[data-ticket-types]").inner_text()
        seen["disabled"] = await page.locator(f"[data-field={qf}] input").first.is_disabled()
        return seen

    seen = asyncio.run(synth_episode([path], buy, "stock", play))
    assert f"{few['left']} left" in seen["before"] and f"{many['left']} left" in seen["before"], seen["before"]
    codes = [code for code, _ in seen["posts"]]
    assert codes == [409, 200, 409, 409, 200, 409, 409, 409, 200] + ([409] if out else []) + [409], seen["posts"]
    assert seen["posts"][-1][1]["error"] == "There is no such event."
    errors = [body.get("error", "") for _, body in seen["posts"]]
    assert f"only {n} {few['name']} tickets are left for this event ({n + 1} asked for)" in errors[0]
    assert f"only 1 {few['name']} tickets are left" in errors[2] and f"({n + 1} asked for)" in errors[3]
    assert "whole numbers" in errors[5] and "whole numbers" in errors[6] and f"only 0 {few['name']}" in errors[7]
    if out:
        assert f"only 0 {out['name']}" in errors[9]
    orders = seen["state"]["ticket_orders"]
    assert [(o["id"], o.get(qf), o.get(qm)) for o in orders] == [("r1", n, None), ("r2", 0, "3")], orders
    assert f"{many['left'] - 3} left" in seen["after"], seen["after"]  # the page counts the episode's orders
    assert seen["disabled"]  # a type with none left cannot be chosen


def test_the_page_lets_no_order_of_nothing_or_a_bad_quantity_through(site):
    """A real ticketing page: "Buy tickets" with no quantity set shows "Choose at least one ticket." and
    stores nothing; so does a negative or fractional quantity or one past what is left (each named);
    a real order then goes through."""
    from weblica.synth.player import Compiler, RequestTracker, settle

    path, tasks, _, builder = site
    buy = next(t for t in tasks if t.metadata["intent"] == "events-buy-tickets")
    origin = "http://" + json.loads((path / "site.json").read_text())["spec"]["host"]
    event = next(e for e in builder.data["events"] if e["id"] == next(
        c.expected for c in buy.checks if c.path == "ticket_orders.0.event"))
    fields = _fields(event)
    ticket = next(t for t in event["tickets"] if available(event, t) >= 2)
    qty, most = f"qty_{ticket['slug']}", min(10, available(event, ticket))
    person = {"name": "Ana Berg", "email": "ana@example.test"}

    async def play(page, backend):
        tracker = RequestTracker(page)
        await page.goto(f"{origin}/events/{event['slug']}", wait_until="load")
        await settle(page, tracker)
        errors = []
        for values in ({}, {qty: -1}, {qty: 1.5}, {qty: most + 1}, {qty: 0}):
            await Compiler(page, tracker).run(fill_plan(builder, fields, {**person, **values})
                                              + [{"op": "click", "sel": "#buy-tickets"}])
            await page.wait_for_timeout(50)
            errors.append((page.url, await page.locator("[data-form-error]").inner_text()))
            await page.locator("[data-form-error]").evaluate("el => { el.textContent = ''; el.hidden = true; }")
        stored_before = (await backend.state(buy, "page"))["ticket_orders"]
        await Compiler(page, tracker).run(fill_plan(builder, fields, {**person, qty: 2}) + [{"op": "click", "sel": "#buy-tickets"}])
        await page.wait_for_url(f"{origin}/tickets")
        return errors, stored_before, (await backend.state(buy, "page"))["ticket_orders"]

    errors, before, after = asyncio.run(synth_episode([path], buy, "page", play))
    assert all(url.endswith(f"/events/{event['slug']}") for url, _ in errors), errors  # the page stayed
    said = [text for _, text in errors]
    assert said[0] == said[4] == "Choose at least one ticket.", said
    assert all(text == f"{ticket['name']}: choose a whole number from 0 to {most}." for text in said[1:4]), said
    assert before == []
    assert [(o[qty], o["name"]) for o in after] == [(2, "Ana Berg")], after
