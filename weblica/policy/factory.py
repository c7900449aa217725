"""`make_policy(spec, seed)`: one string names any policy.

| spec | policy |
|---|---|
| `hf:PATH` | local transformers checkpoint directory (CPU or GPU); returns token ids and log-probs |
| `vllm:PATH` | in-process vLLM (GPU extra) |
| `openai:URL[#MODEL]` | any OpenAI-compatible chat-completions server (vLLM, SGLang serve, OpenAI) |
| `anthropic:MODEL` | Anthropic Messages API; base URL from `base_url=` or $ANTHROPIC_BASE_URL |
| `oracle`, `random` | scripted policies |
| `adversarial` | scripted reward hacker (every candidate on the page as the answer; every control clicked on state tasks): must score 0 |

Options (keyword arguments, or `;key=value` pairs after the spec on a command line):
`temperature`, `top_p`, `top_k`, `max_new_tokens`, `keep_images` (screenshots kept in context, default 1),
`coords` (relative1000 | smart_resize | viewport; default: from the model family), `format` (the prompt
format: weblica, our tool schema, the default; computer_use, Qwen3-VL's native computer_use tool), `obs` (what a
turn shows of the page: screenshot, the default; axtree, the accessibility tree as text; both), `device`, `dtype`
and `blind` (hf; `blind=1` zeroes every screenshot's pixels, the no-vision control of bench/learn.py),
`base_url`, `api_key`, `timeout_s` (API backends).
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

from weblica.policy.backends.base import SamplingOptions
from weblica.policy.context import OBSERVATION_MODES, PROMPT_FORMATS
from weblica.policy.coords import CoordinateFrame

KINDS = ("hf", "vllm", "openai", "anthropic", "oracle", "random", "adversarial")
_SAMPLING = {"temperature": float, "top_p": float, "top_k": int, "max_new_tokens": int}


class PolicySpecError(ValueError):
    """A policy spec that names no known policy or carries a bad option."""


def parse_spec(spec: str) -> tuple[str, str, dict[str, str]]:
    """'hf:/ckpt;temperature=0.7' -> ('hf', '/ckpt', {'temperature': '0.7'})."""
    head, *pairs = spec.split(";")
    kind, _, target = head.partition(":")
    options: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise PolicySpecError(f"policy option '{pair}' is not key=value (in '{spec}')")
        options[key.strip()] = value.strip()
    if kind not in KINDS:
        raise PolicySpecError(f"unknown policy '{spec}'; use one of: hf:PATH, vllm:PATH, openai:URL[#MODEL], "
                              f"anthropic:MODEL, oracle, random, adversarial")
    if kind in ("hf", "vllm", "openai", "anthropic") and not target:
        raise PolicySpecError(f"policy '{kind}:' needs a target, e.g. {kind}:" +
                              {"hf": "PATH", "vllm": "PATH", "openai": "http://127.0.0.1:8000/v1",
                               "anthropic": "claude-sonnet-4-5"}[kind])
    return kind, target, options


def make_policy(spec: str, seed: int = 0, **options: Any) -> Any:
    """Build the policy a spec names. Keyword options override `;key=value` ones in the spec."""
    kind, target, spec_options = parse_spec(spec)
    opts: dict[str, Any] = {**spec_options, **options}
    if kind == "oracle":
        from weblica.policy.oracle import OraclePolicy

        return OraclePolicy()
    if kind == "random":
        from weblica.policy.random_policy import RandomPolicy

        return RandomPolicy(seed=seed)
    if kind == "adversarial":
        from weblica.policy.adversarial import AdversarialPolicy

        return AdversarialPolicy(seed=seed)

    from weblica.policy.model_policy import ModelPolicy

    keep_images = int(opts.pop("keep_images", 1))
    observation = opts.pop("obs", "screenshot")
    if observation not in OBSERVATION_MODES:
        raise PolicySpecError(f"unknown obs '{observation}' in '{spec}'; use one of: {', '.join(OBSERVATION_MODES)}")
    prompt_format = opts.pop("format", "weblica")
    if prompt_format not in PROMPT_FORMATS:
        raise PolicySpecError(f"unknown format '{prompt_format}' in '{spec}'; use one of: {', '.join(PROMPT_FORMATS)}")
    frame = CoordinateFrame.for_convention(opts.pop("coords")) if "coords" in opts else None
    defaults = SamplingOptions() if kind in ("hf", "vllm") else SamplingOptions(temperature=0.0)
    try:
        sampling = SamplingOptions(**{k: _SAMPLING[k](opts.pop(k, getattr(defaults, k))) for k in _SAMPLING})
    except ValueError as exc:
        raise PolicySpecError(f"bad sampling option in '{spec}': {exc}") from None
    if kind == "hf":
        from weblica.policy.backends.hf import HFBackend

        blind = str(opts.pop("blind", "0")).lower()
        if blind not in ("0", "1", "true", "false"):
            raise PolicySpecError(f"blind must be 1 or 0 (true or false), not '{blind}' (in '{spec}')")
        backend: Any = HFBackend(target, sampling, device=opts.pop("device", None), frame=frame,
                                 dtype=opts.pop("dtype", None), blind=blind in ("1", "true"))
    elif kind == "vllm":
        from weblica.policy.backends.vllm_engine import VLLMBackend

        backend = VLLMBackend(target, sampling, frame=frame, **opts)
        opts = {}
    elif kind == "openai":
        from weblica.policy.backends.api import OpenAIBackend

        url, _, model = target.partition("#")
        backend = OpenAIBackend(url, model or None, api_key=opts.pop("api_key", None), sampling=sampling,
                                frame=frame, timeout_s=float(opts.pop("timeout_s", 120.0)))
    else:
        from weblica.policy.backends.api import AnthropicBackend

        backend = AnthropicBackend(target, base_url=opts.pop("base_url", None), api_key=opts.pop("api_key", None),
                                   sampling=sampling, frame=frame, timeout_s=float(opts.pop("timeout_s", 120.0)))
    if opts:
        raise PolicySpecError(f"unknown option(s) for {kind}: {', '.join(sorted(opts))}")
    return ModelPolicy(backend, keep_images=keep_images, seed=seed, prompt_format=prompt_format,
                       observation=observation)


def make_policy_factory(spec: str, seed: int = 0, *, tasks: Sequence[Any] = (), **options: Any) -> Callable[[], Any]:
    """A zero-argument factory of fresh per-episode policies. Model weights, tokenizers and HTTP clients
    are loaded once and shared; only the per-episode state (earlier screenshots) is per policy. Given the
    `tasks` it will play, the oracle checks up front that each has oracle actions (PolicySpecError)."""
    kind, _, _ = parse_spec(spec)
    if kind == "oracle":
        missing = [t.id for t in tasks if t.oracle is None]
        if missing:
            raise PolicySpecError(f"{len(missing)} task(s) have no oracle actions (e.g. {missing[0]}); "
                                  "use --policy random or a model")
        from weblica.policy.oracle import OraclePolicy

        return OraclePolicy
    if kind == "random":
        from weblica.policy.random_policy import RandomPolicy

        return lambda: RandomPolicy(seed=seed)
    if kind == "adversarial":
        from weblica.policy.adversarial import AdversarialPolicy

        return lambda: AdversarialPolicy(seed=seed)
    prototype = make_policy(spec, seed, **options)
    return prototype.spawn
