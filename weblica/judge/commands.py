"""`weblica judge distill` and `weblica judge agree`."""
from __future__ import annotations

import click

from weblica.cli import UserError, emit


def register(cli: click.Group) -> None:
    @cli.group("judge")
    def judge_group() -> None:
        """Open trajectory judges: distil one from judged runs; measure agreement with labels."""

    @judge_group.command("distill")
    @click.option("--runs", "runs", multiple=True, required=True, metavar="RUN",
                  help="judged run directories (episodes.jsonl + tasks.jsonl + screens/); repeatable")
    @click.argument("more_runs", nargs=-1, type=click.Path(file_okay=False))
    @click.option("--out", "out_dir", required=True, type=click.Path(file_okay=False))
    @click.option("--model", default="tiny", show_default=True, help="'tiny' or a local checkpoint directory")
    @click.option("--labels", "labels_path", type=click.Path(dir_okay=False),
                  help="a stronger judge's verdicts (JSON lines: run, episode_id, success[, rationale])")
    @click.option("--heldout", default=0.2, show_default=True, help="fraction held out for `judge agree`")
    @click.option("--epochs", default=3, show_default=True)
    @click.option("--batch-size", default=4, show_default=True)
    @click.option("--learning-rate", default=1e-4, show_default=True)
    @click.option("--seed", default=0, show_default=True)
    @click.option("--device", default="auto", show_default=True)
    @click.option("--dtype", default="float32", show_default=True, help="bfloat16 for 8B on GPU")
    @click.option("--gradient-checkpointing", is_flag=True)
    @click.option("--freeze-vision", is_flag=True)
    @click.option("--json", "as_json", is_flag=True)
    def distill(runs: tuple[str, ...], more_runs: tuple[str, ...], out_dir: str, model: str, labels_path: str | None,
                heldout: float, epochs: int, batch_size: int, learning_rate: float, seed: int, device: str,
                dtype: str, gradient_checkpointing: bool, freeze_vision: bool, as_json: bool) -> None:
        """Train a judge model (judge input -> rationale + verdict) with the SFT trainer. `--runs A B C`
        and `--runs A --runs B` both work."""
        from weblica.judge.distill import distill_judge

        try:
            summary = distill_judge(list(runs) + list(more_runs), out_dir, model=model, labels=labels_path,
                                    heldout=heldout, epochs=epochs, batch_size=batch_size,
                                    learning_rate=learning_rate, seed=seed, device=device, dtype=dtype,
                                    gradient_checkpointing=gradient_checkpointing, freeze_vision=freeze_vision)
        except (FileNotFoundError, ValueError) as exc:
            raise UserError(str(exc)) from None
        emit(summary, as_json, f"judge trained on {summary['train']} episodes ({summary['steps']} steps) -> "
                               f"{summary['final']}\nheld-out labels: {summary['heldout_labels']}")

    @judge_group.command("agree")
    @click.option("--judge", "judge_spec", required=True,
                  help="hf:PATH | openai:URL[#MODEL] | anthropic:MODEL | labels:FILE")
    @click.option("--labels", "labels_path", required=True, type=click.Path(dir_okay=False),
                  help="reference labels (JSON lines: run, episode_id, success), e.g. OUT/labels.heldout.jsonl")
    @click.option("--max-new-tokens", default=256, show_default=True)
    @click.option("--limit", type=int, help="judge only the first N labelled episodes")
    @click.option("--out", "rows_path", type=click.Path(dir_okay=False), help="write per-episode verdicts here")
    @click.option("--lenient", is_flag=True, help="read verdicts as the reward does (without a 'Verdict:' line too)")
    @click.option("--json", "as_json", is_flag=True)
    def agree(judge_spec: str, labels_path: str, max_new_tokens: int, limit: int | None, rows_path: str | None,
              lenient: bool, as_json: bool) -> None:
        """Accuracy, precision, recall and F1 of a judge against reference labels."""
        from weblica.judge.agree import judge_agreement, write_rows
        from weblica.policy.backends.base import BackendError

        try:
            result = judge_agreement(judge_spec, labels_path, max_new_tokens, limit, strict=not lenient)
        except (FileNotFoundError, ValueError, BackendError) as exc:
            raise UserError(str(exc)) from None
        rows = result.pop("episodes")
        if rows_path:
            write_rows(rows, rows_path)
            result["rows"] = rows_path
        emit(result, as_json, f"{judge_spec} on {result['n']} episodes: accuracy {result['accuracy']:.3f}  "
                              f"precision {result['precision']:.3f}  recall {result['recall']:.3f}  "
                              f"F1 {result['f1']:.3f}  (unreadable {result['unreadable']})")
