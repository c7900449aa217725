"""Loading the model to train, checkpoints that resume exactly, and Hugging Face-format export."""
from __future__ import annotations

import json
import random
import shutil
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from weblica.train.config import ModelOptions, OptimizerOptions
from weblica.train.distributed import World


@dataclass
class Trainable:
    model: Any
    tokenizer: Any
    image_processor: Any
    device: str
    path: Path  # the checkpoint the weights came from
    dtype: str = "float32"  # the compute dtype (under fsdp the shards may be fp32 masters of it)


def resolve_device(device: str) -> str:
    import torch

    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    return device


def base_checkpoint(options: ModelOptions, output_dir: Path) -> Path:
    """The directory of the starting weights: the configured checkpoint, or a tiny model built once."""
    if options.model != "tiny":
        path = Path(options.model)
        if not (path / "config.json").exists():
            raise FileNotFoundError(f"model {path} has no config.json: give a local checkpoint directory "
                                    "(no model hub is reachable) or 'tiny'")
        return path
    from weblica.policy.tiny import build_tiny_qwen3_vl

    path = output_dir / "base-tiny"
    if not (path / "config.json").exists():
        build_tiny_qwen3_vl(path, seed=options.tiny_seed, warm_start_steps=options.tiny_warm_start_steps)
    return path


def load_trainable(path: Path, options: ModelOptions) -> Trainable:
    import torch
    from transformers import AutoModelForImageTextToText, AutoTokenizer

    from weblica.policy.backends.hf import load_image_processor

    device = resolve_device(options.device)
    model = AutoModelForImageTextToText.from_pretrained(path, dtype=getattr(torch, options.dtype)).to(device)
    if options.gradient_checkpointing:
        model.gradient_checkpointing_enable()
    if options.freeze_vision:
        visual = getattr(getattr(model, "model", model), "visual", None)
        if visual is not None:
            for param in visual.parameters():
                param.requires_grad_(False)
    tokenizer = AutoTokenizer.from_pretrained(path)
    image_processor = load_image_processor(path) if (path / "preprocessor_config.json").exists() else None
    return Trainable(model, tokenizer, image_processor, device, path, options.dtype)


def make_optimizer(trainable: Trainable, options: OptimizerOptions) -> Any:
    """AdamW over the trainable (not frozen) parameters; over fp32 masters of them when `master_weights`
    says so (`weblica.train.precision`)."""
    import torch

    from weblica.train.fsdp import is_sharded
    from weblica.train.precision import MasterWeightAdamW, StochasticRoundingAdamW, update_kind

    params = [p for p in trainable.model.parameters() if p.requires_grad]
    if is_sharded(trainable.model):
        # the shards are the fp32 masters (or the model's dtype with master_weights off): plain AdamW, whose
        # moments are then sharded like the parameters
        return torch.optim.AdamW(params, lr=options.learning_rate, weight_decay=options.weight_decay)
    kind = update_kind(options.master_weights, params)
    if kind == "masters":
        return MasterWeightAdamW(params, lr=options.learning_rate, weight_decay=options.weight_decay)
    if kind == "stochastic":
        return StochasticRoundingAdamW(params, lr=options.learning_rate, weight_decay=options.weight_decay,
                                       seed=getattr(options, "seed", 0))
    return torch.optim.AdamW(params, lr=options.learning_rate, weight_decay=options.weight_decay)


def seed_everything(seed: int) -> None:
    import numpy as np
    import torch

    random.seed(seed)
    np.random.seed(seed % 2 ** 32)
    torch.manual_seed(seed)


def save_checkpoint(directory: Path, trainable: Trainable, optimizer: Any, state: dict[str, Any],
                    world: World | None = None) -> Path:
    """Weights (HF format), tokenizer, image processor, optimizer and RNG states, trainer state.
    Written to a temporary directory and renamed, so a crash never leaves a half checkpoint. With a
    `world`, every rank calls it: the main rank writes, and under fsdp every rank also writes its shards
    (parameters and optimizer, `sharded/`) and trainer.pt holds the RNG states only."""
    import torch

    from weblica.train.fsdp import is_sharded, save_sharded

    world = world or World()
    sharded = is_sharded(trainable.model)
    if not sharded and world.distributed:
        world.on_main(lambda: save_checkpoint(directory, trainable, optimizer, state))
        return directory
    tmp = directory.with_name(directory.name + ".tmp")
    if world.main:
        if tmp.exists():
            shutil.rmtree(tmp)
        tmp.mkdir(parents=True)
    world.barrier()
    export_model(trainable, tmp, world)
    if sharded:
        save_sharded(tmp, trainable.model, optimizer)
    if world.main:
        blob = {"torch_rng": torch.get_rng_state(), "python_rng": random.getstate()}
        blob.update({"sharded": True} if sharded else {"optimizer": optimizer.state_dict()})
        torch.save(blob, tmp / "trainer.pt")
        (tmp / "trainer_state.json").write_text(json.dumps(state, indent=2, sort_keys=True) + "\n")
        if directory.exists():
            shutil.rmtree(directory)
        tmp.rename(directory)
    world.barrier()
    return directory


def export_model(trainable: Trainable, directory: Path, world: World | None = None) -> None:
    """A Hugging Face checkpoint of the model. With a `world` every rank calls it and the main rank
    writes (under fsdp the full weights are gathered first, in the compute dtype)."""
    from weblica.train.fsdp import export_full, is_sharded

    world = world or World()
    if is_sharded(trainable.model):
        import torch

        export_full(trainable, directory, getattr(torch, trainable.dtype), world.main)
        world.barrier()
        return
    if world.distributed:
        world.on_main(lambda: export_model(trainable, directory))
        return
    directory.mkdir(parents=True, exist_ok=True)
    trainable.model.save_pretrained(directory, safe_serialization=True)
    trainable.tokenizer.save_pretrained(directory)
    if trainable.image_processor is not None:
        trainable.image_processor.save_pretrained(directory)


def latest_checkpoint(output_dir: Path) -> Path | None:
    found = sorted(output_dir.glob("checkpoint-*"), key=lambda p: int(p.name.split("-")[1])
                   if p.name.split("-")[1].isdigit() else -1)
    found = [p for p in found if (p / "trainer_state.json").exists()]
    return found[-1] if found else None


def load_training_state(checkpoint: Path, optimizer: Any, model: Any = None) -> dict[str, Any]:
    """Restore the optimizer (and under fsdp `model`'s shards) and the RNG states; the trainer state."""
    import torch

    from weblica.train.fsdp import is_sharded, load_sharded

    blob = torch.load(checkpoint / "trainer.pt", weights_only=False)
    if model is not None and is_sharded(model):
        load_sharded(checkpoint, model, optimizer)
        torch.set_rng_state(blob["torch_rng"])
        random.setstate(blob["python_rng"])
        return json.loads((checkpoint / "trainer_state.json").read_text())
    if blob.get("sharded"):
        raise ValueError(f"{checkpoint} was saved with parallelism fsdp (sharded optimizer): resume with "
                         "parallelism fsdp, or start a new output_dir")
    if isinstance(optimizer, torch.optim.Optimizer) and {"masters", "stochastic_rounding"} & set(blob["optimizer"]):
        raise ValueError(f"{checkpoint} was saved with master_weights on or stochastic_rounding: resume with "
                         "the same master_weights mode")
    # with master weights this restores the fp32 masters saved, and the model gets their cast
    optimizer.load_state_dict(blob["optimizer"])
    torch.set_rng_state(blob["torch_rng"])
    random.setstate(blob["python_rng"])
    return json.loads((checkpoint / "trainer_state.json").read_text())


def config_record(config: Any) -> dict[str, Any]:
    return asdict(config)
