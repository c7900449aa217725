"""Rule inference on hand-built recordings: value detectors, volatile vs semantic, beacons, HAR fallbacks."""
import json

import pytest

from weblica.cache.exchange import Exchange
from weblica.cache.infer import detect, infer_rules, mask, summarize
from weblica.cache.interop import import_har
from weblica.cache.store import Store

# a fixed capture time: every detector takes it as the reference, and the test ids it parametrizes stay the
# same on every run and in every pytest-xdist worker (which refuse to run when their collections differ)
NOW = 1796168612.5
JSON_CT = [("Content-Type", "application/json")]


@pytest.mark.parametrize("value,kind", [
    (str(int(NOW)), "epoch_s"), (str(int(NOW * 1000)), "epoch_ms"), ("1736935200000", "epoch_ms"),
    ("0f8c3a1e-9b7d-4c2a-8e1f-3b5d7a9c1e2f", "uuid"), ("9f86d081884c7d659a2f", "hex"), ("2694a39c", "hex"),
    ("0.8472921365", "random_float"), ("jQuery112404176347046446495_1700000000000", "jsonp_callback"),
    ("eyJhbGciOiJIUzI1NiJ9x1", "base64"), ("a1_b2-c3d4e5f6g7h8i9j0k", "token"),
])
def test_detectors_recognize_random_and_time_values(value, kind):
    assert detect(value, NOW) == kind


@pytest.mark.parametrize("value", ["lamp", "desk lamp", "2", "42", "1999", "deadbeef", "home", "asc", "12.5"])
def test_detectors_leave_ordinary_values_alone(value):
    assert detect(value, NOW) is None


def test_masking_hides_tokens_but_not_content():
    a = mask('<meta content="3f9a0c1d2e4b5a6f"> Results for lamp, 3 items, id 0f8c3a1e-9b7d-4c2a-8e1f-3b5d7a9c1e2f')
    b = mask('<meta content="aa01bb02cc03dd04"> Results for lamp, 3 items, id 11111111-2222-4333-8444-555555555555')
    assert a == b and "lamp" in a and "3 items" in a


def _add(store, run, seq, method, url, body, response, headers=JSON_CT, status=200):
    ex = Exchange(method=method, url=url, request_headers=headers if body else [], status=status, run_id=run, seq=seq,
                  response_headers=[("Content-Type", "application/json" if response[:1] in "{[" else "text/plain")],
                  started=NOW, ended=NOW)
    store.add_exchange(ex, body.encode() if body else None, response.encode())


@pytest.fixture
def two_runs(tmp_path):
    store = Store.open_dir(tmp_path / "rec", create=True)
    for run_no, (token, nonce, cid) in enumerate([("aa11bb22cc33dd44", "5e1f2a", "1f0e"), ("ee55ff66aa77bb88", "9c3d4b", "2a1b")]):
        run = store.new_run("record", seed=run_no)
        seq = 0
        for q in ("lamp", "desk"):
            # semantic: q decides the answer; volatile: token (session) and a JSON nonce
            _add(store, run, seq, "POST", "https://api.a.test/search",
                 json.dumps({"q": q, "token": token, "meta": {"nonce": nonce + "0a9"}}),
                 json.dumps({"results": [f"{q} 1", f"{q} 2"], "requestId": f"{token}{seq}"}))
            seq += 1
            _add(store, run, seq, "GET", f"https://cdn.a.test/app.js?_={int(NOW * 1000) + seq + run_no * 7}", "",
                 "console.log(1)")
            seq += 1
            _add(store, run, seq, "GET", f"https://t.tracker.test/collect?cid={cid}{seq}-aaaa-4bbb-8ccc-{token[:12]}",
                 "", "", status=204)
            seq += 1
        store.finish_run(run)
    yield store
    store.close()


def test_volatile_and_semantic_fields_are_told_apart(two_runs):
    rulesets = infer_rules(two_runs, NOW)
    rules = rulesets["a.test"]
    ignored = {(r.host, r.field) for r in rules.of_kind("ignore")}
    required = {(r.host, r.field) for r in rules.of_kind("require")}
    assert ("api.a.test", "json:token") in ignored
    assert ("api.a.test", "json:meta.nonce") in ignored
    assert ("cdn.a.test", "query:_") in ignored
    assert ("api.a.test", "json:q") in required
    assert not any(field == "json:q" for _, field in ignored)
    q_rule = next(r for r in rules.of_kind("require") if r.field == "json:q")
    assert q_rule.evidence["changed_other_response"] >= 2 and q_rule.confidence >= 0.8
    assert set(q_rule.evidence["values"]) == {"lamp", "desk"}


def test_beacons_become_stubs_with_their_recorded_answer(two_runs):
    rulesets = infer_rules(two_runs, NOW)
    [stub] = rulesets["tracker.test"].of_kind("stub")
    assert (stub.method, stub.path, stub.response["status"]) == ("GET", "/collect", 204)
    assert not rulesets["tracker.test"].of_kind("ignore")  # a stubbed endpoint needs no field rules
    assert summarize(rulesets)["stub"] == 1


def test_har_without_bodies_falls_back_to_status_size_type_and_validators(tmp_path):
    def entry(page, url, size, etag):
        return {"pageref": page, "startedDateTime": "2025-01-15T10:00:00.000Z", "time": 5,
                "request": {"method": "GET", "url": url, "headers": []},
                "response": {"status": 200, "statusText": "OK", "headers": [{"name": "ETag", "value": etag}],
                             "content": {"size": size, "mimeType": "text/css"}}}
    har = {"log": {"pages": [{"id": "p1"}, {"id": "p2"}], "entries": [
        entry("p1", "https://a.test/s.css?cb=1736935200001", 100, '"v1"'),
        entry("p2", "https://a.test/s.css?cb=1736935200777", 100, '"v1"'),
        entry("p1", "https://a.test/list?page=1", 500, '"x1"'),
        entry("p2", "https://a.test/list?page=2", 800, '"x2"')]}}
    (tmp_path / "w.har").write_text(json.dumps(har))
    summary = import_har(tmp_path / "w.har", tmp_path / "rec")
    assert summary == {"recording": str(tmp_path / "rec"), "runs": 2, "exchanges": 4}
    with Store.open_dir(tmp_path / "rec") as store:
        rules = infer_rules(store, NOW)["a.test"]
    assert {r.field for r in rules.of_kind("ignore")} == {"query:cb"}
    assert {r.field for r in rules.of_kind("require")} == {"query:page"}


def test_replay_misses_teach_inference_about_values_one_run_never_showed(tmp_path):
    store = Store.open_dir(tmp_path / "rec", create=True)
    run = store.new_run("record")
    _add(store, run, 0, "GET", "https://api.a.test/feed?page=1&sig=aa11bb22cc33", "", '{"items": [1, 2]}')
    store.finish_run(run)
    [recorded] = store.exchanges()
    replay = store.new_run("replay", seed=7)
    store.add_miss(replay, "GET", "https://api.a.test/feed?page=1&sig=ff99ee88dd77", [], None, recorded.id,
                   {"query:sig": ["ff99ee88dd77", "aa11bb22cc33"]})
    store.add_miss(replay, "GET", "https://api.a.test/feed?page=2&sig=aa11bb22cc33", [], None, recorded.id,
                   {"query:page": ["2", "1"]})
    rules = infer_rules(store, NOW)["a.test"]
    assert [(r.field, r.kind) for r in rules.rules] == [("query:sig", "ignore")]  # page 2 stays unmatched
    store.close()


@pytest.mark.parametrize("value,name,kind", [
    ("P2JCJGOZSRDO", "query:id_token", "base32"), ("k3j5h2l1m9x8", "query:x", "base36"),
    ("aGVsbG8gV29ybGQhIQ9zZ3Rr", "query:blob", "base64"),
    ("burt_callback_3", "query:callback", "jsonp_callback"), ("burt_callback_x", "query:x", "jsonp_callback"),
    ("jQuery3510_1700000000000", "query:c", "jsonp_callback"), ("cb_1a2b3c", "query:callback", "jsonp_callback"),
    ("1234567890.1234567890", "query:cid", "client_id"), ("GA1.1.482019433.1764000000", "cookie:_ga", "client_id"),
    ("4820194331", "query:cb", "cache_buster"), ("873421", "path:ord", "cache_buster"),
    ("Cj0KCQiA1Z2", "query:gclid", "visit_id"), ("sess-81be2c0a", "query:session_id", "visit_id"),
    ("REDACTED-3", "form:csrf_token", "redacted"),  # an export's secret marker (weblica.cache.redact)
])
def test_detectors_for_ids_callbacks_client_ids_and_cache_busters(value, name, kind):
    assert detect(value, NOW, name) == kind


@pytest.mark.parametrize("value", ["how-to-cook-pasta-in-2019", "iphone-15-pro-max-256gb-blue", "cafe2019",
                                   "election-results-2024-live-updates", "iphone15pro", "SUMMERSALE", "4820194331"])
def test_slugs_words_and_plain_numbers_are_not_random(value):
    assert detect(value, NOW, "query:x") is None


def test_path_embedded_parameters_become_fields():
    from weblica.cache.canonical import request_view

    a = request_view("GET", f"https://ad.a.test/ddm/ad/N1234.side;ord=8734210;misc={int(NOW)}?x=1")
    b = request_view("GET", f"https://ad.a.test/ddm/ad/N1234.side;ord=1277301;misc={int(NOW) + 9}?x=1")
    assert a.path == b.path == "/ddm/ad/N1234.side"
    assert a.field_dict()["path:ord"] == ["8734210"] and detect(a.field_dict()["path:misc"][0], NOW) == "epoch_s"
    assert request_view("GET", "https://a.test/a;b/c").path == "/a;b/c"  # a `;` that is no parameter stays


@pytest.mark.parametrize("rotating", [False, True])
def test_path_parameters_are_ignored_on_same_response_evidence_only(tmp_path, rotating):
    # issue 41: a path parameter is part of the path; fresh in every run is not enough when the creative
    # changes with it (the held-out load's creative is not the recorded one), the same answer is
    store = Store.open_dir(tmp_path / "rec", create=True)
    for run_no in range(2):
        run = store.new_run("record")
        for i in range(2):
            _add(store, run, i, "GET", f"https://ad.a.test/ad/side;ord={run_no}873421{i};misc={int(NOW) + 10 * run_no + i}",
                 "", f"creative {(run_no + i) % 2}" if rotating else "creative 0")
        store.finish_run(run)
    rules = infer_rules(store, NOW).get("a.test")
    ignored = {r.field for r in rules.of_kind("ignore")} if rules else set()
    assert ({"path:ord", "path:misc"} & ignored) == (set() if rotating else {"path:ord", "path:misc"})
    store.close()


def _bodyless(status=200, size=1000, ctype="text/html", etag="", modified=""):
    headers = [("Content-Type", ctype)] + ([("ETag", etag)] if etag else []) + \
              ([("Last-Modified", modified)] if modified else [])
    return Exchange(method="GET", url="https://a.test/", status=status, response_headers=headers,
                    response_body_size=size)


def test_response_identity_without_bodies_uses_size_bands_and_validators():
    from weblica.cache.identity import ResponseComparer

    same = ResponseComparer(None).same
    assert same(_bodyless(size=10000), _bodyless(size=10040))          # jitter: one band
    assert not same(_bodyless(size=10000), _bodyless(size=14000))
    assert not same(_bodyless(size=0), _bodyless(size=30))              # empty is never jittered content
    assert same(_bodyless(size=900, etag='"v1"'), _bodyless(size=2000, etag='"v1"'))
    assert not same(_bodyless(etag='"v1"'), _bodyless(etag='"v2"'))
    assert not same(_bodyless(), _bodyless(status=404)) and not same(_bodyless(), _bodyless(ctype="text/css"))


def test_json_identity_masks_timestamps_but_not_prices(tmp_path):
    from weblica.cache.identity import ResponseComparer

    store = Store.open_dir(tmp_path / "rec", create=True)
    run = store.new_run("record")
    rows = [(19.99, NOW, 123456789012), (19.99, NOW + 3.25, 123456789012), (24.99, NOW + 7.5, 123456789012),
            (19.99, NOW, 987654321098)]
    for i, (price, served, item) in enumerate(rows):
        _add(store, run, i, "GET", f"https://api.a.test/price?n={i}", "",
             json.dumps({"price": price, "served": served, "item": item, "rnd": 0.123456789 * (i + 1)}))
    a, b, c, d = store.exchanges()
    compare = ResponseComparer(store, NOW)
    assert compare.same(a, b)                               # only the time and a random fraction changed
    assert not compare.same(a, c) and not compare.same(a, d)   # a price, an item id
    store.close()


def test_pair_sampling_covers_every_run_of_a_busy_endpoint_in_n_log_n():
    from weblica.cache.infer import sample_pairs

    exchanges, fields = [], []
    for run, count in ((1, 3000), (2, 40), (3, 40)):
        for i in range(count):
            exchanges.append(Exchange(method="POST", url="https://api.a.test/graphql", run_id=run, seq=i))
            fields.append({"json:variables.page": [str(i % 50)], "json:nonce": [f"{run}-{i}"]})
    pairs = list(sample_pairs(exchanges, fields, {"json:variables.page", "json:nonce"}))
    n = len(exchanges)
    assert len(pairs) == len(set(pairs)) and len(pairs) <= 6 * n        # never the n² pairs
    runs_paired = {exchanges[i].run_id for pair in pairs for i in pair}
    assert runs_paired == {1, 2, 3}
    cross = {(exchanges[i].run_id, exchanges[j].run_id) for i, j in pairs if exchanges[i].run_id != exchanges[j].run_id}
    assert {(1, 2), (2, 3)} <= cross


def test_semantic_names_are_content_names_not_per_visit_ids():
    from weblica.cache.volatile import semantic_name

    for name in ("query:q", "form:search", "query:product_id", "json:variables.page", "query:sort", "query:cat"):
        assert semantic_name(name), name
    for name in ("query:session_id", "query:request_id", "query:gclid", "form:csrf_token", "query:cb",
                 "query:utm_source", "cookie:page", "header:x-page"):
        assert not semantic_name(name), name
