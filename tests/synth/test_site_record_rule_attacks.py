"""Attacks on the synth server's record rules (weblica/serve/rules.py) as a hostile agent would post them,
around the page: other methods, bodies that are not JSON or are odd JSON, duplicate keys, case and
space variants of ids, replays of an accepted request, and bundles whose rules are malformed. Every
refused request stores nothing; a malformed rule file stops the server with one line naming the file."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from weblica.serve.app import ServeConfig, create_app
from weblica.serve.rules import RuleError, checked_rules, refusal

HOST = "uni.synth.test"
RULES = {
    "enrollments": [{"kind": "requires", "field": "course", "noun": "course", "have": ["MATH 101"],
                     "needs": {"c1": [], "c2": ["MATH 101"], "c3": ["PHYS 101"]},
                     "error": "You cannot enroll yet: complete {missing} first."}],
    "seat_orders": [{"kind": "free_items", "field": "seats", "by": "event", "max": 4,
                     "offered": {"e1": ["A1", "A2", "A3", "A4"]}, "taken": {"e1": ["A3"]}}],
    "hotel_bookings": [{"kind": "requires", "field": "rate", "needs": {"r1": []}, "have": []},
                       {"kind": "later", "field": "checkout", "than": "checkin"},
                       {"kind": "at_most", "field": "guests", "by": "rate", "limits": {"r1": 2}}],
}
INITIAL = {"enrollments": [], "seat_orders": [], "hotel_bookings": []}


def _bundle(root: Path, rules: object = RULES, site_json: str | None = None) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "public").mkdir(exist_ok=True)
    (root / "public" / "index.html").write_text("<!doctype html><title>Uni</title><h1>Uni</h1>")
    meta = {"spec": {"site_id": "uni", "host": HOST}, "initial_state": INITIAL, "record_rules": rules}
    (root / "site.json").write_text(site_json if site_json is not None else json.dumps(meta))
    return root


@pytest.fixture()
def client(tmp_path):
    app = create_app(ServeConfig(sites=[_bundle(tmp_path / "uni")]))
    admin = {"X-Weblica-Admin": app.config["WEBLICA_ADMIN_TOKEN"], "X-Weblica-Episode": "ep"}
    c = app.test_client()

    def call(method: str, path: str, **kwargs):
        headers = {"X-Weblica-Episode": "ep", **kwargs.pop("headers", {})}
        return c.open(path, method=method, base_url=f"http://{HOST}", headers=headers, **kwargs)

    def state() -> dict:
        return c.get("/__weblica/state", base_url=f"http://{HOST}", headers=admin).get_json()
    call.state = state  # type: ignore[attr-defined]
    return call


def _stored(client) -> dict:
    s = client.state()
    return {k: s[k] for k in INITIAL}


def test_a_blocked_course_is_refused_in_every_body_form_and_nothing_is_stored(client):
    raw = json.dumps({"course": "c3"})
    attempts = [
        dict(json={"course": "c3"}),
        dict(data=raw, content_type="text/plain"),                       # force-parsed: still ruled
        dict(data=raw, content_type="application/x-www-form-urlencoded"),
        dict(data=raw.encode("utf-16"), content_type="application/json"),  # another UTF the parser detects
        dict(data='{"course": "c1", "course": "c3"}', content_type="application/json"),  # the last key wins
    ]
    for kwargs in attempts:
        response = client("POST", "/api/enrollments", **kwargs)
        assert response.status_code == 409, (kwargs, response.get_json())
        assert "PHYS 101" in response.get_json()["error"]
    # bodies that are no JSON object at all: a 400, not a stored record
    for data in ["course=c3", "", "[\"c3\"]", "\"c3\"", "null", "{\"course\": \"c3\""]:
        response = client("POST", "/api/enrollments", data=data, content_type="application/x-www-form-urlencoded")
        assert response.status_code == 400, data
    assert _stored(client) == INITIAL


def test_the_stored_record_is_the_one_the_rules_read(client):
    # duplicate keys: the rules and the store see the same (last) value, so a blocked id cannot hide behind
    response = client("POST", "/api/enrollments", data='{"course": "c3", "course": "c1"}',
                      content_type="application/json")
    assert response.status_code == 200
    assert [r["course"] for r in _stored(client)["enrollments"]] == ["c1"]


@pytest.mark.parametrize("variant", ["C3", " c3", "c3 ", "c3\u200b", "ｃ3", "c3\n", "c\u00a03"])
def test_case_and_space_variants_of_an_id_are_no_allowed_id(client, variant):
    """The checks compare case- and space-folded; the rules compare exactly, so a variant of a blocked id
    (which the checks would read as that id) is refused as no such course, never stored."""
    response = client("POST", "/api/enrollments", json={"course": variant})
    assert response.status_code == 409
    assert _stored(client) == INITIAL


@pytest.mark.parametrize("seats", ["a1", "A1 ,a2", "A3", "A1;A3", "A1 and A3", ["A1", "a1"], ["A1", ["A2"]],
                                   "A1,A1", "A1,A2,A4,A2", ""])
def test_seat_variants_taken_seats_and_smuggled_lists_are_refused(client, seats):
    response = client("POST", "/api/seat_orders", json={"event": "e1", "seats": seats})
    assert response.status_code == 409, response.get_json()
    assert _stored(client) == INITIAL


def test_replaying_an_accepted_seat_order_is_refused_and_a_patch_cannot_take_a_held_seat(client):
    order = {"event": "e1", "seats": "A1,A2", "name": "Ana"}
    first = client("POST", "/api/seat_orders", json=order)
    assert first.status_code == 200
    for _ in range(3):  # the same request again, and with the event's id spelled another way
        assert client("POST", "/api/seat_orders", json=order).status_code == 409
    assert client("POST", "/api/seat_orders", json={**order, "event": "E1"}).status_code == 409
    second = client("POST", "/api/seat_orders", json={"event": "e1", "seats": ["A4"]})
    assert second.status_code == 200
    rid = second.get_json()["record"]["id"]
    # PATCH the second order onto the first's seats, or onto a seat the site says is taken: refused
    for patch in [{"seats": "A2"}, {"seats": "A3"}, {"seats": "A4,A4"}, {"event": "e2"}]:
        assert client("PATCH", f"/api/seat_orders/{rid}", json=patch).status_code == 409, patch
    # PUT the collection wholesale: refused
    assert client("PUT", "/api/doc/seat_orders", json=[{"event": "e1", "seats": "A3"}]).status_code == 409
    stored = _stored(client)["seat_orders"]
    assert [o["seats"] for o in stored] == ["A1,A2", ["A4"]]
    # a DELETE frees the seats, and only then may they be ordered again
    assert client("DELETE", f"/api/seat_orders/{stored[0]['id']}").status_code == 200
    assert client("POST", "/api/seat_orders", json={"event": "e1", "seats": "A2"}).status_code == 200


@pytest.mark.parametrize("guests", ["NaN", "Infinity", "-Infinity", "1e400", "2.5", "true", "\"2\"", "0", "3",
                                    "[2]"])
def test_odd_guest_counts_are_refused_not_a_server_error(client, guests):
    body = '{"rate": "r1", "checkin": "2026-03-10", "checkout": "2026-03-12", "guests": %s}' % guests
    response = client("POST", "/api/hotel_bookings", data=body, content_type="application/json")
    assert response.status_code in (400, 409), (guests, response.status_code)
    assert _stored(client) == INITIAL


@pytest.mark.parametrize("checkin, checkout", [("2026-03-10", "zzzzzzzzzz"), ("2026-03-10", "2026-13-01"),
                                               ("2026-03-10", "2026-02-30"), ("2026-03-10", "2026-3-12 "),
                                               ("2026-03-10", "2026-03-10"), ("9999-99-99", "9999-99-9:"),
                                               ("2026-03-10", 20260312), ("2026-03-10", None)])
def test_a_stay_must_be_two_real_dates_in_order(client, checkin, checkout):
    body = {"rate": "r1", "checkin": checkin, "checkout": checkout, "guests": 2}
    assert client("POST", "/api/hotel_bookings", json=body).status_code == 409, (checkin, checkout)
    assert _stored(client) == INITIAL


def test_a_good_booking_is_stored_once_per_post(client):
    body = {"rate": "r1", "checkin": "2026-03-10", "checkout": "2026-03-12", "guests": 2}
    assert client("POST", "/api/hotel_bookings", json=body).status_code == 200
    assert client("POST", "/api/hotel_bookings", json={**body, "guests": 2.0}).status_code == 200
    assert len(_stored(client)["hotel_bookings"]) == 2
    # a patch that makes the stored booking break a rule is refused and leaves it as it was
    rid = _stored(client)["hotel_bookings"][0]["id"]
    for patch in [{"guests": 3}, {"checkout": "2026-03-09"}, {"rate": "r2"}, {"guests": float("nan")}]:
        response = client("PATCH", f"/api/hotel_bookings/{rid}", data=json.dumps(patch),
                          content_type="application/json")
        assert response.status_code in (400, 409), patch
    assert _stored(client)["hotel_bookings"][0] == {**body, "id": rid}


def test_unruled_collections_refuse_non_finite_numbers_too(client):
    """A NaN stored in the state would make the state unreadable to the page's JSON.parse."""
    response = client("POST", "/api/notes", data='{"n": NaN}', content_type="application/json")
    assert response.status_code == 400
    assert "notes" not in client.state()


BAD_RULES = [
    ("[]", "record_rules"),
    ({"enrollments": {"kind": "requires"}}, "enrollments"),
    ({"enrollments": ["requires"]}, "enrollments"),
    ({"enrollments": [{"kind": "mystery", "field": "x"}]}, "mystery"),
    ({"enrollments": [{"kind": "requires", "needs": {}}]}, "field"),
    ({"enrollments": [{"kind": "requires", "field": "course", "needs": {"c1": "MATH 101"}}]}, "needs"),
    ({"seat_orders": [{"kind": "free_items", "field": "seats", "offered": {}}]}, "by"),
    ({"seat_orders": [{"kind": "free_items", "field": "seats", "by": "event", "offered": [], "max": 2}]}, "offered"),
    ({"seat_orders": [{"kind": "free_items", "field": "seats", "by": "e", "offered": {}, "max": "4"}]}, "max"),
    ({"b": [{"kind": "later", "field": "checkout"}]}, "than"),
    ({"b": [{"kind": "at_most", "field": "guests", "by": "rate", "limits": {"r1": "2"}}]}, "limits"),
    ({"b": [{"kind": "at_most", "field": "guests", "by": "rate", "limits": {"r1": 2}, "error": 7}]}, "error"),
]


@pytest.mark.parametrize("rules, named", BAD_RULES)
def test_a_malformed_rule_file_stops_the_server_with_one_line_naming_it(tmp_path, rules, named):
    root = _bundle(tmp_path / "uni", rules=json.loads(rules) if isinstance(rules, str) else rules)
    before = (root / "site.json").read_bytes()
    with pytest.raises(RuleError) as raised:
        create_app(ServeConfig(sites=[root]))
    message = str(raised.value)
    assert str(root / "site.json") in message and named in message and "\n" not in message
    assert "regenerate" in message or "fix" in message
    assert (root / "site.json").read_bytes() == before  # nothing rewritten, nothing lost


@pytest.mark.parametrize("text", ["{", "", "[1]", "{\"spec\": {}}", "{\"spec\": {\"site_id\": \"uni\"}}"])
def test_a_site_json_that_is_no_bundle_is_one_line_naming_it(tmp_path, text):
    root = _bundle(tmp_path / "uni", site_json=text)
    with pytest.raises(RuleError) as raised:
        create_app(ServeConfig(sites=[root]))
    assert str(root / "site.json") in str(raised.value) and "\n" not in str(raised.value)


def test_the_cli_reports_a_malformed_rule_file_as_one_json_error(tmp_path):
    import subprocess
    import sys

    root = _bundle(tmp_path / "uni", rules={"enrollments": [{"kind": "requires"}]})
    run = subprocess.run([sys.executable, "-m", "weblica.cli", "serve", str(root), "--port", "0", "--json"],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 1
    error = json.loads(run.stdout)["error"]
    assert str(root / "site.json") in error and "Traceback" not in run.stderr


def test_checked_rules_keep_a_good_file_as_it_is():
    assert checked_rules(RULES, "site.json") == RULES
    assert checked_rules({}, "site.json") == {} and checked_rules(None, "site.json") == {}
    # and the unit rules still refuse what they did
    assert refusal(RULES["hotel_bookings"], "b", {"rate": "r1", "checkin": "2026-03-10",
                                                  "checkout": "2026-03-11", "guests": 1}, {}) is None


def test_each_instance_is_ruled_by_its_own_rules(tmp_path):
    """Instance k of a site (its own data: other seats taken) applies its own record_rules, keeps its own
    state, and a malformed instance header reaches no instance."""
    root = _bundle(tmp_path / "uni")
    other = json.loads(json.dumps(RULES))
    other["seat_orders"][0]["taken"] = {"e1": ["A1"]}  # in instance 1, A1 is the taken seat and A3 is free
    inst = _bundle(root / "instances" / "1" / "uni", rules=other)
    meta = json.loads((inst / "site.json").read_text())
    (inst / "site.json").write_text(json.dumps({**meta, "instance": 1}))
    app = create_app(ServeConfig(sites=[root]))
    c = app.test_client()

    def post(instance: str | None, seats: str) -> int:
        headers = {"X-Weblica-Episode": "ep", **({"X-Weblica-Instance": instance} if instance is not None else {})}
        return c.post("/api/seat_orders", json={"event": "e1", "seats": seats}, base_url=f"http://{HOST}",
                      headers=headers).status_code

    assert post(None, "A1") == 200 and post(None, "A3") == 409  # instance 0: A3 taken
    assert post("1", "A1") == 409 and post("1", "A3") == 200   # instance 1: A1 taken, and A1 held in 0 only
    for bad in ["2", "-1", "1.0", "01x", "９", "99999999999"]:
        assert post(bad, "A2") == 404, bad
    admin = {"X-Weblica-Admin": app.config["WEBLICA_ADMIN_TOKEN"], "X-Weblica-Episode": "ep"}
    zero = c.get("/__weblica/state", base_url=f"http://{HOST}", headers=admin).get_json()["seat_orders"]
    one = c.get("/__weblica/state", base_url=f"http://{HOST}", headers={**admin, "X-Weblica-Instance": "1"}).get_json()
    assert [o["seats"] for o in zero] == ["A1"] and [o["seats"] for o in one["seat_orders"]] == ["A3"]


def test_a_collection_spelled_another_way_is_another_collection_the_checks_never_read(client):
    """POST/PUT to 'Seat_orders' or 'seat_orders ' (URL-encoded) store under that other name: the ruled
    collection the page and the checks read stays as it was; slashes and dot segments reach no route."""
    from weblica.env.task import Check
    from weblica.scoring.checks import run_check

    for path in ["/api/Seat_orders", "/api/doc/Seat_Orders", "/api/doc/seat_orders%20"]:
        method = "PUT" if "/doc/" in path else "POST"
        body = [{"event": "e1", "seats": "A3"}] if method == "PUT" else {"event": "e1", "seats": "A3"}
        assert client(method, path, json=body).status_code == 200
    for path in ["/api/seat_orders/", "/api/./seat_orders", "/api/x/../seat_orders", "/api//seat_orders"]:
        assert client("POST", path, json={"event": "e1", "seats": "A3"}).status_code in (308, 404, 405), path
    assert client("POST", "/api/seat%5Forders", json={"event": "e1", "seats": "A3"}).status_code == 409
    state = client.state()
    assert state["seat_orders"] == []
    assert not run_check(Check("state_match", 1, mode="count", path="seat_orders"), None, "", state).passed


def test_a_generated_education_site_refuses_every_blocked_course_and_its_variants(tmp_path):
    """The registrar rules an education site is generated with (weblica/synth/genres/education.py), served
    as its bundle would be: each course whose prerequisite the student lacks is refused (and its id's
    case/space variants), each open course is stored, and a second POST of it is stored again (no rule
    says once: the task's count check decides)."""
    from weblica.synth.generate import build_site
    from weblica.synth.spec import sample_spec

    site = build_site(sample_spec(41, "search", "education"))
    rules = json.loads(json.dumps(site.record_rules))
    rule = rules["enrollments"][0]
    blocked = [c for c, needs in rule["needs"].items() if any(n not in rule["have"] for n in needs)]
    open_ = [c for c in rule["needs"] if c not in blocked]
    assert blocked and open_
    app = create_app(ServeConfig(sites=[_bundle(tmp_path / "uni", rules=rules)]))
    c = app.test_client()

    def enroll(course: str, episode: str = "ep") -> int:
        return c.post("/api/enrollments", json={"course": course}, base_url=f"http://{HOST}",
                      headers={"X-Weblica-Episode": episode}).status_code

    assert all(enroll(course) == 409 for course in blocked)
    assert all(enroll(variant) == 409 for course in open_[:5] for variant in (course.upper(), f" {course}", f"{course}\t"))
    assert enroll(open_[0], "ep2") == 200 and enroll(open_[0], "ep2") == 200
    admin = {"X-Weblica-Admin": app.config["WEBLICA_ADMIN_TOKEN"]}
    assert c.get("/__weblica/state", base_url=f"http://{HOST}", headers={**admin, "X-Weblica-Episode": "ep"}
                 ).get_json()["enrollments"] == []


def test_every_rule_kind_the_generator_writes_passes_the_servers_shape_check():
    """The server reads every rule when it starts (checked_rules): rules the genres write (seat maps,
    best-available seats, ticket stock, hotel nights and rooms, prerequisites) must all pass it, so a
    new rule kind cannot ship without its shape."""
    from weblica.serve.rules import checked_rules
    from weblica.synth.generate import build_site
    from weblica.synth.spec import compatible_categories, sample_spec

    kinds: set[str] = set()
    for category in ("travel", "events", "education"):
        for i, skill in enumerate(["checkout", "forms", "search", "date-picker", "booking", "crud"]):
            if category not in compatible_categories(skill):
                continue
            for instance in (0, 1):
                rules = build_site(sample_spec(300 + i, skill, category), instance=instance).record_rules or {}
                checked_rules(rules, f"{category}/{skill}/{instance}")
                kinds.update(rule["kind"] for group in rules.values() for rule in group)
    assert kinds == {"at_most", "best_items", "free_items", "in_stock", "later", "open_dates", "requires"}
