"""What a first GPU run needs of the vLLM engine and the data-parallel path (issue 40, point 1), on the CPU
against stand-ins of vLLM 0.33's `LLM` (tests/policy/test_policy_vllm.py): the engine gets a context limit, its
share of the GPU, room for the kept screenshots at the viewport's size and CUDA graphs; PyTorch's cached
blocks go back to the GPU before the engine wakes; /dev/shm is checked for room with a fallback; ranks sum
bf16 gradients in fp32."""
import warnings
from pathlib import Path

import pytest
import torch
from test_policy_vllm import RecordingLLM, TinyModel, backend_over, parts  # noqa: F401  (parts: a fixture)

from weblica.policy.backends import vllm_weights
from weblica.policy.backends.vllm_engine import training_engine_args
from weblica.train.config import GRPOConfig
from weblica.train.grpo import vllm_engine_args


def test_engine_args_come_from_the_recipe():
    args = vllm_engine_args(GRPOConfig(rollout_backend="vllm", keep_images=3, dtype="bfloat16"))
    assert args == {"max_model_len": 16384, "gpu_memory_utilization": 0.35, "enforce_eager": False,
                    "dtype": "bfloat16",
                    "limit_mm_per_prompt": {"image": {"count": 3, "width": 1280, "height": 720}}}
    custom = vllm_engine_args(GRPOConfig(rollout_backend="vllm", max_model_len=32768, gpu_memory_utilization=0.5,
                                         limit_mm_per_prompt=5, enforce_eager=True))
    assert (custom["max_model_len"], custom["gpu_memory_utilization"], custom["enforce_eager"]) == (32768, 0.5, True)
    assert custom["limit_mm_per_prompt"]["image"]["count"] == 5
    # a model that reads the accessibility tree gets no image budget at all
    assert vllm_engine_args(GRPOConfig(obs="axtree"))["limit_mm_per_prompt"]["image"]["count"] == 0
    assert training_engine_args(8192, 0.3, 1, image_size=(800, 600))["limit_mm_per_prompt"]["image"]["width"] == 800


def test_cached_blocks_go_back_to_the_gpu_before_the_engine_wakes(parts, monkeypatch):  # noqa: F811
    llm = RecordingLLM()
    # CUDA as the trainer leaves it after an update: started, with blocks cached by PyTorch's allocator
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "is_initialized", lambda: True)
    monkeypatch.setattr(torch.cuda, "synchronize", lambda *a: None)
    monkeypatch.setattr(torch.cuda, "empty_cache", lambda: llm.events.append("empty_cache"))
    backend = backend_over(llm, parts, sleep_level=1)
    backend.release_memory()
    backend.sync_weights(TinyModel())
    order = [e if isinstance(e, str) else e[0] for e in llm.events]
    assert order[:4] == ["sleep", "empty_cache", "wake_up", "rpc"]  # freed before the weights come back
    assert llm.events[2] == ("wake_up", ["weights"])
    last_wake = len(order) - 1 - order[::-1].index("wake_up")
    assert order[last_wake - 1] == "empty_cache" and llm.events[last_wake] == ("wake_up", None)  # and before the KV cache
    backend.close()


def test_shared_memory_is_checked_for_room_with_a_fallback(tmp_path, monkeypatch):
    shm, disk = tmp_path / "shm", tmp_path / "disk"
    shm.mkdir()
    disk.mkdir()
    room = {shm: 64 * 2 ** 20, disk: 100 * 2 ** 30}  # Docker's default /dev/shm: 64 MB
    monkeypatch.setattr(vllm_weights, "free_bytes", lambda d: room[Path(d)])
    with pytest.warns(RuntimeWarning, match=r"64 MiB free .* --shm-size"):
        assert vllm_weights.shared_memory_dir(2 ** 30, shm, disk) == disk
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # room enough: /dev/shm, and no warning
        assert vllm_weights.shared_memory_dir(16 * 2 ** 20, shm, disk) == shm
    room[disk] = 10 * 2 ** 20
    with pytest.raises(vllm_weights.SharedMemoryError, match="--shm-size"):
        vllm_weights.shared_memory_dir(2 ** 30, shm, disk)
    room[disk] = 100 * 2 ** 30
    with pytest.warns(RuntimeWarning, match="not a writable directory"):
        assert vllm_weights.shared_memory_dir(2 ** 30, tmp_path / "absent", disk) == disk


def test_buckets_hold_at_most_their_size_or_one_larger_tensor(tmp_path):
    from safetensors import safe_open

    weights = [("a", torch.zeros(100)), ("b", torch.zeros(100)), ("big", torch.zeros(1000)), ("c", torch.zeros(10))]
    files = []
    for path, count in vllm_weights.write_buckets(weights, tmp_path, bucket_bytes=1000):
        with safe_open(str(path), framework="pt") as handle:
            files.append(sorted(handle.keys()))
        path.unlink()
    assert files == [["a", "b"], ["big"], ["c"]]  # "big" (4000 bytes) alone, not on top of a and b


def test_data_parallel_ranks_sum_bf16_gradients_in_fp32(monkeypatch):
    import torch.distributed as dist

    from weblica.train.distributed import World

    reduced = []

    def all_reduce(tensor, op=None):  # two ranks holding the same gradients
        reduced.append(tensor.dtype)
        tensor.mul_(2)

    monkeypatch.setattr(dist, "all_reduce", all_reduce)
    params = [torch.nn.Parameter(torch.ones(4, dtype=torch.bfloat16)) for _ in range(2)]
    for p, g in zip(params, (1.0 + 2 ** -8, 3.0)):
        p.grad = torch.full((4,), g, dtype=torch.bfloat16)
    World(rank=0, size=2).sum_gradients(params)
    assert reduced[0] == torch.int32 and reduced[1:] == [torch.float32]  # the held-flags, then the gradients
    assert params[1].grad.dtype == torch.bfloat16 and params[1].grad.tolist() == [6.0] * 4


def test_a_prompt_vllm_refuses_fails_its_episode_alone(parts):  # noqa: F811
    import asyncio

    from fixtures_models import make_obs, make_task

    from weblica.policy.backends.base import BackendError
    from weblica.policy.context import ContextBuilder

    class Refusing(RecordingLLM):
        """vLLM validates every request first and refuses the whole call for one too long (max_model_len)."""

        limit = 0

        def generate(self, prompts, sampling_params=None, **kwargs):
            for prompt in prompts:
                if len(prompt["prompt_token_ids"]) > self.limit:
                    raise ValueError(f"The decoder prompt (length {len(prompt['prompt_token_ids'])}) is longer than "
                                     f"the maximum model length of {self.limit}.")
            return super().generate(prompts, sampling_params, **kwargs)

    llm = Refusing()
    backend = backend_over(llm, parts)
    builder = ContextBuilder(backend.frame)
    short = builder.build(make_task("Go."), [], make_obs())
    long = builder.build(make_task("Go. " * 200), [], make_obs())
    llm.limit = len(backend.encode(short).input_ids)

    async def together():
        return await asyncio.gather(backend.generate(short, seed=1), backend.generate(long, seed=2),
                                    backend.generate(short, seed=3), return_exceptions=True)

    first, refused, third = asyncio.run(together())
    assert first.token_ids and third.token_ids  # the others still sampled
    assert isinstance(refused, BackendError) and "max_model_len" in str(refused) and "length" in str(refused)
    backend.close()
