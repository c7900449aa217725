"""`weblica run`: rollouts of a policy over a task file, with rewards (weblica.pipelines.rollouts)."""
from __future__ import annotations

from pathlib import Path

import click

from weblica.cli import UserError, emit, load_task_file, user_errors


@click.command("run")
@click.option("--tasks", "tasks_path", required=True, type=click.Path(exists=True, dir_okay=False),
              help="tasks.jsonl")
@click.option("--policy", default="oracle", show_default=True, help="oracle, random, hf:DIR, openai:URL, ...")
@click.option("--out", required=True, type=click.Path(file_okay=False), help="run directory to write")
@click.option("--parallel", default=1, show_default=True, type=click.IntRange(1, 64))
@click.option("--seed", default=0, show_default=True, type=int)
@click.option("--repeats", default=1, show_default=True, type=click.IntRange(1, 1000),
              help="episodes per task (for pass@k)")
@click.option("--ray", "ray_address", default=None,
              help="run env workers as Ray actors: 'auto' (an existing cluster), 'local', or ADDRESS")
@click.option("--ray-workers", default=2, show_default=True, type=click.IntRange(1, 4096))
@click.option("--allow-private", is_flag=True,
              help="let local and live tasks reach link-local and private addresses (refused by default)")
@click.option("--resume", is_flag=True,
              help="finish the run in --out: keep the episodes it already wrote, play the others")
@click.option("--json", "as_json", is_flag=True, help="print a JSON summary")
def run_command(tasks_path: str, policy: str, out: str, parallel: int, seed: int, repeats: int,
                ray_address: str | None, ray_workers: int, allow_private: bool, resume: bool,
                as_json: bool) -> None:
    """Run a policy on every task; write RUN/episodes.jsonl (each episode as it ends) and screenshots."""
    from weblica.pipelines.rollouts import run_rollouts

    if resume and ray_address:
        raise UserError("--resume does not work with --ray yet: run without --ray to resume")
    tasks = load_task_file(tasks_path)
    with user_errors():
        done = run_rollouts(tasks, policy, out, parallel=parallel, seed=seed, repeats=repeats,
                            allow_private=allow_private, resume=resume, progress=not as_json,
                            ray_address=ray_address, ray_workers=ray_workers)
    data = done.to_dict(resume)
    written = Path(out) / "episodes.jsonl"
    if done.nothing_to_do:
        human = f"nothing to do: all {data['episodes']} episodes were already in {written}"
    else:
        human = (f"{data['episodes']} episodes, success rate {data['success_rate']:.1%}; written to {written}"
                 + (f" ({done.kept} kept from the earlier run)" if done.kept else ""))
    terminations = ", ".join(f"{k} {v}" for k, v in sorted(data["termination_reasons"].items()))
    emit(data, as_json, human=f"{human}\nterminations: {terminations}")


def register(cli: click.Group) -> None:
    cli.add_command(run_command)
