"""bench/learn.py's parts: the held-out splits (sites, sections, layouts), the blind control, the paired
statistics and the compute matching of the controls."""
from __future__ import annotations

import json
import sys
from dataclasses import replace
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import learn  # noqa: E402
from learn_data import (LAYOUTS, TRAIN_LAYOUT, assign_splits, catalog_sections, family_spec,  # noqa: E402
                        section_of, site_plan, split_sections)

from fixtures_models import make_obs, make_task, tiny_checkpoint  # noqa: E402
from weblica.eval.paired import bootstrap_interval, compare, sign_test, solved_table  # noqa: E402

# ---- splits -------------------------------------------------------------------------------------------


def test_site_plan_gives_each_role_its_own_seeds_and_layout():
    plan = site_plan(0, 4, 3, 2, ["centered", "tree"], {})  # nothing pinned: fast (the pin is tested below)
    assert [(s.role, s.layout) for s in plan] == [("train", TRAIN_LAYOUT)] * 4 + [("heldout", TRAIN_LAYOUT)] * 3 + \
        [("layout", "centered")] * 2 + [("layout", "tree")] * 2
    assert len({s.seed for s in plan}) == len(plan)
    specs = [family_spec(s.seed, s.layout) for s in plan]
    assert len({spec.site_id for spec in specs}) == len(plan)
    for site, spec in zip(plan, specs):
        assert (spec.style.archetype, spec.style.widgets) == (LAYOUTS[site.layout]["archetype"],
                                                              LAYOUTS[site.layout]["widgets"])
        assert not any(spec.distractors.values())
    # the layouts really differ from the trained one where they say
    assert specs[0].style.archetype == "top-nav" and specs[0].style.widgets == "custom"
    assert specs[7].style.archetype == "centered" and specs[-1].style.widgets == "native"
    # a bigger plan keeps the same training and held-out sites (a cache in --out stays valid)
    assert site_plan(0, 4, 3, 5, ["tree"], {})[:7] == plan[:7]
    with pytest.raises(ValueError, match="unknown held-out layout 'mega-top'"):
        site_plan(0, 1, 1, 1, [TRAIN_LAYOUT])
    with pytest.raises(ValueError, match="unknown held-out layout 'zigzag'"):
        site_plan(0, 1, 1, 1, ["zigzag"])


def test_site_plan_keeps_only_sites_that_draw_the_pinned_grammar():
    from weblica.synth.generate import build_site, site_seeds
    from weblica.synth.page_grammar import choose_layout

    plan = site_plan(0, 1, 1, 1, ["tree"], {"header": "bar", "skeleton": "plain"})
    for site in plan:
        drawn = choose_layout(build_site(family_spec(site.seed, site.layout)))
        assert (drawn.header, drawn.skeleton) == ("bar", "plain")
    # the seeds are taken in the order of the run's seed list, passing over those that draw another grammar
    seeds = site_seeds(0, 600)
    assert [seeds.index(s.seed) for s in plan] == sorted(seeds.index(s.seed) for s in plan)
    skipped = [s for s in seeds[:seeds.index(plan[-1].seed)] if s not in {p.seed for p in plan}]
    assert skipped and len({s.seed for s in plan}) == len(plan)
    # nothing pinned: the first seeds of the list, as before pinning existed
    assert [s.seed for s in site_plan(0, 2, 1, 1, ["tree"], {})] == seeds[:4]
    with pytest.raises(ValueError, match="cannot pin page-grammar component 'colour'"):
        site_plan(0, 1, 1, 1, ["tree"], {"colour": "red"})
    with pytest.raises(ValueError, match="header has no variant 'zigzag'; use one of bar, "):
        site_plan(0, 1, 0, 0, [], {"header": "zigzag"})
    assert learn.parse_args([]).pin_grammar == {"header": "bar", "skeleton": "plain"}
    assert learn.parse_args(["--pin-grammar", "none"]).pin_grammar == {}
    assert learn.parse_args(["--pin-grammar", "nav=top"]).pin_grammar == {"nav": "top"}
    with pytest.raises(SystemExit):
        learn.parse_args(["--pin-grammar", "header"])


def test_split_sections_holds_out_some_of_every_department():
    sections = catalog_sections()
    assert len(sections) == 9 and "classes/mind-and-body" in sections
    train, held = split_sections(sections, seed=0)
    assert len(held) == 3 and {s.split("/")[0] for s in held} == {s.split("/")[0] for s in sections}
    assert set(train) | set(held) == set(sections) and not set(train) & set(held)
    assert split_sections(reversed(sections), seed=0) == (train, held)  # by data, not by order
    assert {tuple(split_sections(sections, seed=s)[1]) for s in range(8)} != {tuple(held)}  # the seed draws
    with pytest.raises(ValueError, match="would leave none to train on"):
        split_sections(sections, seed=0, per_department=3)


def _real_tasks(site, index):
    """The tasks the synth generator drafts for a planned site (no browser: drafts only)."""
    from weblica.synth.generate import build_site
    from weblica.synth.site import draft_to_task

    built = build_site(family_spec(site.seed, site.layout))
    return [draft_to_task(built, i + 1, d) for i, d in enumerate(built.tasks)]


def test_splits_keep_heldout_sections_and_layouts_out_of_training():
    plan = site_plan(3, 5, 4, 2, ["centered", "tree"], {})
    per_site = [(site, _real_tasks(site, i)) for i, site in enumerate(plan)]
    train_sections, held = split_sections(catalog_sections(), seed=3)
    splits = assign_splits(per_site, held, ["centered", "tree"])
    site_of = {t.id: site for site, tasks in per_site for t in tasks}
    assert all(len(tasks) for tasks in splits.values()), {k: len(v) for k, v in splits.items()}
    for task in splits["train"]:
        assert site_of[task.id].role == "train" and site_of[task.id].layout == TRAIN_LAYOUT
        assert section_of(task) in train_sections
    asked_in_training = {section_of(t) for t in splits["train"]}
    assert not asked_in_training & set(held)
    for task in splits["heldout_sections"]:
        assert site_of[task.id].role == "heldout" and section_of(task) in held
    for task in splits["heldout_sites"]:
        assert site_of[task.id].role == "heldout" and section_of(task) in train_sections
    for name in ("centered", "tree"):
        for task in splits[f"heldout_layout_{name}"]:
            assert site_of[task.id].layout == name and section_of(task) in train_sections
    train_ids = {t.id for t in splits["train"]}
    for name, tasks in splits.items():
        if name != "train":
            assert not train_ids & {t.id for t in tasks}
            assert not {t.source.site for t in splits["train"]} & {t.source.site for t in tasks}
    # the split reads the check's section id, not the instruction: reworded tasks split alike
    reworded = [(site, [replace(t, instruction=f"Go to {t.id}.") for t in tasks]) for site, tasks in per_site]
    again = assign_splits(reworded, held, ["centered", "tree"])
    assert {k: [t.id for t in v] for k, v in again.items()} == {k: [t.id for t in v] for k, v in splits.items()}
    # answer tasks (counts, prices) on the same sites open no section and are in no split
    answers = [t for _, tasks in per_site for t in tasks if t.checks[0].type != "url_match"]
    assert answers and all(section_of(t) is None for t in answers)


# ---- the blind control ----------------------------------------------------------------------------------


class PixelSpy:
    """Keeps every pixel tensor the vision tower of a model is given."""

    def __init__(self) -> None:
        self.seen: list = []

    def attach(self, model):
        visual = model.model.visual

        def hook(module, args, kwargs):
            pixels = args[0] if args else kwargs.get("hidden_states", kwargs.get("pixel_values"))
            self.seen.append(pixels.detach().clone())
        visual.register_forward_pre_hook(hook, with_kwargs=True)
        return model


def test_blind_policy_feeds_the_model_zeros_with_the_same_tokens():
    import asyncio

    from weblica.policy.context import ContextBuilder
    from weblica.policy.factory import PolicySpecError, make_policy

    base = tiny_checkpoint()
    sighted = make_policy(f"hf:{base};temperature=0;max_new_tokens=4")
    blind = make_policy(f"hf:{base};temperature=0;max_new_tokens=4;blind=1")
    messages = ContextBuilder(sighted.backend.frame).build(make_task(), [], make_obs(color=(200, 30, 90)))
    seen, hidden = sighted.backend.encode(messages), blind.backend.encode(messages)
    assert seen.input_ids == hidden.input_ids and seen.image_grid_thw.tolist() == hidden.image_grid_thw.tolist()
    assert seen.pixel_values.shape == hidden.pixel_values.shape
    assert float(seen.pixel_values.abs().sum()) > 0 and float(hidden.pixel_values.abs().sum()) == 0
    assert len(seen.images) == 1 and hidden.images == []  # nor the PIL screenshot, for an engine to process
    from weblica.policy.backends.base import BackendError
    from weblica.policy.backends.hf import encode_qwen_prompt

    with pytest.raises(BackendError, match="blind needs expand_images"):
        encode_qwen_prompt(messages, blind.backend.tokenizer, blind.backend.image_processor, expand_images=False,
                           blind=True)
    spy = PixelSpy()
    spy.attach(blind.backend.model)
    asyncio.run(blind.backend.generate(messages, seed=0))
    assert spy.seen and all(float(p.abs().sum()) == 0 for p in spy.seen)
    spy.attach(sighted.backend.model)
    asyncio.run(sighted.backend.generate(messages, seed=0))
    assert float(spy.seen[-1].abs().sum()) > 0
    with pytest.raises(PolicySpecError, match="blind must be 1 or 0"):
        make_policy(f"hf:{base};blind=maybe")


def test_blind_training_zeroes_every_screenshot_in_sft_and_grpo(site, tmp_path, monkeypatch):
    """SFT (the teacher's episodes) and a GRPO iteration (rollouts and update) with `blind`: every pixel
    tensor the vision tower receives is zero; the same SFT sighted gives it the screenshots."""
    import torch

    import weblica.train.grpo as grpo_module
    import weblica.train.sft as sft_module
    from weblica.env.task import save_tasks
    from weblica.train.config import ConfigError, GRPOConfig, SFTConfig, config_from_dict
    from weblica.train.grpo import train_grpo
    from weblica.train.sft import train_sft
    from hand_tasks import hand_tasks

    torch.set_num_threads(1)
    spy = PixelSpy()
    for module in (sft_module, grpo_module):
        original = module.load_trainable
        monkeypatch.setattr(module, "load_trainable",
                            lambda path, options, original=original: _spied(original(path, options), spy))
    tasks_file = tmp_path / "tasks.jsonl"
    save_tasks(hand_tasks(site.url)[:1], tasks_file)  # click, then done
    base = tiny_checkpoint()
    train_sft(SFTConfig(model=str(base), tasks=str(tasks_file), output_dir=str(tmp_path / "sft"), epochs=1,
                        batch_size=2, learning_rate=1e-3, blind=True))
    assert len(spy.seen) >= 2 and all(float(p.abs().sum()) == 0 for p in spy.seen)
    spy.seen.clear()
    train_sft(SFTConfig(model=str(base), trajectories=[str(tmp_path / "sft" / "teacher")],
                        output_dir=str(tmp_path / "sft-sighted"), epochs=1, batch_size=2, learning_rate=1e-3))
    assert spy.seen and all(float(p.abs().sum()) > 0 for p in spy.seen)
    spy.seen.clear()
    summary = train_grpo(GRPOConfig(model=str(tmp_path / "sft" / "final"), tasks=str(tasks_file),
                                    output_dir=str(tmp_path / "grpo"), iterations=1, groups_per_batch=1,
                                    group_size=2, max_new_tokens=24, temperature=1.5, dynamic_sampling=False,
                                    mini_batches=1, ppo_epochs=1, parallel=2, save_every=0, max_steps=2,
                                    blind=True))
    assert summary["last"]["samples"] >= 2  # rollouts played and an update ran, all of it on zeros
    assert len(spy.seen) >= 2 * summary["last"]["samples"] and all(float(p.abs().sum()) == 0 for p in spy.seen)
    with pytest.raises(ConfigError, match="blind is for the hf rollout backend"):
        config_from_dict(GRPOConfig, {"blind": True, "rollout_backend": "vllm"})


def _spied(trainable, spy):
    spy.attach(trainable.model)
    return trainable


# ---- statistics -------------------------------------------------------------------------------------------


def test_sign_test_on_known_counts():
    assert sign_test(10, 0) == pytest.approx(2 / 1024)
    assert sign_test(0, 10) == sign_test(10, 0)
    assert sign_test(8, 2) == pytest.approx(2 * (1 + 10 + 45) / 1024)
    assert sign_test(5, 5) == 1.0 and sign_test(0, 0) == 1.0
    with pytest.raises(ValueError):
        sign_test(-1, 2)


def test_paired_comparison_on_known_tables():
    everything = [[True] * 10] * 3
    nothing = [[False] * 10] * 3
    r = compare(everything, nothing, resamples=500)
    assert (r.difference, r.low, r.high, r.wins, r.losses, r.ties) == (1.0, 1.0, 1.0, 30, 0, 0)
    assert r.sign_p < 1e-8 and r.per_seed == [1.0, 1.0, 1.0] and (r.success_a, r.success_b) == (1.0, 0.0)
    same = compare(everything, everything, resamples=200)
    assert (same.difference, same.low, same.high, same.sign_p) == (0.0, 0.0, 0.0, 1.0)
    # 6 of 20 tasks gained in every seed, none lost: a clear +30 points
    a = [[i < 6 for i in range(20)]] * 3
    r = compare(a, [[False] * 20] * 3, resamples=2000)
    assert r.difference == pytest.approx(0.3) and 0.05 < r.low < 0.3 < r.high < 0.55 and r.sign_p < 1e-4
    # the same mean from one seed that gained everything and two that gained nothing: the seed level of
    # the bootstrap makes the interval span 0 to 1 (a task-only bootstrap would call it certain)
    lucky = compare([[True] * 10, [False] * 10, [False] * 10], nothing, resamples=4000)
    assert lucky.difference == pytest.approx(1 / 3) and (lucky.low, lucky.high) == (0.0, 1.0)
    assert lucky.per_seed == [1.0, 0.0, 0.0]
    # seeded: the same interval twice; the interval holds the point
    d = [[1, 0, -1, 1, 0, 1], [0, 0, 1, 1, -1, 1], [1, 1, 0, 0, 0, 1]]
    first, second = bootstrap_interval(d, 1000, seed=7), bootstrap_interval(d, 1000, seed=7)
    assert first == second and first[0] <= sum(map(sum, d)) / 18 <= first[1]
    with pytest.raises(ValueError, match="same tasks"):
        compare([[True, False]], [[True]])
    with pytest.raises(ValueError, match="same seeds"):
        compare([[True]], [[True], [False]])


def test_solved_table_follows_the_task_order():
    assert solved_table([{"b"}, ["a", "c"]], ["a", "b", "c"]) == [[False, True, False], [True, False, True]]


# ---- compute matching ------------------------------------------------------------------------------------


def test_compute_counts_and_matched_epochs():
    metrics = [{"samples": 10, "episodes": 8, "response_length": 5.0}, {"samples": 0, "episodes": 8},
               {"samples": 7, "episodes": 12, "response_length": 2.0}]
    got = learn.grpo_compute(metrics, ppo_epochs=3, mini_batches=2)
    # 10 samples: 2 mini-batches of 5; 7 samples: mini-batches of 4 and 3; 3 passes each
    assert got == {"steps": 12, "samples": 51, "tokens": 3 * (50 + 14), "episodes": 28}
    assert learn.grpo_compute([{"samples": 3, "episodes": 4}], ppo_epochs=1, mini_batches=4)["steps"] == 3
    assert learn.sft_compute(samples=17, epochs=3, batch_size=4) == {"steps": 15, "samples": 51}
    assert learn.matched_epochs(got, samples=17, batch_size=4) == 3   # 51 samples = 3 x 17
    assert learn.matched_epochs(got, samples=17, batch_size=4, match="steps") == 2  # 12 steps ~ 2 x 5
    assert learn.matched_epochs({"samples": 1}, samples=100, batch_size=4) == 1  # never 0 epochs
    with pytest.raises(ValueError):
        learn.matched_epochs(got, samples=0, batch_size=4)


def test_grpo_compute_counts_the_optimizer_steps_ppo_update_takes(monkeypatch):
    """The step count is ppo_update's own: its loop over mini-batches, run with a stand-in for the
    model's scoring, counted at the optimizer."""
    import torch

    import weblica.train.policy_update as pu
    from weblica.train.config import GRPOConfig
    from weblica.train.samples import BatchScores, TurnSample

    weight = torch.nn.Parameter(torch.zeros(()))

    def scores(model, micro, device, temperature=1.0, with_entropy=False, banned=()):
        logprobs = torch.stack([weight + 0.0 * len(s.response_ids) for s in micro])[:, None].expand(-1, 2)
        return BatchScores(logprobs, None, torch.ones(len(micro), 2))

    monkeypatch.setattr(pu, "batch_logprobs", scores)

    class Counting(torch.optim.SGD):
        steps = 0

        def step(self, closure=None):
            Counting.steps += 1
            return super().step(closure)

    model = torch.nn.Module()
    model.w = weight
    for n, epochs, mbs in ((10, 3, 2), (7, 3, 2), (3, 1, 4), (5, 2, 3)):
        Counting.steps = 0
        samples = [TurnSample(None, [1, 2], [0.0, 0.0], 1.0) for _ in range(n)]
        pu.ppo_update(model, Counting([weight], lr=0.0), samples, GRPOConfig(ppo_epochs=epochs, mini_batches=mbs),
                      0, "cpu")
        expected = learn.grpo_compute([{"samples": n, "episodes": 0}], epochs, mbs)["steps"]
        assert Counting.steps == expected, (n, epochs, mbs)


def test_bc_sample_count_is_one_per_step_of_kept_episodes(tmp_path):
    from weblica.env.episode import StepRecord, Trajectory

    def traj(i, steps, success, removed=False):
        records = [StepRecord(k, "", [], [], "http://x.test/", "0" * 64) for k in range(steps)]
        return Trajectory(f"t{i}", i, f"e{i}", "http://x.test/", "0" * 64, steps=records, success=success,
                          removed=removed)

    run = tmp_path / "run"
    run.mkdir()
    trajs = [traj(0, 3, True), traj(1, 2, False), traj(2, 4, True, removed=True), traj(3, 1, True)]
    (run / "episodes.jsonl").write_text("".join(json.dumps(t.to_dict()) + "\n" for t in trajs))
    assert learn.bc_sample_count([run]) == 4
    assert learn.bc_sample_count([run], only_successful=False) == 6
    assert learn.bc_sample_count([run, run]) == 8


def test_quick_shrinks_budgets_but_an_option_given_wins():
    args = learn.parse_args(["--quick"])
    assert (args.seeds, args.train_sites, args.grpo_iterations) == ([0, 1, 2], 2, 1)
    assert args.out == Path("out/learn-quick") and args.heldout_layouts == ["centered", "tree"]
    args = learn.parse_args(["--quick", "--seeds", "4,5,6,7", "--sft-epochs=3", "--grpo-iterations", "8"])
    assert (args.seeds, args.sft_epochs, args.grpo_iterations) == ([4, 5, 6, 7], 3, 8)
    full = learn.parse_args([])
    assert (full.seeds, full.sft_epochs, full.grpo_iterations, full.out) == ([0, 1, 2], 40, 8, Path("out/learn"))
    with pytest.raises(SystemExit):
        learn.parse_args(["--stages", "grpo,dagger"])
    with pytest.raises(SystemExit):
        learn.parse_args(["--seeds", "one"])


def test_controls_train_from_sft_for_grpos_compute_on_their_episodes(site, tmp_path):
    """run_stage wiring: sft clones the teacher; filtered_bc clones only the successful episodes of GRPO's
    rollout directories and sft_more the teacher's, each for the epochs that match GRPO's trained samples;
    a second call reads the record and trains nothing."""
    import argparse
    import shutil

    import torch

    from weblica.env.task import save_tasks
    from hand_tasks import hand_tasks

    torch.set_num_threads(1)
    train_file = tmp_path / "train.jsonl"
    save_tasks([hand_tasks(site.url)[0], hand_tasks(site.url)[3]], train_file)  # 2 steps + 1 step
    args = argparse.Namespace(sft_epochs=1, sft_lr=1e-3, control_lr=2e-4, oracle_thoughts=False, match="samples",
                              obs="screenshot")
    seed_dir = tmp_path / "seed-0"
    stages = {"base": {"checkpoint": str(tiny_checkpoint())}}
    stages["sft"] = learn.run_stage("sft", seed_dir, 0, args, train_file, stages)
    n = learn.bc_sample_count([seed_dir / "sft" / "teacher"])  # 3 when the oracle solves both (2 + 1 steps)
    assert n >= 1 and stages["sft"]["compute"] == {"steps": 1, "samples": n}
    # GRPO's rollouts: the teacher's two successes and a failed copy of one, which filtered BC must skip
    rollouts = seed_dir / "grpo" / "rollouts" / "iter-0000-r0"
    shutil.copytree(seed_dir / "sft" / "teacher", rollouts)
    lines = (rollouts / "episodes.jsonl").read_text().splitlines()
    failed = {**json.loads(lines[0]), "success": False, "episode_id": "failed-copy"}
    (rollouts / "episodes.jsonl").write_text("\n".join(lines + [json.dumps(failed)]) + "\n")
    assert learn.bc_sample_count([rollouts]) == n
    stages["grpo"] = {"checkpoint": stages["sft"]["checkpoint"], "compute": {"samples": 3 * n, "steps": 2}}
    for name in ("filtered_bc", "sft_more"):
        stage = learn.run_stage(name, seed_dir, 0, args, train_file, stages)
        # 3 epochs match GRPO's 3n trained samples; a failed rollout cloned would make them 3 (n + its steps)
        assert stage["compute"] == {"steps": 3, "samples": 3 * n} and stage["matched_to"] == {"samples": 3 * n}
        assert stage["learning_rate"] == 2e-4  # GRPO's step size, not SFT's (--control-lr)
        saved = torch.load(max((seed_dir / name).glob("checkpoint-*")) / "trainer.pt", weights_only=False)
        assert {g["lr"] for g in saved["optimizer"]["param_groups"]} == {2e-4}  # what the optimizer really ran at
        assert len((seed_dir / name / "metrics.jsonl").read_text().splitlines()) == 3  # 3 epochs of 1 step
        assert (Path(stage["checkpoint"]) / "config.json").exists() and not stage["blind"]
        record = seed_dir / name / "stage.json"
        before = record.stat().st_mtime_ns
        assert learn.run_stage(name, seed_dir, 0, args, train_file, stages) == stage
        assert record.stat().st_mtime_ns == before
    # with no successful rollout there is nothing to clone: the control is skipped, not trained on nothing
    (rollouts / "episodes.jsonl").write_text(json.dumps(failed) + "\n")
    shutil.rmtree(seed_dir / "filtered_bc")
    with pytest.raises(learn.StageSkipped, match="no successful episode to clone"):
        learn.run_stage("filtered_bc", seed_dir, 0, args, train_file, stages)


def test_the_verdict_reads_the_interval():
    from learn_report import verdict

    assert verdict({"a": "grpo", "b": "sft", "low": 0.02, "high": 0.3}) == "grpo ahead"
    assert verdict({"a": "sft", "b": "blind_sft", "low": -0.4, "high": -0.01}) == "blind_sft ahead"
    assert verdict({"a": "grpo", "b": "sft_more", "low": 0.0, "high": 0.3}) == "no clear difference"


def test_jobs_run_each_seed_with_the_same_options_in_its_own_process():
    argv = ["--train-sites", "2", "--seeds", "0,1,2", "--jobs=2", "--stages", "sft,blind_sft", "--seeds=3,4"]
    assert learn.seed_argv(argv, 4) == ["--train-sites", "2", "--stages", "sft,blind_sft", "--seeds", "4", "--jobs", "1"]
    child = learn.parse_args(learn.seed_argv(argv, 4))
    assert (child.seeds, child.jobs, child.stages, child.train_sites) == ([4], 1, ["sft", "blind_sft"], 2)
    assert learn.parse_args(argv).jobs == 2
    with pytest.raises(SystemExit):
        learn.parse_args(["--jobs", "0"])


def test_evaluation_plays_only_the_splits_not_yet_cached(tmp_path, monkeypatch):
    """A later call with more splits plays only the new ones (in a run directory of their own) and reads
    the rest back; weights newer than the cache play everything again."""
    import os

    played: list[tuple[list[str], Path]] = []

    def fake_play(checkpoint, splits, out, seed, blind, obs="screenshot"):
        played.append((sorted(splits), out))
        out.mkdir(parents=True, exist_ok=True)
        return {name: {"solved": len(name), "solved_ids": [name]} for name in splits}

    monkeypatch.setattr(learn, "play_splits", fake_play)
    checkpoint, out = tmp_path / "ckpt", tmp_path / "eval" / "sft"
    checkpoint.mkdir()
    (checkpoint / "model.safetensors").write_bytes(b"w")
    os.utime(checkpoint / "model.safetensors", (1, 1))
    paths = {name: tmp_path / f"{name}.jsonl" for name in ("train", "heldout_sites", "heldout_sections")}
    first = learn.evaluate_stage(checkpoint, {"train": paths["train"]}, out, 0, False)
    assert first["splits"] == {"train": {"solved": 5, "solved_ids": ["train"]}} and played == [(["train"], out)]
    both = learn.evaluate_stage(checkpoint, paths, out, 0, False)
    assert played[1] == (["heldout_sections", "heldout_sites"], out / "heldout_sections+heldout_sites")
    assert set(both["splits"]) == set(paths) and both["splits"]["train"] == first["splits"]["train"]
    assert learn.evaluate_stage(checkpoint, {"heldout_sites": paths["heldout_sites"]}, out, 0, False)["splits"] == \
        {"heldout_sites": {"solved": 13, "solved_ids": ["heldout_sites"]}}
    assert len(played) == 2  # everything asked was cached
    os.utime(checkpoint / "model.safetensors")  # retrained: the cache is stale
    learn.evaluate_stage(checkpoint, {"train": paths["train"]}, out, 0, False)
    assert played[2] == (["train"], out) and not (out / "heldout_sections+heldout_sites").exists()


def test_variants_solved_counts_the_variants_each_task_was_solved_on():
    from learn_report import variants_solved

    ids = [f"t{k}@{h}" for k in (1, 2, 3) for h in ("bar", "centered", "utility")]
    assert variants_solved(["t1@bar", "t1@utility", "t3@centered"], ids) == {"t1": 2, "t2": 0, "t3": 1}
    assert variants_solved([], ids) == {"t1": 0, "t2": 0, "t3": 0}
