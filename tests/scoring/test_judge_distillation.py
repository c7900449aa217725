"""Judge distillation and agreement: hand-computed metrics, example sourcing, and an end-to-end CPU run that
distils a tiny judge and measures it with `weblica judge agree`."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from episode_records import cli_with, make_run, step, traj
from weblica.judge.agree import agreement, judge_agreement
from weblica.judge.distill import collect_examples, split_examples

DONE = [{"name": "done", "arguments": {"answer": "42"}}]
TASKS = [{"id": f"t{i}", "start_url": "http://shop.test/", "instruction": f"Find the price of item {i}.",
          "checks": [{"type": "answer_match", "expected": "42"}]} for i in range(4)]


def test_agreement_metrics_by_hand() -> None:
    predicted = ["success", "failure", "success", None, "website_failure", "success"]
    labels = [True, True, False, False, True, True]
    m = agreement(predicted, labels)
    assert (m.tp, m.fp, m.tn, m.fn, m.unreadable, m.website_failure) == (2, 1, 1, 2, 1, 1)
    assert m.accuracy == 3 / 6 and m.precision == 2 / 3 and m.recall == 2 / 4
    assert m.f1 == pytest.approx(4 / 7)  # 2 * (2/3) * (1/2) / (2/3 + 1/2)


def test_agreement_without_positive_predictions_is_zero_not_an_error() -> None:
    m = agreement(["failure", None], [True, False])
    assert (m.accuracy, m.precision, m.recall, m.f1) == (0.5, 0.0, 0.0, 0.0)
    with pytest.raises(ValueError):
        agreement(["success"], [True, False])


def _run(directory: Path) -> Path:
    """Six judged episodes: checks decided four (two pass), a judge decided one, one is an env failure."""
    trajectories = []
    for i in range(4):
        ok = i % 2 == 0
        trajectories.append(traj(f"c{i}", [step(1, "<think>Read the price.</think>", f"p{i}"),
                                           step(2, "<think>Answer.</think>", f"p{i}", actions=DONE)],
                                 task_id=f"t{i}", success=ok, answer="42" if ok else "41",
                                 check_results=[{"type": "answer_match", "passed": ok,
                                                 "detail": f"answer {'42' if ok else '41'!r} vs '42'"}]))
    trajectories.append(traj("j0", [step(1, "<think>Answer.</think>", "q0", actions=DONE)], task_id="t1",
                             success=True, answer="42",
                             metadata={"reward": {"source": "judge", "judge": "The price 42 is shown.\nVerdict: successful"}}))
    trajectories.append(traj("x0", [step(1, "<think>Open.</think>", "q1")], task_id="t2", reason="env_error",
                             removed=True))
    return make_run(directory, trajectories, TASKS)


def test_examples_take_labels_then_judge_text_then_checks(tmp_path: Path) -> None:
    run = _run(tmp_path / "run")
    labels = tmp_path / "labels.jsonl"
    labels.write_text(json.dumps({"run": str(run), "episode_id": "c1", "success": True,
                                  "rationale": "A stronger judge disagrees.\nVerdict: successful"}) + "\n")
    examples, tasks, trajs = collect_examples([run], labels)
    by_id = {e.episode_id: e for e in examples}
    assert set(by_id) == {"c0", "c1", "c2", "c3", "j0"}  # the env failure carries no verdict
    assert by_id["c1"].source == "labels" and by_id["c1"].success is True
    assert by_id["c1"].target() == "A stronger judge disagrees.\nVerdict: successful"
    assert by_id["j0"].source == "judge" and by_id["j0"].target().endswith("Verdict: successful")
    assert by_id["c3"].source == "checks" and by_id["c3"].target().endswith("Verdict: unsuccessful")
    assert "answer '41'" in by_id["c3"].rationale
    train, held = split_examples(examples, 0.4, seed=3)
    assert len(held) == 2 and len(train) == 3 and not {e.episode_id for e in train} & {e.episode_id for e in held}
    assert split_examples(examples, 0.4, seed=3) == (train, held)


def test_agree_against_another_label_file(tmp_path: Path) -> None:
    run = _run(tmp_path / "run")
    ref, other = tmp_path / "ref.jsonl", tmp_path / "other.jsonl"
    ref.write_text("".join(json.dumps({"run": str(run), "episode_id": e, "success": s}) + "\n"
                           for e, s in [("c0", True), ("c1", False), ("c2", True)]))
    other.write_text("".join(json.dumps({"run": str(run), "episode_id": e, "success": s}) + "\n"
                             for e, s in [("c0", True), ("c1", True)]))  # c2 unlabelled -> unreadable
    result = judge_agreement(f"labels:{other}", ref)
    assert (result["tp"], result["fp"], result["fn"], result["unreadable"]) == (1, 1, 1, 1)
    assert result["accuracy"] == round(1 / 3, 4)


def test_distill_then_agree_end_to_end_on_cpu(tmp_path: Path, monkeypatch) -> None:
    """The real path: SFT a tiny Qwen3-VL on judge inputs, then run it as a judge on the held-out set.
    `--model tiny` builds its own base in OUT/base-tiny (the CLI default path, and no shared /tmp state)."""
    import torch

    torch.set_num_threads(1)
    run = _run(tmp_path / "run")
    out = tmp_path / "judge"
    runner, cli = CliRunner(), cli_with("weblica.judge.commands")
    result = runner.invoke(cli, ["judge", "distill", "--runs", str(run), "--out", str(out), "--model", "tiny",
                                 "--heldout", "0.4", "--epochs", "2", "--batch-size", "3",
                                 "--learning-rate", "1e-3", "--device", "cpu", "--json"])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert (summary["examples"], summary["train"], summary["heldout"], summary["steps"]) == (5, 3, 2, 2)
    assert summary["sources"] == {"checks": 4, "judge": 1}
    losses = [json.loads(line)["loss"] for line in (out / "metrics.jsonl").read_text().splitlines()]
    assert len(losses) == 2 and losses[1] < losses[0]  # the same 3 targets, seen again after one step
    assert (out / "final" / "config.json").is_file()

    # what the distilled model generates (greedily) for each held-out episode: two SFT steps leave its first
    # token nearly uniform, so whether that token is the stop token (an empty text) is the weights' luck;
    # that each episode's text is the model's own generation is not
    from weblica.policy.backends.hf import HFBackend

    generated = []
    sample = HFBackend._sample

    def recording(self, prompt, seed):
        generation = sample(self, prompt, seed)
        generated.append(generation)
        return generation

    monkeypatch.setattr(HFBackend, "_sample", recording)
    rows = out / "rows.jsonl"
    result = runner.invoke(cli, ["judge", "agree", "--judge", f"hf:{out / 'final'};device=cpu", "--labels",
                                 summary["heldout_labels"], "--max-new-tokens", "16", "--out", str(rows), "--json"])
    assert result.exit_code == 0, result.output
    metrics = json.loads(result.stdout)
    verdicts = [json.loads(line) for line in rows.read_text().splitlines()]
    assert metrics["n"] == len(verdicts) == 2
    recomputed = agreement([v["verdict"] for v in verdicts], [v["success"] for v in verdicts]).to_dict()
    assert {k: metrics[k] for k in recomputed} == recomputed
    assert len(generated) == 2 and all(g.token_ids for g in generated)  # the model generated for each episode
    assert [v["text"] for v in verdicts] == [g.text[-500:] for g in generated]


def test_strict_agreement_ignores_verdicts_echoed_from_feedback(tmp_path: Path, monkeypatch) -> None:
    from weblica.judge import agree as agree_module
    from weblica.scoring.judge import JudgeVerdict, parse_verdict

    replies = {"c0": "Success: clicked <button>. Step 2.", "c1": "The answer is wrong.\nVerdict: unsuccessful",
               "c2": "Price 42 shown.\nVerdict: successful"}

    class FakeJudge:
        async def __call__(self, task, answer, steps, screenshots):
            text = replies[{"t0": "c0", "t1": "c1", "t2": "c2"}[task.id]]
            return JudgeVerdict(parse_verdict(text), text)

    monkeypatch.setattr(agree_module, "make_trajectory_judge", lambda spec, max_new_tokens: FakeJudge())
    run = _run(tmp_path / "run")
    ref = tmp_path / "ref.jsonl"
    ref.write_text("".join(json.dumps({"run": str(run), "episode_id": e, "success": s}) + "\n"
                           for e, s in [("c0", True), ("c1", False), ("c2", True)]))
    strict = judge_agreement("hf:unused", ref)
    assert (strict["tp"], strict["tn"], strict["fn"], strict["unreadable"]) == (1, 1, 1, 1)
    lenient = judge_agreement("hf:unused", ref, strict=False)
    assert (lenient["tp"], lenient["tn"], lenient["unreadable"], lenient["accuracy"]) == (2, 1, 0, 1.0)


def test_live_eval_verdicts_are_judge_examples_and_judge_errors_are_skipped(tmp_path: Path) -> None:
    live = traj("l0", [step(1, "<think>Answer.</think>", "r0", actions=DONE)], task_id="t0", success=False,
                metadata={"judge": {"success": False, "reason": "The price is not shown.", "protocol": "webvoyager"}})
    broken = traj("l1", [step(1, "<think>Answer.</think>", "r1", actions=DONE)], task_id="t1",
                  metadata={"judge_error": "HTTP 500"})
    run = make_run(tmp_path / "run", [live, broken], TASKS)
    examples, _, _ = collect_examples([run])
    assert [(e.episode_id, e.source, e.success, e.rationale) for e in examples] == [
        ("l0", "judge", False, "The price is not shown.")]
