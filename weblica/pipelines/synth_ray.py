"""`weblica synth --ray ADDRESS`: a procedural run's sites generated and validated on the actors of a Ray
cluster, one site a unit of work, into one output folder every worker reaches (a shared filesystem).

- Same bytes: the driver draws the run's specs exactly as the one-process run does
  (`weblica.synth.synthesize.procedural_specs`) and a worker builds and validates its one site with the
  same code (`synthesize_specs` / `synthesize_instances` on a one-spec list). A site's validation
  depends on its own bundle only, so OUT ends up byte for byte what `weblica synth` without --ray writes.
- Atomic bundles: a worker writes and validates its site in a staging folder inside OUT
  (`OUT/.<site id>.<random>/`, hidden from `bundle_dirs`, on OUT's filesystem) and renames the finished
  bundle to `OUT/<site id>` last. A worker killed halfway leaves only a staging folder, never a bundle
  that looks finished.
- Resumable: a site whose bundle is complete in OUT (`bundle_complete`) is skipped, so rerunning the same
  command after a worker, a machine or the driver died finishes the set without redoing any site. A
  rerun clears the earlier run's staging folders of the sites it still has to make.
- A site that fails (an exception, a worker process that died) is reported and left for the rerun; the
  other sites go on.

Needs the `ray` extra. The LLM generator stays in one process (its sites are agent runs with their own
`--parallel`).
"""
from __future__ import annotations

import contextlib
import os
import resource
import shutil
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from weblica.pipelines.ray_actors import dispatch, init_ray
from weblica.synth.generate import SynthResult
from weblica.synth.spec import SiteSpec

# test hook, read by the driver and handed to the workers, comma-separated: "SITE_ID:raise" makes that site's
# build raise, "SITE_ID:die" kills its worker process after the bundle is written to staging, before the
# rename (what a machine lost mid-site leaves). Only tests/synth/test_synth_ray.py sets it.
FAULT_ENV = "WEBLICA_SYNTH_RAY_FAULT"
STAGING_PREFIX = "."   # a staging folder is `.<site id>.<random>`: hidden, and never a bundle's own name


@dataclass
class RaySynth:
    """What a Ray run did: every site's result in the run's order, which sites an earlier run had
    finished (skipped now), and the sites that failed (id -> one-line error; a rerun makes them)."""
    results: list[SynthResult]
    resumed: list[str] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)
    workers: int = 0
    cpu_seconds: dict[str, float] = field(default_factory=dict)   # site made now -> its worker's CPU (with Chromium)


def bundle_complete(path: Path, validate: bool = True) -> bool:
    """Whether `path` holds a finished bundle: its site.json, data.json and tasks.jsonl are there (a
    bundle is written in that order, tasks.jsonl last) and, for a validated run, every task it keeps
    carries the oracle validation compiled (an unvalidated bundle, or one written by a `--no-validate`
    run, is not a finished validated one). Under --ray a bundle appears at its name only when whole."""
    tasks = path / "tasks.jsonl"
    if not ((path / "site.json").is_file() and (path / "data.json").is_file() and tasks.is_file()):
        return False
    if not validate:
        return True
    from weblica.env.task import load_tasks

    try:
        return all(task.oracle for task in load_tasks(tasks))
    except Exception:   # unreadable: an earlier writer died mid-file; make the site again
        return False


def resumed_result(spec: SiteSpec, path: Path) -> SynthResult:
    """The result of a site an earlier run finished: its kept tasks are what tasks.jsonl holds (how many
    it generated that run is not recorded in the bundle; counted as the kept ones)."""
    from weblica.env.task import load_tasks

    kept = len(load_tasks(path / "tasks.jsonl"))
    return SynthResult(spec.site_id, path, kept, kept)


def clear_staging(out: Path, site_ids: list[str]) -> None:
    """Remove the staging folders an earlier, interrupted run left for these sites."""
    wanted = set(site_ids)
    for entry in out.iterdir() if out.is_dir() else []:
        name = entry.name
        if entry.is_dir() and name.startswith(STAGING_PREFIX) and name[1:].rsplit(".", 1)[0] in wanted:
            shutil.rmtree(entry, ignore_errors=True)


def make_site(spec: SiteSpec, out: Path, validate: bool, concurrency: int, episode_seeds: int | None,
              instances: int, fault: str | None = None) -> SynthResult:
    """Generate and validate one site in a staging folder inside `out`, then rename it to `out/<site id>`;
    what a worker runs (also callable in-process)."""
    from weblica.synth.generate import synthesize_specs
    from weblica.synth.instances import synthesize_instances

    site_id = spec.site_id
    faults = set((fault or "").split(","))
    staging = Path(tempfile.mkdtemp(prefix=f"{STAGING_PREFIX}{site_id}.", dir=out))
    try:
        if f"{site_id}:raise" in faults:
            raise RuntimeError(f"{FAULT_ENV}: {site_id} fails on purpose")
        if instances > 1:
            result = synthesize_instances([spec], staging, instances, concurrency, False, episode_seeds)[0]
        else:
            result = synthesize_specs([spec], staging, validate, concurrency, False, episode_seeds)[0]
        if f"{site_id}:die" in faults:
            os._exit(17)   # the worker process dies with a whole bundle in staging, not yet renamed
        final = out / site_id
        if final.exists():   # an unfinished bundle of an earlier run (not complete, or we would have skipped it)
            shutil.rmtree(final)
        os.rename(staging / site_id, final)   # atomic: the bundle appears whole under its name or not at all
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    result.path = final
    return result


class SynthWorker:
    """A Ray actor body: makes one site at a time (its own browser and site server per site)."""

    def __init__(self, fault: str | None = None) -> None:
        self.fault = fault

    def make(self, spec: SiteSpec, out: str, validate: bool, concurrency: int, episode_seeds: int | None,
             instances: int) -> tuple[SynthResult, float]:
        start = process_cpu()
        result = make_site(spec, Path(out), validate, concurrency, episode_seeds, instances, self.fault)
        return result, process_cpu() - start


def process_cpu() -> float:
    """CPU seconds of this process, the children it reaped, and every descendant still there (with what
    each reaped): a site's Chromium, its renderers and the Playwright driver, whether or not they were
    reaped yet when the site is done, so a site's cost is the difference of two readings."""
    own, reaped = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    total = own.ru_utime + own.ru_stime + reaped.ru_utime + reaped.ru_stime
    ticks = os.sysconf("SC_CLK_TCK")
    parent, spent = {}, {}
    for entry in os.listdir("/proc") if os.path.isdir("/proc") else []:
        if entry.isdigit():
            try:   # fields after the command's closing parenthesis: ppid is the 2nd, utime..cstime the 12th-15th
                fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:   # it exited meanwhile
                continue
            parent[int(entry)] = int(fields[1])
            spent[int(entry)] = sum(int(v) for v in fields[11:15]) / ticks
    children: dict[int, list[int]] = {}
    for pid, ppid in parent.items():
        children.setdefault(ppid, []).append(pid)
    stack = list(children.get(os.getpid(), []))
    while stack:
        pid = stack.pop()
        total += spent.get(pid, 0.0)
        stack += children.get(pid, [])
    return total


def one_line(error: BaseException) -> str:
    """A worker's failure as one line: the exception the site raised, not Ray's wrapped traceback."""
    cause = getattr(error, "cause", None)
    if isinstance(cause, BaseException):
        error = cause
    text = " ".join(str(error).split())
    if type(error).__name__ == "ActorDiedError" or "actor died" in text.lower():
        text = "its worker process died"
    return f"{type(error).__name__}: {text[:300]}"


def synthesize_on_ray(specs: list[SiteSpec], out: Path, *, address: str, workers: int = 2, validate: bool = True,
                      concurrency: int = 4, episode_seeds: int | None = None, instances: int = 1,
                      progress: bool = False, ray_init_kwargs: dict[str, Any] | None = None) -> RaySynth:
    """Make every site of `specs` not already complete in `out` on `workers` Ray actors (a CPU each: a
    browser, a site server and the generator); the results come back in the order of `specs`."""
    out = out.resolve()   # the workers may run elsewhere: they get the absolute path of the shared folder
    done = {s.site_id for s in specs if bundle_complete(out / s.site_id, validate)}
    todo = [s for s in specs if s.site_id not in done]
    clear_staging(out, [s.site_id for s in todo])
    made = RaySynth([], sorted(done), workers=max(1, min(workers, len(todo))))
    results = {s.site_id: resumed_result(s, out / s.site_id) for s in specs if s.site_id in done}
    if todo:
        # Ray prints what it hears from the cluster (a worker that died, workers' own output) on the driver's
        # stdout, which must hold only the command's summary (`--json`): it goes to stderr for the run
        with contextlib.redirect_stdout(sys.stderr):
            ours = not _ray_connected()
            ray = init_ray(address, ray_init_kwargs)   # first: a bad address fails before anything is written
            try:
                out.mkdir(parents=True, exist_ok=True)
                results.update(_make_all(ray, todo, made, progress,
                                         (str(out), validate, concurrency, episode_seeds, instances)))
            finally:
                if ours:   # a connection this run opened ends with it, before its messages could reach stdout
                    ray.shutdown()
    made.results = [results[s.site_id] for s in specs if s.site_id in results]
    return made


def _ray_connected() -> bool:
    try:
        import ray
    except ImportError:   # init_ray says what to install
        return False
    return ray.is_initialized()


def _make_all(ray: Any, todo: list[SiteSpec], made: RaySynth, progress: bool,
              arguments: tuple[Any, ...]) -> dict[str, SynthResult]:
    """Hand `todo` to `made.workers` actors, each site with `arguments` (SynthWorker.make's after the spec);
    the sites made, by id (failures and CPU go into `made`)."""
    from weblica.progress import OptionalBar

    fault = os.environ.get(FAULT_ENV)
    actor_cls = ray.remote(num_cpus=1)(SynthWorker)
    actors = [actor_cls.remote(fault) for _ in range(made.workers)]
    label = f"sites on {made.workers} Ray workers" + (f" ({len(made.resumed)} done before)" if made.resumed else "")
    results: dict[str, SynthResult] = {}
    try:
        with OptionalBar(len(todo), label, progress) as bar:
            for index, result, error in dispatch(actors, todo, lambda actor, spec: actor.make.remote(spec, *arguments),
                                                 respawn=lambda: actor_cls.remote(fault)):
                site_id = todo[index].site_id
                if error is not None:
                    made.failed[site_id] = one_line(error)
                else:
                    results[site_id], made.cpu_seconds[site_id] = result
                bar.advance()
    finally:
        for actor in actors:
            ray.kill(actor)
    return results
