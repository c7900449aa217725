"""`weblica tiny-model`: write the tiny Qwen3-VL checkpoint that tests and CPU recipes run on."""
from __future__ import annotations

import click

from weblica.cli import emit
from weblica.policy.tiny import WARM_START_STEPS


def register(cli: click.Group) -> None:
    @cli.command("tiny-model")
    @click.argument("out_dir", type=click.Path(file_okay=False))
    @click.option("--seed", default=0, show_default=True, type=int)
    @click.option("--warm-start-steps", default=WARM_START_STEPS, show_default=True, type=click.IntRange(0, 100_000),
                  help="SFT steps teaching it to answer with parseable tool calls; 0 keeps random weights")
    @click.option("--json", "as_json", is_flag=True, help="print a JSON summary")
    def tiny_model(out_dir: str, seed: int, warm_start_steps: int, as_json: bool) -> None:
        """Build a tiny Qwen3-VL checkpoint directory (model, tokenizer, image processor) for `hf:DIR`."""
        from weblica.policy.tiny import build_tiny_qwen3_vl
        from weblica.progress import TrainingProgress

        with TrainingProgress("tiny model: warm start", enabled=not as_json) as bar:
            path = build_tiny_qwen3_vl(out_dir, seed=seed, warm_start_steps=warm_start_steps, progress=bar)
        emit({"path": str(path), "seed": seed, "warm_start_steps": warm_start_steps, "policy": f"hf:{path}"},
             as_json, f"wrote {path}; run it with --policy hf:{path}")
