"""Attacks on session 11's server rules (weblica/serve/rules.py `in_stock`, `open_dates`; weblica/serve/app.py)
as a policy posting straight to a synth site's API would make them: ticket quantities of every JSON type,
duplicate keys, PATCHes past the stock, orders racing for the last tickets, form-encoded bodies; hotel
stays across the booking window's ends, month and year ends and leap days, dates in formats the page never
sends; record ids after a deletion. The rules are those the events genre and the shipped travel site
really write, served by the real Flask app (and the real threaded server for the race)."""
from __future__ import annotations

import http.client
import json
import threading
from pathlib import Path
from typing import Any

import pytest

from tests.test_attack_s10_server import TRAVEL, _client, _fewest_rooms, _state
from weblica.env.backend import EPISODE_HEADER
from weblica.serve.rules import refusal
from weblica.serve.server import SiteServer
from weblica.stay_nights import stay_nights
from weblica.synth.generate import build_site
from weblica.synth.genres.events.flow import available
from weblica.synth.spec import sample_spec

HOST = "tickets11.synth.test"


@pytest.fixture(scope="module")
def events_site():
    return build_site(sample_spec(51, "search", "events"))  # seated and unseated events (test_synth_ticket_orders)


def _bundle(root: Path, initial: dict[str, Any], rules: dict[str, Any]) -> Path:
    (root / "public").mkdir(parents=True)
    (root / "public" / "index.html").write_text("<!doctype html><title>Tickets</title>")
    meta = {"spec": {"site_id": "tickets11", "host": HOST}, "initial_state": initial, "record_rules": rules}
    (root / "site.json").write_text(json.dumps(meta))
    return root


@pytest.fixture()
def tickets(events_site, tmp_path):
    return _client(_bundle(tmp_path / "t", dict(events_site.initial_state), events_site.record_rules))


def _unseated(site, at_least: int = 3) -> tuple[str, str, int]:
    """An unseated event, its general admission quantity field and how many are left."""
    event = next(e for e in site.data["events"] if not e.get("seats") and available(e, e["tickets"][0]) >= at_least)
    ticket = event["tickets"][0]
    return event["id"], f"qty_{ticket['slug']}", ticket["left"]


# ---- ticket quantities of every JSON type ---------------------------------------------------------------

@pytest.mark.parametrize("qty", [True, False, [], [2], {}, {"n": 2}, "+2", "0x10", "1e1", "2.0", 2.5, "1 2", "２",
                                 "-1", -1, "2\u200b", "\u0662", "9" * 7, 10 ** 6])
def test_a_quantity_no_form_sends_is_refused_and_nothing_is_stored(tickets, events_site, qty):
    event, field, _ = _unseated(events_site)
    response = tickets("POST", "/api/ticket_orders", json={"event": event, field: qty})
    assert response.status_code == 409, (qty, response.get_json())
    assert tickets.state()["ticket_orders"] == []


@pytest.mark.parametrize("qty,counted", [(2, 2), (2.0, 2), ("2", 2), ("02", 2), (" 2 ", 2)])
def test_a_quantity_a_form_may_send_counts_as_its_number_against_the_stock(tickets, events_site, qty, counted):
    # the page counts a stored order's quantity with Number(), which reads "02" and " 2 " as 2: so does the server
    event, field, left = _unseated(events_site)
    assert tickets("POST", "/api/ticket_orders", json={"event": event, field: qty}).status_code == 200
    assert tickets("POST", "/api/ticket_orders", json={"event": event, field: left - counted + 1}).status_code == 409
    if left - counted > 0:
        assert tickets("POST", "/api/ticket_orders", json={"event": event, field: left - counted}).status_code == 200


def test_null_and_empty_quantities_are_no_tickets(tickets, events_site):
    event, field, _ = _unseated(events_site)
    others = [f for f in events_site.record_rules["ticket_orders"][-1]["counts"] if f != field]
    for body in ({"event": event, field: None}, {"event": event, field: ""}, {"event": event, **{f: None for f in others}}):
        response = tickets("POST", "/api/ticket_orders", json=body)
        assert response.status_code == 409 and "at least one" in response.get_json()["error"]
    assert tickets.state()["ticket_orders"] == []


@pytest.mark.parametrize("event", [True, None, ["e1"], {"id": "e1"}, "", " e1", "E1"])
def test_an_event_that_is_no_event_id_is_refused(tickets, events_site, event):
    _, field, _ = _unseated(events_site)
    assert tickets("POST", "/api/ticket_orders", json={"event": event, field: 1}).status_code == 409
    assert tickets.state()["ticket_orders"] == []


@pytest.mark.parametrize("field", ["qty_student", "qty_", "qty_general_admission ", "qty_VIP"])
def test_a_quantity_of_a_ticket_type_there_is_none_of_is_refused(tickets, events_site, field):
    event, real, _ = _unseated(events_site)
    assert tickets("POST", "/api/ticket_orders", json={"event": event, real: 1, field: 1}).status_code == 409


def test_duplicate_keys_read_as_the_browser_reads_them_the_last_one(tickets, events_site):
    event, field, left = _unseated(events_site)
    over = f'{{"event": "{event}", "{field}": 1, "{field}": {left + 1}}}'
    assert tickets("POST", "/api/ticket_orders", data=over, content_type="application/json").status_code == 409
    under = f'{{"event": "{event}", "{field}": {left + 1}, "{field}": 1}}'
    stored = tickets("POST", "/api/ticket_orders", data=under, content_type="application/json").get_json()["record"]
    assert stored[field] == 1 and json.loads(under)[field] == 1  # what is stored is what is counted


@pytest.mark.parametrize("body,ctype", [("event=e6&qty_general_admission=2", "application/x-www-form-urlencoded"),
                                        ("event=e6&qty_general_admission=2", "text/plain"), ("", "application/json"),
                                        ("[1, 2]", "application/json"), ('"x"', "application/json")])
def test_a_body_that_is_no_json_object_is_a_400_and_stores_nothing(tickets, body, ctype):
    assert tickets("POST", "/api/ticket_orders", data=body, content_type=ctype).status_code == 400
    assert tickets.state()["ticket_orders"] == []


def test_a_json_object_is_read_whatever_its_content_type(tickets, events_site):
    event, field, _ = _unseated(events_site)
    body = json.dumps({"event": event, field: 1})
    assert tickets("POST", "/api/ticket_orders", data=body, content_type="text/plain").status_code == 200


def test_a_patch_is_held_to_the_stock_and_the_ticket_types(tickets, events_site):
    event, field, left = _unseated(events_site)
    rid = tickets("POST", "/api/ticket_orders", json={"event": event, field: 1}).get_json()["record"]["id"]
    for patch in ({field: left + 1}, {field: "٣"}, {field: True}, {"qty_student": 1}, {"event": "e999"}, {field: 0},
                  {field: None}):
        assert tickets("PATCH", f"/api/ticket_orders/{rid}", json=patch).status_code == 409, patch
    assert tickets("PATCH", f"/api/ticket_orders/{rid}", json={field: left}).status_code == 200  # its own 1 freed
    assert [o[field] for o in tickets.state()["ticket_orders"]] == [left]


def test_a_patch_and_orders_racing_for_the_last_tickets_hold_the_stock(events_site, tmp_path):
    event, field, left = _unseated(events_site, at_least=4)
    bundle = _bundle(tmp_path / "race", dict(events_site.initial_state), events_site.record_rules)
    with SiteServer([bundle]) as server:
        first = _call(server, "POST", "/api/ticket_orders", {"event": event, field: 1})
        rid = first["record"]["id"]
        requests = [("PATCH", f"/api/ticket_orders/{rid}", {field: left})] + \
                   [("POST", "/api/ticket_orders", {"event": event, field: 1})] * (left + 2)
        codes = _race(server, requests)
        stored = _state(server, HOST)["ticket_orders"]
    held = sum(int(o[field]) for o in stored)
    assert held <= left and codes.count(200) >= 1, (codes, held)
    assert held == left  # whichever won, the last tickets are sold and no more


# ---- record ids ------------------------------------------------------------------------------------------

def test_an_id_is_never_given_twice_after_a_deletion(tmp_path):
    call = _client(_bundle(tmp_path / "ids", {"notes": []}, {}))
    ids = [call("POST", "/api/notes", json={"text": str(n)}).get_json()["record"]["id"] for n in range(3)]
    assert ids == ["r1", "r2", "r3"]
    assert call("DELETE", "/api/notes/r1").status_code == 200
    new = call("POST", "/api/notes", json={"text": "new"}).get_json()["record"]["id"]
    assert new not in ("r2", "r3")  # len + 1 was r3: PATCH r3 then reached the older record
    assert call("PATCH", f"/api/notes/{new}", json={"text": "edited"}).status_code == 200
    assert [n["text"] for n in call.state()["notes"]] == ["1", "2", "edited"]


def test_a_posted_or_patched_id_that_is_taken_is_refused(tmp_path):
    call = _client(_bundle(tmp_path / "ids", {"notes": [{"id": "r1", "text": "a"}, {"id": "r2", "text": "b"}]}, {}))
    assert call("POST", "/api/notes", json={"id": "r1", "text": "twin"}).status_code == 409
    assert call("PATCH", "/api/notes/r2", json={"id": "r1"}).status_code == 409
    assert call("PATCH", "/api/notes/r2", json={"id": "r2", "text": "same id"}).status_code == 200
    assert [n["id"] for n in call.state()["notes"]] == ["r1", "r2"]


def test_a_collection_replaced_by_no_list_is_refused_not_a_server_error(tmp_path):
    call = _client(_bundle(tmp_path / "ids", {"notes": []}, {}))
    for doc in ({"a": 1}, "text", 3, [1, "x", None]):
        call("PUT", "/api/doc/notes", json=doc)
        added = call("POST", "/api/notes", json={"text": "x"})
        assert added.status_code in (200, 409), (doc, added.status_code)
        assert call("PATCH", "/api/notes/r1", json={"text": "y"}).status_code in (404, 200), doc
        assert call("DELETE", "/api/notes/r9").status_code == 404, doc


def test_an_integer_too_large_for_a_float_is_refused_as_1e400_is(tmp_path):
    call = _client(_bundle(tmp_path / "big", {"notes": []}, {}))
    big = "1" + "0" * 400  # JSON allows it; a browser's JSON.parse reads Infinity
    assert call("POST", "/api/notes", data=f'{{"n": {big}}}', content_type="application/json").status_code == 400
    assert call("POST", "/api/notes", data=f'{{"n": {"9" * 300}}}', content_type="application/json").status_code == 200
    assert call.state()["notes"][0]["n"] == int("9" * 300)


# ---- hotel stays -----------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def hotel():
    meta = json.loads((TRAVEL / "site.json").read_text())
    rules = meta["record_rules"]["hotel_bookings"]
    rule = next(r for r in rules if r["kind"] == "open_dates")
    return rules, rule, _fewest_rooms(rule)[0]


def _stay(rules, rate, checkin, checkout, state=None):
    return refusal(rules, "hotel_bookings", {"rate": rate, "checkin": checkin, "checkout": checkout, "guests": 1},
                   state or {})


@pytest.mark.parametrize("checkin,checkout", [
    ("2026-3-5", "2026-03-07"), ("2026-03-05", "2026-3-7"), ("2026-03-5", "2026-03-07"), ("２０２６-０３-０５", "2026-03-07"),
    ("2026-03-0\u0665", "2026-03-07"), ("2026-03-05 ", "2026-03-07"), ("2026-03-05", "2026-03-07\n"), ("2026/03/05", "2026/03/07"),
    ("05/03/2026", "07/03/2026"), ("2026-03-05Z", "2026-03-07"), ("2026-03-05T14:00", "2026-03-07T11:00"),
    ("+2026-03-05", "2026-03-07"), (20260305, 20260307), (None, "2026-03-07"), (True, "2026-03-07"),
    (["2026-03-05"], "2026-03-07"), ({"d": "2026-03-05"}, "2026-03-07"), ("2026-03-05", "2026-03-05"),
    ("2026-03-07", "2026-03-05"), ("2026-02-29", "2026-03-02"), ("2026-03-31", "2026-03-32")])
def test_a_stay_in_dates_the_page_never_sends_is_refused(hotel, checkin, checkout):
    rules, _, rate = hotel
    assert _stay(rules, rate, checkin, checkout) is not None


@pytest.mark.parametrize("checkin,checkout,ok", [
    ("2026-02-28", "2026-03-01", False), ("2026-02-28", "2026-03-02", False), ("2026-03-01", "2026-03-02", True),
    ("2026-03-31", "2026-04-01", True), ("2026-03-31", "2026-04-02", False), ("2026-03-30", "2026-04-01", True),
    ("2026-12-31", "2027-01-01", False), ("2025-03-01", "2025-03-02", False)])
def test_a_stay_over_the_window_s_ends_is_refused_and_inside_it_allowed(hotel, checkin, checkout, ok):
    rules, _, rate = hotel
    assert (_stay(rules, rate, checkin, checkout) is None) == ok


LEAP = {"kind": "open_dates", "by": "rate", "from": "checkin", "to": "checkout", "first_night": "2027-12-30",
        "last_night": "2028-03-01", "room_of": {"r1": "room", "r2": "room"}, "rooms": {"room": 1}}


@pytest.mark.parametrize("checkin,checkout,ok", [
    ("2027-12-31", "2028-01-01", True), ("2027-12-30", "2028-01-03", True), ("2028-02-28", "2028-03-01", True),
    ("2028-02-29", "2028-03-02", True), ("2028-03-01", "2028-03-03", False), ("2027-02-29", "2027-03-01", False),
    ("2028-02-30", "2028-03-01", False), ("2027-12-29", "2027-12-31", False)])
def test_year_ends_and_leap_days_inside_a_window_that_spans_them(checkin, checkout, ok):
    assert (refusal([LEAP], "b", {"rate": "r1", "checkin": checkin, "checkout": checkout}, {}) is None) == ok


def test_a_stored_stay_holds_the_leap_day_and_the_new_year_s_night():
    assert stay_nights("2028-02-28", "2028-03-01") == ["2028-02-28", "2028-02-29"]
    for stored, asked, night, after in [
            (("2028-02-28", "2028-03-01"), ("2028-02-29", "2028-03-01"), "2028-02-29", ("2028-03-01", "2028-03-02")),
            (("2027-12-30", "2028-01-02"), ("2027-12-31", "2028-01-01"), "2027-12-31", ("2028-01-02", "2028-01-03"))]:
        state = {"b": [{"rate": "r2", "checkin": stored[0], "checkout": stored[1]}]}
        reason = refusal([LEAP], "b", {"rate": "r1", "checkin": asked[0], "checkout": asked[1]}, state)
        assert reason and night in reason, reason
        # from the stored stay's check-out day on, the room is free again
        assert refusal([LEAP], "b", {"rate": "r1", "checkin": after[0], "checkout": after[1]}, state) is None


def test_a_patch_cannot_move_a_stored_stay_onto_dates_the_page_never_sends(hotel):
    rules, rule, rate = hotel
    post = _client(TRAVEL)
    body = {"rate": rate, "guests": 1, "name": "Ann Lee", "email": "ann@example.org",
            "checkin": "2026-03-10", "checkout": "2026-03-12"}
    rid = post("POST", "/api/hotel_bookings", json=body).get_json()["record"]["id"]
    for patch in ({"checkin": "2026-3-10"}, {"checkout": "2026-03-10"}, {"checkout": "2026-03-09"},
                  {"checkout": "2026-04-05"}, {"checkin": None}, {"rate": "no-such-rate"}, {"guests": True}):
        assert post("PATCH", f"/api/hotel_bookings/{rid}", json=patch).status_code == 409, patch
    assert [(b["checkin"], b["checkout"]) for b in post.state()["hotel_bookings"]] == [("2026-03-10", "2026-03-12")]


# ---- the real server, requests at once -------------------------------------------------------------------

def _call(server: SiteServer, method: str, path: str, body: Any) -> Any:
    conn = http.client.HTTPConnection(server.host, server.port, timeout=20)
    try:
        conn.request(method, path, json.dumps(body), {"Host": HOST, "Content-Type": "application/json",
                                                      EPISODE_HEADER: "race"})
        return json.loads(conn.getresponse().read())
    finally:
        conn.close()


def _race(server: SiteServer, requests: list[tuple[str, str, Any]]) -> list[int]:
    """Send every request at once (a thread each, released together); the status codes."""
    gate, codes, lock = threading.Barrier(len(requests)), [], threading.Lock()

    def send(method: str, path: str, body: Any) -> None:
        conn = http.client.HTTPConnection(server.host, server.port, timeout=20)
        try:
            gate.wait(timeout=20)
            conn.request(method, path, json.dumps(body), {"Host": HOST, "Content-Type": "application/json",
                                                          EPISODE_HEADER: "race"})
            status = conn.getresponse().status
        finally:
            conn.close()
        with lock:
            codes.append(status)
    threads = [threading.Thread(target=send, args=r) for r in requests]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    return codes
