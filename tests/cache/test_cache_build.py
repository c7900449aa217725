"""`weblica cache build` (issue 20, point 6): live tasks on the live-like news site are played by a policy
through the recorder, rules inferred, the policy replayed with the network cut, and the tasks still solved
kept as cache tasks; those then score 1 under `weblica run` with the site gone (a listener on its port
sees no connection). The random policy's tasks are dropped, each with its reason."""
import json
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

sys.path.insert(0, str(Path(__file__).parents[1]))

from listener import Listener  # noqa: E402

from weblica.cache.build import REASONS  # noqa: E402
from weblica.cache.canonical import request_view  # noqa: E402
from weblica.cache.demo_site import NewsSite, news_tasks  # noqa: E402
from weblica.cache.matcher import ReplayIndex  # noqa: E402
from weblica.cache.rules import RuleBook  # noqa: E402
from weblica.cache.store import Store  # noqa: E402
from weblica.cli import get_cli  # noqa: E402

def live_tasks(site):
    """Three tasks with checks and oracles: read an article's byline, search and open a result, navigate."""
    return news_tasks(site)


def invoke(*args):
    result = CliRunner().invoke(get_cli(), [*args, "--json"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return json.loads(result.output.strip().splitlines()[-1])


def write_tasks(path, tasks):
    path.write_text("".join(json.dumps(t) + "\n" for t in tasks))
    return path


@pytest.fixture(scope="module")
def oracle_build(tmp_path_factory):
    base = tmp_path_factory.mktemp("build")
    with NewsSite() as site:
        tasks = write_tasks(base / "live.jsonl", live_tasks(site))
        args = ["cache", "build", "--tasks", str(tasks), "--policy", "oracle", "--runs", "2", "--crawl-depth", "1",
                "--out", str(base / "cache")]
        for spec in site.resolve:
            args += ["--resolve", spec]
        report = invoke(*args)
        again = invoke(*args)     # resumable: every task is read back, none is built again
        port = site.port
    return {"base": base, "report": report, "again": again, "port": port, "site_url": site.url("/")}


def test_the_oracle_tasks_are_kept_with_no_miss_and_a_cache_source(oracle_build):
    report = oracle_build["report"]
    assert [r["id"] for r in report["kept"]] == ["news-author", "news-search", "news-election"], report["dropped"]
    for row in report["kept"]:
        assert row["replay_misses"] == 0 and row["replay_tiers"]["miss"] == 0, row
        assert row["outbound_connections"] == 0 and row["live_solved"] == 2
        assert row["recorded_actions"]["tiers"]["miss"] == 0
        assert row["recorded_actions"]["screens_identical"] in ("2/2", "5/5"), row   # as recorded
        assert row["rules"]["ignore"] >= 1 and row["rules"]["stub"] >= 1   # the ad's cache-buster, the beacon
    tasks = [json.loads(line) for line in Path(report["tasks_file"]).read_text().splitlines()]
    assert [t["source"]["kind"] for t in tasks] == ["cache"] * 3
    assert all(Path(t["source"]["recording"]).is_dir() and t["metadata"]["live_source"]["kind"] == "live"
               for t in tasks)
    written = json.loads((oracle_build["base"] / "cache" / "report.json").read_text())
    assert [r["id"] for r in written["kept"]] == [r["id"] for r in report["kept"]]


def test_a_rerun_skips_the_finished_tasks(oracle_build):
    again = oracle_build["again"]
    assert [r["id"] for r in again["kept"]] == [r["id"] for r in oracle_build["report"]["kept"]]
    assert all(r["resumed"] for r in again["kept"])


def test_crawl_expansion_records_the_links_one_click_away(oracle_build):
    report = oracle_build["report"]
    author = next(r for r in report["kept"] if r["id"] == "news-author")
    assert author["crawled"] >= 2
    with Store.open_dir(author["recording"], readonly=True) as store:
        index = ReplayIndex(store.exchanges(), RuleBook.load(Path(author["recording"]) / "rules"))
        port = oracle_build["port"]
        # the author task only opened the pasta article; the crawl recorded the other two
        for slug in ("election-results-2024-live-updates", "best-desk-lamps-of-the-year"):
            match = index.match(request_view("GET", f"https://www.news.test:{port}/nyheter/{slug}/"))
            assert match.tier == "exact", slug
        assert index.match(request_view("GET", f"https://www.news.test:{port}/nyheter/unknown-article/")).tier == "miss"


def test_the_cache_tasks_score_1_under_weblica_run_with_the_network_cut(oracle_build, tmp_path):
    listener = Listener(oracle_build["port"])   # where the live site was
    try:
        summary = invoke("run", "--tasks", oracle_build["report"]["tasks_file"], "--policy", "oracle",
                         "--out", str(tmp_path / "run"))
    finally:
        listener.close()
    assert listener.accepted == 0
    assert summary["episodes"] == 3 and summary["success_rate"] == 1.0, summary


def test_the_random_policy_is_dropped_with_reasons(tmp_path):
    with NewsSite() as site:
        tasks = live_tasks(site)[:2] + [
            {"id": "news-down", "start_url": site.url("/down/"), "instruction": "Read the page.", "max_steps": 3,
             "checks": [{"type": "answer_match", "expected": "anything"}]}]
        for task in tasks:
            task["max_steps"] = 3
        path = write_tasks(tmp_path / "live.jsonl", tasks)
        args = ["cache", "build", "--tasks", str(path), "--policy", "random", "--runs", "2", "--parallel", "2",
                "--out", str(tmp_path / "cache")]
        for spec in site.resolve:
            args += ["--resolve", spec]
        report = invoke(*args)
    assert not report["kept"]
    reasons = {r["id"]: r["reason"] for r in report["dropped"]}
    assert reasons == {"news-author": "not solved live", "news-search": "not solved live",
                       "news-down": "website failure"}, report["dropped"]
    assert set(report["reasons"]) <= set(REASONS)
    down = next(r for r in report["dropped"] if r["id"] == "news-down")
    assert "503" in down["detail"]
    assert Path(report["tasks_file"]).read_text() == ""


def test_record_with_a_policy_records_its_browse(tmp_path):
    with NewsSite() as site:
        args = ["record", site.url("/"), "--policy", "random", "--instruction", "Look around.", "--runs", "2",
                "--out", str(tmp_path / "rec")]
        for spec in site.resolve:
            args += ["--resolve", spec]
        summary = invoke(*args)
    assert summary["runs"] == 2 and summary["exchanges"] > 0 and len(summary["episodes"]) == 2
    with Store.open_dir(tmp_path / "rec", readonly=True) as store:
        assert len(store.runs(("record",))) == 2
    bad = CliRunner().invoke(get_cli(), ["record", "https://x.test/", "--policy", "random", "--out", str(tmp_path / "x")])
    assert bad.exit_code != 0 and "--instruction" in bad.output


DAILY = {"id": "news-daily", "max_steps": 4, "instruction": "Open today's daily story.",
         "checks": [{"type": "url_match", "expected": "/nyheter/election-results-2024-live-updates/",
                     "mode": "contains"}],
         "oracle": [{"name": "click", "arguments": {"x": 60, "y": 199}}, {"name": "done", "arguments": {"answer": ""}}]}


def test_a_story_picked_by_a_random_id_is_dropped_as_an_essential_miss(tmp_path):
    with NewsSite() as site:
        path = write_tasks(tmp_path / "live.jsonl", [{**DAILY, "start_url": site.url("/daily/")}])
        args = ["cache", "build", "--tasks", str(path), "--policy", "oracle", "--out", str(tmp_path / "cache")]
        for spec in site.resolve:
            args += ["--resolve", spec]
        report = invoke(*args)
    [dropped] = report["dropped"]
    assert dropped["live_solved"] == 2 and dropped["reason"] == "essential request missed", dropped
    assert "/api/story?id=" in dropped["detail"] and dropped["replay_misses"] >= 1
    assert not report["kept"] and dropped["outbound_connections"] == 0


def chat(content):
    return ({"request": {"path": "/v1/chat/completions"},
             "response": {"status": 200, "body": {"id": "chatcmpl-1", "object": "chat.completion", "model": "m",
                                                  "choices": [{"index": 0, "finish_reason": "stop",
                                                               "message": {"role": "assistant", "content": content}}],
                                                  "usage": {"prompt_tokens": 1, "completion_tokens": 1,
                                                            "total_tokens": 2}}}}, 0.0)


def test_an_openai_policy_builds_the_cache_through_the_wire_format_server(tmp_path):
    from fixtures_models import ProviderServer

    # the model (Qwen3-VL, 0-1000 grid) clicks the pasta article, then answers its byline; the same two
    # turns for each of the 2 recorded episodes and the cached replay
    turns = ['<think>The pasta article is first.</think>\n'
             '<tool_call>{"name": "click", "arguments": {"x": 78, "y": 286}}</tool_call>',
             '<think>The byline says Anna Berg.</think>\n'
             '<tool_call>{"name": "done", "arguments": {"answer": "Anna Berg"}}</tool_call>']
    with NewsSite() as site, ProviderServer() as server:
        server.queued.extend(chat(t) for _ in range(3) for t in turns)
        task = live_tasks(site)[0]
        del task["oracle"]
        path = write_tasks(tmp_path / "live.jsonl", [task])
        args = ["cache", "build", "--tasks", str(path), "--policy", f"openai:{server.url}/v1", "--out",
                str(tmp_path / "cache")]
        for spec in site.resolve:
            args += ["--resolve", spec]
        report = invoke(*args)
        chats = [r for r in server.requests if r["path"] == "/v1/chat/completions"]
    [kept] = report["kept"]
    assert kept["id"] == "news-author" and kept["live_solved"] == 2 and kept["replay_misses"] == 0
    assert len(chats) == 6 and not server.queued
    assert report["policy"].startswith("openai:")


def test_bad_input_is_one_line_naming_the_fix(tmp_path):
    task = {"id": "t", "start_url": "https://www.news.test/", "instruction": "x"}
    dup = write_tasks(tmp_path / "dup.jsonl", [task, task])
    out_file = tmp_path / "file"
    out_file.write_text("x")
    cases = [(["--tasks", str(dup), "--policy", "random"], "appears twice"),
             (["--tasks", str(write_tasks(tmp_path / "one.jsonl", [task])), "--policy", "oracle"], "no oracle"),
             (["--tasks", str(tmp_path / "one.jsonl"), "--policy", "gpt"], "unknown policy"),
             (["--tasks", str(tmp_path / "one.jsonl"), "--policy", "random", "--resolve", "nonsense"], "HOST:PORT"),
             (["--tasks", str(tmp_path / "one.jsonl"), "--policy", "random", "--out", str(out_file)], "is a file")]
    for args, says in cases:
        args = ["cache", "build", *args] + ([] if "--out" in args else ["--out", str(tmp_path / "o")])
        result = CliRunner().invoke(get_cli(), args)
        assert result.exit_code != 0 and says in result.output, (args, result.output)
        assert "Traceback" not in result.output
    assert not (tmp_path / "o").exists() and out_file.read_text() == "x"


def test_a_task_without_checks_is_decided_by_the_judge(tmp_path):
    from fixtures_models import ProviderServer

    with NewsSite() as site, ProviderServer() as server:
        author, election = live_tasks(site)[0], live_tasks(site)[2]
        for task in (author, election):
            task["checks"], task["rubric"] = [], "The agent opened the article the instruction names."
        # the author task: both live episodes and the cached replay judged successful; the election task:
        # both live episodes judged unsuccessful
        verdicts = ["successful"] * 3 + ["unsuccessful"] * 2
        server.queued.extend(chat(f"The screenshots show the article.\nVerdict: {v}") for v in verdicts)
        path = write_tasks(tmp_path / "live.jsonl", [author, election])
        args = ["cache", "build", "--tasks", str(path), "--policy", "oracle", "--judge",
                f"openai:{server.url}/v1#judge", "--out", str(tmp_path / "cache")]
        for spec in site.resolve:
            args += ["--resolve", spec]
        report = invoke(*args)
        judged = [r for r in server.requests if r["path"] == "/v1/chat/completions"]
    assert [r["id"] for r in report["kept"]] == ["news-author"] and report["kept"][0]["replay_misses"] == 0
    assert [(r["id"], r["reason"]) for r in report["dropped"]] == [("news-election", "not solved live")]
    assert len(judged) == 5 and not server.queued
    image = [p for m in judged[-1]["json"]["messages"] if isinstance(m["content"], list) for p in m["content"]
             if p.get("type") == "image_url"]
    assert image   # the judge saw the episode's screenshots
    result = json.loads(next((tmp_path / "cache" / "results").glob("news-author-*.json")).read_text())
    assert result["replay"]["policy"]["judge"] == "success"
    bad = CliRunner().invoke(get_cli(), ["cache", "build", "--tasks", str(path), "--policy", "oracle", "--judge",
                                         "random", "--out", str(tmp_path / "x")])
    assert bad.exit_code != 0 and "judge" in bad.output and not (tmp_path / "x").exists()
