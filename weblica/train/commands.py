"""`weblica train sft|grpo --config FILE`."""
from __future__ import annotations

from pathlib import Path

import click

from weblica.cli import UserError, emit


def register(cli: click.Group) -> None:
    @cli.command("train")
    @click.argument("kind", type=click.Choice(["sft", "grpo"]))
    @click.option("--config", "config_path", required=True, type=click.Path(dir_okay=False),
                  help="YAML recipe (see train/*.yaml); its keys are the trainer's config fields")
    @click.option("--set", "overrides", multiple=True, metavar="KEY=VALUE",
                  help="override a recipe value (YAML syntax), e.g. --set iterations=2")
    @click.option("--nproc", type=click.IntRange(min=1), default=1, show_default=True,
                  help="training ranks on this node, one per GPU (launches torchrun); replicas or "
                  "shards by the recipe's parallelism (ddp | fsdp)")
    @click.option("--json", "as_json", is_flag=True)
    def train(kind: str, config_path: str, overrides: tuple[str, ...], nproc: int, as_json: bool) -> None:
        """Train with SFT or multi-turn GRPO; resumes from the newest checkpoint in output_dir."""
        import dataclasses
        import os

        import yaml

        from weblica.train.config import ConfigError, config_from_dict, load_config

        try:
            config = load_config(config_path, kind)
            if overrides:
                values = dataclasses.asdict(config)
                for item in overrides:
                    key, sep, value = item.partition("=")
                    if not sep:
                        raise ConfigError(f"--set {item}: use KEY=VALUE")
                    values[key.strip()] = yaml.safe_load(value)
                config = config_from_dict(type(config), values, "--set")
        except ConfigError as exc:
            raise UserError(str(exc)) from None
        check_task_files(config, config_path)   # before minutes of model building, not after
        if nproc > 1 and "WORLD_SIZE" not in os.environ:
            launch_ranks(nproc, kind, config_path, overrides, as_json)
            return
        from weblica.progress import TrainingProgress

        main_rank = os.environ.get("RANK", "0") == "0"  # the other ranks hold the same summary
        try:
            with TrainingProgress(f"train {kind}", enabled=main_rank and not as_json) as bar:
                if kind == "sft":
                    from weblica.train.sft import train_sft

                    summary = train_sft(config, bar)  # type: ignore[arg-type]
                else:
                    from weblica.train.grpo import train_grpo

                    summary = train_grpo(config, bar)  # type: ignore[arg-type]
        except (FileNotFoundError, ValueError) as exc:
            raise UserError(str(exc)) from None
        if main_rank:
            emit(summary, as_json, human_summary(kind, summary, config.output_dir))


def check_task_files(config: object, config_path: str) -> None:
    """Each task file the recipe names is there; one that is not fails at once, naming the command that
    makes it where it is a synth site's (weblica/missing_site.py)."""
    from weblica.missing_site import missing_tasks_message

    for key in ("tasks", "eval_tasks"):
        value = getattr(config, key, None)
        if value and not Path(value).is_file():
            raise UserError(f"{config_path}: {key}: {missing_tasks_message(value)}")


def human_summary(kind: str, summary: dict, output_dir: str) -> str:
    """A training summary as a person reads it (`--json` prints the dict itself)."""
    from weblica.progress import describe_metrics

    if summary.get("nothing_to_do"):
        done = f"{summary['steps']} steps" if kind == "sft" else f"{summary['iterations']} iterations"
        more = "epochs" if kind == "sft" else "iterations"
        return (f"nothing to do: {output_dir} already holds this recipe's finished run ({done}); its model is "
                f"{summary['final']}. Raise {more} (--set {more}=N) to train on, or give another output_dir.")
    if kind == "sft":
        loss = summary.get("last_loss")
        return (f"SFT: {summary['steps']} steps on {summary['samples']} samples"
                + (f", last loss {loss:.4g}" if isinstance(loss, (int, float)) else "")
                + f"\nmodel: {summary['final']}")
    last = summary.get("last") or {}
    shown = describe_metrics(last, ("reward", "success", "episodes", "loss", "clip_fraction", "grad_norm"))
    return (f"GRPO: {summary['iterations']} iterations" + (f"; last: {shown}" if shown else "")
            + f"\nmodel: {summary['final']}\nmetrics: {Path(output_dir) / 'metrics.jsonl'}")


def launch_ranks(nproc: int, kind: str, config_path: str, overrides: tuple[str, ...], as_json: bool) -> None:
    """Run this training command as `nproc` ranks under torchrun on this node; exits with its status."""
    import subprocess
    import sys

    command = [sys.executable, "-m", "torch.distributed.run", "--standalone", f"--nproc-per-node={nproc}",
               "-m", "weblica.cli", "train", kind, "--config", config_path]
    for item in overrides:
        command += ["--set", item]
    if as_json:
        command.append("--json")
    status = subprocess.run(command).returncode
    if status:
        raise SystemExit(status)
