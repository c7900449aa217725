"""A tiny, randomly initialised Qwen3-VL checkpoint for tests and CPU recipes (no model hub here).

`build_tiny_qwen3_vl(dir, seed)` trains a byte-level BPE tokenizer in-process on protocol-shaped text,
builds `Qwen3VLForConditionalGeneration` from a small config whose special-token ids match that
tokenizer, and saves model + tokenizer + image-processor config so `hf:DIR` loads it like a real
checkpoint. Same seed, same files.
"""
from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

SPECIAL_TOKENS = [
    "<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|vision_start|>", "<|vision_end|>", "<|image_pad|>",
    "<|video_pad|>", "<think>", "</think>", "<tool_call>", "</tool_call>",
]

# The image processor of the tiny checkpoint: Qwen3-VL's patch 16 x merge 2, and a pixel budget small
# enough that a 1280x720 screenshot becomes a handful of visual tokens.
TINY_IMAGE_PROCESSOR = {"patch_size": 16, "merge_size": 2, "temporal_patch_size": 2,
                        "min_pixels": 32 * 32 * 4, "max_pixels": 32 * 32 * 24,
                        "image_mean": [0.5, 0.5, 0.5], "image_std": [0.5, 0.5, 0.5]}

# Qwen's chat template, reduced to text and image parts (enough for `apply_chat_template` users).
CHAT_TEMPLATE = (
    "{% for message in messages %}<|im_start|>{{ message['role'] }}\n"
    "{% if message['content'] is string %}{{ message['content'] }}{% else %}"
    "{% for part in message['content'] %}{% if part['type'] == 'image' %}"
    "<|vision_start|><|image_pad|><|vision_end|>{% elif part['type'] == 'text' %}{{ part['text'] }}"
    "{% endif %}{% endfor %}{% endif %}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


def _corpus(seed: int, n: int = 400) -> list[str]:
    """Protocol-shaped text so the BPE merges cover what the tiny model reads and writes."""
    from weblica.policy.context import describe_tools

    rng = random.Random(seed)
    words = ("search flights book hotel cart checkout price filter date form submit name email total "
             "button link page menu results login account order list table next previous").split()
    lines = [describe_tools()]
    for _ in range(n):
        tool = rng.choice(["click", "write", "scroll", "done", "press_keys", "goto_url"])
        args: dict[str, Any] = {
            "click": {"x": rng.randint(0, 1000), "y": rng.randint(0, 1000)},
            "write": {"text": " ".join(rng.sample(words, 2))},
            "scroll": {"direction": rng.choice(["up", "down"]), "amount": 0.5},
            "done": {"answer": rng.choice(words)},
            "press_keys": {"keys": ["Enter"]},
            "goto_url": {"url": f"https://{rng.choice(words)}.test/{rng.choice(words)}"},
        }[tool]
        thought = " ".join(rng.choice(words) for _ in range(rng.randint(3, 12)))
        lines.append(f"<think>{thought}</think>\n<tool_call>{json.dumps({'name': tool, 'arguments': args})}"
                     f"</tool_call>")
        lines.append(f"Step {rng.randint(0, 15)}. Current URL: https://{rng.choice(words)}.test/ "
                     f"Feedback on your previous tool calls: Success: clicked <button> \"{rng.choice(words)}\".")
    return lines


def train_tokenizer(seed: int = 0, vocab_size: int = 1024) -> Any:
    """A byte-level BPE `PreTrainedTokenizerFast` with Qwen's special tokens, trained in-process."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=SPECIAL_TOKENS, show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tokenizer.train_from_iterator(_corpus(seed), trainer=trainer)
    fast = PreTrainedTokenizerFast(tokenizer_object=tokenizer, eos_token="<|im_end|>", pad_token="<|endoftext|>",
                                   additional_special_tokens=SPECIAL_TOKENS[1:])
    fast.chat_template = CHAT_TEMPLATE
    return fast


def tiny_config(tokenizer: Any) -> Any:
    """A Qwen3-VL config a few hundred kilobytes big whose token ids match `tokenizer`."""
    from transformers import Qwen3VLConfig

    ids = {t: tokenizer.convert_tokens_to_ids(t) for t in SPECIAL_TOKENS}
    head_dim = 16
    text = dict(vocab_size=len(tokenizer), hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                num_attention_heads=4, num_key_value_heads=2, head_dim=head_dim, max_position_embeddings=4096,
                rope_theta=10000.0, tie_word_embeddings=False,
                # multimodal RoPE: sections over (t, h, w) sum to head_dim / 2
                rope_scaling={"rope_type": "default", "mrope_section": [4, 2, 2], "mrope_interleaved": True},
                bos_token_id=None, eos_token_id=ids["<|im_end|>"], pad_token_id=ids["<|endoftext|>"])
    vision = dict(depth=2, hidden_size=32, intermediate_size=64, num_heads=2, in_channels=3,
                  patch_size=TINY_IMAGE_PROCESSOR["patch_size"], spatial_merge_size=TINY_IMAGE_PROCESSOR["merge_size"],
                  temporal_patch_size=TINY_IMAGE_PROCESSOR["temporal_patch_size"], out_hidden_size=64,
                  num_position_embeddings=256, deepstack_visual_indexes=[0])
    return Qwen3VLConfig(text_config=text, vision_config=vision, image_token_id=ids["<|image_pad|>"],
                         video_token_id=ids["<|video_pad|>"], vision_start_token_id=ids["<|vision_start|>"],
                         vision_end_token_id=ids["<|vision_end|>"], eos_token_id=ids["<|im_end|>"],
                         pad_token_id=ids["<|endoftext|>"], tie_word_embeddings=False)


def build_tiny_qwen3_vl(out_dir: str | Path, seed: int = 0) -> Path:
    """Write a tiny Qwen3-VL checkpoint directory (model, tokenizer, image processor) and return it."""
    import torch
    from transformers import GenerationConfig, Qwen2VLImageProcessor, Qwen3VLForConditionalGeneration

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    tokenizer = train_tokenizer(seed)
    config = tiny_config(tokenizer)
    torch.manual_seed(seed)
    model = Qwen3VLForConditionalGeneration(config).eval()
    model.generation_config = GenerationConfig(eos_token_id=config.eos_token_id, pad_token_id=config.pad_token_id)
    model.save_pretrained(out, safe_serialization=True)
    tokenizer.save_pretrained(out)
    Qwen2VLImageProcessor(**TINY_IMAGE_PROCESSOR).save_pretrained(out)
    return out
