"""`weblica run`: rollouts of a policy over a task file, with rewards."""
from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import click

from weblica.cli import UserError, emit, load_task_file


def policy_factory(spec: str, seed: int, tasks: list[Any] | None = None) -> Any:
    """A zero-argument factory of fresh policies for `spec` (oracle, random, hf:DIR, openai:URL, ...).
    Given the tasks it will play, the oracle checks up front that each has oracle actions."""
    from weblica.policy.backends.base import BackendError
    from weblica.policy.factory import PolicySpecError, make_policy_factory

    if spec == "oracle":
        missing = [t.id for t in tasks or [] if t.oracle is None]
        if missing:
            raise UserError(f"{len(missing)} task(s) have no oracle actions (e.g. {missing[0]}); "
                            "use --policy random or a model")
    try:
        return make_policy_factory(spec, seed)
    except (PolicySpecError, BackendError) as exc:
        raise UserError(str(exc)) from None


def register(cli: click.Group) -> None:
    @cli.command("run")
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
    @click.option("--json", "as_json", is_flag=True, help="print a JSON summary")
    def run_command(tasks_path: str, policy: str, out: str, parallel: int, seed: int, repeats: int,
                    ray_address: str | None, ray_workers: int, allow_private: bool, as_json: bool) -> None:
        """Run a policy on every task; write RUN/episodes.jsonl and screenshots."""
        from weblica.browser.launcher import ChromiumNotFound
        from weblica.env.sources import UnknownSource, open_backends
        from weblica.rollout import run_tasks

        tasks = load_task_file(tasks_path)
        factory = policy_factory(policy, seed, tasks)

        async def go() -> Any:
            async with open_backends(tasks, allow_private=allow_private) as backends:
                return await run_tasks(tasks, factory, out, parallel=parallel, seed=seed, repeats=repeats,
                                       backends=backends, progress=not as_json)

        try:
            if ray_address:
                from weblica.rollout_ray import run_tasks_ray

                _, summary = run_tasks_ray(tasks, policy, out, address=ray_address, workers=ray_workers,
                                           parallel_per_worker=parallel, seed=seed, repeats=repeats,
                                           allow_private=allow_private)
            else:
                _, summary = asyncio.run(go())
        except (ChromiumNotFound, UnknownSource) as exc:
            raise UserError(str(exc)) from None
        data = summary.to_dict()
        emit(data, as_json, human=(f"{data['episodes']} episodes, success rate {data['success_rate']:.1%}, "
                                   f"terminations {data['termination_reasons']}; written to {Path(out) / 'episodes.jsonl'}"))
