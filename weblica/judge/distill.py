"""Judge distillation (OpenWebRL-Judge): train an open model to map a judge's input to rationale + verdict.

Examples come from judged run directories. Each kept episode gives one SFT sample:

- input: exactly what the trajectory judge sees (`weblica.scoring.judge.judge_messages`: instruction,
  criteria, final answer, action + feedback history, the last 3 screenshots), so the distilled model is a
  drop-in judge for `weblica.scoring.judge.Judge`;
- target: a rationale and a `Verdict: successful|unsuccessful` line.

Verdict and rationale, in order of authority: a labels file (a stronger judge's verdicts, e.g. GPT-4.1's,
one JSON line per episode: `run`, `episode_id`, `success`, optional `rationale`); the verdict a live eval
recorded in `metadata.judge`, or the judge text the reward recorded in `metadata.reward.judge`; the episode's check results (their `detail` lines become the
rationale); the episode's reward. Environment-removed episodes carry no verdict and are skipped.

A seeded split holds out a fraction of examples; their labels are written to `labels.heldout.jsonl` for
`weblica judge agree`. Training reuses the SFT trainer's step, checkpointing and export.
"""
from __future__ import annotations

import json
import random
import re
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Sequence

from weblica.env.episode import Trajectory
from weblica.env.task import Task, episode_task, load_tasks
from weblica.scoring.judge import judge_messages

VERDICT_TEXT = {True: "successful", False: "unsuccessful"}


@dataclass
class JudgeExample:
    """One judged episode: where it is, its verdict and the rationale to learn."""

    run: str
    episode_id: str
    task_id: str
    success: bool
    rationale: str
    source: str  # labels | judge | checks | reward

    def target(self) -> str:
        return f"{self.rationale.strip()}\nVerdict: {VERDICT_TEXT[self.success]}"

    def label(self) -> dict[str, Any]:
        return {"run": self.run, "episode_id": self.episode_id, "task_id": self.task_id, "success": self.success}


def load_labels(path: str | Path) -> dict[tuple[str, str], dict[str, Any]]:
    """Reference labels keyed by (resolved run dir, episode_id)."""
    out = {}
    for lineno, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        row = json.loads(line)
        if not isinstance(row.get("success"), bool) or "episode_id" not in row or "run" not in row:
            raise ValueError(f"{path}:{lineno}: a label needs run, episode_id and a boolean success")
        out[(str(Path(row["run"]).resolve()), str(row["episode_id"]))] = row
    return out


_VERDICT_LINE = re.compile(r"^\s*verdict\s*[:：].*$", re.IGNORECASE | re.MULTILINE)


def _strip_verdict(text: str) -> str:
    return _VERDICT_LINE.sub("", text).strip()


def check_rationale(traj: Trajectory) -> str:
    lines = [f"- {r.get('detail') or r.get('type')}: {'passed' if r.get('passed') else 'failed'}"
             for r in traj.check_results]
    outcome = "All checks pass." if traj.success else "Not every check passes."
    return "The task's checks on the final state:\n" + "\n".join(lines) + f"\n{outcome}"


def reward_rationale(traj: Trajectory) -> str:
    ending = {"done": "The agent ended the episode with an answer",
              "max_steps": "The agent ran out of steps without finishing",
              "format_error": "The agent stopped producing valid tool calls"}.get(
        traj.termination_reason or "", f"The episode ended ({traj.termination_reason})")
    answer = f" ({traj.answer!r})" if traj.answer else ""
    judged = "satisfies" if traj.success else "does not satisfy"
    return f"{ending}{answer}. The final state and answer {judged} the task."


def example_for(run: Path, traj: Trajectory, labels: dict[tuple[str, str], dict[str, Any]]) -> JudgeExample | None:
    """The example of one episode, or None when it has no trustworthy verdict."""
    key = (str(run.resolve()), traj.episode_id)
    if key in labels:
        row = labels[key]
        rationale = row.get("rationale") or (check_rationale(traj) if traj.check_results else reward_rationale(traj))
        return JudgeExample(str(run), traj.episode_id, traj.task_id, row["success"], _strip_verdict(rationale), "labels")
    if traj.removed or "judge_error" in traj.metadata:
        return None  # an environment failure or a failed judge call: no verdict to learn
    live = traj.metadata.get("judge")  # `weblica eval --live` records its protocol's verdict here
    if isinstance(live, dict) and isinstance(live.get("success"), bool) and live.get("reason"):
        return JudgeExample(str(run), traj.episode_id, traj.task_id, live["success"], _strip_verdict(str(live["reason"])),
                            "judge")
    judge_text = (traj.metadata.get("reward") or {}).get("judge")
    if judge_text and _strip_verdict(judge_text):
        return JudgeExample(str(run), traj.episode_id, traj.task_id, bool(traj.success), _strip_verdict(judge_text),
                            "judge")
    if traj.check_results:
        return JudgeExample(str(run), traj.episode_id, traj.task_id, bool(traj.success), check_rationale(traj), "checks")
    return JudgeExample(str(run), traj.episode_id, traj.task_id, bool(traj.success), reward_rationale(traj), "reward")


def collect_examples(runs: Sequence[str | Path], labels_path: str | Path | None = None
                     ) -> tuple[list[JudgeExample], dict[str, Task], dict[tuple[str, str], Trajectory]]:
    """Examples from every run, the tasks they refer to, and the trajectories by (run, episode_id)."""
    from weblica.rollout import load_trajectories

    labels = load_labels(labels_path) if labels_path else {}
    examples: list[JudgeExample] = []
    tasks: dict[str, Task] = {}
    trajs: dict[tuple[str, str], Trajectory] = {}
    for run in map(Path, runs):
        if not (run / "episodes.jsonl").is_file():
            raise FileNotFoundError(f"{run} is not a run directory (no episodes.jsonl)")
        if not (run / "tasks.jsonl").is_file():
            raise FileNotFoundError(f"{run} has no tasks.jsonl: the judge input needs each task's instruction")
        tasks.update({t.id: t for t in load_tasks(run / "tasks.jsonl")})
        for traj in load_trajectories(run):
            example = example_for(run, traj, labels)
            if example is not None and traj.task_id in tasks:
                examples.append(example)
                trajs[(str(run), traj.episode_id)] = traj
    return examples, tasks, trajs


def split_examples(examples: Sequence[JudgeExample], heldout: float, seed: int) -> tuple[list[JudgeExample], list[JudgeExample]]:
    """A seeded split; at least one example on each side when there are two or more."""
    order = list(examples)
    random.Random(seed).shuffle(order)
    n_held = int(round(len(order) * heldout))
    if heldout > 0 and len(order) >= 2:
        n_held = min(max(n_held, 1), len(order) - 1)
    return order[n_held:], order[:n_held]


def screenshots_of(run: Path, traj: Trajectory) -> list[bytes]:
    shas = [traj.start_screenshot_sha256] + [s.screenshot_sha256 for s in traj.steps]
    paths = [run / "screens" / f"{sha}.png" for sha in shas if sha]
    return [p.read_bytes() for p in paths if p.is_file()]


def judge_input(example: JudgeExample, tasks: dict[str, Task], trajs: dict[tuple[str, str], Trajectory]) -> list[Any]:
    traj = trajs[(example.run, example.episode_id)]
    task = episode_task(tasks[example.task_id], traj.seed)  # with instances: the member this episode played
    return judge_messages(task, traj.answer, traj.steps, screenshots_of(Path(example.run), traj))


def distill_judge(runs: Sequence[str | Path], out_dir: str | Path, model: str = "tiny", labels: str | None = None,
                  heldout: float = 0.2, epochs: int = 3, batch_size: int = 4, learning_rate: float = 1e-4,
                  seed: int = 0, device: str = "auto", dtype: str = "float32", gradient_checkpointing: bool = False,
                  freeze_vision: bool = False, tiny_warm_start_steps: int = 0) -> dict[str, Any]:
    """Train the judge; writes OUT/final (an `hf:` checkpoint), OUT/labels.{train,heldout}.jsonl, OUT/examples.jsonl."""
    import torch

    from weblica.policy.backends.hf import detect_assistant_prefix, encode_qwen_prompt
    from weblica.train.config import SFTConfig
    from weblica.train.metrics import MetricsLogger
    from weblica.train.model_io import (base_checkpoint, config_record, export_model, load_trainable,
                                        save_checkpoint, seed_everything)
    from weblica.train.samples import TurnSample, response_ids
    from weblica.train.sft import sft_step

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    examples, tasks, trajs = collect_examples(runs, labels)
    if len(examples) < 2:
        raise ValueError(f"{len(examples)} judged episode(s) in {', '.join(map(str, runs))}: distillation needs at least 2")
    train, held = split_examples(examples, heldout, seed)
    for name, part in (("train", train), ("heldout", held)):
        (out / f"labels.{name}.jsonl").write_text("".join(json.dumps(e.label()) + "\n" for e in part))
    (out / "examples.jsonl").write_text("".join(json.dumps(asdict(e)) + "\n" for e in train))

    config = SFTConfig(model=model, output_dir=str(out), seed=seed, epochs=epochs, batch_size=batch_size,
                       learning_rate=learning_rate, device=device, dtype=dtype,
                       gradient_checkpointing=gradient_checkpointing, freeze_vision=freeze_vision,
                       tiny_warm_start_steps=tiny_warm_start_steps, trajectories=[str(r) for r in runs])
    seed_everything(seed)
    trainable = load_trainable(base_checkpoint(config, out), config)
    # a Thinking checkpoint opens its reply with <think> in the prompt; the target then closes it
    prefix = detect_assistant_prefix(trainable.tokenizer)
    samples = []
    for example in train:
        prompt = encode_qwen_prompt(judge_input(example, tasks, trajs), trainable.tokenizer, trainable.image_processor,
                                    assistant_prefix=prefix)
        target = example.target()
        if "<think>" in prefix:
            target = f"{example.rationale.strip()}\n</think>\n\nVerdict: {VERDICT_TEXT[example.success]}"
        samples.append(TurnSample(prompt, response_ids(target, trainable.tokenizer), task_id=example.task_id,
                                  episode_id=example.episode_id))
    params = [p for p in trainable.model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(params, lr=learning_rate, weight_decay=config.weight_decay)
    logger = MetricsLogger(out, tensorboard=False)
    step = 0
    trainable.model.train()
    try:
        for epoch in range(epochs):
            order = torch.randperm(len(samples), generator=torch.Generator().manual_seed(seed * 1000 + epoch)).tolist()
            for start in range(0, len(samples), batch_size):
                metrics = sft_step(trainable, optimizer, [samples[i] for i in order[start:start + batch_size]], config)
                step += 1
                logger.log(step, {"epoch": epoch, **metrics})
    finally:
        logger.close()
    trainable.model.eval()
    save_checkpoint(out / f"checkpoint-{step}", trainable, optimizer,
                    {"step": step, "epoch": epochs, "batch": 0, "config": config_record(config)})
    export_model(trainable, out / "final")
    sources: dict[str, int] = {}
    for e in examples:
        sources[e.source] = sources.get(e.source, 0) + 1
    return {"examples": len(examples), "train": len(train), "heldout": len(held), "steps": step,
            "positives": sum(e.success for e in examples), "sources": sources, "last_loss": logger.last.get("loss"),
            "final": str(out / "final"), "heldout_labels": str(out / "labels.heldout.jsonl")}
