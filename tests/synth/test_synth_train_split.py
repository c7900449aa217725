"""`weblica synth --split train --n N` writes the recipe's training task set (issue 40, point 4): OUT/tasks.jsonl
holds the tasks of every bundle of that split in OUT, each naming its bundle by folder name, which
`load_tasks` finds beside the file, from any working directory and after OUT is moved; a bundle of the
other split in the same folder stays out; a second run into OUT extends the set.

The bundles here are written by hand (site.json + tasks.jsonl, what the generator writes): the generator
is under test elsewhere, and what is under test here is the task set and the command's wiring."""
import json
import os
from pathlib import Path

from click.testing import CliRunner

from weblica.cli import get_cli
from weblica.env.task import Task, load_tasks, save_tasks
from weblica.synth.backend import find_bundle
from weblica.synth.splits import split_of, write_task_set


def bundle(out: Path, site_id: str, seed: int, category: str, tasks: int) -> Path:
    folder = out / site_id
    folder.mkdir(parents=True)
    (folder / "site.json").write_text(json.dumps({"spec": {"site_id": site_id, "seed": seed, "category": category,
                                                           "style": {"aesthetic": "material"}}}))
    save_tasks([Task.from_dict({"id": f"{site_id}-t{i}", "start_url": f"http://{site_id}.synth.test/",
                                "instruction": "Find it.", "source": {"kind": "synth", "site": site_id,
                                                                      "bundle": site_id}})
                for i in range(tasks)], folder / "tasks.jsonl")
    return folder


def test_the_task_set_names_each_bundle_from_where_the_recipe_runs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    out = Path("sites") / "train"
    bundle(out, "forms-travel-1", 1, "travel", 3)
    bundle(out, "search-books-2", 2, "books", 2)
    bundle(out, "menus-pets-3", 3, "pets", 4)  # a category validation reserves: not training data
    path, count, sites = write_task_set(out, "train")
    assert (path, count, sites) == (out / "tasks.jsonl", 5, 2)
    tasks = load_tasks(path)
    assert sorted(t.id for t in tasks) == sorted([f"forms-travel-1-t{i}" for i in range(3)] +
                                                 [f"search-books-2-t{i}" for i in range(2)])
    assert all(json.loads(line)["source"]["bundle"] == json.loads(line)["source"]["site"]
               for line in path.read_text().splitlines())  # by name: the file travels with its folder
    for task in tasks:  # found beside the file, not on the default search path (./sites)
        assert find_bundle(task) == (tmp_path / "sites" / "train" / task.source.site).resolve()
    moved = tmp_path / "elsewhere" / "train"
    moved.parent.mkdir()
    (tmp_path / "sites" / "train").rename(moved)
    monkeypatch.chdir(tmp_path / "elsewhere")
    assert {find_bundle(t) for t in load_tasks(moved / "tasks.jsonl")} == \
        {(moved / s).resolve() for s in ("forms-travel-1", "search-books-2")}
    monkeypatch.chdir(tmp_path)
    (moved).rename(tmp_path / "sites" / "train")
    assert write_task_set(out, "val")[1:] == (4, 1)
    bundle(out, "forms-travel-9", 9, "travel", 1)  # a later run into the same folder extends the set
    assert write_task_set(out, "train")[1:] == (6, 3)
    assert not list(out.glob("*.partial"))


def test_synth_split_writes_the_task_set_and_says_so(tmp_path, monkeypatch):
    import weblica.synth.synthesize as synthesize_module

    written = []

    def synthesize(**kwargs):  # what the generator leaves in --out, and the results it reports
        out = Path(kwargs["out"])
        results = []
        for i in range(kwargs["n"]):
            site = f"forms-travel-{kwargs['seed'] + i}"
            bundle(out, site, kwargs["seed"] + i, "travel", 2)
            written.append(site)
            results.append(type("R", (), {"site_id": site, "tasks_kept": 2, "tasks_generated": 2, "ok": True,
                                          "path": out / site, "failures": [],
                                          "to_dict": lambda self: {"site_id": self.site_id}})())
        return results

    monkeypatch.setattr(synthesize_module, "synthesize", synthesize)
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(get_cli(), ["synth", "--split", "train", "--n", "2", "--out", "sites/train",
                                            "--no-validate", "--json"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    summary = json.loads(result.output.strip().splitlines()[-1])
    assert summary["task_set"] == {"path": os.path.join("sites", "train", "tasks.jsonl"), "tasks": 4, "sites": 2}
    assert len(load_tasks(tmp_path / "sites" / "train" / "tasks.jsonl")) == 4
    human = CliRunner().invoke(get_cli(), ["synth", "--split", "train", "--n", "1", "--seed", "5", "--out",
                                           "sites/train", "--no-validate"], catch_exceptions=False)
    assert "train task set: 6 tasks of 3 sites -> sites/train/tasks.jsonl" in human.output
    plain = CliRunner().invoke(get_cli(), ["synth", "--n", "1", "--seed", "8", "--out", "elsewhere", "--no-validate",
                                           "--json"], catch_exceptions=False)
    assert plain.exit_code == 0 and "task_set" not in json.loads(plain.output.strip().splitlines()[-1])
    assert not (tmp_path / "elsewhere" / "tasks.jsonl").exists()


def test_split_of_reads_the_manifest():
    assert split_of({"seed": 3, "category": "travel", "style": {"aesthetic": "material"}}) == "train"
    assert split_of({"seed": 1_000_000_003, "category": "travel"}) == "val"
    assert split_of({"seed": 3, "category": "pets"}) == "val"
    assert split_of({"seed": 3, "category": "travel", "style": {"aesthetic": "newspaper"}}) == "val"
