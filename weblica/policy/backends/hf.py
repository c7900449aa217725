"""`hf:PATH` — a local transformers checkpoint (Qwen-VL family), CPU or GPU.

The prompt is assembled as token ids, segment by segment: template text is tokenized, each image becomes
`<|vision_start|>` + one `<|image_pad|>` per merged patch + `<|vision_end|>`, and earlier assistant turns
are spliced in as the token ids the model sampled — history is never re-tokenized, so the trainer sees
exactly what the model saw. Sampling is a plain loop over the KV cache with a seeded `torch.Generator`,
which `generate()` does not take.
"""
from __future__ import annotations

import asyncio
import contextlib
import functools
import io
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Sequence

from weblica.policy.backends.base import BackendError, Generation, SamplingOptions
from weblica.policy.context import IM_END, IM_START, IMAGE_PAD, VISION_END, VISION_START, Message, qwen_segments
from weblica.policy.coords import CoordinateFrame, frame_for_model_type

STOP_TOKENS = (IM_END, "<|endoftext|>")


@dataclass
class EncodedPrompt:
    """A prompt ready for the model: ids (images expanded or not) and the processed pixels."""

    input_ids: list[int]
    pixel_values: Any = None   # torch.Tensor (patches, dim) or None
    image_grid_thw: Any = None  # torch.LongTensor (images, 3) or None
    images: list[Any] | None = None  # PIL images, for engines that process pixels themselves


def image_processor_class() -> type:
    """The slow (PIL) Qwen2-VL image processor; the fast one needs torchvision, which is optional here.
    transformers 5 names it `Qwen2VLImageProcessorPil` (the plain name became the torchvision one)."""
    import transformers

    return getattr(transformers, "Qwen2VLImageProcessorPil", None) or transformers.Qwen2VLImageProcessor


def load_image_processor(path: str | Path) -> Any:
    return image_processor_class().from_pretrained(str(path))


@contextlib.contextmanager
def varying_length_attention() -> Iterator[None]:
    """Attention kernels for sequences whose length changes on every call (decoding, one sample at a time
    in training): SDPA without its cuDNN backend. cuDNN builds a graph per sequence shape, ~9 ms of CPU
    each on an H200 (torch 2.11), so a 2-layer model decoded 16 tokens/s; flash and memory-efficient
    kernels take any length. Wrap backward passes too: gradient checkpointing re-runs attention there."""
    import torch

    if not torch.cuda.is_available():
        yield
        return
    from torch.nn.attention import SDPBackend, sdpa_kernel

    with sdpa_kernel([SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION, SDPBackend.MATH]):
        yield


def _takes(model: Any, argument: str) -> bool:
    return argument in _forward_parameters(type(model))


@functools.lru_cache(maxsize=None)
def _forward_parameters(model_class: type) -> frozenset[str]:
    """The arguments a model class's forward takes (read once per class: forward runs per token)."""
    import inspect

    return frozenset(inspect.signature(model_class.forward).parameters)


def response_logits(model: Any, inputs: dict[str, Any], prompt_length: int, response_length: int,
                    rows: Any = 0) -> Any:
    """The logits that predict the last `response_length` tokens, [response_length, vocab] (of batch row
    `rows`; a slice keeps the batch axis). The LM head runs on those positions only where the model
    allows it: over a 150k vocabulary the prompt's logits would take most of the memory, and the head is
    a third of a 1B model's forward compute (a tenth of an 8B's)."""
    if _takes(model, "logits_to_keep"):
        return model(**inputs, logits_to_keep=response_length + 1).logits[rows, :response_length]
    return model(**inputs).logits[rows, prompt_length - 1:prompt_length - 1 + response_length]


def model_inputs(model: Any, input_ids: Any, pixel_values: Any, image_grid_thw: Any, device: str,
                 attention_mask: Any = None) -> dict[str, Any]:
    """Forward-pass inputs of one sequence (a list of ids) or a padded batch (a [batch, length] tensor with
    its attention mask; images in order of appearance). transformers 5's Qwen-VL models also want
    `mm_token_type_ids` (1 on image placeholders) to lay out the multimodal RoPE positions; 4.x finds the
    placeholders itself."""
    import torch

    ids = input_ids.to(device) if torch.is_tensor(input_ids) else torch.tensor([list(input_ids)], device=device)
    inputs: dict[str, Any] = {"input_ids": ids}
    if attention_mask is not None:
        inputs["attention_mask"] = attention_mask.to(device)
    if pixel_values is not None:
        inputs["pixel_values"] = pixel_values.to(device, model.dtype)
        inputs["image_grid_thw"] = image_grid_thw.to(device)
        if _takes(model, "mm_token_type_ids"):
            inputs["mm_token_type_ids"] = (ids == model.config.image_token_id).int()
    return inputs


def image_token_count(grid_thw: Sequence[int], merge_size: int) -> int:
    """How many `<|image_pad|>` tokens an image of this (t, h, w) patch grid takes."""
    t, h, w = (int(v) for v in grid_thw)
    return t * h * w // (merge_size ** 2)


def detect_assistant_prefix(tokenizer: Any) -> str:
    """What the checkpoint's chat template writes after `<|im_start|>assistant\\n` in a generation prompt:
    `<think>\\n` for Qwen3-VL Thinking checkpoints, nothing for Instruct ones and templates without it."""
    if not getattr(tokenizer, "chat_template", None):
        return ""
    try:
        text = tokenizer.apply_chat_template([{"role": "user", "content": "x"}], tokenize=False,
                                             add_generation_prompt=True)
    except Exception:  # a template that wants other message shapes: assume no prefix
        return ""
    header = f"{IM_START}assistant\n"
    return text.rsplit(header, 1)[1] if header in text else ""


def encode_qwen_prompt(messages: Sequence[Message], tokenizer: Any, image_processor: Any | None,
                       expand_images: bool = True, add_generation_prompt: bool = True,
                       assistant_prefix: str = "", blind: bool = False) -> EncodedPrompt:
    """Token ids of the Qwen chat template over `messages`, with sampled assistant ids spliced verbatim.

    `expand_images=False` leaves one `<|image_pad|>` per image (engines such as vLLM expand it);
    `assistant_prefix` as in `qwen_segments` (a backend's `assistant_prefix`). `blind` zeroes the pixel
    values (a control without vision): the ids and image grid stay those of the real screenshots, so a
    blind and a sighted model read the same text at the same positions and differ only in what they see.
    """
    from PIL import Image

    if blind and not expand_images:  # the engine would process the real screenshots itself
        raise BackendError("blind needs expand_images (the zeroed pixel values): it is for the hf backend")
    pngs = [img for m in messages for img in m.images]
    images = [Image.open(io.BytesIO(png)).convert("RGB") for png in pngs]
    pixel_values = grid = None
    if images and expand_images:
        if image_processor is None:
            raise BackendError("this checkpoint has no image processor (preprocessor_config.json)")
        processed = image_processor(images=images, return_tensors="pt")
        pixel_values, grid = processed["pixel_values"], processed["image_grid_thw"]
        if blind:
            pixel_values = pixel_values.new_zeros(pixel_values.shape)
            images = []
    ids_of = tokenizer.convert_tokens_to_ids
    vs, ve, pad, im_end = ids_of(VISION_START), ids_of(VISION_END), ids_of(IMAGE_PAD), ids_of(IM_END)
    ids: list[int] = []
    for kind, value in qwen_segments(messages, add_generation_prompt, assistant_prefix):
        if kind == "text":
            ids.extend(tokenizer(value, add_special_tokens=False)["input_ids"])
        elif kind == "image":
            n = image_token_count(grid[value].tolist(), image_processor.merge_size) if expand_images else 1
            ids.extend([vs] + [pad] * n + [ve])
        else:
            ids.extend(value)
            if not value or value[-1] != im_end:  # a turn cut at max length still closes in the template
                ids.append(im_end)
    return EncodedPrompt(ids, pixel_values, grid, images)


class HFBackend:
    """Samples from a local checkpoint. One generation at a time per model: the Qwen-VL models keep
    per-call rope state on the module, and a CPU has no spare cores to overlap them anyway."""

    def __init__(self, path: str | Path, sampling: SamplingOptions | None = None, device: str | None = None,
                 frame: CoordinateFrame | None = None, dtype: str | None = None, blind: bool = False) -> None:
        import torch
        from transformers import AutoConfig, AutoModelForImageTextToText, AutoTokenizer

        path = Path(path)
        if not (path / "config.json").exists():
            raise BackendError(f"hf:{path}: no config.json there; pass a local checkpoint directory "
                               f"(e.g. one written by weblica.policy.tiny.build_tiny_qwen3_vl)")
        device = device or ("cuda" if torch.cuda.is_available() else "cpu")
        torch_dtype = getattr(torch, dtype) if dtype else (torch.bfloat16 if device == "cuda" else torch.float32)
        tokenizer = AutoTokenizer.from_pretrained(path)
        image_processor = load_image_processor(path) if (path / "preprocessor_config.json").exists() else None
        model = AutoModelForImageTextToText.from_pretrained(path, dtype=torch_dtype).to(device).eval()
        self._attach(f"hf:{path}", model, tokenizer, image_processor, device, sampling,
                     frame or frame_for(AutoConfig.from_pretrained(path), image_processor), blind)

    def _attach(self, name: str, model: Any, tokenizer: Any, image_processor: Any, device: str,
                sampling: SamplingOptions | None, frame: CoordinateFrame, blind: bool = False) -> None:
        """Set up sampling over an already loaded model (the trainer shares its weights this way).
        `blind`: every screenshot reaches the model as zeros (`encode_qwen_prompt`)."""
        self.name = name
        self.blind = blind
        self.sampling = sampling or SamplingOptions()
        self.device = device
        self.tokenizer = tokenizer
        self.image_processor = image_processor
        self.model = model
        self.frame = frame
        # Thinking checkpoints open the reasoning in the prompt; the returned text puts it back in front
        self.assistant_prefix = detect_assistant_prefix(tokenizer)
        self.banned_ids = banned_token_ids(tokenizer)
        self.stop_ids = {i for i in (tokenizer.convert_tokens_to_ids(t) for t in STOP_TOKENS)
                         if i is not None and i != tokenizer.unk_token_id}
        self._lock = threading.Lock()

    def encode(self, messages: Sequence[Message]) -> EncodedPrompt:
        return encode_qwen_prompt(messages, self.tokenizer, self.image_processor,
                                  assistant_prefix=getattr(self, "assistant_prefix", ""),
                                  blind=getattr(self, "blind", False))

    async def generate(self, messages: Sequence[Message], seed: int) -> Generation:
        prompt = self.encode(messages)
        return await asyncio.to_thread(self._sample, prompt, seed)

    def _model_inputs(self, prompt: EncodedPrompt) -> dict[str, Any]:
        return model_inputs(self.model, prompt.input_ids, prompt.pixel_values, prompt.image_grid_thw, self.device)

    def _sample(self, prompt: EncodedPrompt, seed: int) -> Generation:
        import torch

        opts = self.sampling
        generator = torch.Generator(device=self.device).manual_seed(int(seed) & 0x7FFF_FFFF_FFFF_FFFF)
        token_ids: list[int] = []
        logprobs: list[float] = []
        finish = "length"
        with self._lock, torch.inference_mode(), varying_length_attention():
            inputs = self._model_inputs(prompt)
            length = len(prompt.input_ids)
            keep = {"logits_to_keep": 1} if _takes(self.model, "logits_to_keep") else {}
            out = self.model(**inputs, use_cache=True, cache_position=torch.arange(length, device=self.device), **keep)
            for step in range(opts.max_new_tokens):
                logits = out.logits[0, -1].float()
                token, logprob = sample_token(mask_banned(logits, self.banned_ids), opts, generator)
                token_ids.append(token)
                logprobs.append(logprob)
                if token in self.stop_ids:
                    finish = "stop"
                    break
                out = self.model(input_ids=torch.tensor([[token]], device=self.device),
                                 past_key_values=out.past_key_values, use_cache=True,
                                 cache_position=torch.tensor([length + step], device=self.device))
        text = self.tokenizer.decode(token_ids, skip_special_tokens=False)
        for stop in STOP_TOKENS:
            text = text.removesuffix(stop)
        text = getattr(self, "assistant_prefix", "") + text
        return Generation(text, list(prompt.input_ids), token_ids, logprobs, finish,
                          {"prompt_tokens": len(prompt.input_ids), "completion_tokens": len(token_ids)})

    def sequence_logprobs(self, prompt: EncodedPrompt, token_ids: Sequence[int]) -> list[float]:
        """Log-probs of `token_ids` after `prompt` from one full forward pass (what a trainer recomputes)."""
        import torch

        with self._lock, torch.inference_mode(), varying_length_attention():
            inputs = self._model_inputs(EncodedPrompt(list(prompt.input_ids) + list(token_ids),
                                                      prompt.pixel_values, prompt.image_grid_thw))
            logits = response_logits(self.model, inputs, len(prompt.input_ids), len(token_ids)).float()
        temperature = self.sampling.temperature if self.sampling.temperature > 0 else 1.0
        scores = torch.log_softmax(mask_banned(logits, self.banned_ids) / temperature, dim=-1)
        return scores.gather(1, torch.tensor(list(token_ids), device=scores.device)[:, None])[:, 0].tolist()


# A response never contains vision placeholders: a sampled <|image_pad|> spliced into the history would
# claim an image the prompt does not have (and break the next forward pass), so they are never sampled.
VISION_TOKENS = (VISION_START, VISION_END, IMAGE_PAD, "<|video_pad|>")


def banned_token_ids(tokenizer: Any) -> list[int]:
    ids = (tokenizer.convert_tokens_to_ids(t) for t in VISION_TOKENS)
    return sorted({i for i in ids if i is not None and i != tokenizer.unk_token_id})


def mask_banned(logits: Any, banned: Sequence[int]) -> Any:
    """Logits with the banned ids at -inf (along the last axis); the trainer applies the same mask."""
    if not banned:
        return logits
    logits = logits.clone()
    logits[..., list(banned)] = float("-inf")
    return logits


def sample_token(logits: Any, opts: SamplingOptions, generator: Any) -> tuple[int, float]:
    """One token from `logits` and its log-prob under logits / temperature.

    The log-prob ignores top-k/top-p truncation on purpose: it is the quantity a trainer recomputes
    from a forward pass. Temperature 0 is greedy (log-prob under temperature 1).
    """
    import torch

    if opts.temperature <= 0:
        scores = torch.log_softmax(logits, dim=-1)
        token = int(torch.argmax(scores))
        return token, float(scores[token])
    scores = torch.log_softmax(logits / opts.temperature, dim=-1)
    probs = scores.exp()
    if opts.top_k > 0:
        kth = torch.topk(probs, min(opts.top_k, probs.numel())).values[-1]
        probs = torch.where(probs >= kth, probs, torch.zeros_like(probs))
    if opts.top_p < 1.0:
        sorted_probs, order = torch.sort(probs, descending=True)
        keep = torch.cumsum(sorted_probs, 0) - sorted_probs < opts.top_p * sorted_probs.sum()
        mask = torch.zeros_like(probs, dtype=torch.bool).scatter(0, order, keep)
        probs = torch.where(mask, probs, torch.zeros_like(probs))
    token = int(torch.multinomial(probs / probs.sum(), 1, generator=generator))
    return token, float(scores[token])


def frame_for(config: Any, image_processor: Any | None) -> CoordinateFrame:
    """The coordinate frame a checkpoint answers in: its model family's, in pixels of its own processor's
    resize where the family answers in smart-resized pixels."""
    frame = frame_for_model_type(getattr(config, "model_type", None))
    if frame.convention == "smart_resize" and image_processor is not None:
        # the model's pixel frame is whatever its own processor resizes to
        factor = image_processor.patch_size * image_processor.merge_size
        frame = CoordinateFrame.for_convention("smart_resize", factor=factor, min_pixels=image_processor.min_pixels,
                                               max_pixels=image_processor.max_pixels)
    return frame
