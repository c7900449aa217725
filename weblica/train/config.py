"""Training options: one dataclass per trainer, every field with a default that works and a help text.
A YAML recipe in `train/` maps onto them one to one (`kind: sft|grpo` plus the fields)."""
from __future__ import annotations

from dataclasses import MISSING, dataclass, field, fields
from pathlib import Path
from typing import Any

import yaml

from weblica.policy.context import PROMPT_FORMATS


def _f(default: Any, help: str) -> Any:
    if isinstance(default, (list, dict)):
        return field(default_factory=lambda d=default: type(d)(d), metadata={"help": help})
    return field(default=default, metadata={"help": help})


@dataclass
class ModelOptions:
    model: str = _f("tiny", "checkpoint directory (config.json, tokenizer, preprocessor) or 'tiny' to build a "
                            "tiny Qwen3-VL from a config with a locally trained tokenizer")
    tiny_seed: int = _f(0, "seed of the tiny model when model is 'tiny'")
    tiny_warm_start_steps: int = _f(0, "SFT steps that teach the tiny model the response format before training")
    device: str = _f("auto", "cpu, cuda or auto")
    dtype: str = _f("float32", "float32 | bfloat16 (bf16 on GPU for real models)")
    gradient_checkpointing: bool = _f(False, "recompute activations in backward (large models)")
    freeze_vision: bool = _f(False, "keep the vision tower frozen")
    keep_images: int = _f(1, "screenshots kept in context (the last k turns)")
    obs: str = _f("screenshot", "what each turn shows the model: screenshot | axtree (the page's accessibility tree "
                                "as text: role, name and box centre of each element; no image) | both "
                                "(weblica.policy.axtree)")
    prompt_format: str = _f("weblica", "weblica (our 13-tool schema) | computer_use (Qwen3-VL's native computer_use "
                                       "tool, 0-1000 coordinates, mapped onto the same tools)")
    parallelism: str = _f("ddp", "with several ranks: ddp (each rank a full replica, gradients summed) | fsdp (FSDP2: "
                                 "parameters, gradients and AdamW moments sharded over the ranks, one unit per "
                                 "decoder layer; train/README.md 'Memory')")
    blind: bool = _f(False, "a control without vision: every screenshot reaches the model as zeros (same tokens "
                            "and image grid), in training and in the rollouts (bench/learn.py; evaluate with "
                            "hf:DIR;blind=1)")
    micro_batch_size: int = _f(1, "samples per training forward/backward pass, left-padded into one batch; on a "
                                  "GPU 4 gave 2.1x the tokens/s of 1 (H200, 1B model, train/README.md)")


@dataclass
class OptimizerOptions:
    """AdamW and gradient clipping, as every trainer uses them; only the learning rate's default differs."""
    learning_rate: float = _f(1e-4, "AdamW learning rate")
    weight_decay: float = _f(0.0, "AdamW weight decay")
    max_grad_norm: float = _f(1.0, "gradient clipping")
    master_weights: str = _f("auto", "fp32 master weights stepped by AdamW, the model holding their cast: auto (on "
                                     "when the trainable weights are bf16/fp16, where small updates round away) | "
                                     "on | off (plain AdamW on the model's own dtype) | stochastic_rounding (no "
                                     "fp32 copy: fp32 moments, each bf16 weight rounded up or down without bias)")


@dataclass
class LoggingOptions:
    """Where metrics go besides metrics.jsonl (one JSON line a step or iteration)."""
    report_to: list[str] = _f(["tensorboard"], "where metrics go besides metrics.jsonl: tensorboard, wandb "
                                              "(needs the wandb package; WANDB_MODE=offline works without network)")
    wandb_project: str = _f("weblica", "wandb project (report_to: [wandb])")
    run_name: str = _f("", "the run's name in wandb (default: output_dir's folder name)")


@dataclass
class SFTConfig(LoggingOptions, OptimizerOptions, ModelOptions):
    output_dir: str = _f("out/sft", "checkpoints, metrics.jsonl, tensorboard/ and final/ go here")
    seed: int = _f(0, "fixes data order, teacher rollouts and initialisation")
    trajectories: list[str] = _f([], "run directories (episodes.jsonl + screens/) to clone")
    tasks: str | None = _f(None, "tasks.jsonl: when set, a teacher first plays these tasks into output_dir/teacher")
    teacher: str = _f("oracle", "policy spec of the teacher (oracle, openai:URL, anthropic:MODEL, hf:DIR)")
    oracle_thoughts: bool = _f(True, "the oracle teacher says each action's recorded thought ('Click \"Cardio\".'); "
                                     "false: one fixed sentence, which a tiny model clones better (bench/learn.py)")
    only_successful: bool = _f(True, "clone successful episodes only")
    epochs: int = _f(3, "passes over the samples")
    batch_size: int = _f(4, "assistant turns per optimizer step")
    save_every: int = _f(0, "optimizer steps between checkpoints (0: only at the end)")
    parallel: int = _f(2, "parallel environments for teacher rollouts")


@dataclass
class GRPOConfig(LoggingOptions, OptimizerOptions, ModelOptions):
    output_dir: str = _f("out/grpo", "checkpoints, rollouts/, metrics.jsonl, tensorboard/ and final/ go here")
    seed: int = _f(0, "fixes task order, sampling, environments and updates")
    tasks: str = _f("", "tasks.jsonl of training tasks")
    iterations: int = _f(10, "rollout -> reward -> update iterations")
    groups_per_batch: int = _f(4, "valid task groups each update needs (dynamic sampling refills to this)")
    group_size: int = _f(4, "rollouts per task (the GRPO group)")
    estimator: str = _f("grpo", "grpo ((r-mean)/std) | dr_grpo (r-mean) | filtered_bc (successes only)")
    dynamic_sampling: bool = _f(True, "drop groups whose rewards are all equal and refill the batch")
    max_refill_rounds: int = _f(4, "extra rollout rounds per iteration to find informative groups")
    ppo_epochs: int = _f(2, "passes over each batch, on the rollout log-probs")
    mini_batches: int = _f(2, "optimizer steps per PPO epoch")
    clip_low: float = _f(0.2, "lower clip range (ratio >= 1 - clip_low)")
    clip_high: float = _f(0.28, "upper clip range (ratio <= 1 + clip_high; clip-higher)")
    clip_ratio_c: float = _f(3.0, "dual clip: a token with advantage A < 0 loses at most -A * clip_ratio_c, however "
                                  "large its ratio (verl's clip_ratio_c; 0: off)")
    log_ratio_clamp: float = _f(20.0, "the log-ratio log(pi/pi_old) is clamped to +-this before exp (verl: 20)")
    tis_cap: float = _f(0.0, "truncated importance sampling: each token's loss weighted by min(pi_trainer / "
                             "pi_rollout, tis_cap), pi_trainer from a no-grad pass before the update, which "
                             "then is the PPO ratio's old policy (verl's rollout correction; 2.0 is usual; 0: off)")
    mask_truncated: bool = _f(True, "overlong filtering: a turn cut at max_new_tokens carries no loss (its "
                                    "episode's reward says nothing about the unfinished response)")
    loss_aggregation: str = _f("token_mean", "token_mean (every response token of a mini-batch weighs the same) | "
                                             "sequence_mean (each turn's token mean, then the mean over turns)")
    kl_coef: float = _f(0.0, "k3 KL penalty against the initial policy (0: off)")
    entropy_coef: float = _f(0.0, "entropy bonus (0: off)")
    learning_rate: float = _f(1e-5, "AdamW learning rate (lower than SFT's: updates on sampled rollouts)")
    temperature: float = _f(1.0, "sampling temperature of rollouts")
    top_p: float = _f(1.0, "nucleus sampling of rollouts")
    max_new_tokens: int = _f(256, "tokens per response")
    max_steps: int = _f(0, "episode horizon (0: each task's own max_steps)")
    horizon_schedule: list[list[int]] = _f([], "curriculum [[from_iteration, max_steps], ...], e.g. [[0, 15], [90, 30]]")
    judge: str | None = _f(None, "judge spec (openai:URL[#MODEL] | anthropic:MODEL) for tasks without checks; "
                                 "without one such tasks are removed, not scored 0")
    difficulty_mix: str = _f("uniform", "task sampling: uniform | easy | medium | hard (one band only) | weighted")
    difficulty_weights: dict[str, float] = _f({}, "weighted mix: band weights, e.g. {easy: 0.6, medium: 0.3, hard: 0.1}")
    difficulty_bands: list[int] = _f([3, 6], "[easy_max, medium_max] for integer difficulties (WebGym: fact count)")
    skip_unchanged_steps: bool = _f(False, "drop turns whose screenshot did not change (WebGym repeated-action "
                                           "filter); the answering turn is always kept")
    parallel: int = _f(2, "parallel environments during rollouts")
    rollout_backend: str = _f("hf", "hf (the training model) | vllm (GPU; weights synced each iteration)")
    vllm_sleep_level: int = _f(1, "vLLM sleep mode during each update: 0 off, 1 weights to CPU and KV cache "
                                  "freed, 2 both freed (every tensor is then re-sent)")
    max_model_len: int = _f(16384, "vLLM's context limit (prompt + response tokens); without it vLLM takes the "
                                   "model's own (262,144 for Qwen3-VL), whose KV cache cannot fit")
    gpu_memory_utilization: float = _f(0.35, "share of each GPU's memory vLLM may take (weights, KV cache, CUDA "
                                             "graphs); the rest is the trainer's")
    limit_mm_per_prompt: int = _f(0, "images vLLM reserves room for in one prompt (0: keep_images, the "
                                     "screenshots a prompt holds)")
    enforce_eager: bool = _f(False, "run vLLM without CUDA graphs (slower; for debugging)")
    eval_tasks: str = _f("", "tasks.jsonl of held-out tasks played every eval_every iterations (greedy by "
                             "default); success lands in metrics.jsonl and TensorBoard as eval/success")
    eval_every: int = _f(0, "iterations between held-out evaluations, and after the last one (0: never)")
    eval_temperature: float = _f(0.0, "sampling temperature of the held-out evaluation (0: greedy)")
    eval_repeats: int = _f(1, "episodes per held-out task at each evaluation")
    save_every: int = _f(1, "iterations between checkpoints")


CONFIGS = {"sft": SFTConfig, "grpo": GRPOConfig}


class ConfigError(ValueError):
    pass


def load_config(path: str | Path, kind: str | None = None) -> SFTConfig | GRPOConfig:
    """Read a YAML recipe: either flat (`kind: sft|grpo` and the options) or with `sft:` and `grpo:`
    sections (one recipe for the whole pipeline). Unknown keys are an error that lists the known ones."""
    path = Path(path)
    if not path.exists():
        raise ConfigError(f"config not found: {path}")
    try:
        data = yaml.safe_load(path.read_text()) or {}
    except yaml.YAMLError as exc:  # one line: where it broke, not the parser's traceback
        mark = getattr(exc, "problem_mark", None)
        where = f":{mark.line + 1}" if mark is not None else ""
        raise ConfigError(f"{path}{where}: not valid YAML ({getattr(exc, 'problem', None) or exc})") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: not UTF-8 text; a recipe is a YAML file") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: a recipe is a mapping of options")
    if kind in data and isinstance(data[kind], dict):  # a recipe with sft: and grpo: sections
        return config_from_dict(CONFIGS[kind], data[kind], f"{path} [{kind}]")
    if any(k in data and isinstance(data[k], dict) for k in CONFIGS) and "kind" not in data:
        raise ConfigError(f"{path} has no '{kind}' section; it has: "
                          f"{', '.join(k for k in CONFIGS if isinstance(data.get(k), dict))}")
    file_kind = data.pop("kind", None)
    kind = kind or file_kind
    if kind not in CONFIGS:
        raise ConfigError(f"{path}: say which trainer with 'kind: sft' or 'kind: grpo'")
    if file_kind and file_kind != kind:
        raise ConfigError(f"{path} is a '{file_kind}' recipe, not '{kind}'")
    return config_from_dict(CONFIGS[kind], data, str(path))


MASTER_WEIGHT_MODES = ("auto", "on", "off", "stochastic_rounding")
OBSERVATION_MODES = ("screenshot", "axtree", "both")
LOSS_AGGREGATIONS = ("token_mean", "sequence_mean")
REPORTERS = ("tensorboard", "wandb")
PARALLELISMS = ("ddp", "fsdp")

# counts that must be at least 1 (0 would train nothing, or divide by zero deep inside a loop)
AT_LEAST_ONE = ("epochs", "batch_size", "micro_batch_size", "iterations", "groups_per_batch", "group_size",
                "ppo_epochs", "mini_batches", "parallel", "eval_repeats", "max_model_len")


def config_from_dict(cls: type, data: dict[str, Any], where: str = "config") -> Any:
    known = {f.name for f in fields(cls)}
    unknown = sorted(set(data) - known)
    if unknown:
        raise ConfigError(f"{where}: unknown option(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}")
    config = cls(**data)
    if getattr(config, "master_weights", "auto") not in MASTER_WEIGHT_MODES:
        raise ConfigError(f"{where}: master_weights must be one of {', '.join(MASTER_WEIGHT_MODES)}, "
                          f"not {config.master_weights!r}")
    if getattr(config, "parallelism", "ddp") not in PARALLELISMS:
        raise ConfigError(f"{where}: parallelism must be one of {', '.join(PARALLELISMS)}, not {config.parallelism!r}")
    if getattr(config, "parallelism", "ddp") == "fsdp" and config.master_weights == "stochastic_rounding":
        raise ConfigError(f"{where}: master_weights stochastic_rounding does not go with parallelism fsdp, where the "
                          "sharded parameters are the fp32 masters: use master_weights auto (or on/off)")
    if getattr(config, "prompt_format", "weblica") not in PROMPT_FORMATS:
        raise ConfigError(f"{where}: prompt_format must be one of {', '.join(PROMPT_FORMATS)}, "
                          f"not {config.prompt_format!r}")
    if getattr(config, "rollout_backend", "hf") == "vllm":
        if config.top_p < 1.0:
            raise ConfigError(f"{where}: rollout_backend vllm needs top_p: 1.0 (vLLM's log-probs would include the "
                              "nucleus truncation the trainer does not recompute); shape sampling with temperature")
        if config.blind:
            raise ConfigError(f"{where}: blind is for the hf rollout backend (vLLM processes the screenshots itself); "
                              "use rollout_backend: hf")
        if config.vllm_sleep_level not in (0, 1, 2):
            raise ConfigError(f"{where}: vllm_sleep_level must be 0, 1 or 2, not {config.vllm_sleep_level!r}")
    _check_options(config, where)
    for name in AT_LEAST_ONE:
        value = getattr(config, name, 1)
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise ConfigError(f"{where}: {name} must be a whole number >= 1, not {value!r}")
    return config


def _check_options(config: Any, where: str) -> None:
    """Observation, logging, loss-safety, vLLM-engine and evaluation options."""
    if getattr(config, "obs", "screenshot") not in OBSERVATION_MODES:
        raise ConfigError(f"{where}: obs must be one of {', '.join(OBSERVATION_MODES)}, not {config.obs!r}")
    report_to = getattr(config, "report_to", [])
    if not isinstance(report_to, list):
        raise ConfigError(f"{where}: report_to is a list, e.g. [tensorboard, wandb]; got {report_to!r}")
    unknown = [r for r in report_to if r not in REPORTERS]
    if unknown:
        raise ConfigError(f"{where}: report_to knows {', '.join(REPORTERS)}, not {', '.join(map(repr, unknown))}")
    if "wandb" in report_to:
        import importlib.util

        if importlib.util.find_spec("wandb") is None:
            raise ConfigError(f"{where}: report_to wandb needs the wandb package: pip install wandb (WANDB_MODE=offline "
                              "writes the run locally), or drop wandb from report_to")
    if not isinstance(config, GRPOConfig):
        return
    if config.loss_aggregation not in LOSS_AGGREGATIONS:
        raise ConfigError(f"{where}: loss_aggregation must be one of {', '.join(LOSS_AGGREGATIONS)}, "
                          f"not {config.loss_aggregation!r}")
    if config.clip_ratio_c and config.clip_ratio_c <= 1.0:
        raise ConfigError(f"{where}: clip_ratio_c bounds the ratio of negative-advantage tokens from above and must "
                          f"be > 1 (verl uses 3.0), or 0 to turn the dual clip off; got {config.clip_ratio_c}")
    if config.tis_cap and config.tis_cap < 1.0:
        raise ConfigError(f"{where}: tis_cap truncates importance weights and must be >= 1 (2.0 is usual), or 0 "
                          f"for off; got {config.tis_cap}")
    if not config.log_ratio_clamp > 0:
        raise ConfigError(f"{where}: log_ratio_clamp must be > 0 (20 keeps exp() finite); got {config.log_ratio_clamp}")
    if not 0.0 < config.gpu_memory_utilization <= 1.0:
        raise ConfigError(f"{where}: gpu_memory_utilization is a share of the GPU's memory in (0, 1]; "
                          f"got {config.gpu_memory_utilization}")
    if config.limit_mm_per_prompt < 0 or config.eval_every < 0:
        raise ConfigError(f"{where}: limit_mm_per_prompt and eval_every must be >= 0")
    if config.rollout_backend == "vllm" and config.max_new_tokens >= config.max_model_len:
        raise ConfigError(f"{where}: max_new_tokens ({config.max_new_tokens}) leaves no room for the prompt in "
                          f"max_model_len ({config.max_model_len}); raise max_model_len")
    if config.eval_every and not config.eval_tasks:
        raise ConfigError(f"{where}: eval_every needs eval_tasks (a held-out tasks.jsonl, e.g. from "
                          "`weblica synth --split val`)")


def describe(cls: type) -> str:
    """The options of a config class with defaults and help (for --help and docs)."""
    lines = []
    for f in fields(cls):
        default = f.default if f.default is not MISSING else f.default_factory()  # type: ignore[misc]
        lines.append(f"{f.name} (default {default!r}): {f.metadata.get('help', '')}")
    return "\n".join(lines)
