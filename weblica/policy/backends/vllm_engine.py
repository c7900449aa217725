"""`vllm:PATH` — in-process vLLM on a GPU (the `gpu` extra), written against vLLM 0.33 (train/README.md
names the sources). Not exercised by the CPU test suite except through stand-ins of `vllm.LLM`.

The prompt is the same token sequence as `hf:` (sampled history spliced verbatim) except that each image
keeps a single `<|image_pad|>`, which vLLM's multimodal processor expands; vLLM reports the expanded
prompt ids back, and those are what the trainer gets.

- Batching: the concurrent episodes' requests are gathered into one `LLM.generate` call
  (`BatchingQueue`); nothing serializes them one by one.
- Sampling matches the hf backend and the trainer: vision placeholder tokens are banned (`bad_words`;
  each is one special token, so vLLM masks it at every position) and the returned log-probs are
  vLLM's `processed_logprobs`: log-softmax of the logits after the bans and the temperature -- what the
  trainer recomputes. Top-p/top-k would enter them too (vLLM applies them before taking processed
  log-probs) while the trainer does not, so a backend made for training refuses them.
- Weight sync (`sync_weights`): by name through `collective_rpc` into `WeblicaWorkerExtension`
  (`vllm_weights`), then the prefix, multimodal-processor and encoder caches are reset, so no rollout
  after a sync reuses KV or vision embeddings computed by the old weights. With `sleep_level` 1 or 2,
  `release_memory()` puts the engine to sleep while the trainer updates, and the sync wakes it, after
  returning PyTorch's cached blocks to the GPU (`free_cached_memory`).
- Engine arguments for training (`training_engine_args`): `max_model_len`, `gpu_memory_utilization`,
  `limit_mm_per_prompt` (the kept screenshots, at the viewport's size) and `enforce_eager`.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

from weblica.policy.backends.base import BackendError, Generation, SamplingOptions
from weblica.policy.backends.batching import BatchingQueue
from weblica.policy.backends.hf import (STOP_TOKENS, VISION_TOKENS, EncodedPrompt, detect_assistant_prefix,
                                        encode_qwen_prompt, load_image_processor)
from weblica.policy.backends.vllm_weights import DEFAULT_BUCKET_BYTES, EXTENSION, sync_weights, weights_to_send
from weblica.policy.context import Message
from weblica.policy.coords import CoordinateFrame, frame_for_model_type

LOGPROBS_MODE = "processed_logprobs"


class VLLMBackend:
    def __init__(self, path: str | Path, sampling: SamplingOptions | None = None,
                 frame: CoordinateFrame | None = None, *, sleep_level: int = 0, for_training: bool = False,
                 bucket_bytes: int = DEFAULT_BUCKET_BYTES, **engine_args: Any) -> None:
        try:
            import vllm
        except ImportError:
            raise BackendError("vllm is not installed: pip install 'weblica[gpu]' (needs a CUDA GPU)") from None
        from transformers import AutoConfig, AutoTokenizer

        path = Path(path)
        config = AutoConfig.from_pretrained(path)
        sleep_level = int(sleep_level)
        engine_args = {"limit_mm_per_prompt": {"image": 8}, **engine_args, **engine_options(sleep_level)}
        llm = vllm.LLM(model=str(path), **engine_args)
        self._attach(f"vllm:{path}", llm, vllm.SamplingParams, AutoTokenizer.from_pretrained(path),
                     load_image_processor(path), sampling,
                     frame or frame_for_model_type(getattr(config, "model_type", None)),
                     sleep_level=sleep_level, for_training=for_training, bucket_bytes=int(bucket_bytes))

    def _attach(self, name: str, llm: Any, sampling_params_cls: Any, tokenizer: Any, image_processor: Any,
                sampling: SamplingOptions | None, frame: CoordinateFrame, *, sleep_level: int = 0,
                for_training: bool = False, bucket_bytes: int = DEFAULT_BUCKET_BYTES,
                gather_s: float = 0.01) -> None:
        """Set up over an engine (a stand-in of `vllm.LLM` in the CPU tests)."""
        self.name = name
        self.llm = llm
        self.sampling = sampling or SamplingOptions()
        if for_training:
            refuse_unmatched_sampling(self.sampling)
        if sleep_level not in (0, 1, 2):
            raise BackendError(f"sleep_level must be 0 (off), 1 or 2, not {sleep_level!r}")
        self.sleep_level = sleep_level
        self.bucket_bytes = bucket_bytes
        self.frame = frame
        self.tokenizer = tokenizer
        self.image_processor = image_processor
        self.assistant_prefix = detect_assistant_prefix(tokenizer)
        self.banned_tokens = [t for t in VISION_TOKENS if _single_token(tokenizer, t)]
        self.banned_ids = sorted(tokenizer.convert_tokens_to_ids(t) for t in self.banned_tokens)
        self.stop_ids = [tokenizer.convert_tokens_to_ids(t) for t in STOP_TOKENS]
        self._sampling_params_cls = sampling_params_cls
        self._queue = BatchingQueue(self._generate_batch, gather_s=gather_s)
        self._asleep = False

    # ---- generation ------------------------------------------------------------------------------

    async def generate(self, messages: Sequence[Message], seed: int) -> Generation:
        # encoded in the batch thread: submitting is instant, so episodes that ask together batch together,
        # and the event loop stays free for the browsers
        return await self._queue.submit((list(messages), seed))

    def encode(self, messages: Sequence[Message]) -> EncodedPrompt:
        return encode_qwen_prompt(messages, self.tokenizer, self.image_processor, expand_images=False,
                                  assistant_prefix=self.assistant_prefix)

    def sampling_params(self, seed: int) -> Any:
        opts = self.sampling
        return self._sampling_params_cls(
            temperature=opts.temperature, top_p=opts.top_p, top_k=max(opts.top_k, 0),
            max_tokens=opts.max_new_tokens, seed=seed & 0x7FFF_FFFF, logprobs=0, skip_special_tokens=False,
            stop_token_ids=list(self.stop_ids), bad_words=list(self.banned_tokens))

    def _generate_batch(self, requests: list[tuple[list[Message], int]]) -> list[Generation | BaseException]:
        if self._asleep:
            raise BackendError("the vLLM engine is asleep: sync_weights() wakes it after an update")
        results: list[Any] = []
        prompts, params = [], []
        for messages, seed in requests:
            try:
                prompt = self.encode(messages)
            except Exception as exc:  # this episode's prompt alone
                results.append(exc)
                continue
            results.append(None)
            entry: dict[str, Any] = {"prompt_token_ids": list(prompt.input_ids)}
            if prompt.images:
                entry["multi_modal_data"] = {"image": prompt.images}
            prompts.append(entry)
            params.append(self.sampling_params(seed))
        outputs = iter(self._generate_each_alone_on_refusal(prompts, params) if prompts else [])
        out: list[Generation | BaseException] = []
        for r in results:
            if r is not None:
                out.append(r)
                continue
            result = next(outputs)
            out.append(result if isinstance(result, BaseException) else self._generation(result))
        return out

    def _generate_each_alone_on_refusal(self, prompts: list[dict[str, Any]], params: list[Any]) -> list[Any]:
        """One `generate` call for the batch. vLLM validates every request before it runs any and refuses the
        whole call for one bad request (a prompt longer than max_model_len, more images than
        limit_mm_per_prompt); then each request goes alone, so only the episode that asked fails."""
        try:
            return list(self.llm.generate(prompts, params, use_tqdm=False))
        except ValueError as exc:
            if len(prompts) == 1:
                raise BackendError(f"vLLM refused the prompt: {exc} (raise max_model_len or limit_mm_per_prompt, "
                                   "or shorten the horizon)") from None
        out: list[Any] = []
        for prompt, param in zip(prompts, params):
            try:
                out.extend(self.llm.generate([prompt], [param], use_tqdm=False))
            except ValueError as exc:
                out.append(BackendError(f"vLLM refused the prompt: {exc} (raise max_model_len or "
                                        "limit_mm_per_prompt, or shorten the horizon)"))
        return out

    def _generation(self, result: Any) -> Generation:
        out = result.outputs[0]
        token_ids = list(out.token_ids)
        logprobs = [float(step[token].logprob) for step, token in zip(out.logprobs or [], token_ids)]
        text = out.text
        for stop in STOP_TOKENS:
            text = text.removesuffix(stop)
        return Generation(self.assistant_prefix + text, list(result.prompt_token_ids), token_ids, logprobs or None,
                          "length" if out.finish_reason == "length" else "stop")

    # ---- training: memory and weights ------------------------------------------------------------

    def release_memory(self) -> None:
        """Sleep during the trainer's update (level 1: weights to CPU, KV cache dropped; level 2: both
        dropped, the sync then sends every tensor). No-op with sleep_level 0."""
        if not self.sleep_level or self._asleep:
            return
        with self._queue.engine_lock:
            self.llm.sleep(level=self.sleep_level)
            self._asleep = True

    def sync_weights(self, model: Any) -> int:
        """Give the engine `model`'s current weights, then drop every cache built with the old ones;
        returns the tensors sent."""
        with self._queue.engine_lock:
            if self._asleep:
                # the trainer's update left freed blocks in PyTorch's cache; vLLM allocates outside it, so
                # they must go back to the driver before the engine asks for its memory (verl does the same)
                free_cached_memory()
                self.llm.wake_up(tags=["weights"])  # the KV cache stays released while weights load
            sent = sync_weights(self.llm, weights_to_send(model, everything=self._asleep and self.sleep_level == 2),
                                self.bucket_bytes)
            if self._asleep:
                free_cached_memory()  # the gathered full tensors of a sharded model are garbage now
                self.llm.wake_up()
                self._asleep = False
            self._reset_caches()
        return sent

    def _reset_caches(self) -> None:
        if self.llm.reset_prefix_cache() is False:
            raise BackendError("vLLM refused to reset its prefix cache (requests still running during a sync)")
        self.llm.reset_mm_cache()
        engine = getattr(self.llm, "llm_engine", None)
        if engine is not None and hasattr(engine, "reset_encoder_cache"):
            engine.reset_encoder_cache()  # vision embeddings of cached images, computed by the old tower

    def close(self) -> None:
        self._queue.close()


def free_cached_memory() -> None:
    """Return the memory PyTorch's caching allocator holds but does not use to the GPU: collect garbage
    (tensors of the update still referenced by cycles), then `torch.cuda.empty_cache()`. No-op without CUDA."""
    import gc

    gc.collect()
    try:
        import torch
    except ImportError:
        return
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        torch.cuda.synchronize()
        torch.cuda.empty_cache()


def training_engine_args(max_model_len: int, gpu_memory_utilization: float, images: int,
                         enforce_eager: bool = False, image_size: tuple[int, int] = (1280, 720),
                         dtype: str = "bfloat16") -> dict[str, Any]:
    """vLLM `EngineArgs` for an engine that shares its GPU with the trainer. `max_model_len` must be
    given: vLLM otherwise takes the model's own limit (262,144 for Qwen3-VL) and refuses to start when one
    such sequence's KV cache does not fit in its share of memory ("To serve at least one request ...").
    `limit_mm_per_prompt` is the screenshots a prompt can hold, at the viewport's size, so vLLM profiles
    its vision encoder with that many 1280x720 images, not with the model's largest image. CUDA graphs
    stay on unless `enforce_eager`."""
    width, height = image_size
    return {"max_model_len": int(max_model_len), "gpu_memory_utilization": float(gpu_memory_utilization),
            "limit_mm_per_prompt": {"image": {"count": int(images), "width": width, "height": height}},
            "enforce_eager": bool(enforce_eager), "dtype": dtype}


def engine_options(sleep_level: int) -> dict[str, Any]:
    """Engine arguments the backend relies on (vLLM `EngineArgs` names)."""
    return {"logprobs_mode": LOGPROBS_MODE, "worker_extension_cls": EXTENSION,
            **({"enable_sleep_mode": True} if sleep_level else {})}


def refuse_unmatched_sampling(sampling: SamplingOptions) -> None:
    """vLLM's processed log-probs include top-p/top-k truncation (renormalized over the kept tokens);
    the trainer recomputes log-softmax(logits / T) over the whole vocabulary, so the PPO ratio would be
    off before any update."""
    if sampling.top_p < 1.0 or sampling.top_k > 0:
        raise BackendError(f"vLLM rollouts for training need top_p: 1.0 and no top_k (got top_p={sampling.top_p}, "
                           f"top_k={sampling.top_k}): vLLM's log-probs would include the truncation the trainer "
                           "does not recompute; use temperature to shape sampling, or rollout_backend: hf")


def _single_token(tokenizer: Any, token: str) -> bool:
    """vLLM bans a bad word unconditionally only when it is one token; Qwen's vision markers are."""
    token_id = tokenizer.convert_tokens_to_ids(token)
    return token_id is not None and token_id != tokenizer.unk_token_id and \
        tokenizer.encode(token, add_special_tokens=False) == [token_id]
