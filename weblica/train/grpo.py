"""Multi-turn GRPO on weblica environments: iterations of rollout -> reward -> update.

Each iteration plays `group_size` episodes of each sampled task with the current weights. Every
assistant turn becomes a sample that shares its trajectory's advantage (group-relative per task).
Groups whose rewards are all equal are dropped and the batch is refilled with other tasks (dynamic
sampling); episodes ended by the environment are removed and contribute nothing. The update
(`weblica.train.policy_update`) is `ppo_epochs` passes of the clipped surrogate (dual clip, bounded
log-ratio, optional truncated importance sampling; turns cut at max_new_tokens masked), after a pass that
logs the sampler/trainer mismatch. Every `eval_every` iterations the held-out `eval_tasks` are played
(`weblica.train.heldout`). With a fixed seed two runs produce the same trajectories, rewards and metric lines.

Data-parallel (`torchrun`, one rank per GPU): every rank draws the same tasks and plays its share of
the groups; the ranks pool the episodes' outcomes, so all decide alike which groups are informative,
and the update is that of the whole batch (`weblica.train.distributed`); `parallelism: fsdp` shards the
model over the ranks (`weblica.train.fsdp`).
"""
from __future__ import annotations

import asyncio
import random
import statistics
from collections import Counter, defaultdict
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Sequence

from weblica.env.episode import Trajectory
from weblica.env.task import Task, load_tasks
from weblica.policy.backends.base import Generation, SamplingOptions
from weblica.policy.backends.hf import HFBackend, encode_qwen_prompt, frame_for
from weblica.policy.context import Message
from weblica.policy.model_policy import ModelPolicy
from weblica.train import heldout
from weblica.train.algorithms import derive_seed, group_advantages, is_informative
from weblica.train.config import GRPOConfig
from weblica.train.curriculum import DifficultySampler
from weblica.train.distributed import World, close_world, init_world
from weblica.train.filters import changed_step_indices
from weblica.train.fsdp import FullWeights, is_sharded, refresh_replica, shard_model, shard_trainable
from weblica.train.memory import report_memory
from weblica.train.metrics import logger_for
from weblica.train.model_io import (Trainable, base_checkpoint, config_record, export_model, latest_checkpoint,
                                    load_trainable, load_training_state, make_optimizer, save_checkpoint,
                                    seed_everything)
from weblica.train.outcomes import Outcome, horizon_for
from weblica.train.policy_update import Shards, ppo_update
from weblica.train.samples import TurnSample


class TrainingModelBackend(HFBackend):
    """The HF backend over the weights being trained (no reload between iterations)."""

    def __init__(self, trainable: Trainable, sampling: SamplingOptions,  # loads nothing
                 blind: bool = False) -> None:
        self._attach(f"hf:{trainable.path}", trainable.model, trainable.tokenizer, trainable.image_processor,
                     trainable.device, sampling, frame_for(trainable.model.config, trainable.image_processor),
                     blind)


class _Recorder:
    """Delegates generation and keeps each turn's conversation, so the trainer can rebuild the exact
    prompt (pixels included) that the sampled tokens were conditioned on, and whether the response was
    cut at max_new_tokens (overlong filtering)."""

    def __init__(self, backend: Any) -> None:
        self.backend = backend
        self.name, self.frame = backend.name, backend.frame
        self.turns: list[list[Message]] = []
        self.cut: list[bool] = []

    async def generate(self, messages: Sequence[Message], seed: int) -> Generation:
        self.turns.append(list(messages))
        generation = await self.backend.generate(messages, seed)
        self.cut.append(generation.finish_reason == "length")
        return generation


class RecordingPolicy(ModelPolicy):
    def __init__(self, backend: Any, sinks: dict[tuple[str, int], "TurnLog"], keep_images: int,
                 prompt_format: str = "weblica", observation: str = "screenshot") -> None:
        super().__init__(_Recorder(backend), keep_images=keep_images, prompt_format=prompt_format,
                         observation=observation)
        self.sinks = sinks

    def reset(self, task: Task, seed: int) -> None:
        super().reset(task, seed)
        self.backend.turns, self.backend.cut = [], []
        self.sinks[(task.id, seed)] = TurnLog(self.backend.turns, self.backend.cut)


@dataclass
class TurnLog:
    """An episode's turns as the policy played them: each turn's conversation, and whether its response
    stopped at max_new_tokens."""

    turns: list[list[Message]]
    cut: list[bool]


def vllm_engine_args(config: GRPOConfig) -> dict[str, Any]:
    """The rollout engine's arguments from the recipe: its context limit, its share of the GPU, room for the
    screenshots a prompt holds (none when the model reads the accessibility tree only)."""
    from weblica.policy.backends.vllm_engine import training_engine_args

    images = 0 if config.obs == "axtree" else (config.limit_mm_per_prompt or config.keep_images)
    return training_engine_args(config.max_model_len, config.gpu_memory_utilization, images,
                                config.enforce_eager, dtype=config.dtype)


@dataclass
class Batch:
    samples: list[TurnSample]    # this rank's
    outcomes: list[Outcome]      # every episode played, on every rank
    groups: int
    zero_variance_groups: int
    rounds: int
    owners: list[int] = field(default_factory=list)           # the rank of each sample of the whole batch
    response_lengths: list[int] = field(default_factory=list)  # of every sample of the whole batch
    truncated: int = 0  # samples of the whole batch cut at max_new_tokens


def sample_owners(accepted: Sequence[int], counts: Sequence[Sequence[int]]) -> list[int]:
    """The rank holding each sample of the batch, group after group: `accepted` gives each group's rank
    in batch order, `counts[rank]` the sample counts of that rank's groups in the same order."""
    owners: list[int] = []
    taken = [0] * len(counts)
    for rank in accepted:
        owners += [rank] * counts[rank][taken[rank]]
        taken[rank] += 1
    return owners


class GRPOTrainer:
    def __init__(self, config: GRPOConfig) -> None:
        self.world, device = init_world(config.device)
        config = replace(config, device=device)
        self.config = config
        self.out = Path(config.output_dir)
        self.out.mkdir(parents=True, exist_ok=True)
        self.tasks = load_tasks(config.tasks)
        if not self.tasks:
            raise ValueError(f"{config.tasks} holds no tasks")
        self.tasks_by_id = {t.id: t for t in self.tasks}
        self.eval_tasks = load_tasks(config.eval_tasks) if config.eval_tasks else []
        clash = {t.id for t in self.eval_tasks} & set(self.tasks_by_id)
        if clash:
            raise ValueError(f"eval_tasks shares {len(clash)} task(s) with tasks (e.g. {sorted(clash)[0]}): a held-out "
                             "set must be held out (`weblica synth --split val` writes one)")
        self.tasks_by_id.update({t.id: t for t in self.eval_tasks})
        self.sampler = DifficultySampler(self.tasks, config.difficulty_mix, config.difficulty_weights,
                                         config.difficulty_bands)
        self.judge = None
        if config.judge:
            from weblica.scoring.judge import make_judge

            self.judge = make_judge(config.judge)
        seed_everything(config.seed)
        self.resume_from = latest_checkpoint(self.out)
        base = base_checkpoint(config, self.out)
        self.trainable = load_trainable(self.resume_from or base, config)
        report_memory(self.trainable.model, config, self.world)
        # under fsdp the hf backend samples from an unsharded replica: ranks play different episodes, and
        # a sharded model's forward is collective
        self.replica = shard_trainable(self.trainable, config)
        self.reference = None
        if config.kl_coef:
            self.reference = load_trainable(base, config).model.eval()
            if is_sharded(self.trainable.model):
                for param in self.reference.parameters():
                    param.requires_grad_(False)
                shard_model(self.reference, config, trainable=False)
        sampling = SamplingOptions(temperature=config.temperature, top_p=config.top_p,
                                   max_new_tokens=config.max_new_tokens)
        if config.rollout_backend == "vllm":
            from weblica.policy.backends.vllm_engine import VLLMBackend

            if config.blind:
                raise ValueError("blind is for the hf rollout backend (vLLM processes the screenshots itself)")
            # vLLM shares the GPU with training; it sleeps during each update and gets the new weights after
            self.backend: Any = VLLMBackend(self.trainable.path, sampling, sleep_level=config.vllm_sleep_level,
                                            for_training=True, **vllm_engine_args(config))
        elif config.rollout_backend == "hf":
            rollout = self.trainable if self.replica is None else replace(self.trainable, model=self.replica)
            self.backend = TrainingModelBackend(rollout, sampling, blind=config.blind)
        else:
            raise ValueError(f"rollout_backend must be hf or vllm, not {config.rollout_backend!r}")
        self.optimizer = make_optimizer(self.trainable, config)

    # ---- rollouts --------------------------------------------------------------------------------

    def _rollout(self, tasks: list[Task], run_seed: int, out: Path,
                 repeats: int | None = None) -> tuple[list[Trajectory], dict]:
        from weblica.env.sources import open_backends
        from weblica.rollout import run_tasks

        sinks: dict[tuple[str, int], TurnLog] = {}
        keep, prompt_format = self.config.keep_images, self.config.prompt_format

        async def go() -> list[Trajectory]:
            async with open_backends(tasks) as backends:
                trajs, _ = await run_tasks(tasks, lambda: RecordingPolicy(self.backend, sinks, keep, prompt_format,
                                                                          self.config.obs),
                                           out, parallel=self.config.parallel, seed=run_seed,
                                           repeats=repeats or self.config.group_size, backends=backends)
                return trajs

        self.trainable.model.eval()
        return asyncio.run(go()), sinks

    def collect(self, iteration: int) -> Batch:
        cfg, world = self.config, self.world
        horizon = horizon_for(cfg, iteration)
        samples: list[TurnSample] = []
        outcomes: list[Outcome] = []
        accepted: list[int] = []  # the rank holding each accepted group, in batch order
        counts: list[int] = []    # samples of each group this rank holds, in batch order
        groups = zero_var = rounds = 0
        while groups < cfg.groups_per_batch and rounds <= cfg.max_refill_rounds:
            need = cfg.groups_per_batch - groups
            rng = random.Random(derive_seed(cfg.seed, iteration, rounds, "tasks"))
            picked = self.sampler.sample(need, rng)
            if horizon:
                picked = [replace(t, max_steps=horizon) for t in picked]
            run_seed = derive_seed(cfg.seed, iteration, rounds, "rollout")
            run_dir = self.out / "rollouts" / f"iter-{iteration:04d}-r{rounds}"
            if world.distributed:
                run_dir = run_dir / f"rank-{world.rank}"
            mine = world.share(picked)
            trajs, sinks = self._rollout(mine, run_seed, run_dir) if mine else ([], {})
            asyncio.run(self._score(trajs, run_dir))
            # each task's episodes all come from its one rank, in repeat order
            pooled = [o for part in world.gather([Outcome.of(t) for t in trajs]) for o in part]
            outcomes.extend(pooled)
            rounds += 1
            by_task: dict[str, list[Outcome]] = defaultdict(list)
            for outcome in pooled:
                if not outcome.removed:
                    by_task[outcome.task_id].append(outcome)
            local = defaultdict(list)
            for traj in trajs:
                if not traj.removed:
                    local[traj.task_id].append(traj)
            for index, task in enumerate(picked):
                rewards = [o.reward for o in by_task.get(task.id, [])]
                if cfg.dynamic_sampling and not is_informative(rewards, cfg.estimator):
                    zero_var += 1
                    continue
                if not rewards or groups >= cfg.groups_per_batch:
                    continue
                groups += 1
                accepted.append(world.owner(index))
                if world.owner(index) != world.rank:
                    continue
                before = len(samples)
                for traj, advantage in zip(local[task.id], group_advantages(rewards, cfg.estimator)):
                    samples.extend(self._turn_samples(traj, sinks[(traj.task_id, traj.seed)], advantage))
                counts.append(len(samples) - before)
            if not cfg.dynamic_sampling:
                break
        held = world.gather((counts, [len(s.response_ids) for s in samples], sum(s.truncated for s in samples)))
        return Batch(samples, outcomes, groups, zero_var, rounds, sample_owners(accepted, [c for c, _, _ in held]),
                     [n for _, lengths, _ in held for n in lengths], sum(t for _, _, t in held))

    async def _score(self, trajs: list[Trajectory], run_dir: Path) -> None:
        """Rewards by the shared rules (checks, judge, format gate); env failures and judge errors remove."""
        from weblica.scoring.reward import compute_reward, load_screenshots

        for traj in trajs:
            task = self.tasks_by_id[traj.task_id]
            screenshots = load_screenshots(traj, run_dir / "screens") if self.judge is not None else ()
            result = await compute_reward(traj, task, judge=self.judge, screenshots=screenshots)
            result.apply(traj)

    def _turn_samples(self, traj: Trajectory, log: TurnLog, advantage: float) -> list[TurnSample]:
        out = []
        keep = set(changed_step_indices(traj)) if self.config.skip_unchanged_steps else None
        for i, (record, messages, cut) in enumerate(zip(traj.steps, log.turns, log.cut)):
            if not record.token_ids or (keep is not None and i not in keep):
                continue
            prompt = encode_qwen_prompt(messages, self.trainable.tokenizer, self.trainable.image_processor,
                                        assistant_prefix=getattr(self.backend, "assistant_prefix", ""),
                                        blind=self.config.blind)
            if prompt.input_ids != record.prompt_token_ids:
                raise RuntimeError("rebuilt prompt differs from the one sampled from; training would be off-policy")
            out.append(TurnSample(prompt, list(record.token_ids), list(record.logprobs or []), advantage,
                                  traj.task_id, traj.episode_id, truncated=cut))
        return out

    # ---- update ----------------------------------------------------------------------------------

    @property
    def backend_banned(self) -> list[int]:
        """Token ids the rollout engine never samples; the recomputed log-probs mask them the same way."""
        return list(getattr(self.backend, "banned_ids", []))

    def update(self, samples: list[TurnSample], iteration: int, shards: Shards | None = None) -> dict[str, float]:
        stats = ppo_update(self.trainable.model, self.optimizer, samples, self.config, iteration,
                           self.trainable.device, self.reference, self.backend_banned, shards)
        self.optimizer.zero_grad(set_to_none=True)  # the gradients' memory is free while the rollouts run
        return stats

    def _release_rollout_memory(self) -> None:
        """Let the rollout engine give its GPU memory back while the trainer updates (vLLM sleep mode)."""
        if self.config.rollout_backend == "vllm":
            self.backend.release_memory()

    def _sync_rollout_weights(self) -> None:
        """Give the rollout engine the updated weights (the hf backend already shares them). With bf16
        master weights the model holds their bf16 cast, which is what the engine gets; sharded, the full
        weights are gathered tensor by tensor and cast (every rank joins, each for its own engine)."""
        model = self.trainable.model
        if self.replica is not None:
            refresh_replica(self.replica, model)
        if self.config.rollout_backend == "vllm":
            import torch

            self.backend.sync_weights(FullWeights(model, getattr(torch, self.config.dtype)) if is_sharded(model)
                                      else model)

    # ---- loop ------------------------------------------------------------------------------------

    def train(self, progress: Any = None) -> dict[str, Any]:
        """Run the iterations left (resuming from the newest checkpoint); `progress`: a
        weblica.progress.TrainingProgress told the iterations and each one's metrics."""
        cfg, world = self.config, self.world
        progress = progress if world.main else None
        start = 0
        if self.resume_from is not None:
            start = load_training_state(self.resume_from, self.optimizer, self.trainable.model)["iteration"] + 1
            if self.replica is not None:
                refresh_replica(self.replica, self.trainable.model)
        # one rank writes; the others compute the same lines
        logger = logger_for(cfg, self.out, start - 1 if self.resume_from is not None else None) \
            if world.main else None
        last: dict[str, Any] = {}
        if progress is not None:
            progress.start(cfg.iterations, start)
        try:
            for iteration in range(start, cfg.iterations):
                batch = self.collect(iteration)
                self._release_rollout_memory()
                update = self.update(batch.samples, iteration, Shards(world, batch.owners))
                self._sync_rollout_weights()
                last = {"step": iteration, **self._metrics(batch, update, iteration)}
                if heldout.due(cfg, iteration):
                    last["eval"] = heldout.evaluate(self, iteration)
                if logger is not None:
                    logger.log(iteration, last)
                if progress is not None:
                    progress.step(iteration + 1, last)
                if cfg.save_every and (iteration + 1) % cfg.save_every == 0:
                    path, state = self.out / f"checkpoint-{iteration}", {"iteration": iteration, "config": config_record(cfg)}
                    save_checkpoint(path, self.trainable, self.optimizer, state, world)
        finally:
            if logger is not None:
                logger.close()
        export_model(self.trainable, self.out / "final", world)
        return {"iterations": cfg.iterations, "final": str(self.out / "final"), "last": last,
                "nothing_to_do": self.resume_from is not None and start >= cfg.iterations,
                **({"ranks": world.size} if world.distributed else {})}

    def _metrics(self, batch: Batch, update: dict[str, float], iteration: int) -> dict[str, Any]:
        episodes = batch.outcomes
        valid = [e for e in episodes if not e.removed]
        removal = Counter(e.termination_reason for e in episodes if e.removed)
        lengths = batch.response_lengths
        return {
            "reward": round(statistics.fmean([e.reward for e in valid]), 6) if valid else 0.0,
            "success": round(sum(e.success for e in valid) / len(valid), 6) if valid else 0.0,
            "episodes": len(episodes), "groups": batch.groups, "zero_variance_groups": batch.zero_variance_groups,
            "refill_rounds": batch.rounds - 1, "samples": len(lengths), "removed": dict(sorted(removal.items())),
            "terminations": dict(sorted(Counter(e.termination_reason for e in episodes).items())),
            "response_length": round(statistics.fmean(lengths), 3) if lengths else 0.0,
            "truncated_turns": batch.truncated,
            "steps_per_episode": round(statistics.fmean([e.steps for e in episodes]), 3) if episodes else 0.0,
            "horizon": horizon_for(self.config, iteration), **update,
        }


def train_grpo(config: GRPOConfig, progress: Any = None) -> dict[str, Any]:
    trainer = GRPOTrainer(config)
    try:
        return trainer.train(progress)
    finally:
        close_world(trainer.world)
