"""`weblica synth` and `weblica validate`."""
from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import click

from weblica.cli import UserError, emit, plural
from weblica.synth.spec import CatalogError
from weblica.synth.splits import SplitError


@click.group("synth", invoke_without_command=True)
@click.option("--skill", help="Skill id (e.g. forms, search, filter-sort); sampled when omitted.")
@click.option("--category", help="Category id (e.g. travel, banking); sampled when omitted.")
@click.option("--style", help="Named aesthetic (e.g. brutalist, glass); sampled when omitted.")
@click.option("--design", help="Design system (govuk, nhsuk, uswds, bootstrap, bulma, tabler, pico, uikit, foundation, "
              "primer, or weblica for the hand-written style); drawn for the genre when omitted.")
@click.option("--n", "n", type=int, default=1, show_default=True, help="Number of sites.")
@click.option("--seed", type=int, default=0, show_default=True, help="Run seed; the same seed gives the same bytes.")
@click.option("--generator", type=click.Choice(["procedural", "llm"]), default="procedural", show_default=True)
@click.option("--out", type=click.Path(path_type=Path), default=Path("sites"), show_default=True)
@click.option("--no-validate", is_flag=True, help="Write bundles without browser validation (tasks keep no oracle).")
@click.option("--split", type=click.Choice(["train", "val"]), default=None,
              help="Draw seeds, categories and aesthetics from one side of the held-out split (eval/synth-val.yaml), "
              "and write OUT/tasks.jsonl: the tasks of every bundle of that split in OUT (a recipe's task set).")
@click.option("--model", default=None, help="LLM generator's model: anthropic:MODEL or openai:URL#MODEL "
              "(;key=value options as in policy specs); default $WEBLICA_SYNTH_MODEL.")
@click.option("--parallel", type=int, default=1, show_default=True, help="LLM generator: sites written at a time.")
@click.option("--instances", type=int, default=1, show_default=True,
              help="Validated instances of each site's data; an episode plays instance seed % K (MiniWoB-style).")
@click.option("--episode-seeds", "extra_seeds", type=int, default=None,
              help="Episode seeds validation plays each task at besides 0, drawn per site [default: 2].")
@click.option("--ray", "ray_address", default=None,
              help="Make the sites on Ray actors, one site a job, into --out (a folder every worker reaches): "
              "'auto' (an existing cluster), 'local', or HOST:PORT. Rerunning skips the sites already finished.")
@click.option("--ray-workers", default=2, show_default=True, type=click.IntRange(1, 4096),
              help="With --ray: workers, one site at a time each (a CPU each).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON summary.")
def synth_command(skill: str | None, category: str | None, style: str | None, design: str | None, n: int,
                  seed: int, generator: str,
                  out: Path, no_validate: bool, split: str | None, model: str | None, parallel: int,
                  instances: int, extra_seeds: int | None, ray_address: str | None, ray_workers: int,
                  as_json: bool) -> None:
    """Generate site bundles with tasks whose success a program can check (`synth gallery DIR`: look at them)."""
    if click.get_current_context().invoked_subcommand:  # `weblica synth gallery ...`
        return
    from weblica.browser.launcher import ChromiumNotFound
    from weblica.synth.synthesize import synthesize

    if n < 1:
        raise UserError("--n must be at least 1")
    if parallel < 1:
        raise UserError("--parallel must be at least 1")
    if instances < 1:
        raise UserError("--instances must be at least 1")
    if instances > 1 and (generator != "procedural" or no_validate):
        raise UserError("--instances works with the procedural generator and validation (drop --no-validate)")
    if extra_seeds is not None and extra_seeds < 0:
        raise UserError("--episode-seeds must be at least 0 (0: validate at episode seed 0 only)")
    if (model or parallel > 1) and generator != "llm":
        raise UserError("--model and --parallel are options of the LLM generator: add --generator llm")
    on_ray: Any = None   # --ray: a weblica.pipelines.synth_ray.RaySynth
    try:
        if ray_address:
            on_ray = _synth_on_ray(skill, category, style, design, n, seed, generator, out,
                                   not no_validate, split, instances, extra_seeds, ray_address, ray_workers,
                                   not as_json)
            results = on_ray.results
        else:
            results = synthesize(skill=skill, category=category, style=style, design=design, n=n, seed=seed,
                                 out=out, generator=generator, validate=not no_validate, split=split, model=model,
                                 parallel=parallel, progress=not as_json, instances=instances,
                                 episode_seeds=extra_seeds)
    except (CatalogError, SplitError) as exc:
        raise UserError(str(exc)) from None
    except ChromiumNotFound as exc:
        raise UserError(f"{exc} (or pass --no-validate)") from None
    except Exception as exc:
        if generator != "llm":
            raise
        raise UserError(f"the LLM generator failed ({type(exc).__name__}: {exc}); pass --model "
                        "anthropic:MODEL (with ANTHROPIC_API_KEY) or openai:URL#MODEL (with OPENAI_API_KEY), "
                        "or set WEBLICA_SYNTH_MODEL") from None
    summary = {"sites": [r.to_dict() for r in results], "out": str(out),
               "tasks_kept": sum(r.tasks_kept for r in results),
               "ok": all(r.ok or no_validate for r in results) and not (on_ray and on_ray.failed)}
    human = "\n".join(f"{r.site_id}: {r.tasks_kept}/{r.tasks_generated} tasks kept -> {r.path}"
                      + (" (finished before)" if on_ray and r.site_id in on_ray.resumed else "")
                      + (f" ({r.failures[0]})" if generator == "llm" and not r.ok and r.failures else "") for r in results)
    if on_ray is not None:   # what an earlier run had finished, what failed now (a rerun makes it), the CPU
        summary.update(resumed=on_ray.resumed, failed=[{"site_id": k, "error": v} for k, v in on_ray.failed.items()],
                       workers=on_ray.workers, cpu_seconds={k: round(v, 1) for k, v in on_ray.cpu_seconds.items()})
        if on_ray.failed:
            human += "".join(f"\n{site_id}: failed: {error}" for site_id, error in on_ray.failed.items())
            human += (f"\n{plural(len(on_ray.failed), 'site')} failed: rerun the same command to make them "
                      "(finished sites are skipped)")
    if split is not None:  # the split's task set, over every bundle of that split in --out (train recipes read it)
        from weblica.synth.splits import write_task_set

        path, count, bundles = write_task_set(out, split)
        summary["task_set"] = {"path": str(path), "tasks": count, "sites": bundles}
        human += f"\n{split} task set: {plural(count, 'task')} of {plural(bundles, 'site')} -> {path}"
    emit(summary, as_json, human)
    if not summary["ok"]:
        raise SystemExit(1)


def _synth_on_ray(skill: str | None, category: str | None, style: str | None, design: str | None, n: int,
                  seed: int, generator: str, out: Path, validate: bool, split: str | None, instances: int,
                  extra_seeds: int | None, address: str, workers: int, progress: bool) -> Any:
    """`weblica synth --ray`: the run's specs drawn here as the one-process run draws them, each site made
    on a Ray worker (weblica/pipelines/synth_ray.py)."""
    from weblica.cli import user_errors
    from weblica.synth.synthesize import procedural_specs

    if generator != "procedural":
        raise UserError("--ray works with the procedural generator (the LLM generator has --parallel)")
    if instances > 1 and not validate:
        raise UserError("--instances works with the procedural generator and validation (drop --no-validate)")
    try:
        import ray  # noqa: F401
    except ImportError:
        raise UserError("--ray needs Ray: pip install 'weblica[ray]'") from None
    from weblica.pipelines.synth_ray import synthesize_on_ray

    specs = procedural_specs(skill, category, style, design, n, seed, split)
    with user_errors():   # a bad address: one line naming the fix
        done = synthesize_on_ray(specs, out, address=address, workers=workers, validate=validate,
                                 episode_seeds=extra_seeds, instances=instances, progress=progress)
    return done


@click.command("validate")
@click.argument("path", type=click.Path(exists=True, path_type=Path))
@click.option("--concurrency", type=int, default=4, show_default=True, help="Browser episodes at a time.")
@click.option("--episode-seeds", "extra_seeds", type=int, default=None,
              help="Episode seeds validated besides 0, drawn per site [default: 2]; 0 validates at seed 0 only.")
@click.option("--seeds", "seed_list", default=None,
              help="Explicit episode seeds besides 0, comma-separated (e.g. 3,17,40001); replaces the drawn ones.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON summary.")
def validate_command(path: Path, concurrency: int, extra_seeds: int | None, seed_list: str | None,
                     as_json: bool) -> None:
    """Validate bundles: oracles succeed; no-op, random and "do everything" runs, wrong answers and
    adversarial ones (enumerations, hedges, negations, the page's text) are all rejected at episode
    seed 0; then each task's oracle and answer negatives at more episode seeds (their pop-ups, header
    and, with instances, data and gold)."""
    from weblica.synth.bundles import bundle_dirs
    from weblica.synth.validate_seeds import EXTRA_SEEDS, parse_seed_list, validate_bundles_at_seeds

    dirs = bundle_dirs(path)
    if not dirs:
        raise UserError(f"no site bundle (a folder with site.json) at {path}: run `weblica synth --out {path}` first")
    if extra_seeds is not None and seed_list is not None:
        raise UserError("--episode-seeds N draws seeds and --seeds LIST names them: give one of the two")
    if extra_seeds is not None and extra_seeds < 0:
        raise UserError("--episode-seeds must be at least 0 (0: episode seed 0 only)")
    try:
        seeds = parse_seed_list(seed_list) if seed_list is not None else None
    except ValueError as exc:
        raise UserError(f"--seeds: {exc}") from None
    report, _ = asyncio.run(validate_bundles_at_seeds(
        dirs, compile_plans=False, concurrency=concurrency, progress=not as_json,
        extra=EXTRA_SEEDS if extra_seeds is None else extra_seeds, seeds=seeds))
    summary = report.to_dict()
    kinds = ", ".join(f"{kind} {summary['negatives_rejected'].get(kind, 0)}/{tried}"
                      for kind, tried in summary["negatives_tried"].items())
    human = (f"{plural(summary['sites'], 'site')}, {summary['valid_tasks']}/{summary['tasks']} tasks valid; "
             f"oracle success {summary['oracle_success']}; negatives rejected/tried by kind: {kinds or 'none'}; "
             f"episode seeds per task: up to {max((len(s['seeds']) for s in summary['seeds']), default=0)}")
    if summary["failures"]:
        human += "\n" + "\n".join("  " + f for f in summary["failures"][:50])
    emit(summary, as_json, human)
    if summary["valid_tasks"] != summary["tasks"]:
        raise SystemExit(1)


@click.command("gallery")
@click.argument("path", type=click.Path(exists=True, path_type=Path))
@click.option("--out", type=click.Path(path_type=Path), default=None, help="HTML file (default DIR/gallery.html).")
@click.option("--start-only", is_flag=True, help="Screenshot start pages only (faster).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON summary.")
def gallery_command(path: Path, out: Path | None, start_only: bool, as_json: bool) -> None:
    """Write an HTML contact sheet of every site bundle in PATH (start page and one inner page each)."""
    from weblica.synth.gallery import write_gallery

    try:
        html_path, entries = write_gallery(path, out, inner=not start_only)
    except ValueError as exc:
        raise UserError(str(exc)) from None
    emit({"html": str(html_path), "sites": [e.to_dict() for e in entries]}, as_json,
         f"gallery of {plural(len(entries), 'site')} -> {html_path}")


def register(cli: click.Group) -> None:
    synth_command.add_command(gallery_command)
    cli.add_command(synth_command)
    cli.add_command(validate_command)
