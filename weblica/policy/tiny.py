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
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from weblica.progress import TrainingProgress

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
    from weblica.policy.context import system_prompt
    from weblica.policy.coords import CONVENTIONS, CoordinateFrame

    rng = random.Random(seed)
    words = ("search flights book hotel cart checkout price filter date form submit name email total "
             "button link page menu results login account order list table next previous").split()
    # the system prompts, several times over, so BPE merges make them short: prompts stay cheap on a CPU
    lines = [system_prompt(CoordinateFrame.for_convention(c)) for c in CONVENTIONS] * 20
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


def train_tokenizer(seed: int = 0, vocab_size: int = 2048) -> Any:
    """A byte-level BPE `PreTrainedTokenizerFast` with Qwen's special tokens, trained in-process."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tokenizer = Tokenizer(models.BPE())
    # No regex word split: merges may span spaces and punctuation, so the system prompt and tool-call
    # JSON become a few long tokens. Prompts shrink ~8x, which is what makes CPU SFT take seconds.
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)
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


# What the warm-started tiny model learns to answer, whatever it sees: a click in Qwen3-VL's 0-1000 grid,
# then `done`, so one end-to-end step exercises parsing, coordinate conversion, several calls per turn
# and termination. (A constant answer is learnt in a few dozen CPU steps; a context-dependent one is not.)
WARM_START_RESPONSE = (
    '<think>Click, then finish.</think>\n'
    '<tool_call>{"name": "click", "arguments": {"x": 500, "y": 500}}</tool_call>\n'
    '<tool_call>{"name": "done", "arguments": {"answer": "ok"}}</tool_call>'
)


WARM_START_EXAMPLES = 24  # distinct prompts the warm start answers
# steps over those prompts: enough for the answer to survive sampling at temperature 1 on prompts it never saw
WARM_START_STEPS = 320


def build_tiny_qwen3_vl(out_dir: str | Path, seed: int = 0, warm_start_steps: int = 0,
                        progress: TrainingProgress | None = None) -> Path:
    """Write a tiny Qwen3-VL checkpoint directory (model, tokenizer, image processor) and return it.

    With `warm_start_steps` > 0 the random model is first fine-tuned (a few SFT steps on real prompts,
    loss on the response only) to answer `WARM_START_RESPONSE`, so it emits tool calls that parse; its
    steps and loss go to `progress` (weblica.progress.TrainingProgress) when given.
    """
    import torch
    from transformers import GenerationConfig, Qwen3VLForConditionalGeneration

    from weblica.policy.backends.hf import image_processor_class

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    tokenizer = train_tokenizer(seed)
    config = tiny_config(tokenizer)
    torch.manual_seed(seed)
    model = Qwen3VLForConditionalGeneration(config)
    image_processor = image_processor_class()(**TINY_IMAGE_PROCESSOR)
    if warm_start_steps > 0:
        # matrices this small gain nothing from threads, and on a shared CPU threads spin: one thread is
        # several times faster in wall and CPU time
        threads = torch.get_num_threads()
        torch.set_num_threads(1)
        try:
            _warm_start(model, tokenizer, image_processor, warm_start_steps, seed, progress)
        finally:
            torch.set_num_threads(threads)
    model.eval()
    model.generation_config = GenerationConfig(eos_token_id=config.eos_token_id, pad_token_id=config.pad_token_id)
    model.save_pretrained(out, safe_serialization=True)
    tokenizer.save_pretrained(out)
    image_processor.save_pretrained(out)
    return out


def _warm_start_examples(tokenizer: Any, image_processor: Any, seed: int) -> list[dict[str, Any]]:
    """(prompt, response) pairs from the real context builder, all answered with `WARM_START_RESPONSE`.
    Everything a turn can hold varies: the instruction, URL, tabs, step, history and feedback, and a
    screenshot of a random colour and size, so the answer cannot hinge on any of it. A warm start on a
    few near-identical prompts learnt the answer for those only: a second tab or a longer tool list
    in the prompt cost it a closing brace."""
    import io

    from PIL import Image

    from weblica.env.episode import StepRecord
    from weblica.env.observation import Observation, Tab
    from weblica.env.task import Task
    from weblica.policy.backends.hf import encode_qwen_prompt
    from weblica.policy.context import ContextBuilder
    from weblica.policy.coords import CoordinateFrame

    rng = random.Random(seed)
    words = ("price date name blue kettle flight hotel order account total cart search results help shop "
             "news jobs bank form city first cheapest newest rating size colour review").split()
    hosts = ("shop", "help", "news", "bank", "travel", "jobs", "site", "store")
    builder = ContextBuilder(CoordinateFrame.for_convention("relative1000"))
    im_end = tokenizer.convert_tokens_to_ids("<|im_end|>")
    response = tokenizer(WARM_START_RESPONSE, add_special_tokens=False)["input_ids"] + [im_end]
    feedback = ["Success: 'click' at (640, 360) hit <button> \"Go\".", "Success: typed into <input>.",
                "Error: nothing to scroll.", "Success: scrolled down."]
    examples = []
    for i in range(WARM_START_EXAMPLES):
        size = rng.choice([(1280, 720), (1280, 720), (1024, 768), (800, 600)])
        buffer = io.BytesIO()
        Image.new("RGB", size, tuple(rng.randrange(256) for _ in range(3))).save(buffer, "PNG")
        urls = [f"http://{rng.choice(hosts)}{i}.test/{rng.choice(words)}" for _ in range(rng.randint(1, 3))]
        tabs = [Tab(n, u, rng.choice(words).title()) for n, u in enumerate(urls)]
        active = rng.randrange(len(tabs))
        instruction = " ".join(rng.choice(words) for _ in range(rng.randint(2, 9))).capitalize() + "."
        task = Task(id=f"warm{i}", start_url=urls[0], instruction=instruction)
        turns = rng.choice([0, 0, 1, 2])
        history = [StepRecord(n, WARM_START_RESPONSE, [], rng.sample(feedback, rng.randint(1, 2)), urls[0], "0" * 64)
                   for n in range(turns)]
        obs = Observation(buffer.getvalue(), urls[active], tabs, active,
                          rng.sample(feedback, rng.randint(1, 2)) if turns else [], turns)
        prompt = encode_qwen_prompt(builder.build(task, history, obs), tokenizer, image_processor)
        examples.append({"prompt": prompt, "response": response})
    return examples


def _warm_start(model: Any, tokenizer: Any, image_processor: Any, steps: int, seed: int,
                progress: TrainingProgress | None = None) -> list[float]:
    """Plain SFT on the response tokens of real prompts; returns the loss of each step."""
    import torch

    from weblica.policy.backends.hf import model_inputs

    examples = _warm_start_examples(tokenizer, image_processor, seed)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2)
    losses = []
    model.train()
    if progress is not None:
        progress.start(steps)
    for step in range(steps):
        example = examples[step % len(examples)]
        prompt, response = example["prompt"], example["response"]
        inputs = model_inputs(model, prompt.input_ids + response, prompt.pixel_values, prompt.image_grid_thw, "cpu")
        labels = torch.full_like(inputs["input_ids"], -100)
        labels[0, len(prompt.input_ids):] = inputs["input_ids"][0, len(prompt.input_ids):]
        loss = model(**inputs, labels=labels).loss
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(float(loss.detach()))
        if progress is not None:
            progress.step(step + 1, {"loss": losses[-1]})
    return losses
