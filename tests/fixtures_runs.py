"""Reference runs shared by the tests that compare against them: one build per distinct input per
process (under pytest-xdist each worker makes its own; the runs are deterministic, so every copy is the
same). Tests only read what these return."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable


def grpo_reference(tmp_path_factory: Any) -> Callable[[dict[str, Any]], Path]:
    """A function: GRPO config fields (without output_dir) -> the output dir of that config's one-process
    run. The key holds the tasks file's bytes, not its path: modules write the same tasks to their own
    temporary files, and a task's URL (its site's port) is part of every prompt. The run plays the
    scripted groups of tests/scripted_rollouts.py (a scripted success and failure in every group), as
    the runs compared with it do (`scripted_env`)."""
    made: dict[str, Path] = {}

    def run(common: dict[str, Any]) -> Path:
        import pytest

        from scripted_rollouts import install_grpo_scripts
        from weblica.train.config import GRPOConfig
        from weblica.train.grpo import train_grpo

        key = json.dumps({**common, "tasks": Path(common["tasks"]).read_text()}, sort_keys=True)
        if key not in made:
            out = tmp_path_factory.mktemp("grpo-one-process")
            with pytest.MonkeyPatch.context() as patch:
                install_grpo_scripts(patch.setattr)
                train_grpo(GRPOConfig(output_dir=str(out), **common))
            made[key] = out
        return made[key]
    return run
