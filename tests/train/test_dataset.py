"""A run directory exports as a Hugging Face dataset with one row per turn and real images."""
import json

import datasets

from weblica.dataset import export_dataset
from weblica.policy.oracle import OraclePolicy
from weblica.rollout import run_tasks
from hand_tasks import hand_tasks
from tests_helpers import run


def test_export_run_as_dataset(site, tmp_path):
    tasks = hand_tasks(site.url)[:2]
    run(run_tasks(tasks, OraclePolicy, tmp_path / "run", parallel=2))
    ds = export_dataset(tmp_path / "run", tmp_path / "ds")
    steps = sum(len(json.loads(l)["steps"]) for l in (tmp_path / "run" / "episodes.jsonl").read_text().splitlines())
    assert len(ds) == steps == 2 + 4
    row = ds[0]
    assert row["task_id"] == "open-search" and row["screenshot"].size == (1280, 720)
    assert json.loads(row["actions"])[0]["name"] == "click"
    reloaded = datasets.load_from_disk(str(tmp_path / "ds"))
    assert reloaded[1]["termination_reason"] == "done" and reloaded[1]["success"]


def test_rows_carry_the_instruction_and_the_conversation_the_policy_saw(site, tmp_path):
    tasks = hand_tasks(site.url)[:2]
    run(run_tasks(tasks, OraclePolicy, tmp_path / "run", parallel=2))
    ds = export_dataset(tmp_path / "run")
    by_task = {t.id: t for t in tasks}
    for row in ds:
        assert row["instruction"] == by_task[row["task_id"]].instruction
        roles = [m["role"] for m in row["messages"]]
        assert roles[0] == "system" and roles[-1] == "assistant" and roles.count("assistant") == row["step"]  # steps count from 1
        assert row["messages"][1]["content"][0]["text"].startswith(f"Task: {row['instruction']}")
        placeholders = sum(p["type"] == "image" for m in row["messages"] for p in m["content"])
        assert placeholders == len(row["images"]) == 1 and row["images"][0].size == (1280, 720)  # keep_images=1
        assert row["messages"][-1]["content"][0]["text"].startswith("<think>")
    first = ds[0]
    # the oracle clicked (150, 115) in viewport pixels; the messages say it on Qwen3-VL's 0-1000 grid
    call = json.loads(first["messages"][-1]["content"][0]["text"].split("<tool_call>")[1].split("</tool_call>")[0])
    assert (call["arguments"]["x"], call["arguments"]["y"]) == (round(150 / 1280 * 1000), round(115 / 720 * 1000))
    assert json.loads(first["actions"])[0]["arguments"]["x"] == 150     # the run's own record is unchanged
    pixels = export_dataset(tmp_path / "run", frame="viewport")[0]
    call = json.loads(pixels["messages"][-1]["content"][0]["text"].split("<tool_call>")[1].split("</tool_call>")[0])
    assert (call["arguments"]["x"], call["arguments"]["y"]) == (150, 115)


def test_a_run_without_its_tasks_file_is_refused_with_the_fix(site, tmp_path):
    import pytest

    from weblica.dataset import DatasetError

    tasks = hand_tasks(site.url)[:1]
    run(run_tasks(tasks, OraclePolicy, tmp_path / "run"))
    (tmp_path / "run" / "tasks.jsonl").unlink()
    with pytest.raises(DatasetError, match="has no tasks.jsonl.*pass tasks="):
        export_dataset(tmp_path / "run")
    assert len(export_dataset(tmp_path / "run", tasks=tasks)) == 2


def test_trl_sft_trainer_trains_a_step_on_the_exported_rows(site, tmp_path):
    """The dataset plugs into TRL's SFTTrainer as it is (messages + images), with the tiny Qwen3-VL: one
    optimizer step runs, its loss is finite and the weights move."""
    import math

    import torch
    from transformers import Qwen3VLForConditionalGeneration
    from trl import SFTConfig, SFTTrainer

    from fixtures_models import tiny_checkpoint
    from weblica.integrations.trl import load_processor

    tasks = hand_tasks(site.url)[:2]
    run(run_tasks(tasks, OraclePolicy, tmp_path / "run", parallel=2))
    ds = export_dataset(tmp_path / "run").filter(lambda row: row["success"] and not row["removed"])
    path = tiny_checkpoint()
    model = Qwen3VLForConditionalGeneration.from_pretrained(path)
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    args = SFTConfig(output_dir=str(tmp_path / "trl"), max_steps=1, per_device_train_batch_size=2,
                     learning_rate=1e-3, report_to=[], use_cpu=True, save_strategy="no", logging_steps=1,
                     max_length=None, seed=0, dataloader_num_workers=0)
    trainer = SFTTrainer(model=model, args=args, train_dataset=ds.select_columns(["messages", "images"]),
                         processing_class=load_processor(path))
    result = trainer.train()
    assert result.global_step == 1 and math.isfinite(result.training_loss) and result.training_loss > 0
    moved = [n for n, p in model.named_parameters() if not torch.equal(p.detach(), before[n])]
    assert moved
