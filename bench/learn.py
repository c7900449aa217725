"""Is learning real? The tiny Qwen3-VL trained by SFT then GRPO on synth menus, against controls, on
held-out sites, sections and layouts, over several training seeds with paired intervals.

    .venv/bin/python bench/learn.py --quick                  # the whole pipeline, tiny budgets (minutes)
    .venv/bin/python bench/learn.py --seeds 0,1,2 --out out/learn   # the full bench

The skill is `menus` ("Open the <section> section under <department>."; checked by `url_match` on the
section page). The sites, layouts and splits are in `bench/learn_data.py`: one template family (category
`fitness`), trained on a top-header mega-menu; held out are new sites (same layout, sections trained on),
new sections (sections no training task asks for, split by section id, on new sites) and new layouts
(`centered`: the page centred; `tree`: a tree menu), each reported apart. The data (`--data-seed`) is
the same for every training seed, so two stages are compared task by task.

The page must be seen (`--episode-headers`, default bar,centered,utility; bench/learn_variants.py): every
site is written once per header variant of its page grammar, as instances of one site, and every task is
asked on each (`<task>@<header>`): same site, start URL and instruction, but the department menu is
150-450 px elsewhere (y 31 / 69 / 98, x shifted by ~290 px), so the information needed to act is only in
the screenshot and one instruction cannot be fitted by a memorised click. Training (SFT's teacher, GRPO's
groups) and evaluation play every (task, variant) pair; a blind policy can at best fit the variant it
guesses (the report counts successes per variant). `--episode-headers none` is the earlier design: one
layout per site, the grammar pinned (`--pin-grammar`), where memorising the training sites' menu fits.
`--vision-tokens` sets the tiny model's image budget (96, the default: a 1280x720 screenshot is 7x13 = 91
merged tokens, each ~98x103 px; 24: 3x6 = 18, each ~213x240 px, where the three menus differ by about one
token column; 96 costs ~1.5-2x the time of a forward and backward pass, measured here).

Stages per training seed (`--seeds`), all on CPU threads, greedy decoding (temperature 0) at evaluation:
- base: the tiny model built from the seed and warm-started to answer in the protocol;
- sft: behaviour cloning of the oracle on the train tasks (`weblica.train.sft`);
- grpo: multi-turn GRPO from the SFT weights (`weblica.train.grpo`);
- sft_more: compute-matched control: SFT continued from the SFT weights on the same teacher episodes for as
  many trained samples (forward+backward passes; `--match steps`: optimizer steps) as GRPO's update took,
  at GRPO's learning rate (`--control-lr`), so it differs from GRPO in what it learns from, not its steps;
- filtered_bc: compute-matched control: SFT from the SFT weights on GRPO's own successful rollouts only
  (the same rollouts GRPO learnt from), for the same trained samples;
- blind_sft, blind_grpo: the sft and grpo stages with every screenshot zeroed (`blind: true`, evaluated
  with `hf:DIR;blind=1`): what is learnt without seeing the page. It must fall behind.
`--stages` picks a subset. The report: success per stage and split (summed over seeds), and for each
held-out split the paired comparisons (grpo - sft, grpo - sft_more, grpo - filtered_bc, sft - blind_sft,
grpo - blind_grpo): the mean difference with a 95% two-level bootstrap interval (seeds, then tasks) and an
exact sign test over the discordant (seed, task) pairs (`weblica.eval.paired`), the compute each stage
trained on, and held-out successes per section. Everything is cached in `--out`: a rerun retrains nothing.

Last measured (2026-12-03, session 15; 5 seeds, 2 training sites: 15 (task, variant) pairs a seed, every
split; ~35 min on the 2 cores of a quiet machine; README.md has the tables):
    python bench/learn.py --train-sites 2 --heldout-sites 2 --layout-sites 1 --max-steps 4 --sft-epochs 40 \
        --grpo-iterations 2 --groups 4 --group-size 4 --ppo-epochs 2 --refill-rounds 0 --vision-tokens 96 \
        --seeds 0,1,2,3,4 --jobs 3 --out out/learn-s15
On train: sft 44/75, grpo 47/75, sft_more 61/75, filtered_bc 46/75, blind_sft 17/75, blind_grpo 20/75.
sft - blind_sft +36.0 points [+8.0, +65.3] and grpo - blind_grpo +36.0 [+12.0, +61.3] (the page is seen);
grpo - sft_more -18.7 [-37.3, -2.7] (more SFT at GRPO's step size beats GRPO here); held-out sites 1-4/75
for every stage and held-out sections and layouts 0 (nothing transfers at this size). Controls at SFT's
learning rate (before `--control-lr`) lost to sft itself (sft_more 35/75, filtered_bc 26/75).
Sessions 11-12 (a machine at load ~20, 1-2 seeds): every interval held 0; at 24 vision tokens the first
action did not follow the page, so 96 is the default. Why looking is hard for SFT: only the first action
needs the screenshot (later turns read the variant from the history's first action), i.e. ~5 coordinate
digits of one turn in three carry the image's signal in a token-mean loss.

Cost (profiled on one torch thread, bench/learn.py's tiny model): an SFT epoch over the 54 samples of the
18 train pairs takes 8.6 s at load ~6 (160 ms a sample forward+backward; attention 27% of it); the samples
are built once per training (6 s: encoding and image preprocessing) and reused by every epoch; loading
torch, transformers and the model costs ~23 s per process. Micro-batches of 4 left-padded samples are
slower on a CPU (29.4 s against 22.2 s for 2 epochs), and so are the math SDPA kernel and eager attention,
so none is used. Evaluating the 18 pairs takes 60-200 s (one greedy episode each, the generations one at a
time); one GRPO iteration from the base (16 episodes) 127 s: 50 s loading the policy and the reference,
~60 s rollouts, 12 s update. `--jobs N` trains N seeds at once (a process each), and the evaluation is
cached split by split, so `--eval-splits` can be widened later without replaying the splits done.

Why the earlier design pinned the page grammar (`--episode-headers none --pin-grammar header=bar,skeleton=plain`): measured on
the --quick sites (2 training sites, 7 tasks), SFT for 12 epochs left the format broken (stray braces,
hovers repeated to the step limit: 0/7 even on train); 40 epochs fit train (7/7, loss 0.009) and solved 0
of 12 held-out tasks, because the held-out sites drew other header and skeleton variants (Synth v2's page
grammar), which move the menu (a "utility" header 67 px lower than a "bar"; the skeleton shifts it
sideways): the model clicked the training sites' pixels (y 136/1000, the held-out menus were at 43). The
24-token screenshot of the tiny model does not let it find the menu from 2 sites. With the header and
skeleton pinned the menu's row is the same on every site and the department labels still move by up to
~75 px with the site's name, so held-out sites ask for transfer, not a copy; the two held-out layouts
still move the menu (centred) or change the gesture (tree).

Figures: see README.md (bench/learn.py) and train/README.md ("Does it learn?").
"""
from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import shutil
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any, Sequence

sys.path.insert(0, str(Path(__file__).resolve().parent))  # bench/learn_data.py, bench/learn_report.py

from learn_data import (PINNED_GRAMMAR, TRAIN_LAYOUT, assign_splits, catalog_sections, family_spec,  # noqa: E402
                        site_plan, split_names, split_sections)
from learn_variants import EPISODE_HEADERS, pinned_tasks, write_variants  # noqa: E402

STAGES = ("base", "sft", "grpo", "sft_more", "filtered_bc", "blind_sft", "blind_grpo")
BLIND = {"blind_sft", "blind_grpo"}
NEEDS = {"sft": "base", "grpo": "sft", "sft_more": "grpo", "filtered_bc": "grpo", "blind_sft": "sft",
         "blind_grpo": "blind_sft"}  # what a stage is built from or matched to


def is_open_task(task: Any) -> bool:
    return bool(task.checks) and all(c.type == "url_match" for c in task.checks) and task.oracle is not None


def prepare(out: Path, args: argparse.Namespace) -> dict[str, Any]:
    """Synthesize and validate the sites (once), write one task file per split. With episode headers
    (the default) every site is written once per header variant and its tasks are pinned to each
    (bench/learn_variants.py); without, one bundle per site with the grammar pinned (`--pin-grammar`)."""
    from weblica.env.task import load_tasks, save_tasks
    from weblica.synth.generate import keep_valid, write_unvalidated

    headers = args.episode_headers
    plan = site_plan(args.data_seed, args.train_sites, args.heldout_sites, args.layout_sites, args.heldout_layouts,
                     {} if headers else args.pin_grammar)  # the variants set the header and skeleton themselves
    train_sections, heldout_sections = split_sections(catalog_sections(), args.data_seed, args.heldout_per_department)
    bundles = []
    for site in plan:
        spec = family_spec(site.seed, site.layout)
        bundles.append((site, spec, (out / "sites" / site.layout / spec.site_id).resolve()))
    todo = [(spec, bundle) for _, spec, bundle in bundles if not (bundle / ".validated").exists()]
    if todo:
        paths = [p for spec, bundle in todo
                 for p in (write_variants(spec, bundle.parent, headers) if headers
                           else [write_unvalidated(spec, bundle.parent)])]
        asyncio.run(keep_valid(paths, concurrency=2))
        for _, bundle in todo:
            (bundle / ".validated").write_text("ok\n")
    per_site = []
    for site, _, bundle in bundles:
        found = pinned_tasks(bundle, headers) if headers else load_tasks(bundle / "tasks.jsonl")
        tasks = [t for t in found if is_open_task(t)]
        for task in tasks:
            task.source.bundle = str(bundle)
            task.max_steps = args.max_steps  # the oracle needs 3 (hover or toggle, click, done)
        per_site.append((site, tasks))
    splits = assign_splits(per_site, heldout_sections, args.heldout_layouts)
    for name, tasks in splits.items():
        # written aside and moved in only when changed: another process of the same --out (say a second
        # seed started beside it) may be reading the split files
        path, fresh = out / f"{name}.jsonl", out / f".{name}.jsonl.{os.getpid()}"
        save_tasks(tasks, fresh)
        if path.exists() and path.read_bytes() == fresh.read_bytes():
            fresh.unlink()
        else:
            os.replace(fresh, path)
    seen = {t.instruction for t in splits["train"]}
    return {"sites": dict(Counter(s.role + ("" if s.layout == TRAIN_LAYOUT else f":{s.layout}") for s in plan)),
            "train_sections": train_sections, "heldout_sections": heldout_sections,
            "tasks": {name: len(tasks) for name, tasks in splits.items()},
            "heldout_sites_instruction_seen_in_train": sum(t.instruction in seen for t in splits["heldout_sites"]),
            "heldout_sections_instruction_seen_in_train":
                sum(t.instruction in seen for t in splits["heldout_sections"])}


def evaluate_stage(checkpoint: Path, splits: dict[str, Path], out: Path, seed: int, blind: bool,
                   obs: str = "screenshot") -> dict[str, Any]:
    """Greedy success of a checkpoint on every split (one episode per task; the splits asked together play
    in one run, one browser pool): {"splits": {split: result}, "seconds": evaluation wall time}. Cached in
    `out` split by split: a later call that asks for more splits plays only those (in `out/<splits>/`) and
    reads the others back; new weights (a checkpoint newer than the cache) play everything again."""
    cached = out / "result.json"
    weights = checkpoint / "model.safetensors"
    results: dict[str, Any] = {}
    seconds = 0.0
    if cached.exists() and weights.exists() and cached.stat().st_mtime > weights.stat().st_mtime:
        record = json.loads(cached.read_text())
        results, seconds = record["splits"], record["seconds"]
    elif out.exists():
        shutil.rmtree(out)
    missing = {name: path for name, path in splits.items() if name not in results}
    if missing:
        run_dir = out / "+".join(sorted(missing)) if results else out  # the first run keeps the plain layout
        if run_dir != out and run_dir.exists():
            shutil.rmtree(run_dir)  # a run cut short
        started = time.monotonic()
        results.update(play_splits(checkpoint, missing, run_dir, seed, blind, obs))
        seconds = round(seconds + time.monotonic() - started, 1)
        out.mkdir(parents=True, exist_ok=True)
        cached.write_text(json.dumps({"splits": results, "seconds": seconds}, indent=1, sort_keys=True) + "\n")
    return {"splits": {name: results[name] for name in splits}, "seconds": seconds}


def play_splits(checkpoint: Path, splits: dict[str, Path], out: Path, seed: int, blind: bool,
                obs: str = "screenshot") -> dict[str, Any]:
    """Play every task of the splits once with the checkpoint, greedy, into the run directory `out`;
    {split: split_result}."""
    from weblica.policy.factory import make_policy_factory
    from weblica.env.sources import open_backends
    from weblica.env.task import load_tasks
    from weblica.eval.runner import evaluate

    members = {name: load_tasks(path) for name, path in splits.items()}
    tasks = [t for group in members.values() for t in group]
    spec = f"hf:{checkpoint};temperature=0;max_new_tokens=96;obs={obs}" + (";blind=1" if blind else "")

    async def go() -> None:
        async with open_backends(tasks) as backends:
            await evaluate(tasks, make_policy_factory(spec, seed), out, k=1, parallel=2, seed=seed, backends=backends)

    episodes: dict[str, dict[str, Any]] = {}
    if tasks:
        asyncio.run(go())
        episodes = {e["task_id"]: e for e in map(json.loads, (out / "episodes.jsonl").read_text().splitlines())}
    return {name: split_result([episodes[t.id] for t in group]) for name, group in members.items()}


def split_result(played: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Success of one split from its episodes (one per task)."""
    solved = sorted(e["task_id"] for e in played if e.get("success"))
    steps = [len(e["steps"]) for e in played]
    return {"solved": len(solved), "tasks": len(played),
            "success": round(len(solved) / len(played), 6) if played else None,
            "mean_steps": round(sum(steps) / len(steps), 3) if steps else None,
            "terminations": dict(Counter(e.get("termination_reason") for e in played)), "solved_ids": solved}


# ---- compute --------------------------------------------------------------------------------------

def grpo_compute(metrics: Sequence[dict[str, Any]], ppo_epochs: int, mini_batches: int) -> dict[str, Any]:
    """What GRPO's updates trained on, from its metrics.jsonl lines: optimizer steps (as `ppo_update`
    splits each batch: mini-batches of ceil(n / mini_batches) samples, `ppo_epochs` passes), trained
    samples (forward+backward passes) and response tokens; the rollout episodes beside."""
    steps = samples = tokens = 0
    for m in metrics:
        n = int(m["samples"])
        if not n:
            continue
        size = max(1, -(-n // mini_batches))
        steps += ppo_epochs * -(-n // size)
        samples += ppo_epochs * n
        tokens += round(ppo_epochs * n * float(m.get("response_length", 0.0)))
    return {"steps": steps, "samples": samples, "tokens": tokens, "episodes": sum(int(m["episodes"]) for m in metrics)}


def sft_compute(samples: int, epochs: int, batch_size: int) -> dict[str, int]:
    return {"steps": epochs * -(-samples // batch_size), "samples": epochs * samples}


def matched_epochs(target: dict[str, Any], samples: int, batch_size: int, match: str = "samples") -> int:
    """SFT epochs over `samples` whose trained samples (or optimizer steps) come closest to `target`'s,
    at least one."""
    if samples < 1:
        raise ValueError("no samples to train on")
    per_epoch = sft_compute(samples, 1, batch_size)[match]
    return max(1, round(target[match] / per_epoch))


def bc_sample_count(run_dirs: Sequence[Path], only_successful: bool = True) -> int:
    """The behaviour-cloning samples `sft_samples` makes of run directories: one per step of every kept
    (not removed, and with `only_successful` successful) episode."""
    from weblica.rollout import load_trajectories

    return sum(len(t.steps) for d in run_dirs for t in load_trajectories(d)
               if not t.removed and (t.success or not only_successful))


def set_vision_tokens(checkpoint: Path, tokens: int) -> None:
    """Give a checkpoint's image processor a budget of `tokens` merged vision tokens (each 32x32 pixels
    of the resized screenshot: patch 16, merge 2); its coordinate frame (0-1000) does not change."""
    path = checkpoint / "preprocessor_config.json"
    config = json.loads(path.read_text())
    side = config["patch_size"] * config["merge_size"]
    config["max_pixels"] = side * side * tokens
    if "longest_edge" in config.get("size", {}):  # newer transformers read the budget from here
        config["size"]["longest_edge"] = side * side * tokens
    path.write_text(json.dumps(config, indent=2, sort_keys=True) + "\n")


# ---- stages ---------------------------------------------------------------------------------------

class StageSkipped(Exception):
    """A stage that cannot be trained in this seed (the reason is its message)."""


def run_stage(name: str, seed_dir: Path, seed: int, args: argparse.Namespace, train_file: Path,
              stages: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Train one stage (or read what an earlier run recorded); StageSkipped when it cannot be trained
    (its source stage is missing, or there is no successful episode to clone)."""
    from weblica.policy.tiny import WARM_START_STEPS, build_tiny_qwen3_vl
    from weblica.train.config import GRPOConfig, SFTConfig
    from weblica.train.grpo import train_grpo
    from weblica.train.sft import train_sft

    record = seed_dir / name / "stage.json"
    if record.exists():
        return json.loads(record.read_text())
    if NEEDS.get(name) and NEEDS[name] not in stages:
        raise StageSkipped(f"{NEEDS[name]} did not run")
    out, started = seed_dir / name, time.monotonic()
    blind = name in BLIND
    sft_options = dict(seed=seed, batch_size=4, learning_rate=args.sft_lr, parallel=2,
                       oracle_thoughts=args.oracle_thoughts, blind=blind, obs=args.obs)
    if name == "base":
        build_tiny_qwen3_vl(out, seed=seed, warm_start_steps=WARM_START_STEPS)
        set_vision_tokens(out, args.vision_tokens)
        stage: dict[str, Any] = {"checkpoint": str(out), "compute": {"steps": WARM_START_STEPS}}
    elif name in ("sft", "blind_sft"):
        teacher = seed_dir / "sft" / "teacher"  # blind_sft clones the very episodes sft cloned
        source = dict(trajectories=[str(teacher)]) if name == "blind_sft" else dict(tasks=str(train_file))
        done = train_sft(SFTConfig(model=stages["base"]["checkpoint"], output_dir=str(out), epochs=args.sft_epochs,
                                   **source, **sft_options))
        stage = {"checkpoint": done["final"], "compute": sft_compute(done["samples"], args.sft_epochs, 4)}
    elif name in ("grpo", "blind_grpo"):
        config = GRPOConfig(model=stages[NEEDS[name]]["checkpoint"], output_dir=str(out), tasks=str(train_file),
                            seed=seed, iterations=args.grpo_iterations, groups_per_batch=args.groups,
                            group_size=args.group_size, temperature=args.temperature, max_new_tokens=96,
                            learning_rate=args.grpo_lr, mini_batches=2, ppo_epochs=args.ppo_epochs,
                            max_refill_rounds=args.refill_rounds, kl_coef=args.kl_coef, parallel=2,
                            save_every=0, blind=blind, obs=args.obs)
        done = train_grpo(config)
        metrics = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
        stage = {"checkpoint": done["final"], "compute": grpo_compute(metrics, config.ppo_epochs, config.mini_batches),
                 "rollout_success": [m["success"] for m in metrics]}
    else:  # sft_more, filtered_bc: from the SFT weights, for GRPO's compute
        if name == "sft_more":
            runs = [seed_dir / "sft" / "teacher"]
        else:
            runs = sorted(p for p in (seed_dir / "grpo" / "rollouts").glob("iter-*") if (p / "episodes.jsonl").exists())
        samples = bc_sample_count(runs)
        if samples == 0:
            raise StageSkipped(f"no successful episode to clone in {len(runs)} run(s)")
        target = stages["grpo"]["compute"]
        epochs = matched_epochs(target, samples, 4, args.match)
        done = train_sft(SFTConfig(model=stages["sft"]["checkpoint"], output_dir=str(out), epochs=epochs,
                                   trajectories=[str(r) for r in runs], **{**sft_options, "learning_rate": args.control_lr}))
        stage = {"checkpoint": done["final"], "compute": sft_compute(done["samples"], epochs, 4),
                 "matched_to": {args.match: target[args.match]}, "learning_rate": args.control_lr}
    stage["train_seconds"] = round(time.monotonic() - started, 1)
    stage["blind"] = blind
    record.write_text(json.dumps(stage, indent=1, sort_keys=True) + "\n")
    return stage


def run_seed(seed: int, args: argparse.Namespace, splits: Sequence[str],
             skipped: dict[str, str]) -> dict[str, dict[str, Any]]:
    """The wanted stages of one seed, trained and evaluated; `skipped` gets the reason of each not run."""
    seed_dir = args.out / f"seed-{seed}"
    seed_dir.mkdir(parents=True, exist_ok=True)
    stages: dict[str, dict[str, Any]] = {}
    wanted = [s for s in STAGES if s in args.stages]
    # a control needs what it is built from or matched to, even when only the control is asked for
    needed = set(wanted)
    for name in wanted:
        while NEEDS.get(name):
            name = NEEDS[name]
            needed.add(name)
    for name in STAGES:
        if name not in needed:
            continue
        try:
            stage = run_stage(name, seed_dir, seed, args, args.out / "train.jsonl", stages)
        except StageSkipped as exc:
            skipped[name] = str(exc)
            print(f"seed {seed} {name}: skipped ({exc})", file=sys.stderr, flush=True)
            continue
        stages[name] = stage
        if name not in wanted:
            continue
        evaluated = evaluate_stage(Path(stage["checkpoint"]), {s: args.out / f"{s}.jsonl" for s in splits},
                                   seed_dir / "eval" / name, seed, stage["blind"], args.obs)
        stage["eval"], stage["eval_seconds"] = evaluated["splits"], evaluated["seconds"]
        shown = ", ".join(f"{s} {r['solved']}/{r['tasks']}" for s, r in stage["eval"].items())
        print(f"seed {seed} {name}: {shown} ({stage['train_seconds']:.0f} s training, {stage['eval_seconds']:.0f} s "
              "evaluation)", file=sys.stderr, flush=True)
    return {n: s for n, s in stages.items() if n in wanted}


SETTING = ("obs", "data_seed", "episode_headers", "vision_tokens", "pin_grammar", "train_sites", "heldout_sites", "layout_sites", "heldout_layouts",
           "heldout_per_department", "max_steps", "oracle_thoughts", "sft_epochs", "sft_lr", "grpo_iterations",
           "groups", "group_size", "temperature", "refill_rounds", "grpo_lr", "control_lr", "ppo_epochs", "kl_coef",
           "match")
QUICK = dict(seeds="0,1,2", vision_tokens=24, train_sites=2, heldout_sites=2, layout_sites=1, sft_epochs=12, grpo_iterations=1,
             groups=2, group_size=4, ppo_epochs=1, refill_rounds=0, resamples=1000)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=None, help="default out/learn (out/learn-quick with --quick)")
    parser.add_argument("--quick", action="store_true",
                        help="the whole pipeline with tiny budgets (" + ", ".join(f"{k} {v}" for k, v in QUICK.items())
                             + "): a smoke run, its figures mean nothing")
    parser.add_argument("--seeds", default="0,1,2",
                        help="training seeds, comma-separated (at least 3 for the intervals)")
    parser.add_argument("--data-seed", type=int, default=0,
                        help="the sites and the section split (the same for every training seed)")
    parser.add_argument("--stages", default=",".join(STAGES), help=f"comma-separated subset of {', '.join(STAGES)}")
    parser.add_argument("--obs", choices=("screenshot", "axtree", "both"), default="screenshot",
                        help="what each turn shows the model (weblica.env.axtree): with axtree the page's accessibility "
                             "tree as text and no screenshot, so the blind stages (zeroed screenshots) do not apply")
    parser.add_argument("--episode-headers", default=",".join(EPISODE_HEADERS),
                        help="page-grammar header variants every site is written in, one per episode instance (the "
                             "menu moves with them: the page must be seen); none: one layout per site, the grammar "
                             "pinned by --pin-grammar (the earlier design)")
    parser.add_argument("--vision-tokens", type=int, default=96,
                        help="the tiny model's image budget in merged vision tokens (its processor's max_pixels / "
                             "32^2): 96 sees a 1280x720 screenshot as 13x7 tokens, 24 (the tiny default, --quick) "
                             "as 6x3, too few for the first action to follow the page (measured on seed 0)")
    parser.add_argument("--pin-grammar", default=",".join(f"{k}={v}" for k, v in PINNED_GRAMMAR.items()),
                        help="page-grammar components every site must draw, e.g. header=bar,skeleton=plain "
                             "(none: any)")
    parser.add_argument("--train-sites", type=int, default=24)
    parser.add_argument("--heldout-sites", type=int, default=24, help="held-out sites of the training layout")
    parser.add_argument("--layout-sites", type=int, default=12, help="sites of each held-out layout")
    parser.add_argument("--heldout-layouts", default="centered,tree")
    parser.add_argument("--heldout-per-department", type=int, default=1, help="sections held out per department")
    parser.add_argument("--max-steps", type=int, default=5)
    parser.add_argument("--sft-epochs", type=int, default=40)
    parser.add_argument("--sft-lr", type=float, default=3e-3)
    parser.add_argument("--grpo-iterations", type=int, default=8)
    parser.add_argument("--groups", type=int, default=16, help="GRPO task groups per update")
    parser.add_argument("--group-size", type=int, default=4)
    parser.add_argument("--temperature", type=float, default=0.8, help="GRPO rollout temperature")
    parser.add_argument("--refill-rounds", type=int, default=1, help="GRPO dynamic-sampling refills")
    parser.add_argument("--grpo-lr", type=float, default=3e-4)
    parser.add_argument("--ppo-epochs", type=int, default=3, help="GRPO passes over each rollout batch")
    parser.add_argument("--kl-coef", type=float, default=0.1, help="GRPO k3 KL penalty against the SFT policy")
    parser.add_argument("--control-lr", type=float, default=None,
                        help="the compute-matched controls' learning rate (default: --grpo-lr). Each control, like "
                             "GRPO, starts a fresh AdamW from the SFT weights, whose first steps move every weight by "
                             "about the learning rate: at the SFT rate that undid SFT (sft_more 4/15 where sft was "
                             "14/15), so a control would differ from GRPO in its step size, not only its signal")
    parser.add_argument("--match", choices=("samples", "steps"), default="samples",
                        help="what the compute-matched controls match of GRPO's update")
    parser.add_argument("--resamples", type=int, default=10000, help="bootstrap resamples")
    parser.add_argument("--oracle-thoughts", action=argparse.BooleanOptionalAction, default=False,
                        help="the teacher names what it acts on before each action (the synth oracle's thoughts)")
    parser.add_argument("--eval-splits", default="",
                        help="evaluate (and report) only these splits, comma-separated, e.g. train (default: all)")
    parser.add_argument("--jobs", type=int, default=1,
                        help="seeds trained at once, each in a process of its own (its log in OUT/seed-N.log; one "
                             "torch thread each), then the report over all of them from the cache")
    parser.add_argument("--prepare-only", action="store_true")
    args = parser.parse_args(argv)
    args.argv = list(sys.argv[1:] if argv is None else argv)
    if args.quick:
        tokens = sys.argv[1:] if argv is None else argv
        given = {a.dest for a in parser._actions for o in a.option_strings
                 for tok in tokens if tok == o or tok.startswith(o + "=")}
        for key, value in QUICK.items():
            if key not in given:  # an option given on the command line wins
                setattr(args, key, value)
    args.out = args.out or Path("out/learn-quick" if args.quick else "out/learn")
    if args.control_lr is None:
        args.control_lr = args.grpo_lr
    try:
        args.seeds = [int(s) for s in str(args.seeds).split(",") if s.strip()]
    except ValueError:
        parser.error(f"--seeds takes whole numbers separated by commas, e.g. 0,1,2, not {args.seeds!r}")
    args.heldout_layouts = [n for n in args.heldout_layouts.split(",") if n.strip()]
    args.episode_headers = [] if args.episode_headers.strip() == "none" else \
        [h.strip() for h in args.episode_headers.split(",") if h.strip()]
    if len(args.episode_headers) == 1:
        parser.error("--episode-headers needs at least two variants (one moves nothing), or none")
    if args.vision_tokens < 4:
        parser.error(f"--vision-tokens must be at least 4, not {args.vision_tokens}")
    pins = [p.strip() for p in args.pin_grammar.split(",") if p.strip() and args.pin_grammar.strip() != "none"]
    if any(p.count("=") != 1 for p in pins):
        parser.error(f"--pin-grammar takes component=variant pairs, e.g. header=bar,skeleton=plain, or none; "
                     f"not {args.pin_grammar!r}")
    args.pin_grammar = dict(p.split("=") for p in pins)
    args.stages = [n.strip() for n in args.stages.split(",") if n.strip()]
    unknown = sorted(set(args.stages) - set(STAGES))
    if unknown:
        parser.error(f"unknown stage(s) {', '.join(unknown)}; use any of {', '.join(STAGES)}")
    if args.obs == "axtree":  # no screenshot to zero: the blind controls would be the same runs again
        args.stages = [n for n in args.stages if n not in BLIND]
    if not args.seeds:
        parser.error("--seeds needs at least one seed")
    if args.jobs < 1:
        parser.error(f"--jobs must be at least 1, not {args.jobs}")
    args.eval_splits = [n.strip() for n in args.eval_splits.split(",") if n.strip()]
    unknown = sorted(set(args.eval_splits) - set(split_names(args.heldout_layouts)))
    if unknown:
        parser.error(f"unknown split(s) {', '.join(unknown)}; use any of {', '.join(split_names(args.heldout_layouts))}")
    return args


def seed_argv(argv: Sequence[str], seed: int) -> list[str]:
    """The command line of one seed's process: `argv` with its --seeds and --jobs replaced."""
    kept: list[str] = []
    skip = False
    for token in argv:
        if skip:
            skip = False
            continue
        if token in ("--seeds", "--jobs"):
            skip = True
            continue
        if not token.startswith(("--seeds=", "--jobs=")):
            kept.append(token)
    return kept + ["--seeds", str(seed), "--jobs", "1"]


def run_seed_processes(args: argparse.Namespace) -> None:
    """Train every seed in a process of its own, at most `args.jobs` at once (the stages land in the cache
    the report then reads); SystemExit naming the logs of the seeds that failed."""
    waiting, running, failed = list(args.seeds), [], []
    while waiting or running:
        while waiting and len(running) < args.jobs:
            seed = waiting.pop(0)
            log = (args.out / f"seed-{seed}.log").open("w")
            command = [sys.executable, str(Path(__file__).resolve()), *seed_argv(args.argv, seed), "--out", str(args.out)]
            running.append((seed, subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT), log))
            print(f"seed {seed}: started (log {args.out / f'seed-{seed}.log'})", file=sys.stderr, flush=True)
        time.sleep(2)
        for item in list(running):
            seed, process, log = item
            if process.poll() is None:
                continue
            running.remove(item)
            log.close()
            print(f"seed {seed}: exit {process.returncode}", file=sys.stderr, flush=True)
            if process.returncode:
                failed.append(seed)
    if failed:
        raise SystemExit("bench/learn.py: seed(s) " + ", ".join(map(str, failed)) + " failed; see " +
                         ", ".join(str(args.out / f"seed-{s}.log") for s in failed))


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    import torch

    from learn_report import print_report

    torch.set_num_threads(1)
    args.out.mkdir(parents=True, exist_ok=True)
    args.out = args.out.resolve()  # the stage records name checkpoints: valid from any working directory
    started = time.monotonic()
    # the stages are cached in --out: they must all come from one data, teacher and budget setting (more
    # seeds or stages can be added to an --out; anything else needs another one)
    said = {key: getattr(args, key) for key in SETTING}
    setting = args.out / "setting.json"
    if setting.exists() and json.loads(setting.read_text()) != said:
        raise SystemExit(f"{args.out} holds stages of another setting ({setting.read_text().strip()}); "
                         "use another --out")
    try:
        info = prepare(args.out, args)
    except ValueError as exc:
        raise SystemExit(f"bench/learn.py: {exc}") from None
    setting.write_text(json.dumps(said) + "\n")
    print(json.dumps(info, indent=1), f"prepare {time.monotonic() - started:.0f}s", file=sys.stderr)
    if args.prepare_only:
        return
    splits = [s for s in split_names(args.heldout_layouts) if not args.eval_splits or s in args.eval_splits]
    if args.jobs > 1 and len(args.seeds) > 1:
        run_seed_processes(args)  # then every stage below is read from the cache
    skipped: dict[int, dict[str, str]] = {seed: {} for seed in args.seeds}
    by_seed = {seed: run_seed(seed, args, splits, skipped[seed]) for seed in args.seeds}
    print_report(info, by_seed, splits, args, skipped)
    print(f"total {math.ceil(time.monotonic() - started)} s", file=sys.stderr)


if __name__ == "__main__":
    main()
