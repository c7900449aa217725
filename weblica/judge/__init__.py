"""Open trajectory judges: distil one from judged runs (OpenWebRL-Judge) and measure any judge's agreement
with reference labels."""
from weblica.judge.agree import Agreement, agreement, judge_agreement
from weblica.judge.distill import JudgeExample, collect_examples, distill_judge

__all__ = ["Agreement", "JudgeExample", "agreement", "collect_examples", "distill_judge", "judge_agreement"]
