"""The slime adapter against slime's contract (tests/framework_contracts/slime_types.py, from THUDM/slime
624b824a): real episodes in Chromium, the tiny model behind an SGLang-style /generate server."""
import asyncio
import json
import types

import pytest
import torch

from framework_contracts import slime_types as st
from scripted_rollouts import ANSWER, NO_ANSWER, SCROLL, ScriptedTokenBackend
from weblica.env.task import Task
from weblica.integrations import slime
from tests_helpers import run


def any_task(site, i=0):
    return Task.from_dict({"id": f"rl-{i}", "start_url": site.url + "/", "instruction": "Finish with any answer.",
                           "max_steps": 2, "checks": [{"type": "answer_match", "expected": ".", "mode": "regex"}]})


def args_for(**kw):
    base = dict(n_samples_per_prompt=3, rollout_batch_size=1, rewards_normalization=True,
                grpo_std_normalization=True, reward_key=None, seed=1)
    base.update(kw)
    return types.SimpleNamespace(**base)


# the group's episodes, in the order they first reach the engine: scroll then answer (two turns, reward 1),
# answer "" (reward 0: the check wants a character), answer (reward 1). The tiny model's weights give every
# forced token its log-prob; what it would sample decides nothing (tests/scripted_rollouts.py)
SCRIPTS = ([SCROLL, ANSWER], [NO_ANSWER], [ANSWER])


@pytest.fixture(scope="module")
def played_group(site):
    """One slime group (3 samples of one prompt) played through slime's generate_and_rm path."""
    from fixtures_models import tiny_checkpoint
    from token_server import ServeInThread, create_sglang_app
    from weblica.policy.backends.hf import HFBackend

    torch.set_num_threads(1)
    backend = HFBackend(tiny_checkpoint())
    server = ServeInThread(create_sglang_app(ScriptedTokenBackend(backend, SCRIPTS)))
    args = args_for(hf_checkpoint=str(tiny_checkpoint()), weblica_engine_url=server.url)
    row = slime.prompt_row(any_task(site))
    template = st.dataset_sample(json.loads(json.dumps(row)), "prompt", "metadata", processor_loaded=True)

    async def group():
        samples = []
        for i in range(3):  # the data source copies the prompt sample n times, numbering them
            s = st.Sample(prompt=template.prompt, metadata=json.loads(json.dumps(template.metadata)))
            s.group_index, s.index = 0, i
            samples.append(s)
        try:
            return await asyncio.gather(*(st.generate_and_rm(args, s, {"temperature": 1.0, "max_new_tokens": 64},
                                                             slime.generate, slime.reward_func) for s in samples))
        finally:
            for rt in slime._RUNTIMES.values():
                await rt.host.close()
            slime._RUNTIMES.clear()

    try:
        return args, run(group()), backend
    finally:
        server.close()


def test_prompt_rows_are_message_lists_as_slime_requires_with_a_vl_processor(site):
    row = slime.prompt_row(any_task(site))
    sample = st.dataset_sample(row, "prompt", "metadata", processor_loaded=True)
    assert slime.task_of(sample).id == "rl-0"
    # the old layout (--input-key task, the task JSON as the prompt) is refused by slime's Dataset
    with pytest.raises(AssertionError, match="prompt must be a list"):
        st.dataset_sample({"task": json.dumps(any_task(site).to_dict())}, "task", "metadata", processor_loaded=True)
    with pytest.raises(slime.SlimeDataError, match="metadata\\['task'\\]"):
        slime.task_of(st.Sample(prompt=row["prompt"], index=3))


def test_generate_fans_out_turns_slime_accepts(played_group):
    args, group, backend = played_group
    assert len(group) == 3 and all(isinstance(ep, list) and ep for ep in group)  # list[list[Sample]]
    st.validate_rollout_id_annotated([group])  # one rollout batch of one group: raises on an unset rollout_id
    pad = backend.tokenizer.convert_tokens_to_ids("<|image_pad|>")
    merge = backend.image_processor.merge_size
    for i, episode in enumerate(group):
        assert {t.rollout_id for t in episode} == {i}
        assert len({t.metadata["episode_id"] for t in episode}) == 1
        for t in episode:
            assert t.response_length == len(t.loss_mask) == len(t.rollout_log_probs) > 0
            mm = t.multimodal_train_inputs
            assert mm is not None and set(mm) == {"pixel_values", "image_grid_thw"}
            # every image-pad token of the prompt has its pixels: Qwen-VL's forward needs the counts equal
            assert t.tokens.count(pad) == int(mm["image_grid_thw"].prod(-1).sum()) // merge ** 2 > 0
            assert mm["pixel_values"].shape[0] == int(mm["image_grid_thw"].prod(-1).sum())
            assert t.reward == t.metadata["episode_reward"] and t.status in (
                st.Sample.Status.COMPLETED, st.Sample.Status.TRUNCATED)
    # the scripts: one episode of two turns and two of one, all ended by done; rewards 1, 0, 1
    assert sorted((len(ep), ep[0].reward) for ep in group) == [(1, 0.0), (1, 1.0), (2, 1.0)]
    assert all(t.metadata["termination_reason"] == "done" for ep in group for t in ep)


def test_filter_and_post_process_on_real_groups(played_group):
    args, group, _ = played_group
    rewards = [ep[0].reward for ep in group]
    assert slime.dynamic_filter(args, group) is True  # the scripted rewards differ
    same = [ep for ep in group if ep[0].reward == rewards[0]]
    assert slime.dynamic_filter(args, same) is False
    data = st.convert_samples_to_train_data(args, st.flatten([group]), post_process=slime.reward_post_process)
    assert len(data["rewards"]) == sum(len(ep) for ep in group)
    assert len(data["multimodal_train_inputs"]) == len(data["tokens"])
    per_episode = {}
    for rid, adv in zip(data["rollout_ids"], data["rewards"]):
        per_episode.setdefault(rid, set()).add(round(adv, 6))
    assert all(len(v) == 1 for v in per_episode.values())  # every turn gets its episode's advantage
    # normalised over the group's episodes (1, 0, 1): the failure below the mean, the successes above
    by_reward = {ep[0].reward: per_episode[ep[0].rollout_id] for ep in group}
    assert max(by_reward[0.0]) < 0 < min(by_reward[1.0])


def sample(group, index, reward, turns, removed=False):
    return [st.Sample(group_index=group, index=index, rollout_id=index, reward=reward, response_length=1,
                      loss_mask=[1], rollout_log_probs=[-0.5], remove_sample=removed,
                      metadata={"episode_reward": reward, "removed": removed}) for _ in range(turns)]


def test_post_process_normalizes_per_group_over_episodes():
    # two groups of 3 episodes with different turn counts: slime's default sees 9 != 2*3 samples and
    # normalizes over the whole batch; the weblica post-process normalizes each group over its episodes
    groups = [[sample(0, 0, 1.0, 3), sample(0, 1, 0.0, 1), sample(0, 2, 0.0, 1)],
              [sample(1, 3, 1.0, 2), sample(1, 4, 1.0, 1), sample(1, 5, 0.0, 1)]]
    flat = st.flatten([groups])
    args = args_for(n_samples_per_prompt=3, rollout_batch_size=2)
    _, default = st.default_post_process_rewards(args, flat)
    raw, ours = slime.reward_post_process(args, flat)
    assert raw == [s.reward for s in flat]
    by_episode = {s.rollout_id: a for s, a in zip(flat, ours)}
    import statistics
    for g in groups:
        r = [ep[0].reward for ep in g]
        mean, std = statistics.fmean(r), statistics.stdev(r)
        for ep in g:
            assert by_episode[ep[0].rollout_id] == pytest.approx((ep[0].reward - mean) / (std + 1e-6))
    # the default pools both groups and weighs episodes by their turn count: not the same advantages
    assert [by_episode[s.rollout_id] for s in flat] != pytest.approx(default, abs=1e-3)
    _, plain = slime.reward_post_process(args_for(rewards_normalization=False), flat)
    assert plain == raw


def test_removed_episodes_leave_the_group_statistics_and_get_zero():
    group = [sample(0, 0, 1.0, 2), sample(0, 1, 0.0, 1), sample(0, 2, 0.0, 1, removed=True)]
    flat = st.flatten([[group]])
    _, adv = slime.reward_post_process(args_for(), flat)
    by_episode = {s.rollout_id: a for s, a in zip(flat, adv)}
    assert by_episode[2] == 0.0
    assert by_episode[0] == pytest.approx(0.5 / (2 ** -0.5 + 1e-6))  # mean 0.5, std 0.707 over the two kept
    assert slime.dynamic_filter(args_for(), group) is True
    # one real reward left beside a removed one: nothing to compare, the group goes
    assert slime.dynamic_filter(args_for(), [sample(0, 0, 1.0, 1), sample(0, 1, 0.0, 1, removed=True)]) is False
    # the data conversion zeroes a removed sample's loss mask, as slime does
    data = st.convert_samples_to_train_data(args_for(), flat, post_process=slime.reward_post_process)
    assert data["loss_masks"][-1] == [0]


def test_the_contract_catches_the_old_bugs():
    # turns copied from their sample without a rollout_id are rejected by slime's validation
    turns = [st.Sample(index=0), st.Sample(index=0)]
    with pytest.raises(AssertionError, match="rollout_id is unset"):
        st.validate_rollout_id_annotated([[turns]])
    # the old filter read .metadata on each group member, which is a list once turns fan out
    with pytest.raises(AttributeError):
        [s.metadata for s in [turns]]
    assert slime.dynamic_filter(args_for(), [sample(0, 0, 1.0, 2), sample(0, 1, 0.0, 2)]) is True


def test_an_episode_that_never_reaches_the_model_is_one_removed_placeholder():
    from fixtures_models import tiny_checkpoint

    task = Task.from_dict({"id": "dead", "start_url": "http://127.0.0.1:9/", "instruction": "x", "max_steps": 2,
                           "checks": [{"type": "answer_match", "expected": ".", "mode": "regex"}]})
    args = args_for(hf_checkpoint=str(tiny_checkpoint()), weblica_engine_url="http://127.0.0.1:9")
    row = slime.prompt_row(task)
    s = st.Sample(group_index=0, index=7, prompt=row["prompt"], metadata=row["metadata"])

    async def play():
        try:
            return await st.generate_and_rm(args, s, {"temperature": 1.0}, slime.generate, slime.reward_func)
        finally:
            for rt in slime._RUNTIMES.values():
                await rt.host.close()
            slime._RUNTIMES.clear()

    (out,) = run(play())
    assert out.remove_sample and out.status == st.Sample.Status.FAILED and out.rollout_id == 7
    assert out.metadata["removed"] and out.metadata["termination_reason"] == "env_error"
    data = st.convert_samples_to_train_data(args, [out, *sample(0, 8, 1.0, 1)], post_process=slime.reward_post_process)
    assert data["loss_masks"][0] == [0] and data["rewards"][0] == 0.0
