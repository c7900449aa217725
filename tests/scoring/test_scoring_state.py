"""State checks read every field the task names (issue 37, point 2): a value typed wrong where no check
reads it is a negative validation asks about ("999 Wrong Street"); passwords are stored hashed and checked
through the site's own verifier; the adversarial policy types carelessly on purpose."""
from __future__ import annotations

import copy

from weblica.env.actions import Action
from weblica.env.task import Check, Task
from weblica.scoring.checks import evaluate_checks
from weblica.policy.adversarial import careless_route
from weblica.serve.passwords import hash_password, is_hashed, verify_password, with_hashed_passwords
from weblica.serve.store import with_views
from weblica.synth.checks import state_count, state_is
from weblica.scoring.negatives import field_negatives, named_fields
from weblica.synth.maximal import maximal_plans

PLAN = [{"op": "click", "sel": "#to-checkout"}, {"op": "fill", "sel": "#f-name", "text": "Ana Ruiz"},
        {"op": "fill", "sel": "#f-street", "text": "12 Harbour Road"}, {"op": "fill", "sel": "#f-city", "text": "Porto"},
        {"op": "select", "sel": "#f-payment", "value": "Card"}, {"op": "click", "sel": "#submit"}]
INITIAL = {"orders": [], "cart": {}}
END = with_views({"orders": [{"id": "r1", "name": "Ana Ruiz", "street": "12 Harbour Road", "city": "Porto",
                              "payment": "Card", "items": {"i1": 1}}], "cart": {}})
CHECKS = [state_count("orders", 1), state_is("orders.0.name", "Ana Ruiz"), state_is("orders.0.street", "12 Harbour Road"),
          state_is("orders.0.city", "Porto"), state_is("orders.0.payment", "Card")]


def _task(checks):
    return Task(id="co", start_url="http://s.test/", instruction="Order it to Ana Ruiz, 12 Harbour Road, Porto; pay by card.",
                checks=checks, metadata={"plan": PLAN})


def _accepted(task, negatives):
    return [n.label for n in negatives if evaluate_checks(task, None, "http://s.test/", n.state)[0] > 0]


def test_the_named_fields_are_what_the_plan_types_or_picks():
    assert [(name, value) for _, name, value in named_fields(_task(CHECKS))] == [
        ("name", "Ana Ruiz"), ("street", "12 Harbour Road"), ("city", "Porto"), ("payment", "Card")]


def test_every_named_field_typed_wrong_is_rejected_when_the_checks_read_it():
    task = _task(CHECKS)
    negatives = field_negatives(task, copy.deepcopy(END), INITIAL)
    assert {n.kind for n in negatives} == {"named_field"} and len(negatives) == 4
    assert evaluate_checks(task, None, "http://s.test/", END)[0] == 1.0  # the oracle's own state passes
    assert _accepted(task, negatives) == []


def test_a_check_that_forgets_the_street_lets_999_wrong_street_through():
    task = _task([c for c in CHECKS if c.path != "orders.0.street"])
    accepted = _accepted(task, field_negatives(task, copy.deepcopy(END), INITIAL))
    assert accepted == ["street typed wrong (stored at orders.0.street)"], accepted
    # what that negative stands for, literally: the order went to another street, and the old check paid it
    wrong = copy.deepcopy(END)
    wrong["orders"][0]["street"] = "999 Wrong Street"
    assert evaluate_checks(task, None, "http://s.test/", with_views(wrong))[0] == 1.0


def test_a_value_the_initial_state_already_held_is_not_taken_for_the_typed_one():
    initial = {"orders": [], "cart": {}, "profile": {"city": "Porto"}}
    end = copy.deepcopy(END)
    end["profile"] = {"city": "Porto"}
    task = _task(CHECKS)
    labels = [n.label for n in field_negatives(task, end, initial)]
    assert "city typed wrong (stored at orders.0.city)" in labels and not any("profile" in l for l in labels)


def test_a_value_stored_twice_is_typed_wrong_in_both_places():
    """A login's user name lands in the session and in the site's log: typed wrong, it is wrong in both,
    so a check that reads either rejects it (changing one copy would be a state no site can reach)."""
    task = Task(id="login", start_url="http://s.test/", instruction="Log in as ana12 (password: ruiz-1234).",
                checks=[state_is("session.user", "ana12")],
                metadata={"plan": [{"op": "fill", "sel": "#f-username", "text": "ana12"},
                                   {"op": "fill", "sel": "#f-password", "text": "ruiz-1234"},
                                   {"op": "click", "sel": "#submit"}]})
    initial = {"users": [{"id": "u1", "username": "ana12", "password": hash_password("ruiz-1234", "ana12")}],
               "session": {"user": None}}
    end = {**copy.deepcopy(initial), "session": {"user": "ana12"}, "logins": [{"id": "l1", "username": "ana12"}]}
    (negative,) = field_negatives(task, with_views(end), initial)
    assert "session.user" in negative.label and "logins.0.username" in negative.label
    assert evaluate_checks(task, None, "http://s.test/", negative.state)[0] == 0.0
    # the password is never stored by a login: its wrong value is played (the login must fail)
    played = [label for label, _ in maximal_plans(task) if label.startswith("one named field wrong")]
    assert played == ["one named field wrong, played: password"]
    (_, wrong), = [(label, plan) for label, plan in maximal_plans(task) if label.startswith("one named field wrong")]
    assert wrong[1]["text"] == "ruiz-12349" and wrong[0] == task.metadata["plan"][0]


def test_passwords_are_stored_hashed_and_checked_through_the_verifier():
    stored = with_hashed_passwords({"username": "ana12", "password": "ruiz-1234", "email": "a@x.test"}, "ana12")
    assert is_hashed(stored["password"]) and "ruiz-1234" not in str(stored) and stored["email"] == "a@x.test"
    assert stored == with_hashed_passwords(stored, "ana12")  # hashing twice changes nothing
    assert verify_password("ruiz-1234", stored["password"]) and not verify_password("ruiz-1235", stored["password"])
    assert hash_password("ruiz-1234", "ana12") == stored["password"]  # seeded by the site, not by chance
    check = Check(type="state_match", path="users.-1.password", expected="ruiz-1234", mode="password")
    task = Task(id="s", start_url="http://s.test/", instruction="Sign up.", checks=[check])
    assert evaluate_checks(task, None, "", {"users": [stored]})[0] == 1.0
    for wrong in ({"users": [{**stored, "password": hash_password("Wrong Value", "ana12")}]},
                  {"users": [{**stored, "password": "ruiz-1234"}]},  # in clear: the site never stores that
                  {"users": []}):
        assert evaluate_checks(task, None, "", wrong)[0] == 0.0


def test_the_site_server_hashes_posted_passwords_and_logs_in_through_the_verifier(tmp_path):
    """A generated account site, served for real (Flask's test client): its users are stored hashed, the
    password its login task quotes logs in, a wrong one does not, and a signup stores a hash."""
    import json

    from weblica.env.task import load_tasks
    from weblica.serve.app import ServeConfig, create_app
    from weblica.synth.generate import write_unvalidated
    from weblica.synth.spec import sample_spec

    bundle = write_unvalidated(sample_spec(5, "account", "saas"), tmp_path)
    site = json.loads((bundle / "site.json").read_text())
    users = site["initial_state"]["users"]
    assert users and all(is_hashed(u["password"]) for u in users)
    login = next(t for t in load_tasks(bundle / "tasks.jsonl")
                 if [s.get("sel") for s in t.metadata["plan"][1:3]] == ["#f-username", "#f-password"])
    user, password = (s["text"] for s in login.metadata["plan"][1:3])
    assert password in login.instruction and password not in (bundle / "site.json").read_text()
    client = create_app(ServeConfig(sites=[bundle])).test_client()
    headers = {"Host": site["spec"]["host"]}
    assert client.post("/api/login", json={"username": user, "password": password + "x"}, headers=headers).status_code == 401
    assert client.post("/api/login", json={"username": user, "password": password}, headers=headers).status_code == 200
    assert client.post("/api/signup", json={"username": "bo7", "email": "b@x.test", "password": "Secret-99"},
                       headers=headers).status_code == 200
    assert client.post("/api/notes", json={"title": "x", "new_password": "hunter22"}, headers=headers).status_code == 200
    state = client.get("/api/state", headers=headers).get_json()
    assert "Secret-99" not in json.dumps(state) and "hunter22" not in json.dumps(state)
    assert verify_password("Secret-99", state["users"][-1]["password"])
    assert verify_password("hunter22", state["notes"][0]["new_password"])
    assert state["session"]["user"] == "bo7"


def test_the_careless_typist_types_one_given_value_wrong():
    route = [Action("click", {"x": 1.0, "y": 2.0}), Action("write", {"text": "12 Harbour Road"}),
             Action("write", {"text": "Porto"}), Action("click", {"x": 3.0, "y": 4.0})]
    careless = careless_route(route, "Ship it to 12 Harbour Road in Porto.")
    assert [a.args.get("text") for a in careless] == [None, "12 Harbour Road", "Portx", None]
    assert careless_route(route[:2], "Ship it to 12 Harbour Road.")[1].args["text"] == "999 Wrong Street"
    assert careless_route([Action("write", {"text": "hello"})], "Ship it.") is None  # nothing the instruction gave
