"""Task sets beyond one site's checks: WebGym rubric tasks (fact groups), their decomposition into easier
sub-tasks, and importers from published task files (WebGym, InSTA)."""
from weblica.tasks.decompose import decompose_task, decompose_tasks, valid_subsets
from weblica.tasks.importers import import_tasks
from weblica.scoring.fact_groups import FactGroup, difficulty, fact_groups, parse_fact_groups
from weblica.scoring.rubric import RubricJudge

__all__ = ["FactGroup", "RubricJudge", "decompose_task", "decompose_tasks", "difficulty", "fact_groups",
           "import_tasks", "parse_fact_groups", "valid_subsets"]
