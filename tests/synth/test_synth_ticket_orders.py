"""Ticket orders a hostile agent posts around the event page (issue #18): an order for no ticket at
all, negative, fractional, huge or non-ASCII-digit quantities, and a quantity of a ticket type the
event does not have are refused (409 or 400) and nothing is stored, on unseated and seated events
alike, by the rules the events genre really writes, served by the real site server (Flask)."""
from __future__ import annotations

import json

import pytest

from weblica.serve.app import ServeConfig, create_app
from weblica.serve.rules import checked_rules, refusal
from weblica.synth.generate import build_site
from weblica.synth.genres.events.flow import available
from weblica.synth.spec import sample_spec

SEED = 51  # a site with seated and unseated events
HOST = "tickets.synth.test"


@pytest.fixture(scope="module")
def built():
    return build_site(sample_spec(SEED, "search", "events"))


def _events(built):
    events = built.data["events"]
    unseated = next(e for e in events if not e.get("seats") and all(available(e, t) >= 3 for t in e["tickets"]))
    seated = next(e for e in events if e.get("seats") and all(available(e, t) >= 3 for t in e["tickets"]))
    return unseated, seated


@pytest.fixture()
def client(built, tmp_path):
    root = tmp_path / "tickets"
    (root / "public").mkdir(parents=True)
    (root / "public" / "index.html").write_text("<!doctype html><title>Tickets</title>")
    meta = {"spec": {"site_id": "tickets", "host": HOST}, "initial_state": dict(built.initial_state),
            "record_rules": built.record_rules}
    (root / "site.json").write_text(json.dumps(meta))
    app = create_app(ServeConfig(sites=[root]))
    admin = {"X-Weblica-Admin": app.config["WEBLICA_ADMIN_TOKEN"], "X-Weblica-Episode": "ep"}
    c = app.test_client()

    def call(method: str, path: str, body: object = None, raw: str | None = None):
        data = raw if raw is not None else json.dumps(body)
        reply = c.open(path, method=method, base_url=f"http://{HOST}", data=data,
                       headers={"X-Weblica-Episode": "ep", "Content-Type": "application/json"})
        return reply.status_code, reply.get_json(silent=True) or {}
    call.state = lambda: c.get("/__weblica/state", base_url=f"http://{HOST}", headers=admin).get_json()  # type: ignore[attr-defined]
    return call


def _qty(event, index: int) -> str:
    return f"qty_{event['tickets'][index]['slug']}"


def test_the_generated_rules_pass_the_servers_reading_and_name_the_ticket_types(built):
    rules = checked_rules(built.record_rules, "site.json")["ticket_orders"]
    stock = next(r for r in rules if r["kind"] == "in_stock")
    assert stock["prefix"] == "qty_" and set(stock["counts"]) == {_qty(built.data["events"][0], i) for i in range(3)}


@pytest.mark.parametrize("which", ["unseated", "seated"])
def test_bad_orders_are_refused_and_nothing_is_stored(client, built, which):
    event = dict(zip(("unseated", "seated"), _events(built)))[which]
    ga, vip = _qty(event, 0), _qty(event, 2)
    person = {"event": event["id"], "name": "Ana Berg", "email": "ana@example.test"}
    empty = [{}, {ga: 0}, {ga: 0, _qty(event, 1): 0, vip: 0}, {ga: "0", vip: ""}, {ga: None, vip: None}, {ga: "00"}]
    bad = [{ga: -1}, {ga: "-1"}, {vip: -2, ga: 3}, {ga: 1.5}, {ga: "1.5"}, {ga: "two"}, {ga: "1e3"}, {ga: True},
           {ga: [2]}, {ga: {"n": 2}}, {ga: "²"}, {ga: "٣"}, {ga: 10 ** 6}, {ga: 10 ** 30}, {ga: 1e9},
           {vip: 999_999}, {ga: 1, "qty_balcony": 2}, {"qty_": 1, ga: 1}, {ga: 1, "qty_VIP": 1}]
    for body in empty:
        code, reply = client("POST", "/api/ticket_orders", {**person, **body})
        assert (code, reply.get("error")) == (409, "Choose at least one ticket."), (body, code, reply)
    for body in bad:
        code, reply = client("POST", "/api/ticket_orders", {**person, **body})
        assert code == 409 and reply.get("error"), (body, code, reply)
    unknown = client("POST", "/api/ticket_orders", {**person, ga: 1, "qty_balcony": 2})[1]["error"]
    assert unknown == "There is no such ticket type."
    raw = json.dumps(person)[:-1] + f', "{ga}": 1e400}}'  # infinity in JSON a parser accepts
    assert client("POST", "/api/ticket_orders", raw=raw)[0] in (400, 409)
    assert client.state()["ticket_orders"] == []  # nothing of all that was stored

    code, reply = client("POST", "/api/ticket_orders", {**person, ga: 1, vip: "1"})  # a real order goes through
    assert code == 200, reply
    for patch in ({ga: 0, vip: 0}, {ga: -1}, {ga: 0.5}, {"qty_balcony": 1}, {vip: "٣"}):
        assert client("PATCH", "/api/ticket_orders/r1", patch)[0] == 409, patch
    stored = client.state()["ticket_orders"]
    assert [(o["id"], o[ga], o[vip]) for o in stored] == [("r1", 1, "1")], stored


def test_the_rule_alone_refuses_an_empty_order_that_best_available_let_through():
    rules = [{"kind": "best_items", "field": "seats", "by": "event", "counts": {"qty_vip": "VIP"},
              "rows": {"e1": {"VIP": [["A1", "A2"]]}}},
             {"kind": "in_stock", "by": "event", "counts": {"qty_vip": "VIP", "qty_ga": "General admission"},
              "left": {"e1": {"qty_ga": 5}}, "prefix": "qty_"}]
    assert refusal(rules, "orders", {"event": "e1", "qty_vip": 0, "qty_ga": 0}, {}) == "Choose at least one ticket."
    assert refusal(rules, "orders", {"event": "e1", "qty_vip": 1}, {}) is None
    assert refusal(rules, "orders", {"event": "e1", "qty_ga": float("inf")}, {}) == \
        "Ticket quantities must be whole numbers of 0 or more."
    assert refusal(rules, "orders", {"event": "e1", "qty_ga": float("nan")}, {}) == \
        "Ticket quantities must be whole numbers of 0 or more."
    assert refusal(rules, "orders", {"event": "e1", "qty_ga": 1, "qty_x": 1}, {}) == "There is no such ticket type."
