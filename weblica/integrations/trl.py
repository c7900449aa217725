"""TRL integration: weblica episodes under TRL's `GRPOTrainer` through its `rollout_func` hook.

Written against TRL 1.16.0 (`trl/trainer/grpo_trainer.py`). What that version does, and what follows:

- The sampler repeats each dataset prompt `num_generations` times in a row; `rollout_func(prompts,
  trainer)` gets that slice and must return one row per prompt (`prompt_ids`, `completion_ids`,
  `logprobs`); each run of `num_generations` rows is one advantage group. So one row is one *episode*,
  and a task's group is its `num_generations` episodes, as in our own trainer.
- A multi-turn episode is one row: the first turn's prompt, then every response (mask 1) and every
  observation turn the environment added (mask 0, the `env_mask` extra field TRL turns into its tool
  mask). That needs a context that only grows, so episodes are played with `GrowingContextPolicy`
  (every turn kept verbatim, tabs and screenshot included) instead of the default last-k window; each
  turn's prompt is checked to extend the previous turn's ids, or the rollout fails.
- The `rollout_func` path hands no images to the forward pass (`_generate` returns `images=None`).
  `WeblicaGRPOTrainer` returns the episode's screenshots from its `images` field instead, so TRL's
  processor builds `pixel_values`/`image_grid_thw` for them; without it image-pad tokens would train
  without pixels. Those pixels come from the same image processor our prompts were encoded with.
- Rewards: every other returned field reaches the reward functions; `episode_reward` returns the field
  `reward` (our `compute_reward`), or None for a removed episode. TRL 1.16 treats a row whose every
  reward is None as unscorable: out of the group baseline, advantage 0. Its tokens are also masked
  (`env_mask` all 0), so a removed episode moves nothing.
- `rollout_func` is called whether or not `use_vllm` is set; with `use_vllm=False` it samples here
  from the trainer's own weights through our hf backend (CPU works), gathered as TRL gathers them for
  generation under ZeRO-3 (`unwrap_model_for_generation`), or copied whole into a replica under FSDP,
  whose forward would otherwise be collective across ranks that play different episodes (`GatheredModel`). TRL's `environment_factory` needs
  transformers >= 5.2 and is not used (our pins hold transformers < 5 on Python 3.11).
- Log-probs: the hf backend samples with the vision tokens banned; TRL's recompute does not ban them,
  so the two differ by log(1 - p(vision tokens)), tiny for a trained model. Set TRL's `temperature`
  to the sampling temperature (the rollout reads `trainer.temperature`).

Use:

    trainer = WeblicaGRPOTrainer(model=model, processing_class=processor, args=GRPOConfig(...),
                                 train_dataset=task_dataset(tasks),
                                 reward_funcs=episode_reward, rollout_func=WeblicaRollout(tasks))
"""
from __future__ import annotations

import asyncio
import io
import tempfile
from contextlib import contextmanager
from dataclasses import dataclass
from itertools import groupby
from pathlib import Path
from typing import Any, Iterator, Sequence

from weblica.env.episode import StepRecord, Trajectory
from weblica.env.observation import Observation
from weblica.env.task import Task
from weblica.policy.backends.base import SamplingOptions
from weblica.policy.backends.hf import HFBackend, frame_for
from weblica.policy.context import ContextBuilder, Message
from weblica.policy.model_policy import ModelPolicy

try:
    from trl import GRPOTrainer
except ImportError:  # pragma: no cover - TRL is in the `train` extra
    GRPOTrainer = object  # type: ignore[assignment,misc]


def load_processor(path: str | Path) -> Any:
    """The Qwen3-VL processor TRL wants (a ProcessorMixin), over our slow image processor and without a
    video processor: AutoProcessor would load the video one, which needs torchvision (optional here)."""
    from transformers import Qwen2TokenizerFast, Qwen3VLProcessor
    from transformers.processing_utils import ProcessorMixin

    from weblica.policy.backends.hf import load_image_processor

    class ImageOnlyQwen3VLProcessor(Qwen3VLProcessor):
        attributes = ["image_processor", "tokenizer"]

        def __init__(self, image_processor: Any, tokenizer: Any, chat_template: str | None = None) -> None:
            ProcessorMixin.__init__(self, image_processor, tokenizer, chat_template=chat_template)
            self.video_processor = None
            for kind in ("image", "video"):
                setattr(self, f"{kind}_token", f"<|{kind}_pad|>")
            for name in ("image", "video", "vision_start", "vision_end"):
                token = f"<|{name}_pad|>" if name in ("image", "video") else f"<|{name}|>"
                setattr(self, f"{name}_token", token)
                setattr(self, f"{name}_token_id", tokenizer.convert_tokens_to_ids(token))

    tokenizer = Qwen2TokenizerFast.from_pretrained(str(path), padding_side="left")
    return ImageOnlyQwen3VLProcessor(load_image_processor(path), tokenizer, chat_template=tokenizer.chat_template)


def task_dataset(tasks: Sequence[Task]) -> Any:
    """One conversational prompt row per task, naming it (TRL's image path needs conversational prompts)."""
    from datasets import Dataset

    return Dataset.from_list([{"prompt": [{"role": "user", "content": task.id}]} for task in tasks])


def task_id_of(prompt: Any) -> str:
    return prompt[-1]["content"] if isinstance(prompt, list) else str(prompt)


class GrowingContextPolicy(ModelPolicy):
    """A model policy whose every turn's conversation extends the previous one: each user turn is kept
    as it was shown when current (tabs, screenshot), so a whole episode is one token sequence."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._shown: list[Message] = []  # before super(): ModelPolicy validates its context at init
        super().__init__(*args, **kwargs)

    def reset(self, task: Task, seed: int) -> None:
        super().reset(task, seed)
        self._shown = []

    @property
    def context(self) -> ContextBuilder:
        return _Replaying(self.frame, 1, prompt_format=self.prompt_format, shown=self._shown)


@dataclass
class _Replaying(ContextBuilder):
    shown: list[Message] | None = None

    def build(self, task: Task, history: Sequence[StepRecord], obs: Observation,
              screens: Any = None) -> list[Message]:
        messages = super().build(task, history, obs, None)
        shown = self.shown if self.shown is not None else []
        del shown[len(history):]  # a new episode without reset starts over
        users = [i for i, m in enumerate(messages) if m.role == "user"]
        for turn, index in enumerate(users[:-1]):
            messages[index] = shown[turn]
        shown.append(messages[users[-1]])
        return messages


@dataclass
class EpisodeRow:
    prompt_ids: list[int]
    completion_ids: list[int]
    logprobs: list[float]
    env_mask: list[int]
    images: list[Any]


def episode_row(traj: Trajectory, screens_dir: Path, filler_id: int) -> EpisodeRow:
    """The episode as one sequence: first prompt, then responses (mask 1) and added observation turns
    (mask 0). A removed episode keeps its ids but is masked out entirely; one with no sampled turn is a
    single masked filler token (TRL needs a non-empty completion)."""
    from PIL import Image

    from weblica.train.samples import turn_observations

    steps = [s for s in traj.steps if s.token_ids]
    if len(steps) != len(traj.steps) or not steps:
        return EpisodeRow([filler_id], [filler_id], [0.0], [0], [])
    prompt = list(steps[0].prompt_token_ids)
    sequence = list(prompt)
    completion: list[int] = []
    logprobs: list[float] = []
    mask: list[int] = []
    for step in steps:
        ids = list(step.prompt_token_ids)
        if ids[:len(sequence)] != sequence:
            raise RuntimeError(f"episode {traj.episode_id}: turn {step.step}'s prompt does not extend the "
                               "previous turn's; play it with GrowingContextPolicy")
        added = ids[len(sequence):]
        sampled = list(step.token_ids)
        completion += added + sampled
        logprobs += [0.0] * len(added) + [float(x) for x in (step.logprobs or [0.0] * len(sampled))]
        mask += [0] * len(added) + [1] * len(sampled)
        sequence = ids + sampled
    if traj.removed:
        mask = [0] * len(mask)
    images = [Image.open(io.BytesIO(o.screenshot)).convert("RGB") for o in turn_observations(traj, screens_dir)]
    return EpisodeRow(prompt, completion, logprobs, mask, images)


class WeblicaRollout:
    """TRL's `rollout_func`: plays each prompt's task in our environment with the trainer's current
    weights and returns one row per episode, plus the fields the reward function reads."""

    def __init__(self, tasks: Sequence[Task], *, max_new_tokens: int = 256, parallel: int = 1, seed: int = 0,
                 prompt_format: str = "weblica", run_dir: str | Path | None = None) -> None:
        self.tasks = {t.id: t for t in tasks}
        self.max_new_tokens = max_new_tokens
        self.parallel = parallel
        self.seed = seed
        self.prompt_format = prompt_format
        self.run_dir = Path(run_dir) if run_dir is not None else Path(tempfile.mkdtemp(prefix="weblica-trl-"))
        self.calls = 0
        self.last: list[Trajectory] = []  # the episodes of the latest call (tests and logging read them)
        self._gathered: GatheredModel | None = None

    def _groups(self, prompts: Sequence[Any]) -> tuple[list[Task], int]:
        ids = [task_id_of(p) for p in prompts]
        runs = [(key, len(list(run))) for key, run in groupby(ids)]
        sizes = {n for _, n in runs}
        if len(sizes) != 1 or len({k for k, _ in runs}) != len(runs):
            raise ValueError("rollout_func expects each task's prompts in one run of num_generations rows "
                             f"(TRL's RepeatSampler order); got runs {runs}")
        unknown = [k for k, _ in runs if k not in self.tasks]
        if unknown:
            raise ValueError(f"prompts name tasks not given to WeblicaRollout: {unknown}")
        return [self.tasks[k] for k, _ in runs], sizes.pop()

    def _backend(self, trainer: Any, model: Any) -> HFBackend:
        processor = trainer.processing_class
        backend = HFBackend.__new__(HFBackend)
        sampling = SamplingOptions(temperature=float(trainer.temperature), max_new_tokens=self.max_new_tokens)
        backend._attach(f"trl:{getattr(model, 'name_or_path', 'model')}", model, processor.tokenizer,
                        processor.image_processor, str(trainer.accelerator.device), sampling,
                        frame_for(model.config, processor.image_processor))
        return backend

    def make_policy(self, backend: HFBackend, horizon: int) -> GrowingContextPolicy:
        """One episode's policy over the trainer's weights (a subclass may wrap `backend`, e.g. to script
        the responses a test needs)."""
        return GrowingContextPolicy(backend, keep_images=horizon + 1, prompt_format=self.prompt_format)

    def __call__(self, prompts: list[Any], trainer: Any) -> dict[str, list[Any]]:
        tasks, repeats = self._groups(prompts)
        with self._gathering(trainer) as model:
            return self._play(tasks, repeats, trainer, self._backend(trainer, model))

    def _gathering(self, trainer: Any) -> Any:
        if self._gathered is None:
            self._gathered = GatheredModel()
        return self._gathered(trainer)

    def _play(self, tasks: list[Task], repeats: int, trainer: Any, backend: HFBackend) -> dict[str, list[Any]]:
        from weblica.env.sources import open_backends
        from weblica.scoring.reward import compute_reward
        from weblica.rollout import run_tasks
        from weblica.train.algorithms import derive_seed

        out = self.run_dir / f"call-{self.calls:05d}"
        run_seed = derive_seed(self.seed, trainer.state.global_step, self.calls, "trl-rollout")
        self.calls += 1
        horizon = max(t.max_steps for t in tasks)

        async def go() -> list[Trajectory]:
            async with open_backends(tasks) as site_backends:
                trajs, _ = await run_tasks(
                    tasks, lambda: self.make_policy(backend, horizon),
                    out, parallel=self.parallel, seed=run_seed, repeats=repeats, backends=site_backends)
            for traj in trajs:
                (await compute_reward(traj, self.tasks[traj.task_id])).apply(traj)
            return trajs

        model = backend.model
        was_training = model.training
        model.eval()
        try:
            trajs = asyncio.run(go())
        finally:
            model.train(was_training)
        self.last = trajs
        filler = backend.tokenizer.pad_token_id if backend.tokenizer.pad_token_id is not None else 0
        rows = [episode_row(t, out / "screens", filler) for t in trajs]
        return {
            "prompt_ids": [r.prompt_ids for r in rows], "completion_ids": [r.completion_ids for r in rows],
            "logprobs": [r.logprobs for r in rows], "env_mask": [r.env_mask for r in rows],
            "images": [r.images for r in rows],
            "reward": [None if t.removed else float(t.reward) for t in trajs],
            "success": [bool(t.success) for t in trajs], "task_id": [t.task_id for t in trajs],
            "termination_reason": [t.termination_reason for t in trajs],
        }


class GatheredModel:
    """The trainer's model with its full weights, for episodes each rank plays on its own.

    TRL 1.16 samples inside `unwrap_model_for_generation(model_wrapped, accelerator,
    gather_deepspeed3_params=args.ds3_gather_for_generation)` (and `DistributedBackend.summon_full_params`,
    a no-op but for FSDP1): under ZeRO-3 that gathers every parameter and removes the partitioning hooks, so
    the forward is local. Under FSDP the forward stays collective (TRL's own `generate` relies on
    transformers' synced_gpus to keep the ranks in step), but our ranks play different episodes, whose
    forwards are not in step: a rank would wait forever on an all-gather. So under FSDP (1 or 2) the
    episodes sample from an unsharded replica, refreshed with the full weights at every call (each tensor
    gathered in turn, every rank joining, as TRL's vLLM sync does), in the model's compute dtype. It costs a
    whole model per rank while rolling out; ZeRO-3 without gathering (`ds3_gather_for_generation=False`) is
    refused for the same reason."""

    def __init__(self) -> None:
        self.replica: Any = None

    @contextmanager
    def __call__(self, trainer: Any) -> Iterator[Any]:
        from trl.distributed import DistributedBackend
        from trl.models import unwrap_model_for_generation

        backend = DistributedBackend(trainer.accelerator)
        wrapped = getattr(trainer, "model_wrapped", trainer.model)
        if backend.is_fsdp:
            yield self._refreshed(trainer.accelerator.unwrap_model(wrapped), backend.fsdp_version)
            return
        if backend.is_zero3 and not getattr(trainer.args, "ds3_gather_for_generation", True):
            raise ValueError("WeblicaRollout needs ds3_gather_for_generation=True under ZeRO-3: ranks play "
                             "different episodes, and a partitioned forward would wait on the other ranks")
        with unwrap_model_for_generation(wrapped, trainer.accelerator, gather_deepspeed3_params=True,
                                         gradient_checkpointing_kwargs=getattr(
                                             trainer.args, "gradient_checkpointing_kwargs", None)) as model:
            yield model

    def _refreshed(self, model: Any, fsdp_version: int) -> Any:
        import torch

        if self.replica is None:
            self.replica = unsharded_shell(model)
        own = dict(self.replica.named_parameters())
        own.update(self.replica.named_buffers())
        with torch.no_grad(), _full_parameters(model, fsdp_version):
            for name, tensor in list(model.named_parameters()) + list(model.named_buffers()):
                name = name.replace("_fsdp_wrapped_module.", "").replace("_checkpoint_wrapped_module.", "")
                full = tensor.full_tensor() if hasattr(tensor, "full_tensor") else tensor
                own[name].copy_(full.detach())
        return self.replica.eval()


@contextmanager
def _full_parameters(model: Any, fsdp_version: int) -> Iterator[None]:
    """FSDP1 shows its full parameters inside `summon_full_params`; FSDP2's are DTensors, gathered one by one."""
    if fsdp_version == 1:
        from torch.distributed.fsdp import FullyShardedDataParallel as FSDP

        with FSDP.summon_full_params(model, recurse=True, writeback=False):
            yield
    else:
        yield


def unsharded_shell(model: Any) -> Any:
    """An empty model of `model`'s own class (FSDP2 names its class FSDP<Class>), on its device, in the
    dtype it computes in, without gradients."""
    import torch

    inner = getattr(model, "_fsdp_wrapped_module", model)
    cls = next(c for c in type(inner).__mro__ if c.__name__ == type(inner).__name__.removeprefix("FSDP"))
    first = next(inner.parameters())
    local = first.to_local() if hasattr(first, "to_local") else first
    policy = getattr(getattr(inner, "_get_fsdp_state", lambda: None)(), "_mp_policy", None)
    dtype = getattr(policy, "param_dtype", None) or getattr(inner.config, "torch_dtype", None) or local.dtype
    if isinstance(dtype, str):
        dtype = getattr(torch, dtype)
    with torch.device("meta"):
        shell = cls(inner.config)
    shell = shell.to_empty(device=local.device).to(dtype)
    for param in shell.parameters():
        param.requires_grad_(False)
    return shell


def episode_reward(prompts: list[Any], completions: list[Any], reward: list[float | None] | None = None,
                   **_: Any) -> list[float | None]:
    """TRL reward function: the reward `compute_reward` gave each episode; None (unscorable) if removed."""
    if reward is None:
        raise ValueError("episode_reward needs the `reward` field that WeblicaRollout returns")
    return list(reward)


class WeblicaGRPOTrainer(GRPOTrainer):  # type: ignore[misc,valid-type]
    """TRL's GRPOTrainer, with the episode screenshots the rollout returns given to the forward pass
    (TRL 1.16's `rollout_func` path drops images; this returns them where `_generate` returns images)."""

    def _generate(self, prompts: list) -> tuple:
        output = list(super()._generate(prompts))
        extra_fields = output[5]
        images = extra_fields.pop("images", None)
        if images is not None and any(images):
            output[6] = images
        return tuple(output)
