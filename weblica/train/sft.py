"""Supervised fine-tuning: multi-turn behaviour cloning, one sample per assistant turn, loss on the
assistant's tokens only; checkpoints that resume exactly; Hugging Face-format export. Data-parallel
under `torchrun`: each rank takes every size-th sample of a batch, and the step is the whole batch's; with
`parallelism: fsdp` the model, gradients and optimizer are sharded over those ranks (`weblica.train.fsdp`)."""
from __future__ import annotations

import asyncio
from dataclasses import replace
from pathlib import Path
from typing import Any

from weblica.env.task import Task, episode_task, load_tasks
from weblica.policy.backends.hf import varying_length_attention
from weblica.policy.context import ContextBuilder
from weblica.train.algorithms import masked_token_nll
from weblica.train.config import SFTConfig
from weblica.train.distributed import World, close_world, init_world
from weblica.train.fsdp import is_sharded, micro_batches, norm_value, passes_needed, shard_trainable
from weblica.train.memory import report_memory
from weblica.train.metrics import logger_for
from weblica.train.model_io import (base_checkpoint, config_record, export_model, latest_checkpoint,
                                    load_trainable, load_training_state, make_optimizer, save_checkpoint,
                                    seed_everything)
from weblica.train.samples import TurnSample, batch_logprobs, sft_samples


def on_grid(task: Any, frame: Any) -> Any:
    """The task with its oracle snapped to what a student in `frame` can write: pixels -> the student's
    integer coordinates -> pixels. The oracle then plays exactly the clicks the cloned student will make,
    so the feedback it clones ("clicked ... at (472.32, 30.24)") is the feedback the student will read."""
    from weblica.env.actions import Action
    from weblica.policy.coords import X_KEYS, Y_KEYS

    if not task.oracle:
        return task
    actions = []
    for action in task.oracle:
        args = dict(action.args)
        for xk, yk in zip(X_KEYS, Y_KEYS):
            if xk in args and yk in args:
                args[xk], args[yk] = frame.to_viewport(*frame.from_viewport(args[xk], args[yk]))
        actions.append(Action(action.name, args))
    return replace(task, oracle=actions)


def teacher_task(task: Task, config: SFTConfig, frame: Any = None) -> Task:
    """The task as the teacher plays it: for the oracle, snapped to the student's grid (`frame`) and, with
    `oracle_thoughts` off, without its recorded thoughts (it then says one fixed sentence). A task with
    instances gets the same in every member's oracle: the rollout plays the member of the episode's seed."""
    if config.teacher != "oracle":
        return task
    members = task.metadata.get("instances") or []
    taught = [_taught(episode_task(task, k), config, frame) for k in range(len(members))]
    task = _taught(task, config, frame)
    if members:
        task = replace(task, metadata={**task.metadata, "instances": [
            {**m, "oracle": t.to_dict()["oracle"]} if m.get("instance", 0) and "oracle" in m else m
            for m, t in zip(members, taught)]})
    return task


def _taught(task: Task, config: SFTConfig, frame: Any) -> Task:
    if frame is not None:
        task = on_grid(task, frame)
    return task if config.oracle_thoughts else replace(task, oracle_thoughts=None)


def collect_teacher_runs(config: SFTConfig, out: Path, frame: Any = None) -> None:
    """Play the configured tasks with the teacher policy into the run directory `out` (once; reused on
    resume). With `frame` (the student's), the oracle teacher plays its actions snapped to the student's
    coordinate grid."""
    if (out / "episodes.jsonl").exists():
        return
    from weblica.env.sources import open_backends
    from weblica.policy.factory import make_policy_factory
    from weblica.rollout import run_tasks

    tasks = [teacher_task(t, config, frame) for t in load_tasks(config.tasks or "")]

    factory = make_policy_factory(config.teacher, config.seed, tasks=tasks)
    if config.obs != "screenshot":  # the student reads the accessibility tree: record it with every step
        factory = reading_axtree(factory)

    async def go() -> None:
        async with open_backends(tasks) as backends:
            await run_tasks(tasks, factory, out, parallel=config.parallel, seed=config.seed, backends=backends)

    asyncio.run(go())


def reading_axtree(factory: Any) -> Any:
    """The teacher's policies, marked so the rollout records the accessibility tree of every observation
    (weblica.rollout reads `reads_axtree`): the student's prompts are rebuilt from it."""
    def make() -> Any:
        policy = factory()
        policy.reads_axtree = True
        return policy

    return make


def _frame(trainable: Any) -> Any:
    from weblica.policy.backends.hf import frame_for

    return frame_for(trainable.model.config, trainable.image_processor)


def train_sft(config: SFTConfig, progress: Any = None) -> dict[str, Any]:
    """Run SFT to completion (resuming from the newest checkpoint in output_dir); returns a summary, whose
    `nothing_to_do` says a resumed run found every step done. `progress`: a weblica.progress.TrainingProgress
    told the steps and each step's metrics."""
    world, device = init_world(config.device)
    try:
        return _train_sft(replace(config, device=device), world, progress if world.main else None)
    finally:
        close_world(world)


def _train_sft(config: SFTConfig, world: World, progress: Any = None) -> dict[str, Any]:
    import torch

    out = Path(config.output_dir)
    out.mkdir(parents=True, exist_ok=True)
    seed_everything(config.seed)
    resume = latest_checkpoint(out)
    trainable = load_trainable(resume or base_checkpoint(config, out), config)
    run_dirs = [Path(p) for p in config.trajectories]
    tasks_by_id: dict[str, Any] = {}
    if config.tasks:
        # one rank plays the teacher; every rank then reads its episodes
        world.on_main(lambda: collect_teacher_runs(config, out / "teacher", _frame(trainable)))
        run_dirs.append(out / "teacher")
        tasks_by_id.update({t.id: t for t in load_tasks(config.tasks)})
    for run_dir in config.trajectories:
        tasks_file = Path(run_dir) / "tasks.jsonl"
        if tasks_file.exists():
            tasks_by_id.update({t.id: t for t in load_tasks(tasks_file)})
    if not run_dirs:
        raise ValueError("SFT needs trajectories (run directories) or tasks for a teacher to play")
    builder = ContextBuilder(_frame(trainable), config.keep_images, prompt_format=config.prompt_format,
                             observation=config.obs)
    samples = sft_samples(tasks_by_id, run_dirs, builder, trainable.tokenizer, trainable.image_processor,
                          config.only_successful, blind=config.blind)
    if not samples:
        raise ValueError("no training samples: no successful episodes in the trajectories")
    report_memory(trainable.model, config, world)
    shard_trainable(trainable, config)
    optimizer = make_optimizer(trainable, config)
    state = {"step": 0, "epoch": 0, "batch": 0}
    if resume is not None:
        state = load_training_state(resume, optimizer, trainable.model)
    steps_per_epoch = (len(samples) + config.batch_size - 1) // config.batch_size
    first_step = state["step"]
    if progress is not None:
        progress.start(steps_per_epoch * config.epochs, first_step)
    logger = logger_for(config, out, state["step"] if resume is not None else None) if world.main else None
    last: dict[str, Any] = {}

    def save() -> None:
        save_checkpoint(out / f"checkpoint-{state['step']}", trainable, optimizer,
                        {**state, "config": config_record(config)}, world)

    trainable.model.train()
    try:
        for epoch in range(state["epoch"], config.epochs):
            # the order of an epoch depends only on (seed, epoch), so a resumed run sees the same batches
            order = torch.randperm(len(samples), generator=torch.Generator().manual_seed(config.seed * 1000 + epoch))
            for b in range(state["batch"] if epoch == state["epoch"] else 0, steps_per_epoch):
                batch = [samples[i] for i in order[b * config.batch_size:(b + 1) * config.batch_size].tolist()]
                last = {"epoch": epoch, **sft_step(trainable, optimizer, batch, config, world)}
                state = {"step": state["step"] + 1, "epoch": epoch, "batch": b + 1}
                if logger is not None:
                    logger.log(state["step"], last)
                if progress is not None:
                    progress.step(state["step"], last)
                if config.save_every and state["step"] % config.save_every == 0:
                    save()
            state = {"step": state["step"], "epoch": epoch + 1, "batch": 0}
    finally:
        if logger is not None:
            logger.close()
    trainable.model.eval()
    save()
    export_model(trainable, out / "final", world)
    return {"samples": len(samples), "steps": state["step"], "final": str(out / "final"),
            "last_loss": last.get("loss"), "nothing_to_do": resume is not None and state["step"] == first_step,
            **({"ranks": world.size} if world.distributed else {})}


def sft_step(trainable: Any, optimizer: Any, batch: list[TurnSample], config: SFTConfig,
             world: World = World()) -> dict[str, float]:
    """One optimizer step of behaviour cloning on a batch (token-mean NLL of the responses); split over
    data-parallel ranks, each computes its share and the gradients are summed."""
    import torch

    optimizer.zero_grad(set_to_none=True)
    tokens = sum(len(s.response_ids) for s in batch)
    total = 0.0
    mine = world.share(batch)
    sharded = is_sharded(trainable.model)
    # sharded, every pass is collective: all ranks run as many as the fullest, the rest on a weight-0 filler
    passes = passes_needed([len(batch[r::world.size]) for r in range(world.size)], config.micro_batch_size) \
        if sharded else 0
    for micro, real in micro_batches(mine, config.micro_batch_size, passes, batch[0]):
        with varying_length_attention():
            scores = batch_logprobs(trainable.model, micro, trainable.device)
            # one backward per micro-batch, weighted so the sum is the batch's token mean
            weight = float(scores.mask.sum()) / tokens if real else 0.0
            loss = masked_token_nll(scores.logprobs, scores.mask) * weight
            loss.backward()
        total += float(loss.detach())
    if not sharded:  # FSDP reduce-scatters (sums) the gradients during the backward
        world.sum_gradients(trainable.model.parameters())
    (total,) = world.sum_floats([total])
    grad_norm = norm_value(torch.nn.utils.clip_grad_norm_(trainable.model.parameters(), config.max_grad_norm))
    optimizer.step()
    return {"loss": round(total, 6), "tokens": tokens, "grad_norm": round(grad_norm, 6)}
