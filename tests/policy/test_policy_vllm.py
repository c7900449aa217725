"""The vLLM backend against stand-ins of `vllm.LLM` with vLLM 0.33's signatures (vLLM needs a GPU):
concurrent episodes become one `generate` call, sampling bans the vision tokens and uses the log-prob
mode the trainer recomputes, and weight sync goes by method name into a worker extension that loads
the weights into every worker's model, then resets the caches."""
import asyncio
import importlib
from types import SimpleNamespace

import pytest
import torch
from fixtures_models import make_obs, make_task, tiny_checkpoint

from weblica.policy.backends.base import BackendError, SamplingOptions
from weblica.policy.backends.batching import BatchingQueue
from weblica.policy.backends.hf import VISION_TOKENS, banned_token_ids, load_image_processor
from weblica.policy.backends.vllm_engine import LOGPROBS_MODE, VLLMBackend, engine_options
from weblica.policy.backends.vllm_weights import EXTENSION, LOAD_METHOD, WeblicaWorkerExtension
from weblica.policy.context import ContextBuilder
from weblica.policy.coords import frame_for_model_type
from weblica.train.config import ConfigError, GRPOConfig, config_from_dict


class TinyModel(torch.nn.Module):
    """Two layers, and `load_weights` as vLLM models have it (an iterable of (name, tensor))."""

    def __init__(self) -> None:
        super().__init__()
        self.embed = torch.nn.Embedding(16, 8)
        self.head = torch.nn.Linear(8, 16)

    def load_weights(self, weights):
        params = dict(self.named_parameters())
        loaded = set()
        for name, tensor in weights:
            params[name].data.copy_(tensor)
            loaded.add(name)
        return loaded


class WorkerBase:
    """What the extension relies on in vLLM's GPU worker: `model_runner.model` and `device`."""

    def __init__(self) -> None:
        self.device = torch.device("cpu")
        self.model_runner = SimpleNamespace(model=TinyModel())


class RecordingLLM:
    """`vllm.LLM`'s methods used by the backend, with 0.33's signatures. `collective_rpc` refuses
    anything but a method name, as the msgpack channel does without insecure serialization, and runs
    the named method on two workers built the way vLLM builds them (the extension mixed in)."""

    def __init__(self) -> None:
        worker_cls = type("Worker", (WorkerBase, WeblicaWorkerExtension), {})
        self.workers = [worker_cls(), worker_cls()]
        self.batches: list[list[dict]] = []
        self.params: list = []
        self.events: list = []
        self.llm_engine = SimpleNamespace(reset_encoder_cache=lambda: self.events.append("reset_encoder_cache"))

    def generate(self, prompts, sampling_params=None, *, use_tqdm=True, lora_request=None, priority=None,
                 tokenization_kwargs=None, mm_processor_kwargs=None):
        self.batches.append(list(prompts))
        self.params.append(list(sampling_params))
        outs = []
        for prompt, params in zip(prompts, sampling_params):
            token = 7 + params.kwargs["seed"] % 5
            outs.append(SimpleNamespace(prompt_token_ids=list(prompt["prompt_token_ids"]) + [0], outputs=[
                SimpleNamespace(token_ids=[token, 2], text="x<|im_end|>", finish_reason="stop",
                                logprobs=[{token: SimpleNamespace(logprob=-0.5)}, {2: SimpleNamespace(logprob=-0.25)}])]))
        return outs

    def collective_rpc(self, method, timeout=None, args=(), kwargs=None):
        if not isinstance(method, str):
            raise TypeError(f"Object of type {type(method)} is not serializable. Set "
                            "VLLM_ALLOW_INSECURE_SERIALIZATION=1 to allow fallback to pickle-based serialization.")
        self.events.append(("rpc", method, args))
        return [getattr(worker, method)(*args, **(kwargs or {})) for worker in self.workers]

    def sleep(self, level=1, mode="abort"):
        self.events.append(("sleep", level))

    def wake_up(self, tags=None):
        self.events.append(("wake_up", tags))
        return tags is None

    def reset_prefix_cache(self, reset_running_requests=False, reset_connector=False):
        self.events.append("reset_prefix_cache")
        return True

    def reset_mm_cache(self):
        self.events.append("reset_mm_cache")


class Params:
    """Records the keyword arguments the backend gives `vllm.SamplingParams`."""

    def __init__(self, **kwargs):
        self.kwargs = kwargs


@pytest.fixture(scope="module")
def parts():
    from transformers import AutoTokenizer

    path = tiny_checkpoint(0)
    return AutoTokenizer.from_pretrained(path), load_image_processor(path)


def backend_over(llm, parts, sampling=None, **kwargs):
    tokenizer, image_processor = parts
    backend = VLLMBackend.__new__(VLLMBackend)
    backend._attach("vllm:test", llm, Params, tokenizer, image_processor, sampling or SamplingOptions(),
                    frame_for_model_type("qwen3_vl"), **kwargs)
    return backend


def test_concurrent_episodes_are_one_generate_call_with_banned_vision_tokens(parts):
    llm = RecordingLLM()
    backend = backend_over(llm, parts)
    builder = ContextBuilder(backend.frame)
    conversations = [builder.build(make_task(f"Task {i}."), [], make_obs(color=(i * 40, 0, 0))) for i in range(6)]

    async def episodes():
        return await asyncio.gather(*(backend.generate(c, seed=100 + i) for i, c in enumerate(conversations)))

    generations = asyncio.run(episodes())
    assert len(llm.batches) == 1 and len(llm.batches[0]) == 6  # no lock serializing them
    for i, (generation, prompt) in enumerate(zip(generations, llm.batches[0])):
        assert generation.token_ids == [7 + (100 + i) % 5, 2] and generation.logprobs == [-0.5, -0.25]
        assert generation.prompt_token_ids == prompt["prompt_token_ids"] + [0]  # vLLM's expanded ids
        assert len(prompt["multi_modal_data"]["image"]) == 1
    params = llm.params[0][0].kwargs
    assert params["bad_words"] == list(VISION_TOKENS) and params["logprobs"] == 0 and params["top_k"] == 0
    assert params["seed"] == 100 and params["skip_special_tokens"] is False
    assert backend.banned_ids == banned_token_ids(parts[0])  # the trainer masks the same ids
    # a later round is a new call; a request whose prompt cannot be encoded fails alone
    async def with_bad_one():
        return await asyncio.gather(backend.generate(conversations[0], seed=1),
                                    backend.generate([SimpleNamespace(role="user", parts=None)], seed=2),
                                    return_exceptions=True)

    good, bad = asyncio.run(with_bad_one())
    assert good.token_ids == [8, 2] and isinstance(bad, Exception)
    assert [len(b) for b in llm.batches] == [6, 1]
    backend.close()


def test_engine_options_and_training_sampling(parts):
    options = engine_options(sleep_level=1)
    assert options["logprobs_mode"] == LOGPROBS_MODE == "processed_logprobs"
    module, _, name = options["worker_extension_cls"].rpartition(".")
    assert getattr(importlib.import_module(module), name) is WeblicaWorkerExtension and EXTENSION == options["worker_extension_cls"]
    assert options["enable_sleep_mode"] is True and "enable_sleep_mode" not in engine_options(0)
    for bad in (SamplingOptions(top_p=0.9), SamplingOptions(top_k=20)):
        with pytest.raises(BackendError, match="top_p: 1.0 and no top_k"):
            backend_over(RecordingLLM(), parts, bad, for_training=True)
    backend_over(RecordingLLM(), parts, SamplingOptions(top_p=0.9)).close()  # evaluation may truncate
    with pytest.raises(ConfigError, match="top_p"):
        config_from_dict(GRPOConfig, {"rollout_backend": "vllm", "top_p": 0.95})


def test_sync_by_method_name_loads_every_worker_and_resets_caches(parts):
    llm = RecordingLLM()
    backend = backend_over(llm, parts, sleep_level=1, bucket_bytes=200)  # small buckets: several files
    trainer = TinyModel()
    with torch.no_grad():
        for p in trainer.parameters():
            p.add_(1.0)
    trainer.embed.weight.requires_grad_(False)  # frozen: never changes, not sent
    with pytest.raises(TypeError, match="not serializable"):
        llm.collective_rpc(lambda worker: None)  # what the old sync did
    backend.release_memory()
    with pytest.raises(BackendError, match="asleep"):
        asyncio.run(backend.generate(ContextBuilder(backend.frame).build(make_task(), [], make_obs()), seed=0))
    sent = backend.sync_weights(trainer)
    assert sent == 2  # head.weight, head.bias
    rpcs = [e for e in llm.events if isinstance(e, tuple) and e[0] == "rpc"]
    assert len(rpcs) == 2 and all(e[1] == LOAD_METHOD and isinstance(e[2][0], str) for e in rpcs)
    order = [e if isinstance(e, str) else e[0] for e in llm.events]
    assert order == ["sleep", "wake_up", "rpc", "rpc", "wake_up", "reset_prefix_cache", "reset_mm_cache",
                     "reset_encoder_cache"]
    assert llm.events[0] == ("sleep", 1) and llm.events[1] == ("wake_up", ["weights"])
    for worker in llm.workers:
        model = worker.model_runner.model
        assert torch.equal(model.head.weight, trainer.head.weight) and torch.equal(model.head.bias, trainer.head.bias)
        assert not torch.equal(model.embed.weight, trainer.embed.weight)
    assert not any(__import__("os").path.exists(e[2][0]) for e in rpcs)  # bucket files are removed
    # level 2 dropped the engine's weights: every tensor goes, frozen ones included
    deep = backend_over(RecordingLLM(), parts, sleep_level=2)
    deep.release_memory()
    assert deep.sync_weights(trainer) == 3
    assert torch.equal(deep.llm.workers[0].model_runner.model.embed.weight, trainer.embed.weight)
    # without sleep mode the sync neither sleeps nor wakes, and still resets the caches
    plain = backend_over(RecordingLLM(), parts)
    plain.release_memory()
    plain.sync_weights(trainer)
    assert [e if isinstance(e, str) else e[0] for e in plain.llm.events] == [
        "rpc", "reset_prefix_cache", "reset_mm_cache", "reset_encoder_cache"]


def test_batching_queue_reports_engine_failures_to_every_waiter():
    def broken(requests):
        raise RuntimeError("engine died")

    queue = BatchingQueue(broken)

    async def many():
        return await asyncio.gather(*(queue.submit(i) for i in range(3)), return_exceptions=True)

    results = asyncio.run(many())
    assert [str(r) for r in results] == ["engine died"] * 3
    queue.close()


def test_sync_fails_loudly_when_a_worker_loads_less_than_it_was_sent(parts, tmp_path):
    from weblica.policy.backends.vllm_weights import sync_weights

    class Short(RecordingLLM):
        def collective_rpc(self, method, timeout=None, args=(), kwargs=None):
            return [n - 1 for n in super().collective_rpc(method, timeout, args, kwargs)]

    with pytest.raises(RuntimeError, match="loaded \\[1, 1\\] of the 2 tensors"):
        sync_weights(Short(), TinyModel().head.named_parameters(prefix="head"), directory=tmp_path)
    assert not list(tmp_path.iterdir())  # the bucket file is gone either way


def test_grpo_trainer_sleeps_the_engine_for_each_update_and_syncs_after(site, tmp_path, monkeypatch):
    """The trainer's side of the vLLM contract, with a stand-in engine over its own copy of the tiny
    model: every iteration is rollouts -> release_memory -> update -> sync_weights, and the synced copy
    holds the trainer's new weights. The stand-in answers each group once right and once with an empty
    answer (forced responses with its copy's log-probs, tests/scripted_rollouts.py), so every update has
    a signal and really moves the weights, whatever the tiny model would sample."""
    import weblica.policy.backends.vllm_engine as vllm_engine
    from weblica.env.task import Task, save_tasks
    from weblica.policy.backends.hf import HFBackend
    from weblica.train.grpo import GRPOTrainer

    events = []

    class StandIn(HFBackend):
        def __init__(self, path, sampling, *, sleep_level, for_training, **engine_args):
            assert for_training and sleep_level == 1 and engine_args["gpu_memory_utilization"] == 0.35
            super().__init__(path, sampling, device="cpu", dtype="float32")

        answered = 0

        async def generate(self, messages, seed):
            from scripted_rollouts import ANSWER, NO_ANSWER, forced

            StandIn.answered += 1  # one turn an episode (max_steps 1): the group's two get one script each
            return await forced(self, messages, ANSWER if StandIn.answered % 2 else NO_ANSWER)

        def release_memory(self):
            events.append("release")

        def sync_weights(self, model):
            events.append("sync")
            self.model.load_state_dict(model.state_dict())
            self.synced_from = model
            return 1

    monkeypatch.setattr(vllm_engine, "VLLMBackend", StandIn)
    torch.set_num_threads(1)
    tasks = tmp_path / "tasks.jsonl"
    save_tasks([Task.from_dict({"id": "any", "start_url": site.url + "/", "instruction": "Finish with any answer.",
                                "max_steps": 1, "checks": [{"type": "answer_match", "expected": ".", "mode": "regex"}]})],
               tasks)
    trainer = GRPOTrainer(GRPOConfig(model=str(tiny_checkpoint()), tasks=str(tasks), output_dir=str(tmp_path / "out"),
                                     rollout_backend="vllm", device="cpu", iterations=2, groups_per_batch=1,
                                     group_size=2, max_new_tokens=24, temperature=1.5, dynamic_sampling=False,
                                     mini_batches=1, ppo_epochs=1, parallel=2, save_every=0, learning_rate=1e-2))
    start = [p.detach().clone() for p in trainer.trainable.model.parameters()]
    summary = trainer.train()
    assert events == ["release", "sync", "release", "sync"]
    assert summary["last"]["reward"] == 0.5 and StandIn.answered == 4  # 2 iterations of a scripted 1 and 0
    assert any(not torch.equal(a, p) for a, p in zip(start, trainer.trainable.model.parameters()))  # it moved
    for mine, theirs in zip(trainer.backend.model.parameters(), trainer.trainable.model.parameters()):
        assert torch.equal(mine, theirs)
    assert all(p.grad is None for p in trainer.trainable.model.parameters())  # freed before the rollouts
