"""Rules (YAML schema, registrable domains) and the matching tiers over recorded exchanges."""
import pytest

from weblica.cache.exchange import Exchange
from weblica.cache.matcher import ReplayIndex
from weblica.cache.rules import Rule, RuleBook, RuleError, RuleSet, load_rules, registrable_domain, save_rules
from weblica.cache.canonical import request_view

FORM = [("Content-Type", "application/x-www-form-urlencoded")]


@pytest.mark.parametrize("host,domain", [
    ("www.shop.test", "shop.test"), ("api.shop.test:8443", "shop.test"), ("a.b.example.co.uk", "example.co.uk"),
    ("localhost", "localhost"), ("x.localhost", "x.localhost"), ("127.0.0.1", "127.0.0.1"),
    ("news.bbc.co.uk", "bbc.co.uk"), ("example.com", "example.com"),
])
def test_registrable_domain_offline(host, domain):
    assert registrable_domain(host) == domain


def test_yaml_round_trip_keeps_evidence_and_confidence(tmp_path):
    ruleset = RuleSet("shop.test", [
        Rule("ignore", field="query:_", host="*.shop.test", source="inferred", confidence=0.97,
             evidence={"runs": [1, 2], "values": ["1700000000000"]}),
        Rule("require", field="q"),
        Rule("path", pattern=r"/cart/[0-9a-f]{16,}", replace="/cart/{token}"),
        Rule("stub", method="POST", host="stats.shop.test", path="/collect", response={"status": 204}),
    ])
    path = save_rules(ruleset, tmp_path)
    assert path.name == "shop.test.yaml"
    loaded = load_rules(path)
    assert [r.to_dict() for r in loaded.rules] == [r.to_dict() for r in ruleset.rules]
    assert loaded.of_kind("ignore")[0].evidence["runs"] == [1, 2]


def test_hand_written_rules_load_the_same_way(tmp_path):
    (tmp_path / "shop.test.yaml").write_text(
        "domain: shop.test\nignore:\n  - _\n  - field: 're:^query:utm_.*$'\nrequire:\n  - form:q\n")
    book = RuleBook.load(tmp_path)
    names = {"query:_", "form:_", "query:utm_source", "query:q", "form:q"}
    assert book.ignored("GET", "www.shop.test", "/", names) == {"query:_", "form:_", "query:utm_source"}
    assert book.required("POST", "www.shop.test", "/search", names) == {"form:q"}
    assert book.ignored("GET", "other.test", "/", names) == set()  # another domain's file


@pytest.mark.parametrize("text,message", [
    ("domain: a.test\nignore:\n  - field: 're:(['\n", "bad regular expression"),
    ("domain: a.test\nignore:\n  - {field: x, colour: red}\n", "unknown key"),
    ("domain: a.test\nbogus: []\n", "unknown section"),
    ("ignore: []\n", "domain"),
])
def test_bad_rules_name_the_problem(tmp_path, text, message):
    path = tmp_path / "a.test.yaml"
    path.write_text(text)
    with pytest.raises(RuleError, match=message):
        load_rules(path)


def ex(id_, method, url, body=b"", run=1, seq=0, status=200):
    e = Exchange(method=method, url=url, request_headers=FORM if body else [], status=status, run_id=run, seq=seq,
                 id=id_, response_body_digest=f"{id_:064x}")
    e.request_body = body
    return e


def view(method, url, body=b""):
    return request_view(method, url, FORM if body else [], body)


def test_exact_repeats_in_recorded_order_and_reset_per_episode():
    index = ReplayIndex([ex(1, "GET", "https://a.test/poll"), ex(2, "GET", "https://a.test/poll", seq=1),
                         ex(3, "GET", "https://a.test/poll", run=2)])
    v = view("GET", "https://a.test/poll")
    assert [index.match(v, "ep1").exchange.id for _ in range(3)] == [1, 2, 2]  # first run's order, then the last
    assert index.match(v, "ep2").exchange.id == 1  # another episode counts on its own
    index.reset("ep1")
    assert index.match(v, "ep1").exchange.id == 1


def test_normalized_by_ignore_rules_and_path_templates():
    rules = RuleBook([RuleSet("a.test", [Rule("ignore", field="query:_"),
                                         Rule("path", pattern=r"/s/[0-9a-f]{8,}/", replace="/s/{token}/")])])
    index = ReplayIndex([ex(1, "GET", "https://a.test/app.js?_=111&v=2"),
                         ex(2, "GET", "https://a.test/s/deadbeef01/cart")], rules)
    m = index.match(view("GET", "https://a.test/app.js?v=2&_=999"))
    assert (m.tier, m.exchange.id) == ("normalized", 1)
    m = index.match(view("GET", "https://a.test/s/0123abcd99/cart"))
    assert (m.tier, m.exchange.id) == ("normalized", 2)
    # v=3 against a recorded v=2, the only field left: below the scored floor, a miss naming v=2
    m = index.match(view("GET", "https://a.test/app.js?v=3&_=999"))
    assert m.tier == "miss" and m.closest.id == 1 and m.differing == {"query:v": ["3", "2"]}


def test_scored_never_fuzzes_required_fields_and_reports_the_miss():
    rules = RuleBook([RuleSet("a.test", [Rule("require", field="form:q")])])
    index = ReplayIndex([ex(1, "POST", "https://a.test/search", b"csrf=aaa&q=lamp"),
                         ex(2, "POST", "https://a.test/search", b"csrf=aaa&q=desk")], rules)
    m = index.match(view("POST", "https://a.test/search", b"csrf=zzz&q=desk"))
    assert (m.tier, m.exchange.id) == ("scored", 2)  # the volatile token differs, the query matches
    assert m.differing == {"form:csrf": ["zzz", "aaa"]}
    m = index.match(view("POST", "https://a.test/search", b"csrf=aaa&q=sofa"))
    assert m.tier == "miss" and m.exchange is None  # never the lamp or desk results for "sofa"
    assert m.closest is not None and "form:q" in m.differing


def test_scored_picks_the_nearest_and_other_methods_never_match():
    index = ReplayIndex([ex(1, "GET", "https://a.test/list?page=1&sort=asc&n=1"),
                         ex(2, "GET", "https://a.test/list?page=2&sort=asc&n=1")])
    m = index.match(view("GET", "https://a.test/list?page=2&sort=asc&n=7"))
    assert (m.tier, m.exchange.id) == ("scored", 2)
    m = index.match(view("POST", "https://a.test/list?page=2&sort=asc&n=1"))
    assert m.tier == "miss" and m.closest is None
    m = index.match(view("GET", "https://a.test/other"))
    assert m.tier == "miss" and m.differing["path"] == ["/other", "/list"]


def test_a_request_without_validators_never_gets_a_recorded_304():
    index = ReplayIndex([ex(1, "GET", "https://a.test/app.js", seq=0, status=304),
                         ex(2, "GET", "https://a.test/app.js", seq=1, status=200)])
    v = view("GET", "https://a.test/app.js")
    assert index.match(v, "fresh", conditional=False).exchange.status == 200
    assert index.match(v, "revalidating", conditional=True).exchange.status == 304


def test_header_and_cookie_rule_fields_load_and_apply_on_replay(tmp_path):
    (tmp_path / "a.test.yaml").write_text(
        "domain: a.test\nrequire:\n  - field: cookie:sid\n    path: /account\n  - header:accept-language\n")
    book = RuleBook.load(tmp_path)

    def exh(id_, cookie, lang):
        e = ex(id_, "GET", "https://a.test/account")
        e.request_headers = [("Cookie", f"sid={cookie}"), ("Accept-Language", lang)]
        return e

    index = ReplayIndex([exh(1, "alice", "en"), exh(2, "bob", "en"), exh(3, "bob", "sv")], book)

    def asked(cookie, lang):
        return request_view("GET", "https://a.test/account", [("Cookie", f"sid={cookie}"), ("Accept-Language", lang)])

    assert index.match(asked("bob", "sv")).exchange.id == 3
    assert index.match(asked("alice", "en")).exchange.id == 1
    m = index.match(asked("carol", "en"))
    assert m.tier == "miss" and m.differing["cookie:sid"] == ["carol", "alice"]
    assert index.match(asked("alice", "sv")).tier == "miss"


def test_rule_files_written_before_header_fields_still_load(tmp_path):
    (tmp_path / "shop.test.yaml").write_text("""domain: shop.test
version: 1
ignore:
- field: query:_
  host: cdn.shop.test
  source: inferred
  confidence: 0.99
  evidence: {runs: [1, 2], values: ['1736935200000'], changed_same_response: 3, changed_other_response: 0,
             weak: {volatile: 0, semantic: 0}, detectors: [epoch_ms]}
paths:
- pattern: ^/cart/[^/]+/items$
  replace: /cart/{token}/items
  host: www.shop.test
  source: inferred
  confidence: 0.9
  note: random-looking path segment
""")
    book = RuleBook.load(tmp_path)
    assert book.path_template("GET", "www.shop.test", "/cart/ab12/items") == "/cart/{token}/items"
    assert book.ignored("GET", "cdn.shop.test", "/app.js", {"query:_"}) == {"query:_"}
    # such an old inferred template never makes a slug a slot again; a hand-written one is obeyed
    assert book.path_template("GET", "www.shop.test", "/cart/how-to-cook-pasta/items") == "/cart/how-to-cook-pasta/items"
    manual = RuleBook([RuleSet("shop.test", [Rule("path", pattern="^/p/[^/]+$", replace="/p/{slug}")])])
    assert manual.path_template("GET", "www.shop.test", "/p/how-to-cook-pasta") == "/p/{slug}"
