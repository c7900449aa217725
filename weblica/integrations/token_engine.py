"""A policy backend over any token-in/token-out engine (SGLang's `/generate`, verl's server manager),
and the episode loop that the slime and verl adapters share.

External RL frameworks own generation; weblica owns the context, the environment and the reward. This
backend encodes the conversation exactly as `hf:` does (Qwen template, sampled turns spliced as ids) and
asks the engine for the continuation, so the ids and log-probs the framework trains on are the ones
its engine produced. It keeps every prompt it encoded, pixels included, so that each turn can be handed
to the trainer with the images its image-pad tokens stand for.
"""
from __future__ import annotations

import base64
import io
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Awaitable, Callable, Sequence

from weblica.policy.backends.base import Generation, SamplingOptions
from weblica.policy.backends.hf import EncodedPrompt, detect_assistant_prefix, encode_qwen_prompt
from weblica.policy.context import Message
from weblica.policy.coords import CoordinateFrame
from weblica.tls import tls_context

if TYPE_CHECKING:
    from weblica.env.browser_env import WebEnv
    from weblica.env.episode import StepRecord, Trajectory
    from weblica.env.task import Task

# engine(prompt, sampling, seed) -> (token_ids, logprobs, finish_reason)
TokenEngine = Callable[[EncodedPrompt, SamplingOptions, int], Awaitable[tuple[list[int], list[float], str]]]


class TokenEngineBackend:
    def __init__(self, engine: TokenEngine, tokenizer: Any, image_processor: Any, frame: CoordinateFrame,
                 sampling: SamplingOptions | None = None, name: str = "engine") -> None:
        self.engine = engine
        self.tokenizer = tokenizer
        self.image_processor = image_processor
        self.frame = frame
        self.sampling = sampling or SamplingOptions()
        self.name = name
        self.assistant_prefix = detect_assistant_prefix(tokenizer)
        # prompt ids -> the encoded prompt (pixel_values, image_grid_thw, PIL images) they came from
        self.prompts: dict[tuple[int, ...], EncodedPrompt] = {}

    async def generate(self, messages: Sequence[Message], seed: int) -> Generation:
        prompt = encode_qwen_prompt(messages, self.tokenizer, self.image_processor,
                                    assistant_prefix=self.assistant_prefix)
        self.prompts[tuple(prompt.input_ids)] = prompt
        token_ids, logprobs, finish = await self.engine(prompt, self.sampling, seed)
        text = self.assistant_prefix + self.tokenizer.decode(token_ids, skip_special_tokens=False)
        for stop in ("<|im_end|>", "<|endoftext|>"):
            text = text.removesuffix(stop)
        return Generation(text, list(prompt.input_ids), list(token_ids), list(logprobs), finish,
                          {"prompt_tokens": len(prompt.input_ids), "completion_tokens": len(token_ids)})


def png_b64(image: Any) -> str:
    buffer = io.BytesIO()
    image.save(buffer, "PNG")
    return base64.b64encode(buffer.getvalue()).decode("ascii")


def sglang_engine(url: str, timeout_s: float = 300.0) -> TokenEngine:
    """An engine over SGLang's native `/generate` (input_ids in; output ids and log-probs out)."""
    import httpx

    async def generate(prompt: EncodedPrompt, sampling: SamplingOptions, seed: int) -> tuple[list[int], list[float], str]:
        payload = {
            "input_ids": prompt.input_ids,
            "image_data": [png_b64(img) for img in prompt.images or []],
            "sampling_params": {"temperature": sampling.temperature, "top_p": sampling.top_p,
                                "top_k": sampling.top_k if sampling.top_k > 0 else -1,
                                "max_new_tokens": sampling.max_new_tokens, "sampling_seed": seed},
            "return_logprob": True,
        }
        async with httpx.AsyncClient(timeout=timeout_s, verify=tls_context()) as client:
            response = await client.post(url.rstrip("/") + "/generate", json=payload)
            response.raise_for_status()
            body = response.json()
        pairs = body["meta_info"]["output_token_logprobs"]  # [[logprob, token_id, text], ...]
        finish = body["meta_info"].get("finish_reason") or {}
        return ([int(p[1]) for p in pairs], [float(p[0]) for p in pairs],
                "length" if finish.get("type") == "length" else "stop")

    return generate


def server_manager_engine(server_manager: Any, request_id: str, sampling_params: dict[str, Any]) -> TokenEngine:
    """An engine over verl's `LLMServerClient.generate(request_id, *, prompt_ids, sampling_params, image_data)`
    (verl 0.9.1, `verl/workers/rollout/llm_server.py`), which returns a `TokenOutput` (token_ids, log_probs).
    One request id per episode keeps its turns on one server (prefix cache)."""

    async def generate(prompt: EncodedPrompt, sampling: SamplingOptions, seed: int) -> tuple[list[int], list[float], str]:
        output = await server_manager.generate(request_id, prompt_ids=list(prompt.input_ids),
                                               sampling_params=dict(sampling_params), image_data=prompt.images or None)
        ids = [int(t) for t in output.token_ids]
        return ids, [float(x) for x in (output.log_probs or [])], "stop"

    return generate


@dataclass
class Turn:
    """One assistant turn as a training sample: what the model saw, what it sampled, with which pixels."""

    record: StepRecord
    prompt: EncodedPrompt | None

    @property
    def prompt_ids(self) -> list[int]:
        return list(self.record.prompt_token_ids or [])

    @property
    def response_ids(self) -> list[int]:
        return list(self.record.token_ids or [])

    def multimodal_train_inputs(self) -> dict[str, Any] | None:
        """The processed pixels of the images in this turn's prompt (None for a text-only prompt)."""
        if self.prompt is None or self.prompt.pixel_values is None:
            return None
        return {"pixel_values": self.prompt.pixel_values, "image_grid_thw": self.prompt.image_grid_thw}


@dataclass
class PlayedEpisode:
    trajectory: Trajectory
    reward: float
    removed: bool
    reward_reason: str
    turns: list[Turn] = field(default_factory=list)


async def play_episode(env: WebEnv, task: Task, backend: TokenEngineBackend, seed: int, repeat: int,
                       keep_images: int = 1) -> PlayedEpisode:
    """Play one episode with `backend` as the policy, score it as weblica's GRPO trainer does, and pair each
    sampled turn with the prompt (and pixels) it was sampled from."""
    from weblica.policy.model_policy import ModelPolicy
    from weblica.scoring.reward import compute_reward
    from weblica.rollout import run_episode

    traj = await run_episode(env, task, ModelPolicy(backend, keep_images=keep_images), seed, repeat=repeat)
    result = await compute_reward(traj, task)
    result.apply(traj)
    turns = [Turn(r, backend.prompts.get(tuple(r.prompt_token_ids or ()))) for r in traj.steps if r.token_ids]
    return PlayedEpisode(traj, float(result.reward), bool(result.removed), result.source, turns)
