"""bench/learn_variants.py: every site written once per header variant (its instances), tasks pinned to
each, the menu really somewhere else per variant, and a blind observation that carries nothing of it."""
from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import learn  # noqa: E402
from learn_data import family_spec, site_plan  # noqa: E402
from learn_variants import EPISODE_HEADERS, pinned_tasks, variant_of, write_variants  # noqa: E402

from fixtures_models import make_task, tiny_checkpoint  # noqa: E402


def test_variants_are_instances_with_the_same_tasks_and_another_header(tmp_path):
    spec = family_spec(site_plan(0, 1, 0, 0, [], {})[0].seed)
    paths = write_variants(spec, tmp_path, EPISODE_HEADERS)
    bundle = tmp_path / spec.site_id
    assert paths[0] == bundle and len(paths) == len(EPISODE_HEADERS)
    for k, (path, header) in enumerate(zip(paths, EPISODE_HEADERS)):
        meta = json.loads((path / "site.json").read_text())
        assert meta.get("instance", 0) == k and meta["layout"]["header"] == header
        assert meta["spec"]["host"] == spec.host  # one site: the server serves instance k for the episode
        assert f"hdr-{header}" in (path / "public" / "index.html").read_text()
    pinned = pinned_tasks(bundle, EPISODE_HEADERS)
    base = [t for t in pinned if variant_of(t.id) == EPISODE_HEADERS[0]]
    assert base and len(pinned) == len(base) * len(EPISODE_HEADERS)
    for task in pinned:
        twin = next(b for b in base if b.id.split("@")[0] == task.id.split("@")[0])
        assert task.instruction == twin.instruction and task.start_url == twin.start_url
        assert task.metadata["instance"] == EPISODE_HEADERS.index(variant_of(task.id))
        assert task.source.bundle == str(bundle)
    # a task that did not validate on one variant is asked on none (else a guess of the others would gain)
    dropped = base[0].id.split("@")[0]
    tasks_file = paths[2] / "tasks.jsonl"
    tasks_file.write_text("".join(line + "\n" for line in tasks_file.read_text().splitlines()
                                  if json.loads(line)["id"] != dropped))
    again = pinned_tasks(bundle, EPISODE_HEADERS)
    assert len(again) == len(pinned) - len(EPISODE_HEADERS)
    assert not any(t.id.startswith(dropped + "@") for t in again)
    with pytest.raises(ValueError, match="distinct page-grammar headers"):
        write_variants(spec, tmp_path, ["bar", "zigzag"])
    with pytest.raises(ValueError, match="distinct page-grammar headers"):
        write_variants(spec, tmp_path, ["bar", "bar"])


def test_validated_variants_put_the_same_task_at_other_pixels(tmp_path):
    """Compiled in real Chromium, each variant's oracle hovers the department somewhere else: the
    training episodes of one task draw several target positions, and one instruction cannot fit them."""
    from weblica.synth.generate import keep_valid

    spec = family_spec(site_plan(0, 1, 0, 0, [], {})[0].seed)
    headers = ("bar", "utility")
    asyncio.run(keep_valid(write_variants(spec, tmp_path, headers), concurrency=2))
    pinned = [t for t in pinned_tasks(tmp_path / spec.site_id, headers) if learn.is_open_task(t)]
    assert len(pinned) >= 4
    by_task: dict[str, dict[str, tuple[float, float]]] = {}
    for task in pinned:
        hover = task.oracle[0]
        assert hover.name == "hover"
        by_task.setdefault(task.id.split("@")[0], {})[variant_of(task.id)] = (hover.args["x"], hover.args["y"])
    for positions in by_task.values():
        (x0, y0), (x1, y1) = positions["bar"], positions["utility"]
        assert abs(x0 - x1) > 100 and abs(y0 - y1) > 40, positions  # more than a department's width apart


def test_a_blind_observation_is_the_same_whatever_the_page_shows():
    """Blind: two screenshots of different pages give the model identical inputs (ids, grid, pixel values),
    so nothing of the variant reaches it; sighted, they differ."""
    import io

    from PIL import Image

    from weblica.env.observation import Observation, Tab
    from weblica.policy.context import ContextBuilder
    from weblica.policy.factory import make_policy

    def obs(color, box):
        image = Image.new("RGB", (1280, 720), (250, 250, 250))
        image.paste(Image.new("RGB", (300, 90), color), box)
        buffer = io.BytesIO()
        image.save(buffer, "PNG")
        return Observation(buffer.getvalue(), "http://site.test/", [Tab(0, "http://site.test/", "Site")], 0, [], 0)

    base = tiny_checkpoint()
    task = make_task()
    encoded = {}
    for blind in (0, 1):
        policy = make_policy(f"hf:{base};temperature=0;max_new_tokens=4;blind={blind}")
        builder = ContextBuilder(policy.backend.frame)
        encoded[blind] = [policy.backend.encode(builder.build(task, [], o))
                          for o in (obs((20, 20, 200), (0, 0)), obs((200, 20, 20), (900, 500)))]
    a, b = encoded[1]
    assert a.input_ids == b.input_ids and a.image_grid_thw.tolist() == b.image_grid_thw.tolist()
    assert bool((a.pixel_values == b.pixel_values).all()) and float(a.pixel_values.abs().sum()) == 0
    seen_a, seen_b = encoded[0]
    assert seen_a.input_ids == a.input_ids and not bool((seen_a.pixel_values == seen_b.pixel_values).all())


def test_episode_headers_and_vision_tokens_options(tmp_path):
    args = learn.parse_args(["--quick"])
    assert args.episode_headers == list(EPISODE_HEADERS) and args.vision_tokens == 24
    assert learn.parse_args([]).vision_tokens == 96 and learn.parse_args(["--quick", "--vision-tokens", "48"]).vision_tokens == 48
    assert learn.parse_args(["--episode-headers", "none"]).episode_headers == []
    assert learn.parse_args(["--episode-headers", "bar,mega"]).episode_headers == ["bar", "mega"]
    with pytest.raises(SystemExit):
        learn.parse_args(["--episode-headers", "bar"])
    with pytest.raises(SystemExit):
        learn.parse_args(["--vision-tokens", "2"])
    assert "episode_headers" in learn.SETTING and "vision_tokens" in learn.SETTING
    assert learn.parse_args(["--eval-splits", "train,heldout_layout_tree"]).eval_splits == ["train",
                                                                                          "heldout_layout_tree"]
    assert learn.parse_args([]).eval_splits == []
    with pytest.raises(SystemExit):
        learn.parse_args(["--eval-splits", "train,heldout_moon"])
    # the budget reaches the processor the checkpoint loads with
    import shutil

    from transformers import AutoImageProcessor
    from PIL import Image

    checkpoint = tmp_path / "ckpt"
    shutil.copytree(tiny_checkpoint(), checkpoint)
    screenshot = Image.new("RGB", (1280, 720), (10, 200, 10))
    tokens = {}
    for budget in (24, 96):
        learn.set_vision_tokens(checkpoint, budget)
        grid = AutoImageProcessor.from_pretrained(checkpoint)(images=[screenshot], return_tensors="pt")["image_grid_thw"]
        t, h, w = grid[0].tolist()
        tokens[budget] = t * h * w // 4
    assert tokens[24] <= 24 < tokens[96] <= 96 and tokens[96] >= 4 * tokens[24]


def test_the_report_compares_on_train_only_when_its_tasks_have_variants(tmp_path, capsys):
    from learn_report import comparisons, print_by_variant

    def write(split, ids):
        (tmp_path / f"{split}.jsonl").write_text("".join(json.dumps({"id": i}) + "\n" for i in ids))

    def stage(solved):
        return {"eval": {"train": {"solved_ids": solved}, "heldout_sites": {"solved_ids": []}}}

    ids = [f"t{n}@{h}" for n in range(3) for h in EPISODE_HEADERS]
    write("train", ids)
    write("heldout_sites", ["h0@bar", "h0@centered", "h0@utility"])
    seeing = [i for i in ids]
    guessing = [i for i in ids if i.endswith("@bar")]  # a blind policy fits the variant it guesses
    by_seed = {s: {"sft": stage(seeing), "blind_sft": stage(guessing)} for s in range(3)}
    rows = [r for r in comparisons(by_seed, ["train", "heldout_sites"], tmp_path, 200)
            if (r["a"], r["b"]) == ("sft", "blind_sft")]
    train = next(r for r in rows if r["split"] == "train")
    assert abs(train["difference"] - 2 / 3) < 1e-5 and train["low"] > 0
    print_by_variant(tmp_path, by_seed, ["sft", "blind_sft"], ["train"])
    shown = capsys.readouterr().out
    assert "train                    blind_sft           9/9        0/9        0/9" in shown
    write("train", [i.split("@")[0] for i in ids[:3]])  # the one-layout design: train is not compared
    by_seed = {s: {"sft": stage(["t0"]), "blind_sft": stage([])} for s in range(3)}
    assert not [r for r in comparisons(by_seed, ["train", "heldout_sites"], tmp_path, 200) if r["split"] == "train"]


def test_first_action_varies_reads_each_stages_episodes_across_variants(tmp_path, capsys):
    """Looking apart from success: a task counts when its first action differs between its variants
    (read from every episodes.jsonl of the stage's evaluation, splits added later included); a task with
    a variant not played is not counted."""
    from learn_report import first_action_varies, first_actions, print_first_actions

    ids = [f"t{n}@{h}" for n in range(3) for h in EPISODE_HEADERS]
    (tmp_path / "train.jsonl").write_text("".join(json.dumps({"id": i}) + "\n" for i in ids))

    def play(stage, first, run="."):
        run_dir = tmp_path / "seed-0" / "eval" / stage / run
        run_dir.mkdir(parents=True, exist_ok=True)
        with (run_dir / "episodes.jsonl").open("a") as f:
            for task_id, action in first.items():
                steps = [{"actions": [action]}, {"actions": [{"name": "done"}]}] if action else []
                f.write(json.dumps({"task_id": task_id, "steps": steps}) + "\n")

    hover = {"name": "hover", "arguments": {"x": 200, "y": 40}}
    looking = {i: {**hover, "arguments": {"x": 200 + 10 * EPISODE_HEADERS.index(i.split("@")[1]), "y": 40}}
               for i in ids}
    play("sft", {i: a for i, a in looking.items() if not i.startswith("t2")})
    play("sft", {"t2@bar": hover, "t2@centered": hover}, run="heldout_sites+train")  # t2@utility not played
    play("blind_sft", {i: hover for i in ids[:-1]} | {ids[-1]: None})  # t2@utility took no step
    assert first_actions(tmp_path / "seed-0" / "eval" / "sft")["t2@bar"] == json.dumps([hover], sort_keys=True)
    assert first_action_varies(first_actions(tmp_path / "seed-0" / "eval" / "sft"), ids) == {"t0": True, "t1": True}
    assert first_action_varies(first_actions(tmp_path / "seed-0" / "eval" / "blind_sft"), ids) == \
        {"t0": False, "t1": False, "t2": True}  # no step on one variant, a hover on the others: they differ
    by_seed = {0: {"sft": {}, "blind_sft": {}}}
    assert print_first_actions(tmp_path, by_seed, ["sft", "blind_sft"], ["train"]) == \
        {"train": {"sft": [2, 2], "blind_sft": [1, 3]}}
    assert "train sft 2/2, blind_sft 1/3" in capsys.readouterr().out
    (tmp_path / "train.jsonl").write_text("".join(json.dumps({"id": f"t{n}"}) + "\n" for n in range(3)))
    assert print_first_actions(tmp_path, by_seed, ["sft"], ["train"]) == {}  # one layout per site: nothing


def test_the_all_variants_comparison_counts_a_task_only_when_every_variant_is_solved(tmp_path):
    from learn_report import comparisons, solved_everywhere

    ids = [f"t{n}@{h}" for n in range(4) for h in EPISODE_HEADERS]
    (tmp_path / "train.jsonl").write_text("".join(json.dumps({"id": i}) + "\n" for i in ids))
    assert solved_everywhere([i for i in ids if not i.startswith("t3")] + ["t3@bar"], ids) == ["t0", "t1", "t2"]
    assert solved_everywhere([i for i in ids if i.endswith("@bar")], ids) == []

    def stage(solved):
        return {"eval": {"train": {"solved_ids": solved}}}

    # sighted: two tasks on every variant (6 episodes); blind: every task on one variant (4 episodes)
    sighted = [i for i in ids if i.startswith(("t0", "t1"))]
    blind = [i for i in ids if i.endswith("@centered")]
    by_seed = {s: {"sft": stage(sighted), "blind_sft": stage(blind)} for s in range(3)}
    rows = {r["split"]: r for r in comparisons(by_seed, ["train"], tmp_path, 200)
            if (r["a"], r["b"]) == ("sft", "blind_sft")}
    assert set(rows) == {"train", "train:all-variants"}
    assert abs(rows["train"]["difference"] - 2 / 12) < 1e-5  # 6 against 4 of 12 episodes
    every = rows["train:all-variants"]
    assert (every["tasks"], every["difference"], every["wins"], every["losses"]) == (4, 0.5, 6, 0)
