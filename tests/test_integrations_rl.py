"""slime and verl adapters driven against weblica environments with a real (tiny) generation engine."""
import asyncio
import json
import types

import pytest
import torch

from weblica.env.task import Task
from weblica.policy.backends.hf import HFBackend
from fixtures_models import tiny_checkpoint
from token_server import ServeInThread, VerlStyleServerManager, create_sglang_app
from tests_helpers import run


def any_task(site, i=0):
    return Task.from_dict({"id": f"rl-{i}", "start_url": site.url + "/", "instruction": "Finish with any answer.",
                           "max_steps": 2, "checks": [{"type": "answer_match", "expected": ".", "mode": "regex"}]})


@pytest.fixture(scope="module")
def backend():
    torch.set_num_threads(1)
    return HFBackend(tiny_checkpoint())


def test_slime_generate_reward_and_filter(site, backend):
    from weblica.integrations import slime

    server = ServeInThread(create_sglang_app(backend))
    try:
        args = types.SimpleNamespace(hf_checkpoint=str(tiny_checkpoint()), weblica_engine_url=server.url, seed=1)
        task = any_task(site)

        async def group():
            try:  # slime runs a group's samples concurrently on one event loop
                return await asyncio.gather(*(slime.generate(
                    args, slime.Sample(index=i, group_index=0, prompt=json.dumps(task.to_dict())),
                    {"temperature": 1.0, "max_new_tokens": 64}) for i in range(3)))
            finally:
                for rt in slime._RUNTIMES.values():
                    await rt.host.close()
                slime._RUNTIMES.clear()

        samples = run(group())
    finally:
        server.close()
    turns = [t for group in samples for t in group]
    assert turns and all(t.response_length == len(t.loss_mask) == len(t.rollout_log_probs) > 0 for t in turns)
    for t in turns:
        prompt_len = len(t.tokens) - t.response_length
        assert prompt_len > 0 and t.metadata["episode_id"].startswith("ep-")
        assert run(slime.reward_func(args, t)) == t.metadata["episode_reward"]
        assert t.status in (slime.Sample.Status.COMPLETED, slime.Sample.Status.TRUNCATED)
    # the warm-started tiny model answers click + done: the episode ends done with reward 1
    assert any(t.metadata["termination_reason"] == "done" and t.reward == 1.0 for t in turns)
    rewards = {t.metadata["episode_id"]: t.reward for t in turns}
    assert slime.dynamic_filter(args, turns) == (len(set(rewards.values())) > 1)
    same = [t for t in turns if t.reward == turns[0].reward]
    assert slime.dynamic_filter(args, same) is False


def test_verl_agent_loop(site, backend):
    from weblica.env.browser_env import WebEnv
    from weblica.integrations.verl import REGISTRY, WeblicaAgentLoop
    from weblica.policy.coords import CoordinateFrame

    from weblica.integrations import verl as verl_module
    assert verl_module.WeblicaAgentLoop is WeblicaAgentLoop and REGISTRY.get("weblica_agent", WeblicaAgentLoop)

    manager = VerlStyleServerManager(backend)

    async def env_factory(task):
        return WebEnv()

    loop = WeblicaAgentLoop(None, manager, backend.tokenizer, None, env_factory=env_factory,
                            image_processor=backend.image_processor, frame=CoordinateFrame.for_convention("relative1000"))
    out = run(loop.run({"temperature": 1.0, "max_new_tokens": 64}, extra_info={"task": any_task(site).to_dict()}))
    assert out.num_turns == manager.calls >= 1
    assert len(out.response_ids) == len(out.response_mask) == len(out.response_logprobs)
    assert sum(out.response_mask) > 0 and out.response_mask[0] == 1
    if out.num_turns > 1:  # environment turns in between are masked out
        assert 0 in out.response_mask
    assert len(out.multi_modal_data["image"]) == out.num_turns
    assert out.extra_fields["termination_reason"] in ("done", "max_steps", "format_error")
    assert out.reward_score == (1.0 if out.extra_fields["termination_reason"] == "done" else out.reward_score)
