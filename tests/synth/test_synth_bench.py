"""The Synth bench's measures: page size and tag paths of a hand-written page in real Chromium (known
counts), Jaccard distances of known sets, instruction skeletons, and the bench's pieces on real
bundles (start pages measured, a validation in a child process with its CPU and decisions)."""
from __future__ import annotations

import asyncio
import importlib.util
import json
import shutil
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from weblica.env.task import load_tasks, save_tasks
from weblica.synth.page_metrics import jaccard_distance, mean_pairwise_jaccard, measure
from weblica.synth.intents.skeleton import names_in, skeleton, skeleton_share

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = Path(__file__).parents[1] / "synth_fixtures" / "validation"

PAGE = """<!doctype html><html><head><title>t</title></head><body>
<header><a href="/a">A</a><a href="/b">B</a><a>no href</a></header>
<main><ul><li>1</li><li>2</li></ul><div style="height: 2000px"></div></main>
</body></html>"""


def _bench():
    spec = importlib.util.spec_from_file_location("bench_synth", ROOT / "bench" / "synth.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_hand_written_page_measures_as_counted():
    from playwright.async_api import async_playwright

    from weblica.browser.launcher import context_kwargs, launch_browser

    async def run():
        async with async_playwright() as pw:
            browser = await launch_browser(pw)
            page = await (await browser.new_context(**context_kwargs())).new_page()
            await page.set_content(PAGE)
            size = await measure(page, text=True, tag_paths=True)
            await browser.close()
        return size

    size = asyncio.run(run())
    # html head title body header a a a main ul li li div
    assert (size.elements, size.links) == (13, 2)
    assert 2.8 < size.screens < 3.1  # ~2060 px of content at 720 px a screen
    assert size.tag_paths == {"html>body", "html>body>header", "html>body>header>a", "html>body>main",
                              "html>body>main>ul", "html>body>main>ul>li", "html>body>main>div"}
    assert "no href" in size.text
    assert size.to_dict() == {"elements": 13, "links": 2, "screens": round(size.screens, 2)}


def test_jaccard_distances_of_known_sets():
    assert jaccard_distance({"a", "b"}, {"a", "b"}) == 0.0
    assert jaccard_distance({"a"}, {"b"}) == 1.0
    assert jaccard_distance({"a", "b", "c"}, {"b", "c", "d"}) == pytest.approx(0.5)
    assert jaccard_distance(set(), set()) == 0.0
    # pairs: (ab, ab) 0, (ab, cd) 1, (ab, cd) 1 -> 2/3
    assert mean_pairwise_jaccard([{"a", "b"}, {"a", "b"}, {"c", "d"}]) == pytest.approx(2 / 3)
    assert mean_pairwise_jaccard([{"a"}]) == 0.0


def test_skeletons_mask_names_numbers_and_quotes():
    names = names_in({"items": [{"name": "Pine Retreat", "maker": "Oslo", "price": 12}], "site_name": "Wander"})
    assert names == {"Pine Retreat", "Oslo", "Wander"}
    a = skeleton("What does the Pine Retreat in Oslo cost on 2026-06-02?", names)
    b = skeleton("What does the Cliff Court in Lisbon cost on 2026-07-01?", names)  # unknown names: capitalized
    assert a == b == "what does the <name> in <name> cost on <n>?"
    assert skeleton('Send the form with name "Maya Costa" and 3 guests.') == \
        "send the form with name <quoted> and <n> guests."
    assert skeleton("Buy it for ¥1,005.") == "buy it for <n>."
    assert skeleton_share([("What does the Pine Retreat cost?", names), ("What does the Oslo cost?", names),
                           ("How much is the Pine Retreat?", names)]) == pytest.approx(2 / 3)
    assert skeleton_share([]) == 0.0


def test_bench_measures_start_pages_and_validates_in_a_child_process(tmp_path):
    bench = _bench()
    bundles = tmp_path / "bundles"
    for name in ("forms-travel-b7b72610", "filter-sort-electronics-82999bcb"):
        shutil.copytree(FIXTURES / name, bundles / name)
        path = bundles / name
        save_tasks(load_tasks(path / "tasks.jsonl")[:1], path / "tasks.jsonl")
    figures = bench.site_figures(bench.bundle_dirs(bundles))
    assert figures["sites"] == figures["tasks"] == 2
    assert figures["median_elements"] > 30 and figures["median_links"] > 3 and figures["median_screens"] > 0.5
    assert 0 < figures["structure_distance"] < 1 and figures["phash_distance"] > 0
    assert figures["skeleton_share"] == 1.0

    run = bench.validate_with(ROOT, bundles, tmp_path / "validated", concurrency=2)
    assert run["validated"] == 2 and run["cpu_seconds"] > 0.2 and run["page_loads"] >= 4
    assert run["kept"] == {"forms-travel-b7b72610": ["forms-travel-b7b72610-t01"],
                           "filter-sort-electronics-82999bcb": ["filter-sort-electronics-82999bcb-t01"]}
    assert json.loads((tmp_path / "validated" / "forms-travel-b7b72610" / "tasks.jsonl").read_text())["oracle"]
    # the floor: which documents validation loaded, each site's per-load CPU from them, times its loads
    for name, site in run["sites"].items():
        assert sum(site["documents"].values()) == site["page_loads"]
        host = urlsplit(bench.start_url(bundles / name)).hostname
        assert {urlsplit(url).hostname for url in site["documents"]} == {host}, site["documents"]
    # each document loaded as validation loads it (its episodes, two at once, settled) and, the earlier
    # estimate, reloaded alone with the clock frozen
    documents = {name: site["documents"] for name, site in run["sites"].items()}
    per_load = bench.document_load_cpu(bench.bundle_dirs(tmp_path / "validated"), documents, concurrency=2)
    assert set(per_load) == set(run["sites"]) and all(0 < cpu < 5 for cpu in per_load.values())
    reloaded = bench.reload_floor_cpu(bench.bundle_dirs(tmp_path / "validated"), documents)
    assert set(reloaded) == set(run["sites"]) and all(0 < cpu < 5 for cpu in reloaded.values())
    floor = bench.run_floor(run, per_load, fallback=99.0)
    assert floor == pytest.approx(sum(s["page_loads"] * per_load[n] for n, s in run["sites"].items()))
    assert bench.run_floor(run, {}, fallback=0.05) == pytest.approx(run["page_loads"] * 0.05)
    cost = bench.cost_figures(run, floor_cpu=run["page_loads"] * 0.05, generation_cpu=1.0)
    assert cost["validation_cost_ratio"] == pytest.approx(run["cpu_seconds"] / (run["page_loads"] * 0.05), rel=0.02)
    assert bench.verdict("validation_cost_ratio", 1.5).startswith("pass")
    assert bench.verdict("structure_distance", 0.38).startswith("FAIL")
    # the episodes validation played (seed 0 and the further seeds), replayed bare: the same sites and
    # start pages, every recorded action played again, and about as many page loads
    episodes = run["episodes"]
    assert {e["site"] for e in episodes} == set(run["sites"]) and {e["seed"] for e in episodes} > {0}
    assert all(e["start_url"].startswith("http://") and all("name" in a for a in e["actions"]) for e in episodes)
    # each episode's kind and the documents it loaded: together every page load validation counted
    assert sum(e["loads"] for e in episodes) == run["page_loads"]
    kinds = bench.episode_kinds(episodes)
    assert {"oracle@seed 0", "oracle@other seeds", "random@seed 0"} <= set(kinds) <= {
        "oracle@seed 0", "oracle@other seeds", "random@seed 0", "maximal@seed 0"}
    assert sum(k["episodes"] for k in kinds.values()) == len(episodes)
    assert sum(k["loads"] for k in kinds.values()) == run["page_loads"]
    assert kinds["random@seed 0"]["episodes"] == 2  # one start page a site
    assert kinds["oracle@seed 0"]["episodes"] == 2 and kinds["oracle@other seeds"]["episodes"] == 4  # two more seeds
    assert sum(k["action_share"] for k in kinds.values()) == pytest.approx(1.0, abs=0.02)
    assert bench.episode_kinds([]) is None
    assert bench.episode_kinds([{k: v for k, v in e.items() if k != "loads"} for e in episodes]) is None  # older code
    replayed = bench.replay_episodes(bench.bundle_dirs(tmp_path / "validated"), episodes, bench.process_tree_cpu)
    assert replayed["episodes"] == len(episodes) and replayed["actions"] == sum(len(e["actions"]) for e in episodes)
    assert set(replayed["documents"]) == set(run["sites"])
    assert 0.6 * run["page_loads"] <= replayed["page_loads"] <= 1.4 * run["page_loads"]
    figures = bench.replay_figures(replayed, floor_cpu=replayed["page_loads"] * 0.05, run=run,
                                   run_floor_cpu=run["page_loads"] * 0.05)
    assert figures["cost_ratio"] == pytest.approx(replayed["cpu_seconds"] / (replayed["page_loads"] * 0.05), rel=0.02)


def test_repeated_runs_give_each_ratio_their_median_and_whether_they_decided_alike():
    bench = _bench()

    def run(cpu, kept=("t1", "t2")):
        return {"cpu_seconds": cpu, "page_loads": 100, "kept": {"s": list(kept)},
                "sites": {"s": {"negatives_tried": {"answer": 3}, "negatives_rejected": {"answer": 3}}}}
    assert bench.repeated_figures([(run(20.0), 10.0)]) is None  # one run: nothing to add to its own ratio
    figures = bench.repeated_figures([(run(21.0), 10.0), (run(18.0), 10.0), (run(19.0), 9.0)])
    assert figures["validation_cost_ratios"] == [2.1, 1.8, 2.11] and figures["median_ratio"] == 2.1
    assert figures["spread"] == 0.31 and figures["floor_load_cpu_ms"] == [100.0, 100.0, 90.0]
    assert figures["same_decisions"] is True and bench.verdict("validation_cost_ratio", figures["median_ratio"]).startswith("FAIL")
    # a run that kept other tasks is told apart
    assert bench.repeated_figures([(run(20.0), 10.0), (run(20.0, kept=("t1",)), 10.0)])["same_decisions"] is False


def test_bench_refuses_a_folder_without_bundles(tmp_path, monkeypatch, capsys):
    bench = _bench()
    monkeypatch.setattr("sys.argv", ["synth.py", "--baseline", str(tmp_path)])
    with pytest.raises(SystemExit, match="no bundles"):
        bench.main()
    monkeypatch.setattr("sys.argv", ["synth.py", "--old-code", str(tmp_path)])
    with pytest.raises(SystemExit, match="not a weblica checkout"):
        bench.main()
    monkeypatch.setattr("sys.argv", ["synth.py", "--repeat", "0"])
    with pytest.raises(SystemExit, match="1 or more"):
        bench.main()
