"""`weblica synth` and `weblica validate`."""
from __future__ import annotations

import asyncio
from pathlib import Path

import click

from weblica.cli import UserError, emit
from weblica.synth.spec import CatalogError
from weblica.synth.splits import SplitError


@click.group("synth", invoke_without_command=True)
@click.option("--skill", help="Skill id (e.g. forms, search, filter-sort); sampled when omitted.")
@click.option("--category", help="Category id (e.g. travel, banking); sampled when omitted.")
@click.option("--style", help="Named aesthetic (e.g. brutalist, glass); sampled when omitted.")
@click.option("--n", "n", type=int, default=1, show_default=True, help="Number of sites.")
@click.option("--seed", type=int, default=0, show_default=True, help="Run seed; the same seed gives the same bytes.")
@click.option("--generator", type=click.Choice(["procedural", "llm"]), default="procedural", show_default=True)
@click.option("--out", type=click.Path(path_type=Path), default=Path("sites"), show_default=True)
@click.option("--no-validate", is_flag=True, help="Write bundles without browser validation (tasks keep no oracle).")
@click.option("--split", type=click.Choice(["train", "val"]), default=None,
              help="Draw seeds, categories and aesthetics from one side of the held-out split (eval/synth-val.yaml).")
@click.option("--model", default=None, help="LLM generator's model: anthropic:MODEL or openai:URL#MODEL "
              "(;key=value options as in policy specs); default $WEBLICA_SYNTH_MODEL.")
@click.option("--parallel", type=int, default=1, show_default=True, help="LLM generator: sites written at a time.")
@click.option("--instances", type=int, default=1, show_default=True,
              help="Validated instances of each site's data; an episode plays instance seed %% K (MiniWoB-style).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON summary.")
def synth_command(skill: str | None, category: str | None, style: str | None, n: int, seed: int, generator: str,
                  out: Path, no_validate: bool, split: str | None, model: str | None, parallel: int,
                  instances: int, as_json: bool) -> None:
    """Generate site bundles with tasks whose success a program can check (`synth gallery DIR`: look at them)."""
    if click.get_current_context().invoked_subcommand:  # `weblica synth gallery ...`
        return
    from weblica.browser.launcher import ChromiumNotFound
    from weblica.synth.generate import synthesize

    if n < 1:
        raise UserError("--n must be at least 1")
    if parallel < 1:
        raise UserError("--parallel must be at least 1")
    if instances < 1:
        raise UserError("--instances must be at least 1")
    if instances > 1 and (generator != "procedural" or no_validate):
        raise UserError("--instances works with the procedural generator and validation (drop --no-validate)")
    if (model or parallel > 1) and generator != "llm":
        raise UserError("--model and --parallel are options of the LLM generator: add --generator llm")
    try:
        results = synthesize(skill=skill, category=category, style=style, n=n, seed=seed, out=out,
                             generator=generator, validate=not no_validate, split=split, model=model,
                             parallel=parallel, progress=not as_json, instances=instances)
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
               "tasks_kept": sum(r.tasks_kept for r in results), "ok": all(r.ok or no_validate for r in results)}
    human = "\n".join(f"{r.site_id}: {r.tasks_kept}/{r.tasks_generated} tasks kept -> {r.path}"
                      + (f" ({r.failures[0]})" if generator == "llm" and not r.ok and r.failures else "") for r in results)
    emit(summary, as_json, human)
    if not summary["ok"]:
        raise SystemExit(1)


@click.command("validate")
@click.argument("path", type=click.Path(exists=True, path_type=Path))
@click.option("--concurrency", type=int, default=4, show_default=True, help="Browser episodes at a time.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON summary.")
def validate_command(path: Path, concurrency: int, as_json: bool) -> None:
    """Validate bundles: oracles succeed; no-op, random and "do everything" runs, wrong answers and
    adversarial ones (enumerations, hedges, negations, the page's text) are all rejected."""
    from weblica.synth.validate import bundle_dirs, validate_bundles

    dirs = bundle_dirs(path)
    if not dirs:
        raise UserError(f"no site bundle (a folder with site.json) at {path}: run `weblica synth --out {path}` first")
    report, _ = asyncio.run(validate_bundles(dirs, compile_plans=False, concurrency=concurrency,
                                                progress=not as_json))
    summary = report.to_dict()
    kinds = ", ".join(f"{kind} {summary['negatives_rejected'].get(kind, 0)}/{tried}"
                      for kind, tried in summary["negatives_tried"].items())
    human = (f"{summary['sites']} sites, {summary['valid_tasks']}/{summary['tasks']} tasks valid; "
             f"oracle success {summary['oracle_success']}; negatives rejected/tried by kind: {kinds or 'none'}")
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
         f"gallery of {len(entries)} sites -> {html_path}")


def register(cli: click.Group) -> None:
    synth_command.add_command(gallery_command)
    cli.add_command(synth_command)
    cli.add_command(validate_command)
