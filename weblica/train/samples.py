"""Training samples: one per assistant turn, the prompt exactly as the policy saw it.

A sample's prompt comes from the same context builder and the same Qwen encoding the policy used, so
training and inference see identical token ids (sampled history is spliced as ids, never re-tokenized).
"""
from __future__ import annotations

import json
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Sequence

from weblica.env.episode import Trajectory
from weblica.env.observation import Observation, Tab
from weblica.env.task import Task, episode_task
from weblica.policy.backends.hf import (EncodedPrompt, detect_assistant_prefix, encode_qwen_prompt, mask_banned,
                                        model_inputs, response_logits)
from weblica.policy.context import IM_END, ContextBuilder, Message
from weblica.policy.coords import X_KEYS, Y_KEYS, CoordinateFrame


@dataclass
class TurnSample:
    """One assistant turn: prompt, response ids, and (for RL) old log-probs and advantage."""

    prompt: EncodedPrompt
    response_ids: list[int]
    old_logprobs: list[float] | None = None
    advantage: float = 0.0
    task_id: str = ""
    episode_id: str = ""
    truncated: bool = False  # the response was cut at max_new_tokens (GRPO's overlong filtering masks it)


def _tabs(raw: Sequence[dict[str, Any]]) -> list[Tab]:
    return [Tab(t["index"], t["url"], t.get("title", "")) for t in raw]


def turn_observations(traj: Trajectory, screens_dir: Path) -> list[Observation]:
    """What the agent saw at each of its turns: the start page, then the state after each step."""
    def shot(sha: str) -> bytes:
        return (screens_dir / f"{sha}.png").read_bytes()

    out = [Observation(shot(traj.start_screenshot_sha256), traj.start_url, _tabs(traj.start_tabs), 0, [], 0,
                       axtree=traj.metadata.get("start_axtree"))]
    for record in traj.steps[:-1]:
        out.append(Observation(shot(record.screenshot_sha256), record.url, _tabs(record.tabs), record.active_tab,
                               list(record.feedback), record.step, axtree=record.axtree))
    return out


def turn_messages(task: Task, traj: Trajectory, screens_dir: Path, builder: ContextBuilder) -> list[list[Message]]:
    """The conversation of every turn of an episode, as the model policy would have built it (for a task
    with instances, with the instruction of the member the episode's seed played)."""
    task = episode_task(task, traj.seed)
    observations = turn_observations(traj, screens_dir)
    out = []
    screens: dict[int, bytes] = {}
    for turn, obs in enumerate(observations):
        screens[turn] = obs.screenshot
        window = {t: s for t, s in screens.items() if t > turn - builder.keep_images}
        out.append(builder.build(task, traj.steps[:turn], obs, window))
    return out


def response_ids(text: str, tokenizer: Any, assistant_prefix: str = "") -> list[int]:
    """Token ids a teacher's text response would have had, closed by <|im_end|>. A prefix the template
    already puts in the prompt (`<think>\n`) is not part of the response."""
    for prefix in (assistant_prefix, assistant_prefix.strip()):
        if prefix and text.startswith(prefix):
            text = text[len(prefix):].lstrip("\n")
            break
    ids = tokenizer(text, add_special_tokens=False)["input_ids"]
    return ids + [tokenizer.convert_tokens_to_ids(IM_END)]


def in_frame(traj: Trajectory, frame: CoordinateFrame, prompt_format: str = "weblica") -> Trajectory:
    """The trajectory with every text response (a scripted or API teacher's, no token ids) re-rendered
    from the actions it really ran, in the student's coordinate frame and prompt format. A teacher writes
    viewport pixels (the oracle) or its own frame; cloning that text would teach a Qwen3-VL student, which
    answers on the 0-1000 grid, to click elsewhere. Sampled turns (token ids) are the student's own and
    stay verbatim."""
    from weblica.env.actions import Action
    from weblica.policy.computer_use import render_actions

    steps = []
    for record in traj.steps:
        if record.token_ids or not record.actions:
            steps.append(record)
            continue
        text = record.response
        thought = text.split("</think>", 1)[0].replace("<think>", "").strip() if "</think>" in text else ""
        if prompt_format == "computer_use":
            rendered = render_actions([Action(a["name"], dict(a.get("arguments") or {})) for a in record.actions],
                                      frame)
        else:
            rendered = []
            for action in record.actions:
                args = dict(action.get("arguments") or {})
                for xk, yk in zip(X_KEYS, Y_KEYS):
                    if xk in args and yk in args:
                        args[xk], args[yk] = frame.from_viewport(float(args[xk]), float(args[yk]))
                rendered.append({"name": action["name"], "arguments": args})
        calls = [f"<tool_call>{json.dumps(call)}</tool_call>" for call in rendered]
        steps.append(replace(record, response=f"<think>{thought}</think>\n" + "\n".join(calls)))
    return replace(traj, steps=steps)


def sft_samples(tasks: dict[str, Task], run_dirs: Sequence[Path], builder: ContextBuilder, tokenizer: Any,
                image_processor: Any, only_successful: bool = True, blind: bool = False) -> list[TurnSample]:
    """Behaviour-cloning samples from run directories: every turn of every (successful) episode; `blind`
    zeroes their pixels (`encode_qwen_prompt`)."""
    from weblica.rollout import load_trajectories

    samples = []
    prefix = detect_assistant_prefix(tokenizer)
    for run_dir in run_dirs:
        for traj in load_trajectories(run_dir):
            if traj.removed or (only_successful and not traj.success) or traj.task_id not in tasks:
                continue
            task = tasks[traj.task_id]
            traj = in_frame(traj, builder.frame, builder.prompt_format)
            for messages, record in zip(turn_messages(task, traj, Path(run_dir) / "screens", builder), traj.steps):
                ids = list(record.token_ids) if record.token_ids else response_ids(record.response, tokenizer, prefix)
                prompt = encode_qwen_prompt(messages, tokenizer, image_processor, assistant_prefix=prefix, blind=blind)
                samples.append(TurnSample(prompt, ids, task_id=traj.task_id, episode_id=traj.episode_id))
    return samples


def sequence_logprobs(model: Any, sample: TurnSample, device: str, temperature: float = 1.0,
                      with_entropy: bool = False, banned: Sequence[int] = ()) -> tuple[Any, Any]:
    """Log-probs of the response tokens under `model` (with gradients), and optionally their entropy."""
    import torch

    inputs = model_inputs(model, list(sample.prompt.input_ids) + list(sample.response_ids),
                          sample.prompt.pixel_values, sample.prompt.image_grid_thw, device)
    logits = response_logits(model, inputs, len(sample.prompt.input_ids), len(sample.response_ids)).float()
    target = torch.tensor(sample.response_ids, device=device)
    return _scores(logits, target, temperature, with_entropy, banned)


def _scores(logits: Any, target: Any, temperature: float, with_entropy: bool, banned: Sequence[int]) -> tuple[Any, Any]:
    """Log-probs of `target` ids (and the entropy) under logits / temperature, over the last axis."""
    import torch

    scores = torch.log_softmax(mask_banned(logits, banned) / temperature, dim=-1)
    logprobs = scores.gather(-1, target[..., None])[..., 0]
    # banned ids sit at -inf: their 0 * -inf terms are 0, not nan
    entropy = -(scores.exp() * scores.masked_fill(torch.isinf(scores), 0.0)).sum(-1) if with_entropy else None
    return logprobs, entropy


def left_aligned(rows: Sequence[Sequence[float]], dtype: Any) -> tuple[Any, Any]:
    """Rows of different lengths as one [rows, longest] tensor, each row in its last columns (zeros in
    front), and the float mask that is 1 where a row has values."""
    import torch

    width = max(len(row) for row in rows)
    values = torch.zeros((len(rows), width), dtype=dtype)
    mask = torch.zeros((len(rows), width))
    for i, row in enumerate(rows):
        if len(row):
            values[i, width - len(row):] = torch.tensor(list(row), dtype=dtype)
            mask[i, width - len(row):] = 1
    return values, mask


@dataclass
class BatchScores:
    """Response log-probs of a batch, [batch, longest response], left-aligned like the sequences: `mask`
    is 1 on each row's response tokens (its last len(response) columns) and the rest is 0."""

    logprobs: Any
    entropy: Any
    mask: Any


def batch_logprobs(model: Any, samples: Sequence[TurnSample], device: str, temperature: float = 1.0,
                   with_entropy: bool = False, banned: Sequence[int] = ()) -> BatchScores:
    """`sequence_logprobs` of several samples in one forward pass (a GPU's throughput grows with the batch:
    one sample at a time leaves an H200 idle most of the step). Sequences are left-padded, so every
    response ends at the last position and the LM head runs on the last (longest response + 1) positions.
    A single sample runs unpadded, exactly as `sequence_logprobs`."""
    import torch

    if len(samples) == 1:
        logprobs, entropy = sequence_logprobs(model, samples[0], device, temperature, with_entropy, banned)
        return BatchScores(logprobs[None], entropy[None] if entropy is not None else None,
                           torch.ones_like(logprobs)[None])
    ids, attention = left_aligned([list(s.prompt.input_ids) + list(s.response_ids) for s in samples], torch.long)
    target, mask = left_aligned([s.response_ids for s in samples], torch.long)
    width, longest = ids.shape[1], target.shape[1]
    prompts = [s.prompt for s in samples if s.prompt.pixel_values is not None]
    pixels = torch.cat([p.pixel_values for p in prompts]) if prompts else None
    grid = torch.cat([p.image_grid_thw for p in prompts]) if prompts else None
    inputs = model_inputs(model, ids, pixels, grid, device, attention_mask=attention)
    logits = response_logits(model, inputs, width - longest, longest, rows=slice(None)).float()
    logprobs, entropy = _scores(logits, target.to(device), temperature, with_entropy, banned)
    mask = mask.to(device)
    return BatchScores(logprobs * mask, entropy * mask if entropy is not None else None, mask)
