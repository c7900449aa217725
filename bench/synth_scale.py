"""Synth at scale (issue 40 point 6): validated sites per CPU-hour on 1 and on 2 Ray workers, measured in
one run (`python bench/synth.py --scale`, or this file).

One local Ray instance (`--cpus`, 2 by default) makes the same N sites (run seed `--seed`; skills,
categories and styles drawn as `weblica synth` draws them, or `--skill`) twice, into two fresh folders:
once on 1 worker, once on 2 (weblica.pipelines.synth_ray, the code `weblica synth --ray` runs). For each:
- wall seconds from the first site handed out to the last one back (Ray's start-up is left out: a long
  run pays it once), sites validated (kept >= MIN_TASKS tasks) and tasks kept;
- CPU seconds: what each worker spent on its sites (its process and the browsers it reaped, from
  getrusage), the per-site mean, and validated sites per CPU-hour (3600 / CPU seconds per validated site);
- validated sites per core-hour: sites per hour of wall time per worker (each worker holds a core);
- the 2-worker / 1-worker ratio of sites per hour of wall time (2.0 = perfect scaling), and of the
  per-site CPU (1.0 = a second worker costs nothing extra per site).
Both runs must write the same bytes (`same_bytes`). The machine may be shared: the 1-minute load average
is printed beside the figures, and per-site CPU is the figure to extrapolate from, not wall time.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from weblica.synth.generate import MIN_TASKS  # noqa: E402

PAPER_SITES = 2560   # the Weblica paper's training sites


def digest(root: Path) -> str:
    h = hashlib.sha256()
    for p in sorted(root.rglob("*")):
        if p.is_file():
            h.update(str(p.relative_to(root)).encode() + b"\0" + p.read_bytes())
    return h.hexdigest()


def measure(specs: list[Any], out: Path, workers: int, episode_seeds: int | None) -> dict[str, Any]:
    """Make `specs` on `workers` Ray actors into `out`; wall time, CPU and what was validated."""
    from weblica.pipelines.synth_ray import synthesize_on_ray

    start = time.perf_counter()
    done = synthesize_on_ray(specs, out, address="local", workers=workers, episode_seeds=episode_seeds)
    wall = time.perf_counter() - start
    validated = sum(r.tasks_kept >= MIN_TASKS for r in done.results)
    cpu = sum(done.cpu_seconds.values())
    return {"workers": workers, "sites": len(specs), "validated": validated, "failed": len(done.failed),
            "tasks_kept": sum(r.tasks_kept for r in done.results), "wall_seconds": round(wall, 1),
            "cpu_seconds": round(cpu, 1), "cpu_seconds_per_site": round(cpu / max(1, len(done.results)), 1),
            "validated_per_cpu_hour": round(3600 * validated / cpu, 1) if cpu else None,
            "validated_per_core_hour": round(3600 * validated / (wall * workers), 1) if wall else None,
            "validated_per_hour": round(3600 * validated / wall, 1) if wall else None,
            "digest": digest(out)}


def scale(n: int, seed: int, skill: str | None, cpus: int, episode_seeds: int | None) -> dict[str, Any]:
    import ray

    from weblica.synth.synthesize import procedural_specs

    specs = procedural_specs(skill, None, None, None, n, seed, None)
    load = os.getloadavg()[0]
    # the workers import this checkout's weblica
    ray.init(num_cpus=cpus, include_dashboard=False, log_to_driver=False,
             runtime_env={"env_vars": {"PYTHONPATH": str(ROOT)}})
    try:
        with tempfile.TemporaryDirectory() as tmp:
            runs = [measure(specs, Path(tmp) / f"w{k}", k, episode_seeds) for k in (1, 2)]
    finally:
        ray.shutdown()
    one, two = runs
    per_site = (one["cpu_seconds"] + two["cpu_seconds"]) / max(1, one["sites"] + two["sites"] - one["failed"] - two["failed"])
    summary = {
        "runs": runs, "same_bytes": one["digest"] == two["digest"],
        "throughput_ratio_2_over_1": (round(two["validated_per_hour"] / one["validated_per_hour"], 2)
                                      if one["validated_per_hour"] and two["validated_per_hour"] else None),
        "cpu_per_site_ratio_2_over_1": (round(two["cpu_seconds_per_site"] / one["cpu_seconds_per_site"], 2)
                                        if one["cpu_seconds_per_site"] else None),
        "cpu_seconds_per_site": round(per_site, 1),
        # the paper's 2,560 sites at this per-site CPU, on C cores kept busy (an estimate: it assumes the
        # per-site CPU stays what these N sites cost and the workers scale as measured here)
        "paper_sites_core_hours": round(PAPER_SITES * per_site / 3600, 1),
        "load_average_1m": round(max(load, os.getloadavg()[0]), 1), "cores": len(os.sched_getaffinity(0)),
        "n": n, "seed": seed, "skill": skill, "episode_seeds": episode_seeds,
    }
    return summary


def report(summary: dict[str, Any]) -> str:
    keys = ("sites", "validated", "failed", "tasks_kept", "wall_seconds", "cpu_seconds", "cpu_seconds_per_site",
            "validated_per_cpu_hour", "validated_per_core_hour", "validated_per_hour")
    lines = [f"{'':28} {'1 worker':>12} {'2 workers':>12}"]
    for key in keys:
        lines.append(f"{key:28} {summary['runs'][0][key]!s:>12} {summary['runs'][1][key]!s:>12}")
    for key in ("throughput_ratio_2_over_1", "cpu_per_site_ratio_2_over_1", "same_bytes", "cpu_seconds_per_site",
                "paper_sites_core_hours", "load_average_1m", "cores"):
        lines.append(f"{key}: {summary[key]}")
    lines.append(f"estimate: {PAPER_SITES} sites ~ {summary['paper_sites_core_hours']} core-hours of CPU "
                 f"({summary['cpu_seconds_per_site']} s a site measured here), e.g. "
                 f"{summary['paper_sites_core_hours'] / 16:.1f} h on 16 cores, {summary['paper_sites_core_hours'] / 64:.1f} h on 64")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=4, help="sites each run makes")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--skill", default=None, help="one skill for every site (drawn per site when omitted)")
    parser.add_argument("--cpus", type=int, default=2, help="CPUs of the local Ray instance")
    parser.add_argument("--episode-seeds", type=int, default=None, help="as `weblica synth --episode-seeds`")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    summary = scale(args.n, args.seed, args.skill, args.cpus, args.episode_seeds)
    print(json.dumps(summary, sort_keys=True) if args.json else report(summary))


if __name__ == "__main__":
    main()
