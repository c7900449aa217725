"""Record a live-like multi-host site twice, infer rules, replay it isolated: real Chromium, real
mitmproxy, real SQLite. The original servers are replaced by listeners that must see no connection."""
import asyncio
import json
import re
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from PIL import Image, ImageChops

sys.path.insert(0, str(Path(__file__).parents[1]))

from cache_sites.shop import SEARCH_ACTIONS, ShopSite  # noqa: E402
from listener import Listener  # noqa: E402

from weblica.cache.rules import RuleBook  # noqa: E402
from weblica.cache.store import Store  # noqa: E402
from weblica.cli import get_cli  # noqa: E402


def invoke(*args: str) -> dict:
    result = CliRunner().invoke(get_cli(), [*args, "--json"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return json.loads(result.output.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def shop(tmp_path_factory):
    base = tmp_path_factory.mktemp("shop")
    actions = base / "actions.json"
    actions.write_text(json.dumps(SEARCH_ACTIONS))
    rec, rules = base / "rec", base / "rules"
    with ShopSite() as site:
        args = ["record", site.start_url, "--actions", str(actions), "--runs", "2", "--out", str(rec)]
        for spec in site.resolve:
            args += ["--resolve", spec]
        summary = invoke(*args)
        live_hits = len(site.hits.log)
    inferred = invoke("rules", "infer", str(rec), "--out", str(rules))
    return {"rec": rec, "rules": rules, "summary": summary, "inferred": inferred, "ports": dict(site.ports),
            "live_hits": live_hits, "base": base}


def test_record_twice_through_the_proxy(shop):
    assert shop["summary"]["runs"] == 2 and shop["summary"]["exchanges"] >= 40
    store = Store.open_dir(shop["rec"])
    hosts = {e.view.host.split(":")[0] for e in store.exchanges()}
    assert hosts == {"shop.test", "www.shop.test", "api.shop.test", "cdn.shop.test", "stats.tracker.test"}
    assert shop["live_hits"] >= shop["summary"]["exchanges"]  # everything came from the live servers
    for run in store.runs():
        screens = list((shop["rec"] / "screens" / f"run-{run.id}").glob("step-*.png"))
        assert len(screens) == len(SEARCH_ACTIONS) + 1
    statuses = {(e.method, e.view.path): e.status for e in store.exchanges()}
    assert statuses[("GET", "/")] in (200, 301) and statuses[("POST", "/search")] == 303


def test_inferred_rules_tell_volatile_from_semantic(shop):
    book = RuleBook.load(shop["rules"])
    p = shop["ports"]["https"]

    def ignored(method, host, path, *names):
        return book.ignored(method, f"{host}:{p}", path, set(names))

    assert ignored("GET", "cdn.shop.test", "/static/app.js", "query:_") == {"query:_"}
    assert ignored("GET", "cdn.shop.test", "/static/style.css", "query:v") == {"query:v"}
    assert ignored("POST", "api.shop.test", "/graphql", "json:nonce", "json:csrf") == {"json:nonce", "json:csrf"}
    assert ignored("POST", "www.shop.test", "/search", "form:csrf") == {"form:csrf"}
    assert book.required("POST", f"www.shop.test:{p}", "/search", {"form:q", "form:csrf"}) == {"form:q"}
    assert book.required("GET", f"api.shop.test:{p}", "/api/suggest", {"query:q"}) == {"query:q"}
    for rs in book.by_domain.values():  # the query is never ignored anywhere
        assert not [r for r in rs.of_kind("ignore") if r.field.endswith(":q")]
    stubs = {(r.method, r.path) for rs in book.by_domain.values() for r in rs.of_kind("stub")}
    assert stubs == {("POST", "/collect"), ("GET", "/pixel.gif")}
    rule = next(r for r in book.by_domain["shop.test"].of_kind("ignore") if r.field == "json:nonce")
    assert rule.source == "inferred" and 0.5 <= rule.confidence <= 1 and rule.evidence["runs"]


def _pixel_diff(a: Path, b: Path) -> int:
    diff = ImageChops.difference(Image.open(a).convert("RGB"), Image.open(b).convert("RGB"))
    return sum(1 for px in diff.getdata() if px != (0, 0, 0))


def test_replay_check_is_isolated_complete_and_faithful(shop):
    listeners = [Listener(port) for port in shop["ports"].values()]
    try:
        # a seed no recorded run used: the page's own nonces and ids differ from both recordings
        report = invoke("replay", str(shop["rec"]), "--check", "--seed", "5", "--rules", str(shop["rules"]))
    finally:
        for listener in listeners:
            listener.close()
    tiers = report["tiers"]
    assert tiers["miss"] == 0, report["misses"]
    assert tiers["exact"] >= 10 and tiers["normalized"] >= 3 and tiers["stub"] >= 4
    assert report["requests"] == sum(tiers.values())
    assert report["outbound_connections"] == 0
    assert [listener.accepted for listener in listeners] == [0, 0]
    identical, total = map(int, report["screens_identical"].split("/"))
    assert total == len(SEARCH_ACTIONS) + 1
    assert identical == total, _describe_differences(shop["rec"], report, total)


def _describe_differences(rec: Path, report: dict, total: int) -> str:
    reference = rec / "screens" / f"run-{report['reference_run']}"
    replayed = rec / "screens" / f"replay-{report['replay_run']}"
    return "; ".join(f"step {step}: {_pixel_diff(reference / f'step-{step}.png', replayed / f'step-{step}.png')} px"
                     for step in range(total))


def test_a_query_never_recorded_is_a_miss_not_someone_elses_results(shop, tmp_path):
    actions = [dict(a) for a in SEARCH_ACTIONS]
    actions[4] = {"name": "write", "arguments": {"text": "sofa"}}
    path = tmp_path / "actions.json"
    path.write_text(json.dumps(actions))
    report = invoke("replay", str(shop["rec"]), "--check", "--actions", str(path), "--rules", str(shop["rules"]))
    missed = [(m["method"], m["url"]) for m in report["misses"]]
    assert any(method == "POST" and url.endswith("/search") for method, url in missed), missed
    miss = next(m for m in report["misses"] if m["url"].endswith("/search"))
    assert "form:q" in miss["differing"] and miss["closest"].endswith("/search")
    assert report["outbound_connections"] == 0


def test_a_cache_task_runs_in_the_env_against_its_recording(shop):
    from weblica.env.browser_env import WebEnv
    from weblica.env.sources import open_backends
    from weblica.env.task import Check, Task, TaskSource

    task = Task(id="shop-lamp", start_url=f"http://shop.test:{shop['ports']['http']}/",
                instruction="Search for lamps", source=TaskSource(kind="cache", recording=str(shop["rec"])),
                checks=[Check(type="url_match", expected="/results?q=lamp", mode="contains")])

    async def episode():
        async with open_backends([task]) as backends:
            env = WebEnv(backends=backends)
            try:
                obs = await env.reset(task, seed=11)
                assert "/?ref=home" in obs.url
                obs, *_ = await env.step(SEARCH_ACTIONS[:3])
                _, reward, terminated, _, info = await env.step([{"name": "done", "arguments": {"answer": "ok"}}])
                return obs, reward, terminated, backends["cache"].stats
            finally:
                await env.close()

    obs, reward, terminated, stats = asyncio.run(episode())
    assert "/results?q=lamp" in obs.url
    assert terminated and reward == 1.0
    assert stats.tiers["miss"] == 0 and stats.outbound_attempts == 0


def test_har_export_redacts_secrets_and_reimports_as_runs(shop, tmp_path):
    har = tmp_path / "shop.har"
    invoke("export", str(shop["rec"]), "--format", "har", "--out", str(har))
    entries = json.loads(har.read_text())["log"]["entries"]
    cookies = [h["value"] for e in entries for h in e["request"]["headers"] if h["name"].lower() == "cookie"]
    assert cookies and all(re.fullmatch(r"REDACTED-\d+", c) for c in cookies)
    kept = tmp_path / "kept.har"
    invoke("export", str(shop["rec"]), "--format", "har", "--out", str(kept), "--keep-secrets")
    assert "sid=" in kept.read_text()
    redacted = invoke("import", str(har), "--out", str(tmp_path / "redacted"))
    assert redacted["runs"] == 2 and redacted["exchanges"] == shop["summary"]["exchanges"]
    # the CSRF tokens are redacted in this export (REDACTED-N markers): rules come from the export that kept them
    imported = invoke("import", str(kept), "--out", str(tmp_path / "imported"))
    assert imported["runs"] == 2 and imported["exchanges"] == shop["summary"]["exchanges"]
    inferred = invoke("rules", "infer", str(tmp_path / "imported"), "--out", str(tmp_path / "rules"))
    assert inferred["ignore"] == shop["inferred"]["ignore"] and inferred["stub"] == shop["inferred"]["stub"]
    warc = tmp_path / "shop.warc.gz"
    assert invoke("export", str(shop["rec"]), "--format", "warc", "--out", str(warc))["exchanges"] == \
        shop["summary"]["exchanges"]
    assert invoke("import", str(warc), "--out", str(tmp_path / "from_warc"))["exchanges"] == shop["summary"]["exchanges"]
