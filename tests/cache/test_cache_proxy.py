"""The proxy addons with a plain HTTP client: record over HTTPS with --resolve, replay without dialing out."""
import threading
import time
from email.utils import formatdate, parsedate_to_datetime

import httpx
import pytest
from flask import Flask, request
from mitmproxy.test import tflow, tutils
from werkzeug.serving import generate_adhoc_ssl_context, make_server

from weblica.cache.addons import (REPLAY_HEADER, EpisodeHeader, HostMapper, Recorder, Replayer, Stubber,
                                  parse_resolve)
from weblica.cache.backend import load_source
from weblica.cache.exchange import Exchange
from weblica.cache.proxy import ProxyServer
from weblica.cache.rules import Rule, RuleSet, save_rules
from weblica.cache.store import Store
from weblica.env.backend import EPISODE_HEADER
from listener import Listener  # noqa: F401  (the tests that replay with the origin gone import it from here)


def _app() -> Flask:
    app = Flask(__name__)

    @app.get("/item/<int:item>")
    def item(item):
        return {"item": item, "host": request.host.split(":")[0], "cb": request.args.get("_")}

    return app


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    """One HTTPS server under a made-up host name, recorded through the proxy with --resolve."""
    server = make_server("127.0.0.1", 0, _app(), threaded=True, ssl_context=generate_adhoc_ssl_context())
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    port = server.server_port
    rec = tmp_path_factory.mktemp("proxy") / "rec"
    store = Store.open_dir(rec, create=True)
    run = store.new_run("record")
    recorder = Recorder(store, run)
    with ProxyServer([EpisodeHeader(), HostMapper(parse_resolve([f"www.site.test:{port}:127.0.0.1"])), recorder]) as proxy:
        with httpx.Client(proxy=proxy.url, verify=False) as client:
            for i in (1, 2):
                r = client.get(f"https://www.site.test:{port}/item/{i}?_={i}000", headers={EPISODE_HEADER: "ep"})
                assert r.status_code == 200 and r.json()["host"] == "www.site.test"
    store.close()
    server.shutdown()
    server.server_close()
    return rec, port


def test_recorder_keeps_host_names_and_drops_the_episode_header(recorded):
    rec, port = recorded
    exchanges = Store.open_dir(rec).exchanges()
    assert [e.url for e in exchanges] == [f"https://www.site.test:{port}/item/1?_=1000",
                                          f"https://www.site.test:{port}/item/2?_=2000"]
    assert all(EPISODE_HEADER.lower() not in {k.lower() for k, _ in e.request_headers} for e in exchanges)
    assert [e.seq for e in exchanges] == [0, 1]


def test_replay_answers_from_the_store_and_never_dials_out(recorded, tmp_path):
    rec, port = recorded
    rules = tmp_path / "rules"
    save_rules(RuleSet("site.test", [Rule("ignore", field="query:_")]), rules)
    source = load_source(rec, [rules])
    replayer = Replayer(lambda episode: source)
    listener = Listener(port)  # where the original server was: it must see nothing
    try:
        with ProxyServer([EpisodeHeader(), Stubber(lambda e: source), replayer]) as proxy:
            with httpx.Client(proxy=proxy.url, verify=False) as client:
                exact = client.get(f"https://www.site.test:{port}/item/1?_=1000")
                normalized = client.get(f"https://www.site.test:{port}/item/2?_=99999")
                miss = client.get(f"https://www.site.test:{port}/item/3?_=1000")
                other_host = client.get(f"https://api.site.test:{port}/item/1?_=1000")
        time.sleep(0.3)
    finally:
        listener.close()
        source.store.close()
    assert exact.status_code == 200 and exact.json() == {"item": 1, "host": "www.site.test", "cb": "1000"}
    assert exact.headers[REPLAY_HEADER] == "exact"
    assert normalized.json()["item"] == 2 and normalized.headers[REPLAY_HEADER] == "normalized"
    assert miss.status_code == 502 and "not recorded" in miss.text and "/item/" in miss.text
    assert other_host.status_code == 502
    assert dict(replayer.stats.tiers) == {"exact": 1, "normalized": 1, "scored": 0, "stub": 0, "miss": 2}
    assert replayer.stats.outbound_attempts == 0
    assert listener.accepted == 0
    misses = Store.open_dir(rec).misses()
    assert [m.url for m in misses][0].endswith("/item/3?_=1000")
    assert misses[0].closest_exchange_id is not None and "path" in misses[0].differing


def test_replay_refreshes_dates_and_cookie_expiry_and_serves_stubs(tmp_path):
    rec = tmp_path / "rec"
    store = Store.open_dir(rec, create=True)
    run = store.new_run("record")
    day_ago = time.time() - 86400
    expires = formatdate(day_ago + 3600, usegmt=True)
    store.add_exchange(Exchange(
        method="GET", url="http://old.test/", status=200, run_id=run, started=day_ago, ended=day_ago,
        response_headers=[("Date", formatdate(day_ago, usegmt=True)), ("Content-Type", "text/html"),
                          ("Set-Cookie", f"sid=abc; Expires={expires}; Path=/")]), None, b"<p>old</p>")
    store.close()
    save_rules(RuleSet("old.test", [Rule("stub", method="POST", path="/collect", response={"status": 204})]),
               tmp_path / "rules")
    source = load_source(rec, [tmp_path / "rules"])
    replayer = Replayer(lambda e: source)
    with ProxyServer([EpisodeHeader(), Stubber(lambda e: source), replayer]) as proxy:
        with httpx.Client(proxy=proxy.url) as client:
            page = client.get("http://old.test/")
            beacon = client.post("http://old.test/collect?cid=123", content=b"{}")
    source.store.close()
    assert page.text == "<p>old</p>"
    assert abs(parsedate_to_datetime(page.headers["date"]).timestamp() - time.time()) < 120
    assert "sid=abc" in page.headers["set-cookie"] and expires not in page.headers["set-cookie"]
    assert beacon.status_code == 204 and beacon.headers[REPLAY_HEADER] == "stub"
    assert replayer.stats.tiers["stub"] == 1 and replayer.stats.tiers["exact"] == 1


def _preflight(asked: str, method: str = "GET"):
    flow = tflow.tflow(req=tutils.treq(method=b"OPTIONS", headers=[
        (b"origin", b"https://www.a.test"), (b"access-control-request-method", method.encode()),
        (b"access-control-request-headers", asked.encode())]))
    return flow


def test_episode_header_preflights_are_answered_or_cleaned():
    addon = EpisodeHeader()
    only_ours = _preflight("x-weblica-episode")
    addon.request(only_ours)
    assert only_ours.response is not None and only_ours.response.status_code == 204
    assert "x-weblica-episode" in only_ours.response.headers["access-control-allow-headers"]

    with_json = _preflight("content-type,x-weblica-episode", "POST")
    addon.request(with_json)
    assert with_json.response is None  # a real preflight: forwarded without our header
    assert with_json.request.headers["access-control-request-headers"] == "content-type"
    with_json.response = tutils.tresp(headers=[(b"access-control-allow-headers", b"Content-Type")])
    addon.response(with_json)
    assert "x-weblica-episode" in with_json.response.headers["access-control-allow-headers"].lower()

    plain = tflow.tflow(req=tutils.treq(headers=[(EPISODE_HEADER.encode(), b"ep-1")]))
    addon.request(plain)
    assert EPISODE_HEADER not in plain.request.headers and plain.metadata["weblica_episode"] == "ep-1"


def test_replay_serve_runs_a_proxy_any_client_can_use(recorded):
    import asyncio

    from weblica.cache import replay

    rec, port = recorded
    urls: list[str] = []
    loop = asyncio.new_event_loop()
    task = loop.create_task(replay.serve(rec, ready=urls.append))
    stopped: list[str] = []

    def run() -> None:
        try:
            loop.run_until_complete(task)
        except asyncio.CancelledError:  # how this test stops the server, as Ctrl-C does for the CLI
            stopped.append("cancelled")

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    try:
        deadline = time.time() + 20
        while not urls and time.time() < deadline:
            time.sleep(0.05)
        with httpx.Client(proxy=urls[0], verify=False) as client:
            r = client.get(f"https://www.site.test:{port}/item/2?_=2000")
        assert r.json()["item"] == 2 and r.headers[REPLAY_HEADER] == "exact"
    finally:
        loop.call_soon_threadsafe(task.cancel)
        thread.join(10)
    assert not thread.is_alive() and stopped == ["cancelled"]


def test_parse_resolve_forms():
    assert parse_resolve(["www.a.test:443:127.0.0.1"]) == {("www.a.test", 443): ("127.0.0.1", None)}
    assert parse_resolve(["A.test:80:127.0.0.1:8081"]) == {("a.test", 80): ("127.0.0.1", 8081)}
    assert parse_resolve(["*:80:[::1]:9000", "b.test:80:[::1]"]) == {("*", 80): ("::1", 9000), ("b.test", 80): ("::1", None)}
    import pytest
    for bad in ("a.test:80", "a.test:x:127.0.0.1", "a.test:80:127.0.0.1:http"):
        with pytest.raises(ValueError, match="--resolve"):
            parse_resolve([bad])
