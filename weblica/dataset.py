"""Run directories as Hugging Face `datasets`: one row per agent turn, screenshots as images, and the turn's
conversation ready for TRL's `SFTTrainer`.

Each row holds the turn's record (task, episode, step, the screenshot the agent saw, its response, actions,
feedback, reward) and:
- `instruction`: the task's instruction (for a task with instances, the one the episode's seed played);
- `messages`: the conversation the policy saw at that turn, as weblica's own SFT builds it
  (weblica.train.samples: system prompt with the tools, one user turn per observation, earlier responses
  verbatim), closed by the turn's response as the assistant message; image parts are `{"type": "image"}`
  placeholders, in order;
- `images`: the screenshots those placeholders stand for (the last `keep_images` turns').

A scripted teacher's responses (the oracle writes viewport pixels) are re-rendered in the student's
coordinate frame, as SFT does, so a Qwen3-VL student learns 0-1000 grid clicks. So
`SFTTrainer(train_dataset=dataset.select_columns(["messages", "images"]), processing_class=processor)`
trains on exactly what `weblica train sft` would.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from weblica.env.task import Task, load_tasks
from weblica.rollout import load_trajectories


class DatasetError(ValueError):
    """A run directory that cannot be exported (no tasks file to take instructions from)."""


def _tasks_of(run_dir: Path, tasks: list[Task] | None) -> dict[str, Task]:
    if tasks is None:
        path = run_dir / "tasks.jsonl"
        if not path.is_file():
            raise DatasetError(f"{run_dir} has no tasks.jsonl (runs written by `weblica run` and `weblica eval` "
                               "have one): pass tasks= to export its instructions and messages")
        tasks = load_tasks(path)
    return {t.id: t for t in tasks}


def _trl_messages(messages: list[Any]) -> tuple[list[dict[str, Any]], list[bytes]]:
    """weblica's messages (weblica.policy.context.Message) as TRL's structured messages, and the images their
    placeholders stand for, in order."""
    out, images = [], []
    for message in messages:
        content = []
        for part in message.parts:
            if part.type == "image" and part.image is not None:
                content.append({"type": "image", "text": None})
                images.append(part.image)
            elif part.text:
                content.append({"type": "text", "text": part.text})
        out.append({"role": message.role, "content": content})
    return out, images


def turn_rows(run_dir: str | Path, tasks: list[Task] | None = None, frame: str = "relative1000",
              keep_images: int = 1, prompt_format: str = "weblica") -> list[dict[str, Any]]:
    """One row per step (see the module doc). `frame`: the coordinate convention the messages use
    (relative1000 for Qwen3-VL, viewport for pixels); `keep_images`, `prompt_format`: as the policy's."""
    from weblica.env.task import episode_task
    from weblica.policy.context import ContextBuilder
    from weblica.policy.coords import CoordinateFrame
    from weblica.train.samples import in_frame, turn_messages

    run_dir = Path(run_dir)
    by_id = _tasks_of(run_dir, tasks)
    builder = ContextBuilder(CoordinateFrame.for_convention(frame), keep_images, prompt_format=prompt_format)
    screens = run_dir / "screens"
    rows = []
    for traj in load_trajectories(run_dir):
        task = by_id.get(traj.task_id)
        if task is None:
            raise DatasetError(f"{run_dir}: episode {traj.episode_id} plays task {traj.task_id!r}, which its "
                               "tasks file lacks")
        rendered = in_frame(traj, builder.frame, prompt_format)
        conversations = turn_messages(task, rendered, screens, builder) if traj.steps else []
        instruction = episode_task(task, traj.seed).instruction
        seen = traj.start_screenshot_sha256
        for step, record, conversation in zip(traj.steps, rendered.steps, conversations):
            messages, images = _trl_messages(conversation)
            messages.append({"role": "assistant", "content": [{"type": "text", "text": record.response}]})
            rows.append({
                "task_id": traj.task_id, "episode_id": traj.episode_id, "seed": traj.seed, "step": step.step,
                "instruction": instruction, "messages": messages, "images": images,
                "screenshot": str(screens / f"{seen}.png") if seen else None,
                "response": step.response, "actions": json.dumps(step.actions, sort_keys=True),
                "feedback": "\n".join(step.feedback), "url": step.url,
                "episode_reward": traj.reward, "success": traj.success,
                "termination_reason": traj.termination_reason or "", "removed": traj.removed,
            })
            seen = step.screenshot_sha256
    return rows


def export_dataset(run_dir: str | Path, out: str | Path | None = None, tasks: list[Task] | None = None,
                   frame: str = "relative1000", keep_images: int = 1, prompt_format: str = "weblica") -> Any:
    """A `datasets.Dataset` of the run's turns (saved to `out` with `save_to_disk` when given); the
    instructions come from the run's tasks.jsonl unless `tasks` are given. Filter it as training wants
    (`dataset.filter(lambda row: row["success"] and not row["removed"])`)."""
    import datasets

    rows = turn_rows(run_dir, tasks, frame, keep_images, prompt_format)
    part = {"type": datasets.Value("string"), "text": datasets.Value("string")}
    features = datasets.Features({
        "task_id": datasets.Value("string"), "episode_id": datasets.Value("string"),
        "seed": datasets.Value("int64"), "step": datasets.Value("int32"),
        "instruction": datasets.Value("string"),
        "messages": [{"role": datasets.Value("string"), "content": [part]}],
        "images": datasets.Sequence(datasets.Image()), "screenshot": datasets.Image(),
        "response": datasets.Value("string"), "actions": datasets.Value("string"),
        "feedback": datasets.Value("string"), "url": datasets.Value("string"),
        "episode_reward": datasets.Value("float32"), "success": datasets.Value("bool"),
        "termination_reason": datasets.Value("string"), "removed": datasets.Value("bool"),
    })
    for row in rows:   # datasets.Image takes encoded bytes as {"bytes": ...}
        row["images"] = [{"bytes": png, "path": None} for png in row["images"]]
    dataset = datasets.Dataset.from_list(rows, features=features)
    if out is not None:
        dataset.save_to_disk(str(out))
    return dataset
