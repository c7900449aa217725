"""`weblica cache build --ray` (issue 20, point 6): the live-like news site's tasks are built on the actors of
a local Ray instance (2 CPUs), the recordings' rows written to a shared store (a real PostgreSQL server
on loopback where one is installed, else a shared SQLite file) with the bodies in a shared directory;
the kept tasks then score 1 under `weblica run` with the site gone. Without --store the recordings'
own SQLite files come back from the workers."""
import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[1]))

from postgres_server import postgres_server  # noqa: E402
from test_cache_build import invoke, live_tasks, write_tasks  # noqa: E402
from listener import Listener  # noqa: E402

from weblica.cache.demo_site import NewsSite  # noqa: E402
from weblica.cache.store import Store  # noqa: E402

ray = pytest.importorskip("ray", reason="Ray is not installed (pip install 'weblica[ray]')")


@pytest.fixture(scope="module")
def store_url(tmp_path_factory):
    try:
        with postgres_server() as url:
            yield url
    except pytest.skip.Exception:   # no PostgreSQL here: the same test on a shared SQLite file
        yield f"sqlite:///{tmp_path_factory.mktemp('shared') / 'recordings.sqlite'}"


@pytest.fixture(scope="module")
def ray_builds(tmp_path_factory, store_url):
    base = tmp_path_factory.mktemp("raybuild")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        with NewsSite() as site:
            tasks = [t for t in live_tasks(site) if t["id"] in ("news-author", "news-election")]
            path = write_tasks(base / "live.jsonl", tasks)
            common = ["cache", "build", "--tasks", str(path), "--policy", "oracle", "--runs", "2",
                      "--ray", "local", "--ray-workers", "2"]
            for spec in site.resolve:
                common += ["--resolve", spec]
            shared = invoke(*common, "--store", store_url, "--bodies", str(base / "bodies"),
                            "--out", str(base / "shared"))
            again = invoke(*common, "--store", store_url, "--bodies", str(base / "bodies"),
                           "--out", str(base / "shared"))
            own = invoke(*common, "--out", str(base / "own"))
            port = site.port
    finally:
        ray.shutdown()
    return {"base": base, "shared": shared, "again": again, "own": own, "port": port}


def test_both_tasks_are_kept_with_their_rows_in_the_shared_store(ray_builds, store_url):
    report = ray_builds["shared"]
    assert sorted(r["id"] for r in report["kept"]) == ["news-author", "news-election"], report["dropped"]
    for row in report["kept"]:
        assert row["replay_misses"] == 0 and row["outbound_connections"] == 0 and row["live_solved"] == 2, row
        rec = Path(row["recording"])
        assert rec.is_dir() and rec.is_relative_to(ray_builds["base"] / "shared")   # under OUT, not a scratch dir
        assert (rec / "store.json").is_file() and not (rec / "recording.sqlite").exists()
        assert (rec / "actions.json").is_file() and (rec / "rules").is_dir() and list(rec.glob("screens/run-*/*.png"))
        with Store.open_dir(rec, readonly=True) as store:
            assert len(store.runs(("record",))) == 2 and store.count_exchanges() > 5
            assert store.url == store_url
    tasks = [json.loads(line) for line in Path(report["tasks_file"]).read_text().splitlines()]
    assert all(Path(t["source"]["recording"]).is_relative_to((ray_builds["base"] / "shared").resolve()) for t in tasks)
    assert all(r["resumed"] for r in ray_builds["again"]["kept"])   # a rerun on Ray skips finished tasks


def test_the_ray_built_tasks_score_1_under_weblica_run_with_the_network_cut(ray_builds, tmp_path):
    for name in ("shared", "own"):
        listener = Listener(ray_builds["port"])   # where the live site was
        try:
            summary = invoke("run", "--tasks", ray_builds[name]["tasks_file"], "--policy", "oracle",
                             "--out", str(tmp_path / name))
        finally:
            listener.close()
        assert listener.accepted == 0
        assert summary["episodes"] == 2 and summary["success_rate"] == 1.0, (name, summary)


def test_without_a_store_each_recording_comes_back_with_its_own_database(ray_builds):
    report = ray_builds["own"]
    assert sorted(r["id"] for r in report["kept"]) == ["news-author", "news-election"], report["dropped"]
    for row in report["kept"]:
        rec = Path(row["recording"])
        assert (rec / "recording.sqlite").is_file() and not (rec / "store.json").exists()
        with Store.open_dir(rec, readonly=True) as store:
            assert len(store.runs(("record",))) == 2 and store.count_exchanges() > 5


def test_bad_store_options_are_one_line_before_any_work(tmp_path):
    from click.testing import CliRunner

    from weblica.cli import get_cli

    tasks = write_tasks(tmp_path / "t.jsonl", [{"id": "a", "start_url": "https://a.test/", "instruction": "x",
                                                "oracle": [{"name": "done", "arguments": {"answer": ""}}]}])
    base = ["cache", "build", "--tasks", str(tasks), "--policy", "oracle", "--out", str(tmp_path / "out")]
    cases = {("--store", "sqlite:///x.sqlite"): "--bodies DIR go together",
             ("--store", "nosuchdb://h/x", "--bodies", str(tmp_path / "b")): "cannot open it",
             ("--store", "postgresql+psycopg://weblica@127.0.0.1:1/x", "--bodies", str(tmp_path / "b")): "--store"}
    for extra, message in cases.items():
        result = CliRunner().invoke(get_cli(), [*base, *extra])
        assert result.exit_code != 0 and message in result.output, (extra, result.output)
        assert len(result.output.strip().splitlines()) <= 3, result.output
    assert not (tmp_path / "out").exists()
