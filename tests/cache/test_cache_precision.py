"""The probes of issue 20, each a recording built in a real store: a miss beats a wrong page, and inferred
rules must not turn servable requests into misses (slugs, one-value searches, the scored floor, Range,
cookies, Vary, fresh cache-busters)."""
import json
import time

import pytest

from weblica.cache.canonical import request_view
from weblica.cache.exchange import Exchange
from weblica.cache.infer import infer_rules, rulebook
from weblica.cache.matcher import MIN_SIMILARITY, ReplayIndex
from weblica.cache.rules import RuleBook
from weblica.cache.store import Store

NOW = time.time()
HTML = [("Content-Type", "text/html; charset=utf-8")]


class Rec:
    """A recording of several runs, written through the real store."""

    def __init__(self, tmp_path):
        self.store = Store.open_dir(tmp_path / "rec", create=True)
        self.seq = 0
        self.run = None

    def new_run(self):
        self.run = self.store.new_run("record")
        self.seq = 0
        return self.run

    def add(self, url, body, method="GET", request_headers=(), response_headers=HTML, status=200, request_body=None):
        ex = Exchange(method=method, url=url, request_headers=list(request_headers), status=status,
                      response_headers=list(response_headers), run_id=self.run, seq=self.seq, started=NOW, ended=NOW)
        self.seq += 1
        self.store.add_exchange(ex, request_body, body if isinstance(body, bytes) else body.encode())

    def index(self, rules=None):
        """The replay index with the rules inferred from this recording (or the given ones)."""
        rules = rulebook(infer_rules(self.store, NOW)) if rules is None else rules
        return ReplayIndex(self.store.exchanges(), rules), rules


@pytest.fixture
def rec(tmp_path):
    r = Rec(tmp_path)
    yield r
    r.store.close()


def get(url, headers=()):
    return request_view("GET", url, list(headers))


@pytest.mark.parametrize("recorded,asked", [
    ("/nyheter/how-to-cook-pasta-in-2019/", "/nyheter/election-results-2024-live-updates/"),
    ("/p/iphone-15-pro-max-256gb-blue", "/p/galaxy-s24-ultra-512gb-black"),
    ("/item/123456789012", "/item/987654321098"),
    ("/menu/cafe2019", "/menu/bistro2020"),
    ("/simgad/13081542913726004185", "/simgad/5524897312208946150"),
])
def test_a_slug_seen_once_is_never_a_template(rec, recorded, asked):
    for run in range(2):
        rec.new_run()
        rec.add(f"https://news.a.test{recorded}", "<h1>the recorded page</h1>")
    index, rules = rec.index()
    assert not [r for rs in rules.by_domain.values() for r in rs.of_kind("path")]
    m = index.match(get(f"https://news.a.test{asked}"))
    assert m.tier == "miss" and m.exchange is None and m.differing["path"] == [asked, recorded]
    assert index.match(get(f"https://news.a.test{recorded}")).tier == "exact"


def test_a_token_in_the_path_is_templated_from_cross_run_evidence_only(rec):
    for token in ("9f3ac01d5e7b4a21", "c01d9f3a7b4a5e21"):
        rec.new_run()
        rec.add(f"https://www.a.test/cart/{token}/items", "<ul><li>Lamp</li></ul>")
        rec.add("https://www.a.test/news/how-to-cook-pasta-in-2019", "<h1>pasta</h1>")
    index, rules = rec.index()
    [path_rule] = rules.by_domain["a.test"].of_kind("path")
    assert path_rule.replace == "/cart/{token}/items" and path_rule.evidence["values"]
    m = index.match(get("https://www.a.test/cart/77aa88bb99cc00dd/items"))
    assert m.tier == "normalized" and m.exchange.view.path.startswith("/cart/")
    # the slot keeps the tokens' shape: a slug in its place is another page
    assert index.match(get("https://www.a.test/cart/election-results-2024/items")).tier == "miss"
    assert index.match(get("https://www.a.test/news/election-results-2024-live-updates")).tier == "miss"


def test_a_search_recorded_with_one_query_never_answers_another(rec):
    for run in range(2):
        rec.new_run()
        rec.add(f"https://www.a.test/search?q=lamp&sr={run}f3a9c2d1e", "<li>Arc Floor Lamp</li>")
    for rules in (None, RuleBook()):   # with inferred rules and with none
        index, _ = rec.index(rules)
        m = index.match(get("https://www.a.test/search?q=sofa&sr=7d7d7d7d7d"))
        assert m.tier == "miss" and m.exchange is None, m
        assert m.closest is not None and m.differing["query:q"] == ["sofa", "lamp"]
        assert index.match(get("https://www.a.test/search?q=lamp&sr=0f3a9c2d1e")).exchange is not None


@pytest.mark.parametrize("name", ["query", "search", "id", "product_id", "page", "sort", "filter", "category"])
def test_semantic_names_are_required_by_default(rec, name):
    rec.new_run()
    rec.add(f"https://www.a.test/list?{name}=one&nonce=aa11bb22cc33", "<li>one</li>")
    index, _ = rec.index(RuleBook())
    assert index.match(get(f"https://www.a.test/list?{name}=two&nonce=ff00ee11dd22")).tier == "miss"
    assert index.match(get(f"https://www.a.test/list?{name}=one&nonce=ff00ee11dd22")).tier == "scored"


def test_the_scored_tier_has_a_floor_and_reports_the_closest_candidate(rec):
    rec.new_run()
    rec.add("https://www.a.test/widget?color=red", "<b>red</b>")
    rec.add("https://www.a.test/box?w=1&h=2&d=3", "<b>box</b>")
    index, _ = rec.index(RuleBook())
    m = index.match(get("https://www.a.test/widget?color=blue"))    # the only field differs: 0.25
    assert m.tier == "miss" and m.score < MIN_SIMILARITY and m.closest.url.endswith("color=red")
    assert m.differing == {"query:color": ["blue", "red"]}
    m = index.match(get("https://www.a.test/box?w=1&h=2&d=9"))      # two of three agree: 0.75
    assert m.tier == "scored" and m.score >= MIN_SIMILARITY


def test_range_requests_get_their_own_bytes(rec):
    body = bytes(range(256)) * 4
    rec.new_run()
    rec.add("https://media.a.test/clip.mp4", body, response_headers=[("Content-Type", "video/mp4")])
    rec.add("https://media.a.test/only-part.mp4", body[:100], request_headers=[("Range", "bytes=0-99")],
            status=206, response_headers=[("Content-Type", "video/mp4"), ("Content-Range", "bytes 0-99/1024")])
    index, _ = rec.index(RuleBook())
    first = index.match(get("https://media.a.test/clip.mp4", [("Range", "bytes=0-99")]))
    second = index.match(get("https://media.a.test/clip.mp4", [("Range", "bytes=100-199")]))
    assert first.byte_range == (0, 99) and second.byte_range == (100, 199)
    assert first.exchange.status == 200   # cut out of the recorded full body, served as a 206
    assert index.match(get("https://media.a.test/clip.mp4")).byte_range is None
    same = index.match(get("https://media.a.test/only-part.mp4", [("Range", "bytes=0-99")]))
    assert same.tier == "exact" and same.exchange.status == 206 and same.byte_range is None
    assert index.match(get("https://media.a.test/only-part.mp4", [("Range", "bytes=100-199")])).tier == "miss"
    assert index.match(get("https://media.a.test/only-part.mp4")).tier == "miss"   # never a part for the whole
    assert index.match(get("https://media.a.test/clip.mp4", [("Range", "bytes=5000-6000")])).tier == "miss"


def test_range_responses_are_cut_with_content_range():
    from mitmproxy import http

    from weblica.cache.ranges import apply_range, parse_range

    assert parse_range("bytes=0-99", 1000) == (0, 99)
    assert parse_range("bytes=900-", 1000) == (900, 999)
    assert parse_range("bytes=-100", 1000) == (900, 999)
    assert parse_range("bytes=0-5000", 1000) == (0, 999)
    assert parse_range("bytes=1000-", 1000) is None and parse_range("bytes=0-1,5-6", 1000) is None
    response = http.Response.make(200, bytes(range(200)), {"Content-Type": "video/mp4"})
    apply_range(response, (100, 149))
    assert response.status_code == 206 and response.content == bytes(range(100, 150))
    assert response.headers["Content-Range"] == "bytes 100-149/200"
    assert response.headers["Content-Length"] == "50"


def test_cookies_that_change_the_page_are_key_fields(rec):
    for run in range(2):
        rec.new_run()
        for user in ("alice", "bob"):
            rec.add("https://www.a.test/account", f"<h1>Hello {user}</h1>",
                    request_headers=[("Cookie", f"sid={user}; _ga=GA1.1.{run}4820194331.1764000000")])
        rec.add("https://www.a.test/account", "<h1>Please log in</h1>")
    index, rules = rec.index()
    required = {r.field for rs in rules.by_domain.values() for r in rs.of_kind("require")}
    assert "cookie:sid" in required and "cookie:_ga" not in required
    body = {ex.id: ex for ex in rec.store.exchanges()}

    def page(cookie):
        m = index.match(get("https://www.a.test/account", [("Cookie", cookie)] if cookie else []))
        return rec.store.bodies.get(body[m.exchange.id].response_body_digest).decode() if m.exchange else m.tier

    assert page("sid=bob; _ga=GA1.1.99.1764000001") == "<h1>Hello bob</h1>"
    assert page("sid=alice; _ga=GA1.1.98.1764000002") == "<h1>Hello alice</h1>"
    assert page(None) == "<h1>Please log in</h1>"
    assert page("sid=carol") == "miss"


def test_headers_named_by_vary_are_key_fields(rec):
    vary = [("Content-Type", "text/html"), ("Vary", "Accept-Language, Accept-Encoding")]
    for run in range(2):
        rec.new_run()
        rec.add("https://www.a.test/", "<h1>Welcome</h1>", request_headers=[("Accept-Language", "en-US")],
                response_headers=vary)
        rec.add("https://www.a.test/", "<h1>Välkommen</h1>", request_headers=[("Accept-Language", "sv-SE")],
                response_headers=vary)
    index, rules = rec.index()
    assert "header:accept-language" in {r.field for r in rules.by_domain["a.test"].of_kind("require")}
    for inferred in (rules, RuleBook()):   # Vary alone makes it a key field
        index = ReplayIndex(rec.store.exchanges(), inferred)
        sv = index.match(get("https://www.a.test/", [("Accept-Language", "sv-SE")]))
        assert rec.store.bodies.get(sv.exchange.response_body_digest).decode() == "<h1>Välkommen</h1>"
        assert index.match(get("https://www.a.test/", [("Accept-Language", "de-DE")])).tier == "miss"


@pytest.mark.parametrize("name", ["cb", "xyz"])       # named like a cache-buster, or not named at all
@pytest.mark.parametrize("per_page", [True, False])   # seeded Math.random repeats its value on every page
def test_a_fresh_cache_buster_is_ignored_and_the_rotation_served_in_order(rec, per_page, name):
    creatives = ["<img alt='Sofa sale'>", "<img alt='Lamp week'>", "<img alt='Rug days'>"]
    for run, seed in enumerate((4820194331, 1937046282)):
        rec.new_run()
        for page in range(3):
            rec.add(f"https://ads.a.test/ad?slot=side&{name}={seed + 7919 * page * per_page}",
                    creatives[(run + page) % 3])
    index, rules = rec.index()
    kinds = {(r.kind, r.field) for rs in rules.by_domain.values() for r in rs.rules}
    assert ("ignore", f"query:{name}") in kinds and ("require", f"query:{name}") not in kinds
    rule = next(r for r in rules.by_domain["a.test"].of_kind("ignore") if r.field == f"query:{name}")
    assert rule.evidence["fresh_every_run"] is True
    served = []
    for cb in (5550001111, 5550002222, 5550003333, 5550004444):
        m = index.match(get(f"https://ads.a.test/ad?slot=side&{name}={cb}"), "ep")
        assert m.tier == "normalized"
        served.append(rec.store.bodies.get(m.exchange.response_body_digest).decode())
    assert served == creatives + [creatives[2]]   # the first run's order, then its last again
    assert index.match(get(f"https://ads.a.test/ad?slot=top&{name}=5550005555"), "ep").tier == "miss"


def test_required_needs_the_same_value_to_give_the_same_response(rec):
    # q changes the answer and each query repeats across runs: required. `v` (a build stamp no run
    # repeated) changed with the answer too, but nothing says the same v gives the same answer
    for run in range(2):
        rec.new_run()
        for q in ("lamp", "desk"):
            rec.add(f"https://api.a.test/find?q={q}", json.dumps({"results": [q]}),
                    response_headers=[("Content-Type", "application/json")])
        rec.add(f"https://api.a.test/build?v=build{run}", f"<b>{run}</b>")
    _, rules = rec.index()
    required = {r.field: r for r in rules.by_domain["a.test"].of_kind("require")}
    assert "query:q" in required and required["query:q"].evidence["same_value_same_response"] >= 1
    assert "query:v" not in required


def test_range_and_cookie_keys_through_the_real_proxies(tmp_path):
    """Recorded through mitmproxy from a real server, replayed through the replay proxy with httpx."""
    import threading

    import httpx
    from flask import Flask, request
    from werkzeug.serving import make_server

    from weblica.cache.addons import REPLAY_HEADER, EpisodeHeader, HostMapper, Recorder, Replayer, parse_resolve
    from weblica.cache.backend import load_source
    from weblica.cache.proxy import ProxyServer
    from weblica.cache.rules import save_rules

    clip = bytes(range(256)) * 8
    app = Flask(__name__)

    @app.get("/clip.bin")
    def clip_bin():
        return clip, 200, {"Content-Type": "application/octet-stream"}

    @app.get("/account")
    def account():
        user = request.cookies.get("sid")
        return f"<h1>Hello {user}</h1>" if user else "<h1>Please log in</h1>"

    server = make_server("127.0.0.1", 0, app, threaded=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://www.media.test:{server.server_port}"
    store = Store.open_dir(tmp_path / "rec", create=True)
    recorder = Recorder(store, 0)
    try:
        with ProxyServer([EpisodeHeader(), HostMapper(parse_resolve([f"www.media.test:{server.server_port}:127.0.0.1"])),
                          recorder]) as proxy:
            for run in range(2):
                recorder.begin_run(store.new_run("record"))
                with httpx.Client(proxy=proxy.url) as client:
                    assert client.get(f"{base}/clip.bin").content == clip
                    for sid in ("alice", "bob", None):
                        client.get(f"{base}/account", headers={"Cookie": f"sid={sid}"} if sid else {})
    finally:
        server.shutdown()
        server.server_close()
    for ruleset in infer_rules(store, NOW).values():
        save_rules(ruleset, tmp_path / "rules")
    store.close()
    source = load_source(tmp_path / "rec", [tmp_path / "rules"], log_misses=False)
    try:
        with ProxyServer([EpisodeHeader(), Replayer(lambda episode: source)]) as proxy:
            with httpx.Client(proxy=proxy.url) as client:
                part = client.get(f"{base}/clip.bin", headers={"Range": "bytes=100-199"})
                tail = client.get(f"{base}/clip.bin", headers={"Range": "bytes=-48"})
                whole = client.get(f"{base}/clip.bin")
                bad = client.get(f"{base}/clip.bin", headers={"Range": "bytes=9000-"})
                bob = client.get(f"{base}/account", headers={"Cookie": "sid=bob"})
                nobody = client.get(f"{base}/account")
                carol = client.get(f"{base}/account", headers={"Cookie": "sid=carol"})
    finally:
        source.store.close()
    assert part.status_code == 206 and part.content == clip[100:200]
    assert part.headers["Content-Range"] == f"bytes 100-199/{len(clip)}"
    assert tail.status_code == 206 and tail.content == clip[-48:]
    assert whole.status_code == 200 and whole.content == clip and whole.headers[REPLAY_HEADER] == "exact"
    assert bad.status_code == 502
    assert bob.text == "<h1>Hello bob</h1>" and nobody.text == "<h1>Please log in</h1>"
    assert carol.status_code == 502 and "cookie:sid" in carol.text


def test_stub_rules_see_the_path_without_embedded_parameters(rec):
    from mitmproxy.test import tflow, tutils

    from weblica.cache.addons import REPLAY_HEADER, ReplaySource, Stubber
    from weblica.cache.rules import Rule, RuleSet

    rec.new_run()
    rules = RuleBook([RuleSet("adnet.test", [Rule("stub", host="ads.adnet.test", path="/pixel/side",
                                                  response={"status": 204})])])
    source = ReplaySource(store=rec.store, index=ReplayIndex([], rules))
    flow = tflow.tflow(req=tutils.treq(host="ads.adnet.test", port=443, scheme=b"https",
                                       path=f"/pixel/side;ord=4820194331;misc={int(NOW)}".encode()))
    Stubber(lambda episode: source).request(flow)
    assert flow.response is not None and flow.response.status_code == 204
    assert flow.response.headers[REPLAY_HEADER] == "stub"


def test_a_semantic_name_with_a_fresh_time_value_is_volatile_but_a_fresh_id_is_not(rec):
    for run in range(2):
        rec.new_run()
        for poll in range(2):
            t = int(NOW * 1000) + 1000 * run + 10 * poll
            rec.add(f"https://api.a.test/feed?start={t}", json.dumps({"items": [f"news {run} {poll}"]}),
                    response_headers=[("Content-Type", "application/json")])
        rec.add(f"https://api.a.test/doc?id={'9f3ac01d5e7b' if run else 'c01d9f3a7b4a'}", f"<p>doc {run}</p>")
    _, rules = rec.index()
    kinds = {(r.kind, r.field) for r in rules.by_domain["a.test"].rules}
    assert ("ignore", "query:start") in kinds
    assert ("ignore", "query:id") not in kinds



def test_a_busy_endpoint_is_judged_from_every_run_not_the_first(rec):
    # 60 GraphQL calls a run (page 1..30, twice); the client's nonce is fixed within a run, new in each
    json_ct = [("Content-Type", "application/json")]
    for nonce in ("k3j5h2l1m9x8", "p7q2r8s1t4u6"):
        rec.new_run()
        for i in range(60):
            page = i % 30 + 1
            rec.add("https://api.a.test/graphql", json.dumps({"data": {"products": [f"p{page}"]}}), method="POST",
                    request_headers=json_ct, response_headers=json_ct,
                    request_body=json.dumps({"operationName": "Products", "variables": {"page": page},
                                             "nonce": nonce}).encode())
    index, rules = rec.index()
    ignored = {r.field for r in rules.by_domain["a.test"].of_kind("ignore")}
    assert "json:nonce" in ignored   # only a pair across runs shows it; the first 400 pairs are all run 1
    asked = request_view("POST", "https://api.a.test/graphql", json_ct,
                         json.dumps({"operationName": "Products", "variables": {"page": 7}, "nonce": "z9y8x7w6v5u4"}).encode())
    m = index.match(asked)
    assert m.tier == "normalized" and rec.store.bodies.get(m.exchange.response_body_digest) == b'{"data": {"products": ["p7"]}}'
