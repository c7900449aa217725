"""Issue 20's probes end to end: a news site with slug articles, a search recorded with one query and a
rotating ad behind a random cache-buster, recorded twice through mitmproxy with real Chromium, rules
inferred, replayed with the network cut. A miss beats a wrong page; the rules never cost the ad."""
import json
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

sys.path.insert(0, str(Path(__file__).parents[1]))

from weblica.cache.demo_site import NEWS_ACTIONS, RECORDED_ARTICLE, NewsSite  # noqa: E402
from listener import Listener  # noqa: E402

from weblica.cache.rules import RuleBook  # noqa: E402
from weblica.cli import get_cli  # noqa: E402


def invoke(*args: str) -> dict:
    result = CliRunner().invoke(get_cli(), [*args, "--json"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return json.loads(result.output.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def news(tmp_path_factory):
    base = tmp_path_factory.mktemp("news")
    actions = base / "actions.json"
    rec, rules, no_rules = base / "rec", base / "rules", base / "no-rules"
    no_rules.mkdir()
    with NewsSite() as site:
        # the browse ends on the player, which fetches the clip whole
        browse = NEWS_ACTIONS + [{"name": "goto_url", "arguments": {"url": site.url("/player/")}}]
        actions.write_text(json.dumps(browse))
        args = ["record", site.url("/"), "--actions", str(actions), "--runs", "2", "--out", str(rec)]
        for spec in site.resolve:
            args += ["--resolve", spec]
        summary = invoke(*args)
        port = site.port
    invoke("rules", "infer", str(rec), "--out", str(rules))
    return {"rec": rec, "rules": rules, "no_rules": no_rules, "port": port, "base": base, "summary": summary,
            "browse": browse}


def replay(news, rules, actions=None, tmp=None):
    args = ["replay", str(news["rec"]), "--check", "--seed", "5", "--rules", str(rules)]
    if actions is not None:
        path = tmp / "probe.json"
        path.write_text(json.dumps(actions))
        args += ["--actions", str(path)]
    listener = Listener(news["port"])
    try:
        report = invoke(*args)
    finally:
        listener.close()
    assert listener.accepted == 0 and report["outbound_connections"] == 0
    return report


def test_the_cache_buster_is_ignored_and_no_slug_becomes_a_template(news):
    assert news["summary"]["runs"] == 2 and not news["summary"]["errors"]
    book = RuleBook.load(news["rules"])
    rules = [r for rs in book.by_domain.values() for r in rs.rules]
    assert not [r for r in rules if r.kind == "path"], [r.to_dict() for r in rules]
    host = f"ads.adnet.test:{news['port']}"
    assert book.ignored("GET", host, "/ad", {"query:cb", "query:slot"}) == {"query:cb"}
    assert not book.required("GET", host, "/ad", {"query:cb"})


def test_the_ad_is_served_with_the_inferred_rules_as_with_none(news):
    with_rules = replay(news, news["rules"])
    without = replay(news, news["no_rules"])
    total = len(news["browse"]) + 1
    assert with_rules["tiers"]["miss"] == 0, with_rules["misses"]
    assert with_rules["screens_identical"] == without["screens_identical"] == f"{total}/{total}"
    assert with_rules["tiers"]["normalized"] >= 3   # the three ad requests, by the ignored cache-buster


def test_an_unrecorded_article_and_an_unrecorded_query_are_misses(news, tmp_path):
    port = news["port"]
    election = f"https://www.news.test:{port}/nyheter/election-results-2024-live-updates/"
    probe = [{"name": "goto_url", "arguments": {"url": election}},
             {"name": "goto_url", "arguments": {"url": f"https://www.news.test:{port}/nyheter/{RECORDED_ARTICLE}/"}},
             {"name": "click", "arguments": {"x": 150, "y": 74}},
             {"name": "write", "arguments": {"text": "sofa"}},
             {"name": "press_keys", "arguments": {"keys": ["Enter"]}}]
    for rules in (news["rules"], news["no_rules"]):
        report = replay(news, rules, probe, tmp_path)
        missed = {m["url"] for m in report["misses"]}
        assert election in missed, report["misses"]
        assert f"https://www.news.test:{port}/search?q=sofa" in missed, report["misses"]
        miss = next(m for m in report["misses"] if m["url"].endswith("q=sofa"))
        assert miss["closest"].endswith("q=lamp") and "query:q" in miss["differing"]
        assert report["tiers"]["miss"] == 2, report["misses"]   # the recorded article is still served


def test_range_requests_from_the_page_are_cut_from_the_recorded_clip(news):
    import asyncio

    from weblica.cache.backend import CacheBackend
    from weblica.cache.play import make_env
    from weblica.env.task import Task, TaskSource

    async def titles() -> list[str]:
        backend = CacheBackend([news["rec"]], [news["rules"]], log_misses=False)
        env = make_env({"cache": backend})
        source = TaskSource(kind="cache", recording=str(news["rec"]))
        out = []
        try:
            for range_ in ("", "100-199", "-48", "9000-"):
                url = f"https://www.news.test:{news['port']}/player/" + (f"#{range_}" if range_ else "")
                obs = await env.reset(Task(id="player", start_url=url, instruction="", source=source), seed=5)
                out.append(obs.tabs[obs.active_tab].title)
        finally:
            await env.close()
            await backend.stop()
        return out

    whole, part, tail, beyond = asyncio.run(titles())
    assert whole == "200 4096 0 -"
    assert part == "206 100 100 bytes 100-199/4096"
    assert tail == "206 48 208 bytes 4048-4095/4096"
    assert beyond.startswith("502 ")   # past the end of the clip: a miss, not some other bytes


def test_replay_check_reports_the_replay_with_and_without_the_rules_side_by_side(news):
    report = replay(news, news["rules"])
    with_rules, without = report["with_rules"], report["without_rules"]
    total = len(news["browse"]) + 1
    assert with_rules["rules"] > 0 and without["rules"] == 0
    assert with_rules["tiers"] == report["tiers"] and with_rules["screens_identical"] == report["screens_identical"]
    assert with_rules["served"] == with_rules["requests"] and with_rules["misses"] == 0
    assert without["screens_identical"] == with_rules["screens_identical"] == f"{total}/{total}"
    assert without["served"] <= with_rules["served"] and without["tiers"]["stub"] == 0 < with_rules["tiers"]["stub"]
    human = CliRunner().invoke(get_cli(), ["replay", str(news["rec"]), "--check", "--seed", "5", "--rules",
                                           str(news["rules"])])
    assert human.exit_code == 0, human.output
    [with_line] = [line for line in human.output.splitlines() if line.startswith("with rules")]
    [without_line] = [line for line in human.output.splitlines() if line.startswith("without rules")]
    assert with_line.split()[-1] == without_line.split()[-1] == f"{total}/{total}"
