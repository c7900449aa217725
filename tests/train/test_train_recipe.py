"""Every recipe in train/ parses into its trainers' configs, and teacher text is cloned in the student's frame."""
from pathlib import Path

from weblica.env.episode import StepRecord, Trajectory
from weblica.policy.context import check_response
from weblica.policy.coords import CoordinateFrame
from weblica.train.config import GRPOConfig, SFTConfig, load_config
from weblica.train.samples import in_frame

RECIPES = Path(__file__).resolve().parents[2] / "train"
RECIPE = RECIPES / "tiny-cpu.yaml"


def test_tiny_cpu_recipe_has_both_stages():
    sft, grpo = load_config(RECIPE, "sft"), load_config(RECIPE, "grpo")
    assert isinstance(sft, SFTConfig) and isinstance(grpo, GRPOConfig)
    assert sft.model == "tiny" and sft.teacher == "oracle" and sft.tasks == grpo.tasks
    assert grpo.model == str(Path(sft.output_dir) / "final")  # GRPO starts from the SFT export


def test_the_8b_recipe_loads_as_documented():
    config = load_config(RECIPES / "qwen3vl-8b-grpo.yaml")
    assert isinstance(config, GRPOConfig)
    assert (config.device, config.dtype, config.rollout_backend) == ("cuda", "bfloat16", "vllm")
    assert config.gradient_checkpointing and config.freeze_vision and Path(config.model).is_absolute()
    assert (config.parallelism, config.master_weights) == ("fsdp", "auto")  # sharded fp32 masters: fits 80 GB


def test_counts_below_one_name_the_option():
    import pytest

    from weblica.train.config import ConfigError, config_from_dict

    for cls, name in ((GRPOConfig, "micro_batch_size"), (GRPOConfig, "group_size"), (SFTConfig, "epochs")):
        with pytest.raises(ConfigError, match=f"{name} must be a whole number >= 1, not 0"):
            config_from_dict(cls, {name: 0})
    with pytest.raises(ConfigError, match="mini_batches must be a whole number >= 1, not '2'"):
        config_from_dict(GRPOConfig, {"mini_batches": "2"})
    assert config_from_dict(GRPOConfig, {"micro_batch_size": 4}).micro_batch_size == 4


def test_teacher_pixels_are_cloned_on_the_student_grid():
    frame = CoordinateFrame.for_convention("relative1000")
    actions = [{"name": "hover", "arguments": {"x": 640.0, "y": 36.0}},
               {"name": "drag", "arguments": {"x1": 0.0, "y1": 0.0, "x2": 1279.0, "y2": 719.0}}]
    oracle_text = "<think>Following the oracle plan.</think>\n<tool_call>{\"arguments\": {\"x\": 640.0}}</tool_call>"
    sampled = StepRecord(1, "<think>mine</think>", [{"name": "done", "arguments": {"answer": ""}}], [], "u", "0" * 64,
                         token_ids=[1, 2])
    traj = Trajectory("t", 0, "e", "u", "0" * 64, steps=[StepRecord(0, oracle_text, actions, [], "u", "0" * 64), sampled])
    converted = in_frame(traj, frame)
    text = converted.steps[0].response
    assert text.startswith("<think>Following the oracle plan.</think>\n") and '"x": 500, "y": 50' in text
    assert '"x2": 999, "y2": 999' in text
    parsed = check_response(text, frame)  # read back as the policy reads it: the teacher's pixels again
    hover, drag = parsed.actions
    assert parsed.ok and (hover.name, round(hover.args["x"]), round(hover.args["y"])) == ("hover", 640, 36)
    assert (round(drag.args["x2"]), round(drag.args["y2"])) == (1279, 719)
    assert converted.steps[1] is sampled  # the student's own sampled turns stay verbatim
    assert traj.steps[0].response == oracle_text  # the input is not modified


def test_oracle_teacher_plays_on_the_student_grid():
    from weblica.env.actions import Action
    from weblica.env.task import Task
    from weblica.train.sft import on_grid

    frame = CoordinateFrame.for_convention("relative1000")
    task = Task(id="t", start_url="http://x.test/", instruction="i",
                oracle=[Action("hover", {"x": 472.0, "y": 30.0}), Action("done", {"answer": ""})])
    snapped = on_grid(task, frame)
    # 472 px is 368.75 on the grid; the student writes 369, which lands on 472.32 px
    assert snapped.oracle[0].args == {"x": 472.32, "y": 30.24} and snapped.oracle[1] == task.oracle[1]
    assert task.oracle[0].args["x"] == 472.0


def test_oracle_teacher_speaks_its_thoughts_unless_told_not_to():
    import asyncio

    from weblica.env.actions import Action
    from weblica.env.task import Task
    from weblica.policy.oracle import OraclePolicy
    from weblica.train.sft import teacher_task

    frame = CoordinateFrame.for_convention("relative1000")
    task = Task(id="t", start_url="http://x.test/", instruction="Open the Cardio section under Classes.",
                oracle=[Action("hover", {"x": 472.0, "y": 30.0}), Action("click", {"x": 300.0, "y": 80.0})],
                oracle_thoughts=['Hover over "Classes".', 'Click "Cardio".'])

    def first_text(config: SFTConfig) -> str:
        played = teacher_task(task, config, frame)
        assert played.oracle[0].args == {"x": 472.32, "y": 30.24}  # snapped to the student's grid either way
        return asyncio.run(OraclePolicy().act(None, played, [])).text

    assert first_text(SFTConfig()).startswith('<think>Hover over "Classes".</think>')
    assert first_text(SFTConfig(oracle_thoughts=False)).startswith("<think>Following the oracle plan.</think>")
    assert load_config(RECIPE, "sft").oracle_thoughts is False  # the tiny recipe clones the fixed sentence
