"""Fresh instances per episode seed (weblica/synth/instances.py): one site, several validated instances of
its data; the episode seed picks one, the gold follows it, the same seed gives the same bytes."""
from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from fixtures_sites import instance_family

from weblica.env.task import Task, episode_task, load_tasks
from weblica.serve.app import INSTANCE_HEADER, ServeConfig, create_app
from weblica.synth.instances import instance_root, synthesize_instances, write_instance
from weblica.synth.spec import sample_spec

K = 3


@pytest.fixture(scope="module")
def family(tmp_path_factory):
    spec = sample_spec(3, skill="search")
    # without pop-ups: the family test_env_server_instances plays over /step (the oracle's raw actions),
    # built once for both files; pop-ups are validated on instances nowhere else than they are on sites
    spec.distractors = {"sticky_header": False, "lazy_loading": False, "overlays": {}}
    _, bundle = instance_family(tmp_path_factory, spec, K)
    return spec, bundle, load_tasks(bundle / "tasks.jsonl")


def answer_task(tasks: list[Task]) -> Task:
    return next(t for t in tasks if any(c.type == "answer_match" for c in t.checks) and t.metadata.get("instances"))


def test_every_kept_task_has_validated_members_on_other_instances(family):
    spec, bundle, tasks = family
    assert len(tasks) >= 10
    with_all = [t for t in tasks if len(t.metadata.get("instances", [])) == K]
    assert len(with_all) >= len(tasks) - 2
    for k in range(1, K):
        meta = json.loads(next(instance_root(bundle, k).glob("*/site.json")).read_text())
        assert meta["instance"] == k and meta["spec"]["host"] == spec.host and meta["name"] == json.loads(
            (bundle / "site.json").read_text())["name"]  # the same site, other data
        kept = {(t.instruction, json.dumps([c.to_dict() for c in t.checks], sort_keys=True))
                for t in load_tasks(next(instance_root(bundle, k).glob("*/tasks.jsonl")))}
        for task in with_all:  # a member is one validation kept on that instance (matched by family, not id:
            member = task.metadata["instances"][k]  # a draft skipped on other data shifts the ids)
            assert (member["instruction"], json.dumps(member["checks"], sort_keys=True)) in kept and member["oracle"]


def test_two_episode_seeds_give_other_data_and_other_gold(family):
    _, bundle, tasks = family
    data = [json.loads(p.read_text()) for p in [bundle / "data.json",
                                                 *(next(instance_root(bundle, k).glob("*/data.json")) for k in (1, 2))]]
    names = [[it["name"] for it in d["items"]] for d in data]
    assert names[0] != names[1] != names[2]
    task = answer_task(tasks)
    one, two = episode_task(task, 1), episode_task(task, 2)
    assert one.metadata["instance"] == 1 and two.metadata["instance"] == 2
    assert one.id == two.id == task.id  # one task, another instance of it
    assert one.instruction != two.instruction or one.checks != two.checks
    assert [c.to_dict() for c in one.checks] != [c.to_dict() for c in two.checks]
    assert episode_task(task, 3).to_dict() == episode_task(task, 0).to_dict()  # seed % K
    assert "instance" not in episode_task(task, 0).metadata and "instances" not in episode_task(task, 0).metadata
    assert episode_task(one, 2).to_dict() == one.to_dict()  # resolved once and for all


def test_the_same_seed_gives_the_same_bytes_and_checks(family, tmp_path):
    spec, bundle, tasks = family
    again = write_instance(spec, tmp_path, 2)
    first = next(instance_root(bundle, 2).glob("*/public"))
    files = sorted(p.relative_to(first) for p in first.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(again / "public") for p in (again / "public").rglob("*") if p.is_file())
    assert all((first / f).read_bytes() == (again / "public" / f).read_bytes() for f in files)
    task = answer_task(tasks)
    assert episode_task(task, 5).to_dict() == episode_task(task, 5).to_dict()

    client = create_app(ServeConfig(sites=[bundle.parent])).test_client()
    pages = {}
    for k in range(K):
        headers = {"Host": spec.host, **({INSTANCE_HEADER: str(k)} if k else {})}
        pages[k] = client.get("/", headers=headers).data
        assert pages[k] == client.get("/", headers=headers).data
        assert client.get("/assets/catalog.json", headers=headers).headers["Vary"] == INSTANCE_HEADER
    assert pages[0] == (bundle / "public" / "index.html").read_bytes()
    assert pages[2] == (first / "index.html").read_bytes()
    assert len(set(pages.values())) == K
    missing = client.get("/", headers={"Host": spec.host, INSTANCE_HEADER: "7"})
    assert missing.status_code == 404 and b"--instances" in missing.data
    assert client.get("/", headers={"Host": spec.host, INSTANCE_HEADER: "x1"}).status_code == 404


def test_an_oracle_episode_succeeds_on_each_instance_and_a_wrong_instance_s_gold_fails(family):
    from weblica.env.browser_env import WebEnv
    from weblica.policy.oracle import OraclePolicy
    from weblica.rollout import run_episode
    from weblica.synth.backend import ServedSynthBackend

    _, bundle, tasks = family
    task = answer_task(tasks)
    state_or_url = next(t for t in tasks if t is not task and t.metadata.get("instances")
                        and any(c.type == "url_match" for c in t.checks))
    member_one, member_two = episode_task(task, 1), episode_task(task, 2)
    # an episode of instance 2 (its pages, its checks) that plays instance 1's oracle and answers its gold
    wrong = Task.from_dict({**member_two.to_dict(), "oracle": member_one.to_dict()["oracle"]})

    async def go():
        backend = ServedSynthBackend([bundle])
        await backend.start()
        try:
            async with WebEnv(backends={"synth": backend}) as env:
                right = [await run_episode(env, t, OraclePolicy(), seed) for t in (task, state_or_url)
                         for seed in range(K)]
                bad = await run_episode(env, wrong, OraclePolicy(), 2)
                return right, bad
        finally:
            await backend.stop()
    right, bad = asyncio.run(go())
    assert [t.success for t in right] == [True] * (2 * K), [(t.task_id, t.seed, t.check_results) for t in right]
    answers = {t.answer for t in right[:K]}
    assert len(answers) >= 2  # the gold followed the data
    assert bad.answer == right[1].answer != right[2].answer
    assert not bad.success and bad.termination_reason == "done"


def test_instances_need_validation():
    from weblica.synth.synthesize import synthesize

    with pytest.raises(ValueError, match="--instances needs validation"):
        synthesize(skill="search", out=Path("/nonexistent-weblica"), validate=False, instances=2)
    with pytest.raises(ValueError, match="at least 1"):
        synthesize_instances([], Path("/nonexistent-weblica"), 0)
