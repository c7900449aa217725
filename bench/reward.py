"""Reward integrity, measured: one synthesized site per skill, validated with every adversarial negative,
then the oracle, the random and the adversarial policy side by side.

    python bench/reward.py [--skills a,b] [--tasks-per-site N] [--seed K] [--out DIR] [--json]

Prints, per skill and overall, the success of each policy (the oracle must be 100%, the random and the
adversarial policy 0%: the adversary answers with every candidate on the gold's page and clicks every
control on state tasks), and the validation's negatives tried / rejected by kind, with the tasks that
were dropped and the negative that passed. Ratios, not asserted timings.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from weblica.env.task import load_tasks, save_tasks  # noqa: E402
from weblica.scoring.checks import paraphrases_accepted  # noqa: E402
from weblica.synth.generate import keep_valid, write_unvalidated  # noqa: E402
from weblica.synth.spec import compatible_categories, sample_spec, skills  # noqa: E402

POLICIES = ("oracle", "random", "adversarial")


def build(out: Path, chosen: list[str], seed: int, tasks_per_site: int | None) -> list[Path]:
    paths = []
    for i, skill in enumerate(chosen):
        fit = compatible_categories(skill)  # the genres the skill makes sense for
        path = write_unvalidated(sample_spec(seed + i, skill, fit[(seed + i) % len(fit)]), out)
        if tasks_per_site:
            save_tasks(load_tasks(path / "tasks.jsonl")[:tasks_per_site], path / "tasks.jsonl")
        paths.append(path)
    return paths


async def play(tasks: list, policy: str, out: Path, seed: int, parallel: int) -> list:
    from weblica.policy.factory import make_policy_factory
    from weblica.rollout import run_tasks
    from weblica.synth.backend import ServedSynthBackend

    backend = ServedSynthBackend(sorted({Path(t.source.bundle) for t in tasks}))
    await backend.start()
    try:
        trajectories, _ = await run_tasks(tasks, make_policy_factory(policy, seed), out / f"run-{policy}",
                                          parallel=parallel, seed=seed, backends={"synth": backend})
    finally:
        await backend.stop()
    return trajectories


PARAPHRASE_GOAL = 0.99


def _skill(bundle: Path) -> str:
    return json.loads((bundle / "site.json").read_text())["spec"]["skill"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--skills", default="", help="comma-separated skill ids (default: every skill)")
    parser.add_argument("--tasks-per-site", type=int, default=4)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--parallel", type=int, default=4)
    parser.add_argument("--out", type=Path, default=Path("/tmp/weblica-bench-reward"))
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    chosen = [s for s in args.skills.split(",") if s] or sorted(skills())
    started = time.monotonic()
    paths = build(args.out / "sites", chosen, args.seed, args.tasks_per_site)
    results = asyncio.run(keep_valid(paths, concurrency=args.parallel))
    generated = sum(r.tasks_generated for r in results)
    summary: dict[str, dict[str, int]] = {"negatives_tried": {}, "negatives_rejected": {}}
    for result in results:  # what validation tried on every generated task, and what it rejected
        for key in summary:
            for kind, n in getattr(result, key).items():
                summary[key][kind] = summary[key].get(kind, 0) + n
    summary = {k: dict(sorted(v.items())) for k, v in summary.items()}
    tasks = []
    for path in paths:
        for task in load_tasks(path / "tasks.jsonl"):
            task.source.bundle = str(path.resolve())
            tasks.append(task)
    rows: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for policy in POLICIES:
        for traj, task in zip(asyncio.run(play(tasks, policy, args.out, args.seed, args.parallel)), tasks):
            rows[task.skill or "?"][policy].append(float(traj.success))
    paraphrased = paraphrases_accepted(tasks)  # weblica.scoring.checks
    per_skill = {skill: {p: (sum(v[p]) / len(v[p]) if v[p] else None) for p in POLICIES} for skill, v in rows.items()}
    overall = {p: sum(sum(v[p]) for v in rows.values()) / max(1, sum(len(v[p]) for v in rows.values()))
               for p in POLICIES}
    data = {"sites": len(paths), "tasks_generated": generated, "tasks_kept": len(tasks),
            "dropped_at_generation": [f for r in results for f in r.failures if "negative accepted" in f],
            "negatives_tried": summary["negatives_tried"], "negatives_rejected": summary["negatives_rejected"],
            "kept_per_skill": {_skill(r.path): [r.tasks_kept, r.tasks_generated] for r in results},
            "success": overall, "per_skill": per_skill, "paraphrases": paraphrased,
            "seconds": round(time.monotonic() - started, 1)}
    if args.json:
        print(json.dumps(data, indent=1, sort_keys=True))
        return
    print(f"{len(paths)} sites, {len(tasks)}/{generated} tasks kept after validation, {data['seconds']} s")
    print(f"{'skill':<18}" + "".join(f"{p:>13}" for p in POLICIES) + "   kept/generated")
    for skill in sorted(per_skill):
        cells = "".join(f"{per_skill[skill][p]:>13.0%}" if per_skill[skill][p] is not None else f"{'-':>13}"
                        for p in POLICIES)
        kept, made = data["kept_per_skill"].get(skill, [len(rows[skill]["oracle"]), "?"])
        print(f"{skill:<18}{cells}   {kept}/{made}")
    print(f"{'overall':<18}" + "".join(f"{overall[p]:>13.0%}" for p in POLICIES) + f"   {len(tasks)}")
    print("\nnegatives by kind (rejected / tried):")
    for kind, tried in summary["negatives_tried"].items():
        print(f"  {kind:<14} {summary['negatives_rejected'].get(kind, 0):>6} / {tried}")
    print(f"\nparaphrases accepted by kind (goal >= {PARAPHRASE_GOAL:.0%}):")
    for kind, (accepted, tried, misses) in paraphrased.items():
        print(f"  {kind:<14} {accepted:>6} / {tried}  {accepted / max(1, tried):.1%}"
              + ("" if accepted / max(1, tried) >= PARAPHRASE_GOAL else "  UNDER GOAL")
              + (f"   e.g. {misses[0][:90]!r}" if misses else ""))
    if data["dropped_at_generation"]:
        print(f"\ntasks dropped at generation because a negative passed ({len(data['dropped_at_generation'])}):")
        for line in data["dropped_at_generation"][:40]:
            print("  " + line[:160])


if __name__ == "__main__":
    main()
