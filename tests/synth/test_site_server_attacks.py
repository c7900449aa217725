"""Attacks on the synth site server's rules (weblica/serve/rules.py, weblica/serve/app.py) as a policy posting straight to the site's API would make them,
around the pages: hotel stays (sold-out nights, the last room, month and year ends, zero-night and
overlong stays, stays the calendar never offers), ticket stock and best-available seats (more than
there are, a zone with no seat left, non-finite quantities), and races of many bookings at once
against the real threaded server. Every refused request stores nothing.

And ticket stock and stays at their edges (`in_stock`, `open_dates`): ticket quantities of every JSON type,
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
from weblica.env.backend import EPISODE_HEADER
from weblica.serve.app import ADMIN_HEADER, ServeConfig, create_app
from weblica.serve.rules import refusal
from weblica.serve.server import SiteServer
from weblica.synth.generate import build_site
from weblica.synth.genres.travel.nights import calendar_nights
from weblica.synth.spec import sample_spec
from weblica.stay_nights import stay_nights
from weblica.synth.genres.events.flow import available

REPO = Path(__file__).resolve().parents[2]
TRAVEL = REPO / "sites" / "forms-travel-2a9523da"  # the shipped hotel site: its real rules and data
HOST = "tix.synth.test"
SEATS = {"e1": {"VIP": [["A1", "A2", "A3"]], "Reserved seat": [["B1", "B2", "B3", "B4"], ["C1", "C2", "C3", "C4"]]},
         "e2": {"VIP": [], "Reserved seat": [["D1", "D2"]]}}
TICKET_RULES = {
    "ticket_orders": [
        {"kind": "best_items", "field": "seats", "by": "event", "shared": ["seat_orders"], "taken": {"e1": ["A2"]},
         "counts": {"qty_vip": "VIP", "qty_reserved_seat": "Reserved seat"}, "rows": SEATS},
        # as the events genre writes it: every ticket type counts, seated zones are not limited by `left`
        {"kind": "in_stock", "by": "event", "noun": "event",
         "counts": {"qty_ga": "General admission", "qty_vip": "VIP", "qty_reserved_seat": "Reserved seat"},
         "left": {"e1": {"qty_ga": 5}, "e2": {"qty_ga": 0}, "e3": {"qty_ga": 3}}}],
    "seat_orders": [{"kind": "free_items", "field": "seats", "by": "event", "max": 8, "shared": ["ticket_orders"],
                     "offered": {e: [s for zone in z.values() for row in zone for s in row] for e, z in SEATS.items()},
                     "taken": {"e1": ["A2"]}}],
}
TICKET_INITIAL = {"ticket_orders": [], "seat_orders": [], "notes": []}


def _ticket_bundle(root: Path) -> Path:
    (root / "public").mkdir(parents=True)
    (root / "public" / "index.html").write_text("<!doctype html><title>Tix</title><h1>Tix</h1>")
    meta = {"spec": {"site_id": "tix", "host": HOST}, "initial_state": TICKET_INITIAL, "record_rules": TICKET_RULES}
    (root / "site.json").write_text(json.dumps(meta))
    return root


def _client(bundle: Path) -> Any:
    app = create_app(ServeConfig(sites=[bundle]))
    host = json.loads((bundle / "site.json").read_text())["spec"]["host"]
    c = app.test_client()

    def call(method: str, path: str, **kwargs: Any) -> Any:
        return c.open(path, method=method, base_url=f"http://{host}", headers={EPISODE_HEADER: "ep"}, **kwargs)

    def state() -> dict[str, Any]:
        return c.get("/__weblica/state", base_url=f"http://{host}",
                     headers={ADMIN_HEADER: app.config["WEBLICA_ADMIN_TOKEN"], EPISODE_HEADER: "ep"}).get_json()
    call.state = state  # type: ignore[attr-defined]
    return call


@pytest.fixture()
def tix(tmp_path: Path) -> Any:
    return _client(_ticket_bundle(tmp_path / "tix"))


@pytest.fixture(scope="module")
def hotel_rules() -> tuple[list[dict[str, Any]], dict[str, Any]]:
    meta = json.loads((TRAVEL / "site.json").read_text())
    rules = meta["record_rules"]["hotel_bookings"]
    return rules, next(r for r in rules if r["kind"] == "open_dates")


def _book(rules: list[dict[str, Any]], rate: str, checkin: str, checkout: str, state: dict[str, Any],
          guests: int = 1) -> str | None:
    record = {"rate": rate, "checkin": checkin, "checkout": checkout, "guests": guests}
    return refusal(rules, "hotel_bookings", record, state)


def _fewest_rooms(rule: dict[str, Any]) -> tuple[str, int]:
    """A rate of a room type with the fewest rooms, free all March (so only bookings can fill it)."""
    rate = min((r for r in rule["room_of"] if not rule["closed"][r]), key=lambda r: (rule["rooms"][rule["room_of"][r]], r))
    return rate, rule["rooms"][rule["room_of"][rate]]


# ---- hotel stays -------------------------------------------------------------------------------------

def test_a_sold_out_night_is_refused_however_the_dates_around_it_are_edited(hotel_rules):
    rules, rule = hotel_rules
    rate = next(r for r, nights in sorted(rule["closed"].items()) if nights)
    night = rule["closed"][rate][0]
    day = int(night[-2:])
    for checkin, checkout in [(night, f"2026-03-{day + 1:02d}" if day < 31 else "2026-04-01"),
                              ("2026-02-27", "2026-04-03"), (night, "2026-04-30")]:
        reason = _book(rules, rate, checkin, checkout, {})
        assert reason and night in reason, (checkin, checkout, reason)


@pytest.mark.parametrize("checkin,checkout", [
    ("2026-03-10", "2026-03-10"), ("2026-03-11", "2026-03-10"), ("2026-02-29", "2026-03-02"),
    ("2026-03-32", "2026-04-01"), ("2026-3-10", "2026-03-12"), ("20260310", "20260312"), ("2026-03-10", ""),
    ("2026-W11-2", "2026-03-12"), (" 2026-03-10", "2026-03-12"), ("2026-03-10T12:00", "2026-03-12")])
def test_no_night_or_no_date_is_no_stay(hotel_rules, checkin, checkout):
    rules, _ = hotel_rules
    rate = sorted(hotel_rules[1]["room_of"])[0]
    assert _book(rules, rate, checkin, checkout, {}) is not None


def test_the_last_room_is_counted_across_rates_and_across_the_month_end(hotel_rules):
    rules, rule = hotel_rules
    rate, rooms = _fewest_rooms(rule)
    sibling = [r for r in rule["room_of"] if rule["room_of"][r] == rule["room_of"][rate] and r != rate]
    state: dict[str, Any] = {"hotel_bookings": []}
    for n in range(rooms):  # each booking a stay over the night of March 31 (the calendar's last)
        booked = sibling[n % len(sibling)] if sibling else rate
        assert _book(rules, booked, "2026-03-30", "2026-04-01", state) is None
        state["hotel_bookings"].append({"rate": booked, "checkin": "2026-03-30", "checkout": "2026-04-01", "guests": 1})
    reason = _book(rules, rate, "2026-03-31", "2026-04-01", state)
    assert reason and "2026-03-31" in reason
    assert _book(rules, rate, "2026-03-28", "2026-03-30", state) is None  # the nights before are free
    # a change of guests on a stored booking does not count the booking against itself
    others = {"hotel_bookings": state["hotel_bookings"][1:]}
    assert _book(rules, state["hotel_bookings"][0]["rate"], "2026-03-30", "2026-04-01", others, guests=2) is None


def test_an_overlong_stored_stay_still_holds_its_later_nights(hotel_rules):
    rules, rule = hotel_rules
    # the stored stays predate the calendar window (rules older than it, or a bundle without one): the
    # window is lifted here, so what is tested is that a long stay holds its later nights, not the window
    rules = [{k: v for k, v in r.items() if k not in ("first_night", "last_night")} for r in rules]
    rate, rooms = _fewest_rooms(rule)
    state = {"hotel_bookings": [{"rate": rate, "checkin": "2026-03-01", "checkout": "2027-06-01", "guests": 1}
                                for _ in range(rooms)]}
    assert "2027-05-01" in (_book(rules, rate, "2027-05-01", "2027-05-02", state) or "")  # booked out, named


def test_a_stay_the_calendar_never_offers_is_refused():
    # the genre's rule carries the calendar's nights (the base month); a freshly built site, not the
    # shipped one, so the test reads what the generator writes now
    site = build_site(sample_spec(21, "search", "travel"))
    rules = site.record_rules["hotel_bookings"]
    rule = next(r for r in rules if r["kind"] == "open_dates")
    assert (rule["first_night"], rule["last_night"]) == calendar_nights() == ("2026-03-01", "2026-03-31")
    rate, _ = _fewest_rooms(rule)
    for checkin, checkout in [("2031-03-10", "2031-03-12"), ("2026-03-01", "2027-04-05"), ("2026-02-28", "2026-03-02"),
                              ("2026-03-30", "2026-04-02"), ("2025-03-10", "2025-03-12")]:
        assert _book(rules, rate, checkin, checkout, {}) is not None, (checkin, checkout)
    for checkin, checkout in [("2026-03-01", "2026-03-02"), ("2026-03-30", "2026-04-01"), ("2026-03-01", "2026-04-01")]:
        assert _book(rules, rate, checkin, checkout, {}) is None, (checkin, checkout)  # the first and last nights


def test_a_stay_longer_than_the_pages_count_is_refused_and_nothing_is_stored(tmp_path):
    # the longest stay (the pages' 366 nights) is refused on the shipped site, window or not
    meta = json.loads((TRAVEL / "site.json").read_text())
    rule = next(r for r in meta["record_rules"]["hotel_bookings"] if r["kind"] == "open_dates")
    rate, _ = _fewest_rooms(rule)
    post = _client(TRAVEL)
    body = {"rate": rate, "guests": 1, "name": "Ann Lee", "email": "ann@example.org"}
    for checkin, checkout in [("2026-03-01", "2027-04-05"), ("0001-01-01", "9999-12-31")]:
        response = post("POST", "/api/hotel_bookings", json={**body, "checkin": checkin, "checkout": checkout})
        assert response.status_code == 409 and "366" in response.get_json()["error"], response.get_json()
    assert post.state()["hotel_bookings"] == []
    assert refusal([{**rule, "max_nights": 3}], "hotel_bookings",
                   {"rate": rate, "checkin": "2026-03-01", "checkout": "2026-03-05"}, {}) == "A stay can be at most 3 nights."


def test_many_bookings_of_the_last_rooms_at_once_store_no_more_than_there_are(tmp_path):
    meta = json.loads((TRAVEL / "site.json").read_text())
    rule = next(r for r in meta["record_rules"]["hotel_bookings"] if r["kind"] == "open_dates")
    rate, rooms = _fewest_rooms(rule)
    body = {"rate": rate, "checkin": "2026-03-10", "checkout": "2026-03-13", "guests": 1,
            "name": "Ann Lee", "email": "ann@example.org"}
    with SiteServer([TRAVEL]) as server:
        codes = _race(server, meta["spec"]["host"], "/api/hotel_bookings", [body] * 12)
        stored = _state(server, meta["spec"]["host"])["hotel_bookings"]
    assert sorted(codes) == [200] * rooms + [409] * (12 - rooms)
    assert len(stored) == rooms and len({b["id"] for b in stored}) == rooms


# ---- tickets -----------------------------------------------------------------------------------------

def test_best_available_refuses_more_seats_than_the_zone_has_and_a_zone_with_none(tix):
    for order in [{"event": "e1", "qty_vip": 3},             # 3 VIP seats, one taken at the start
                  {"event": "e1", "qty_reserved_seat": 9},   # 8 reserved seats
                  {"event": "e2", "qty_vip": 1},             # a zone with no seat at all
                  {"event": "e1", "qty_vip": "2", "qty_reserved_seat": -1},
                  {"event": "e1", "qty_vip": 10 ** 400}]:    # an integer JSON allows (too large for a float: 400)
        assert tix("POST", "/api/ticket_orders", json=order).status_code == (400 if order.get("qty_vip") == 10 ** 400 else 409), order
    assert tix.state()["ticket_orders"] == []
    got = tix("POST", "/api/ticket_orders", json={"event": "e1", "qty_reserved_seat": 8, "seats": "A1"}).get_json()
    assert sorted(got["record"]["seats"].split(",")) == sorted(SEATS["e1"]["Reserved seat"][0] + SEATS["e1"]["Reserved seat"][1])
    # the map sells from the same pool: every reserved seat is gone, and a picked one cannot be had twice
    assert tix("POST", "/api/seat_orders", json={"event": "e1", "seats": "B2"}).status_code == 409
    assert tix("POST", "/api/seat_orders", json={"event": "e1", "seats": "A1,A3"}).status_code == 200
    assert tix("POST", "/api/ticket_orders", json={"event": "e1", "qty_vip": 1}).status_code == 409


@pytest.mark.parametrize("raw", ['{"event": "e1", "qty_ga": 1e400}', '{"event": "e1", "qty_vip": -1e400}',
                                 '{"event": "e3", "qty_ga": 1E309}'])
def test_a_quantity_too_large_for_a_float_is_refused_not_a_server_error(tix, raw):
    response = tix("POST", "/api/ticket_orders", data=raw, content_type="application/json")
    assert response.status_code in (400, 409), response.status_code
    assert tix.state()["ticket_orders"] == []


def test_a_number_too_large_for_a_float_is_never_stored_where_the_page_cannot_read_it(tix):
    # an unruled collection stores any object; "Infinity" in the state would be no JSON for the page
    response = tix("POST", "/api/notes", data='{"text": "hi", "n": 1e400}', content_type="application/json")
    assert response.status_code == 400
    tix("PUT", "/api/doc/notes", data='[{"n": -1e400}]', content_type="application/json")
    raw = tix("GET", "/api/state").get_data(as_text=True)
    json.loads(raw, parse_constant=lambda name: pytest.fail(f"the state holds {name}"))


def test_ticket_stock_holds_against_many_orders_at_once_and_sold_out_stays_sold_out(tmp_path):
    bundle = _ticket_bundle(tmp_path / "tix")
    orders = [{"event": "e1", "qty_ga": 1}] * 8 + [{"event": "e2", "qty_ga": 1}] * 2 + [{"event": "e1", "qty_reserved_seat": 3}] * 4
    with SiteServer([bundle]) as server:
        codes = _race(server, HOST, "/api/ticket_orders", orders)
        stored = _state(server, HOST)["ticket_orders"]
    assert codes.count(200) == 5 + 2  # 5 general admission of e1; 8 reserved seats hold two orders of 3
    assert sum(o.get("qty_ga", 0) for o in stored) == 5 and not any(o["event"] == "e2" for o in stored)
    seats = [s for o in stored for s in o.get("seats", "").split(",") if s]
    assert len(seats) == 6 == len(set(seats))


# ---- the real server, many requests at once --------------------------------------------------------------

def _race(server: SiteServer, host: str, path: str, bodies: list[dict[str, Any]]) -> list[int]:
    """POST every body at once (a thread each, released together); the status codes."""
    gate, codes = threading.Barrier(len(bodies)), []
    lock = threading.Lock()

    def post(body: dict[str, Any]) -> None:
        conn = http.client.HTTPConnection(server.host, server.port, timeout=20)
        try:
            gate.wait(timeout=20)
            conn.request("POST", path, json.dumps(body), {"Host": host, "Content-Type": "application/json",
                                                          EPISODE_HEADER: "race"})
            status = conn.getresponse().status
        finally:
            conn.close()
        with lock:
            codes.append(status)
    threads = [threading.Thread(target=post, args=(b,)) for b in bodies]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    return codes


def _state(server: SiteServer, host: str) -> dict[str, Any]:
    conn = http.client.HTTPConnection(server.host, server.port, timeout=20)
    try:
        conn.request("GET", "/__weblica/state", headers={"Host": host, ADMIN_HEADER: server.admin_token,
                                                         EPISODE_HEADER: "race"})
        return json.loads(conn.getresponse().read())
    finally:
        conn.close()


def test_the_stock_rules_refuse_an_infinite_quantity_themselves():
    for value in (float("inf"), float("-inf"), float("nan")):
        assert refusal(TICKET_RULES["ticket_orders"], "ticket_orders", {"event": "e1", "qty_ga": value}, {})


def test_a_patch_is_held_to_the_stock_less_its_own_old_quantity(tix):
    first = tix("POST", "/api/ticket_orders", json={"event": "e1", "qty_ga": 3}).get_json()["record"]
    assert tix("POST", "/api/ticket_orders", json={"event": "e1", "qty_ga": 1}).status_code == 200  # 4 of 5
    rid = first["id"]
    assert tix("PATCH", f"/api/ticket_orders/{rid}", json={"qty_ga": 4}).status_code == 200   # 4 + 1 = 5
    assert tix("PATCH", f"/api/ticket_orders/{rid}", json={"qty_ga": 5}).status_code == 409   # 6 of 5
    assert tix("PATCH", f"/api/ticket_orders/{rid}", json={"event": "e2"}).status_code == 409  # sold out there
    assert tix("PATCH", f"/api/ticket_orders/{rid}", json={"qty_ga": 1e400}).status_code == 400
    stored = tix.state()["ticket_orders"]
    assert [(o["event"], o["qty_ga"]) for o in stored] == [("e1", 4), ("e1", 1)]


@pytest.mark.parametrize("qty", ["²", "３", "٣"])
def test_a_quantity_in_other_digits_is_refused(tix, qty):
    response = tix("POST", "/api/ticket_orders", json={"event": "e1", "qty_ga": qty})
    assert response.status_code == 409 and tix.state()["ticket_orders"] == []


# ---- stock and stays at their edges ------------------------------------------------------------
HOST_2 = "tickets11.synth.test"


@pytest.fixture(scope="module")
def events_site():
    return build_site(sample_spec(51, "search", "events"))  # seated and unseated events (test_synth_ticket_orders)


def _bundle(root: Path, initial: dict[str, Any], rules: dict[str, Any]) -> Path:
    (root / "public").mkdir(parents=True)
    (root / "public" / "index.html").write_text("<!doctype html><title>Tickets</title>")
    meta = {"spec": {"site_id": "tickets11", "host": HOST_2}, "initial_state": initial, "record_rules": rules}
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
        codes = _race_2(server, requests)
        stored = _state(server, HOST_2)["ticket_orders"]
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
        conn.request(method, path, json.dumps(body), {"Host": HOST_2, "Content-Type": "application/json",
                                                      EPISODE_HEADER: "race"})
        return json.loads(conn.getresponse().read())
    finally:
        conn.close()


def _race_2(server: SiteServer, requests: list[tuple[str, str, Any]]) -> list[int]:
    """Send every request at once (a thread each, released together); the status codes."""
    gate, codes, lock = threading.Barrier(len(requests)), [], threading.Lock()

    def send(method: str, path: str, body: Any) -> None:
        conn = http.client.HTTPConnection(server.host, server.port, timeout=20)
        try:
            gate.wait(timeout=20)
            conn.request(method, path, json.dumps(body), {"Host": HOST_2, "Content-Type": "application/json",
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
