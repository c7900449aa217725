"""`weblica demo`: the offline end-to-end showcase.

Synthesizes a handful of sites across skills and validates them in Chromium, runs the oracle and the
random policy on their tasks and the adversarial policy (a reward hacker that must score 0) on one task
per site (reports with pass@k, per skill), records a live-like news site (several hosts, cache-busters, a
beacon, a rotating ad, a search) through the recording proxy twice, infers replay rules from the two
recordings, replays it with the network cut with the rules and without, builds a cached environment
from three live tasks with an agent (`weblica cache build`, the oracle playing), trains a tiny Qwen3-VL on a menus
site (SFT on the oracle's episodes, then one GRPO
iteration in the same environments), and serves the trajectory viewer over the runs.
"""
from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import click

from weblica.cli import UserError, emit

DEMO_SKILLS = ("search", "forms", "filter-sort", "checkout")


def _stage(console: Any, text: str) -> None:
    console.print(f"[bold cyan]==>[/] {text}")


def run_demo(out: Path, seed: int, sites: int, tasks_per_site: int, parallel: int, console: Any,
             train: bool = True) -> dict[str, Any]:
    from weblica.env.task import load_tasks, save_tasks
    from weblica.synth.synthesize import synthesize

    started = time.monotonic()
    summary: dict[str, Any] = {"out": str(out)}
    # 1. synth: sites across skills, validated (oracle succeeds, no-op / random / wrong answers rejected)
    _stage(console, f"synthesizing {sites} sites ({', '.join(DEMO_SKILLS[:sites])}) and validating their tasks")
    results = []
    for i, skill in enumerate((DEMO_SKILLS * ((sites + len(DEMO_SKILLS) - 1) // len(DEMO_SKILLS)))[:sites]):
        results += synthesize(skill=skill, n=1, seed=seed + i, out=out / "sites", concurrency=parallel)
    tasks = []
    for result in results:
        kept = load_tasks(result.path / "tasks.jsonl")
        for task in kept:  # the bundles live under --out, not in a folder the sources search by default
            task.source.bundle = str(result.path.resolve())
        tasks += kept[:tasks_per_site]
        console.print(f"    {result.site_id}: {result.tasks_kept}/{result.tasks_generated} tasks valid")
    if not tasks:
        raise UserError("no valid synth task was produced; run `weblica validate` on the sites for details")
    save_tasks(tasks, out / "tasks.jsonl")
    summary["synth"] = {"sites": len(results), "tasks_valid": sum(r.tasks_kept for r in results),
                        "tasks_generated": sum(r.tasks_generated for r in results), "tasks_used": len(tasks)}
    # the rewards: every cheating answer and state validation tried, and what a person writes
    from weblica.scoring.checks import paraphrases_accepted

    tried = sum(sum(r.negatives_tried.values()) for r in results)
    rejected = sum(sum(r.negatives_rejected.values()) for r in results)
    kinds = sorted({k for r in results for k in r.negatives_tried})
    said = paraphrases_accepted(tasks)
    summary["rewards"] = {"negatives_tried": tried, "negatives_rejected": rejected, "kinds": len(kinds),
                          "paraphrases": {k: v[:2] for k, v in said.items()}}
    console.print(f"    rewards: {rejected}/{tried} cheating answers and states rejected over {len(kinds)} kinds "
                  "(lists, hedges in any language, look-alikes, two assertions, named fields typed wrong, ...); "
                  "plain answers accepted: " + ", ".join(f"{k} {v[0]}/{v[1]}" for k, v in said.items()), soft_wrap=True)
    from weblica.synth.gallery import write_gallery  # a look at the sites: start pages, one screenshot each
    summary["synth"]["gallery"] = str(write_gallery(out / "sites", inner=False)[0])
    console.print(f"    gallery: {summary['synth']['gallery']}")
    # 2. rollouts and reports: the oracle (a ceiling that must be 100%), the random policy (the floor) and
    # the adversarial policy (a reward hacker listing every candidate, clicking everything: must be 0%),
    # the last on one task per site to keep the demo short
    reports = {}
    adversarial_tasks = [kept[0] for kept in _first_per_site(tasks)]
    for policy, played in (("oracle", tasks), ("random", tasks), ("adversarial", adversarial_tasks)):
        _stage(console, f"running the {policy} policy on {len(played)} tasks")
        reports[policy] = asyncio.run(_evaluate(played, policy, out / f"run-{policy}", seed, parallel))
        console.print(f"    success {reports[policy]['success_rate']:.0%}  "
                      f"terminations {reports[policy]['termination_reasons']}")
    summary["oracle"], summary["random"], summary["adversarial"] = (reports[p] for p in ("oracle", "random",
                                                                                         "adversarial"))
    # 3. cache: record a live-like news site (4 hosts, a rotating ad behind a cache-buster, a beacon, a
    # search) through the proxy twice, infer rules, replay with the network cut, with the rules and without
    _stage(console, "recording a live-like news site through the recording proxy (2 runs), inferring rules, "
                    "replaying offline with and without them")
    summary["cache"] = asyncio.run(_cache_round_trip(out, seed))
    _print_cache(console, summary["cache"])
    # 3b. a cache built by an agent: live tasks in, each played through the recorder by the oracle agent,
    # rules inferred, played again with the network cut; the tasks it still solves come out as cache tasks
    _stage(console, "building a cached environment from 3 live news tasks with an agent (the oracle policy): "
                    "record, infer rules, solve again with the network cut")
    summary["cache_build"] = _cache_build(out, seed)
    built = summary["cache_build"]
    console.print(f"    kept {built['kept']}/{built['tasks']} tasks as cache tasks "
                  f"(misses while solving offline: {built['misses']}); dropped: {built['dropped'] or 'none'}; "
                  f"tasks: {built['tasks_file']}", soft_wrap=True)
    # 4. train: the trainer on the same environments (a tiny model, so it takes about a minute of CPU)
    if train:
        _stage(console, "training a tiny Qwen3-VL on a menus site: SFT on the oracle's episodes, then one GRPO "
                        "iteration")
        summary["train"] = _train_tiny(out, seed, parallel)
        sft, grpo = summary["train"]["sft"], summary["train"]["grpo"]
        console.print(f"    {summary['train']['site']}: {summary['train']['tasks']} tasks; "
                      f"SFT: {sft['samples']} turns, {sft['steps']} steps, last loss {sft['last_loss']}")
        console.print(f"    GRPO: {grpo['episodes']} episodes, success {grpo['success']:.0%}, "
                      f"informative groups {grpo['groups']}, loss {grpo['loss']}")
    summary["seconds"] = round(time.monotonic() - started, 1)
    (out / "demo.json").write_text(json.dumps(summary, indent=2, sort_keys=True) + "\n")
    return summary


def _first_per_site(tasks: list[Any]) -> list[list[Any]]:
    """The tasks grouped by site, in order."""
    groups: dict[str, list[Any]] = {}
    for task in tasks:
        groups.setdefault(task.source.site or "", []).append(task)
    return list(groups.values())


def _train_tiny(out: Path, seed: int, parallel: int) -> dict[str, Any]:
    """The tiny recipe's skill (train/tiny-cpu.yaml): a menus site is synthesized and validated, a tiny
    Qwen3-VL (built from a config, warm-started to the response format) clones the oracle on its
    "Open the <section> section under <department>." tasks, then one GRPO iteration (rollouts, rewards,
    update) runs from the clone. The teacher says one fixed sentence before each action: a model this
    small learns the clicks better than when it must first copy the target's name (bench/learn.py)."""
    import torch

    from weblica.env.task import load_tasks, save_tasks
    from weblica.policy.tiny import WARM_START_STEPS
    from weblica.synth.synthesize import synthesize
    from weblica.train.config import GRPOConfig, SFTConfig
    from weblica.train.grpo import train_grpo
    from weblica.train.sft import train_sft

    work = out / "train"
    site = synthesize(skill="menus", category="fitness", style="glass", n=1, seed=seed, out=work / "sites",
                      concurrency=parallel)[0]
    tasks = [t for t in load_tasks(site.path / "tasks.jsonl")
             if t.oracle and t.checks and all(c.type == "url_match" for c in t.checks)]
    for task in tasks:
        task.source.bundle = str(site.path.resolve())
        task.max_steps = 5  # the oracle needs 3 steps
    if not tasks:
        raise UserError(f"the menus site {site.site_id} kept no navigation task: {site.failures[:2]}")
    save_tasks(tasks, work / "tasks.jsonl")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # a model this small runs fastest on one thread; more only spin
    try:
        sft = train_sft(SFTConfig(model="tiny", tiny_seed=seed, tiny_warm_start_steps=WARM_START_STEPS,
                                  output_dir=str(work / "sft"), tasks=str(work / "tasks.jsonl"), seed=seed,
                                  oracle_thoughts=False, epochs=40, batch_size=4, learning_rate=3e-3,
                                  parallel=parallel))
        grpo = train_grpo(GRPOConfig(model=sft["final"], output_dir=str(work / "grpo"), tasks=str(work / "tasks.jsonl"),
                                     seed=seed, iterations=1, groups_per_batch=2, group_size=4, max_refill_rounds=1,
                                     learning_rate=3e-4, temperature=0.5, max_new_tokens=96, parallel=parallel,
                                     save_every=0))
    finally:
        torch.set_num_threads(threads)
    last = grpo["last"]
    return {"site": site.site_id, "tasks": len(tasks),
            "sft": {k: sft[k] for k in ("samples", "steps", "last_loss", "final")},
            "grpo": {"final": grpo["final"], "rollouts": str(work / "grpo" / "rollouts"),
                     **{k: last.get(k) for k in ("episodes", "groups", "zero_variance_groups", "reward", "success",
                                                 "loss", "clip_fraction", "grad_norm", "response_length")}}}


async def _evaluate(tasks: list[Any], policy: str, out: Path, seed: int, parallel: int) -> dict[str, Any]:
    from weblica.env.sources import open_backends
    from weblica.policy.factory import make_policy_factory
    from weblica.eval.runner import evaluate, summary_of

    async with open_backends(tasks) as backends:
        report = await evaluate(tasks, make_policy_factory(policy, seed, tasks=tasks), out, k=1, parallel=parallel, seed=seed,
                                backends=backends, meta={"policy": policy})
    return summary_of(report)


async def _cache_round_trip(out: Path, seed: int) -> dict[str, Any]:
    """Record a browse of the live-like news site twice as if it were live (open an article, search),
    infer rules (each tried on the recorded runs: rules never hurt), stop the site and replay."""
    from weblica.cache import replay as cache_replay
    from weblica.cache.demo_site import NEWS_ACTIONS, NewsSite
    from weblica.cache.infer import summarize
    from weblica.cache.record import record
    from weblica.cache.rulecheck import infer_checked_rules, summarize_decisions
    from weblica.cache.rules import save_rules
    from weblica.cache.store import Store

    recording = out / "recording"
    rules_dir = out / "cache_rules"
    with NewsSite() as site:
        summary = await record(site.url("/"), NEWS_ACTIONS, recording, runs=2, resolve=site.resolve, name="demo")
    store = Store.open_dir(recording)
    try:
        rulesets, decisions = infer_checked_rules(store)
    finally:
        store.close()
    rules_dir.mkdir(parents=True, exist_ok=True)
    for ruleset in rulesets.values():
        save_rules(ruleset, rules_dir)
    found = [{"kind": r.kind, "field": r.field or r.path, "host": r.host, "note": r.note}
             for rs in rulesets.values() for r in rs.rules]
    # the site is gone: replay answers only from the recording
    check = await cache_replay.check(recording, seed=seed + 100, rules_dirs=[rules_dir])
    return {"recording": str(recording), "exchanges": summary.exchanges, "record_errors": summary.errors,
            "rules": summarize(rulesets), "rules_found": found, "never_hurt": summarize_decisions(decisions),
            "replay": {k: check[k] for k in ("requests", "tiers", "screens_identical", "outbound_connections")},
            "with_rules": check["with_rules"], "without_rules": check["without_rules"]}


def _cache_build(out: Path, seed: int) -> dict[str, Any]:
    """`weblica cache build` on the live-like news site's three live tasks, with the oracle as the agent."""
    from weblica.cache.build import BuildOptions
    from weblica.pipelines.cache_build import build_cache
    from weblica.cache.demo_site import NewsSite, news_tasks
    from weblica.env.task import Task

    with NewsSite() as site:
        tasks = [Task.from_dict(t) for t in news_tasks(site)]
        report = build_cache(tasks, BuildOptions(policy="oracle", runs=2, resolve=tuple(site.resolve), seed=seed),
                             out / "cache-build")
    return {"tasks": len(tasks), "kept": len(report["kept"]), "tasks_file": report["tasks_file"],
            "misses": sum(r["replay_misses"] or 0 for r in report["kept"]),
            "dropped": {r["id"]: r["reason"] for r in report["dropped"]}}


def _print_cache(console: Any, cache: dict[str, Any]) -> None:
    console.print(f"    recorded {cache['exchanges']} exchanges; rules: "
                  + ", ".join(f"{k} {v}" for k, v in cache["rules"].items())
                  + f" (never hurt: {cache['never_hurt']['downgraded']} downgraded, "
                    f"{cache['never_hurt']['dropped']} dropped)", soft_wrap=True)
    for rule in cache["rules_found"]:
        console.print(f"      {rule['kind']:7} {rule['field']:22} {rule['host']:28} {rule['note']}", markup=False,
                      soft_wrap=True)
    for name, side in (("with rules", cache["with_rules"]), ("without rules", cache["without_rules"])):
        tiers = ", ".join(f"{k} {v}" for k, v in side["tiers"].items())
        console.print(f"    replay {name:13}: served {side['served']}/{side['requests']} ({tiers}), "
                      f"screens identical {side['screens_identical']}, "
                      f"outbound connections {side['outbound_connections']}", soft_wrap=True)


def register(cli: click.Group) -> None:
    @cli.command("demo")
    @click.option("--out", default="demo-out", show_default=True, type=click.Path(file_okay=False))
    @click.option("--seed", default=0, show_default=True, type=int)
    @click.option("--sites", default=4, show_default=True, type=click.IntRange(1, 32))
    @click.option("--tasks-per-site", default=4, show_default=True, type=click.IntRange(1, 100))
    @click.option("--parallel", default=2, show_default=True, type=click.IntRange(1, 16))
    @click.option("--serve/--no-serve", default=None,
                  help="serve the viewer at the end (default: when run from a terminal)")
    @click.option("--port", default=8765, show_default=True, type=int)
    @click.option("--train/--no-train", default=True, show_default=True,
                  help="train a tiny Qwen3-VL on a menus site (SFT, then one GRPO iteration; about a minute)")
    @click.option("--json", "as_json", is_flag=True)
    def demo(out: str, seed: int, sites: int, tasks_per_site: int, parallel: int, serve: bool | None, port: int,
             train: bool, as_json: bool) -> None:
        """Offline end-to-end showcase: synth -> validate -> oracle/random runs -> record/infer/replay ->
        tiny SFT + GRPO -> viewer."""
        import sys

        from rich.console import Console

        from weblica.browser.launcher import ChromiumNotFound

        console = Console(stderr=True)
        out_dir = Path(out)
        try:
            summary = run_demo(out_dir, seed, sites, tasks_per_site, parallel, console, train)
        except ChromiumNotFound as exc:
            raise UserError(str(exc)) from None
        viewer_cmd = f"weblica view {out_dir / 'run-oracle'} --compare {out_dir / 'run-random'}"
        summary["viewer"] = viewer_cmd
        summary["reports"] = [str(out_dir / f"run-{p}" / "report.html") for p in ("oracle", "random")]
        emit(summary, as_json, human=(
            f"\ndemo done in {summary['seconds']} s: {summary['synth']['sites']} sites, "
            f"{summary['synth']['tasks_valid']} valid tasks; oracle {summary['oracle']['success_rate']:.0%}, "
            f"random {summary['random']['success_rate']:.0%}, adversarial {summary['adversarial']['success_rate']:.0%}; "
            f"replay tiers {summary['cache']['replay']['tiers']}, "
            f"outbound connections {summary['cache']['replay']['outbound_connections']}; "
            f"agent-built cache {summary['cache_build']['kept']}/{summary['cache_build']['tasks']} tasks kept"
            + (f"; GRPO rollouts {summary['train']['grpo']['success']:.0%} successful" if "train" in summary else "")
            + f"\nreports: {', '.join(summary['reports'])}\nviewer:  {viewer_cmd}"
            + (f"\nGRPO rollouts: weblica view {summary['train']['grpo']['rollouts']}/iter-0000-r0"
               if "train" in summary else "")))
        if serve is None:
            serve = sys.stdin.isatty() and sys.stdout.isatty() and not as_json
        if serve:
            from weblica.eval.commands import serve_viewer

            serve_viewer([out_dir / "run-oracle", out_dir / "run-random"], port=port)
