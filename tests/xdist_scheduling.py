"""How `pytest -n 2 --dist loadfile` spreads the suite over its workers.

Plain loadfile already keeps each file on one worker, so a file's module fixtures (recorded sites,
generated sites, tiny models) are built once. On top of it:
- files that must not run beside each other form one unit, run on one worker one after the other:
  the two Ray files (each starts a local Ray instance with 2 CPUs and its own object store), and the
  training files that share the test site at the first free port of 41000-41099 (the URL is in every
  prompt, so a second copy of the site on 41001 would sample other rollouts than the ones their
  assertions were written for; their two-rank runs also spawn 2 processes each);
- the costliest unit is handed out first (longest-processing-time order), so neither worker is left
  with a long file at the end while the other idles. xdist's own order is by number of tests, which
  says little about time here. Costs are the serial seconds per file of session 12's suite run; a
  stale or missing cost changes only the balance, never what runs.
Other --dist modes are xdist's own.
"""
from __future__ import annotations

from typing import Any

import pytest

TOGETHER = {
    "tests/cache/test_cache_ray.py": "ray",
    "tests/eval/test_rollout_ray.py": "ray",
    "tests/synth/test_synth_ray.py": "ray",
    "tests/train/test_train_loops.py": "site-on-port-41000",
    "tests/train/test_train_distributed.py": "site-on-port-41000",
    "tests/train/test_train_fsdp.py": "site-on-port-41000",
}

# serial seconds per file (a quiet run, /work/s12/slowest_files.txt), the files over 15 s
SERIAL_S = {
    "tests/synth/test_synth_distractors.py": 146, "tests/scoring/test_adversarial_policy.py": 140,
    "tests/synth/test_synth_episode_structure.py": 133, "tests/scoring/test_adversarial_policy_seeds.py": 100,
    "tests/synth/test_synth_validate.py": 98, "tests/synth/test_synth_gallery.py": 96, "tests/train/test_train_distributed.py": 90,
    "tests/train/test_train_fsdp.py": 88, "tests/synth/test_synth_flows.py": 62, "tests/integrations/test_integrations_browsergym.py": 60,
    "tests/env/test_env_server_instances.py": 52, "tests/cache/test_cache_build.py": 51, "tests/synth/test_synth_instances.py": 47,
    "tests/synth/test_synth_genre_flows_services.py": 44, "tests/synth/test_synth_validate_clock.py": 41,
    "tests/synth/test_synth_validate_seeds.py": 40, "tests/synth/test_synth_genre_flows.py": 39,
    "tests/synth/test_synth_flows_hotels_seats.py": 39, "tests/integrations/test_integrations_verl.py": 36, "tests/cache/test_cache_ray.py": 36,
    "tests/synth/test_synth_ray.py": 90, "tests/synth/test_synth_mechanics.py": 140,
    "tests/synth/test_synth_page_lint.py": 60, "tests/synth/test_synth_genre_start_pages.py": 60,
    "tests/synth/test_synth_llm.py": 35, "tests/synth/test_synth_hotel_availability.py": 35,
    "tests/synth/test_synth_components.py": 35, "tests/synth/test_synth_catalog.py": 32, "tests/cache/test_cache_news_e2e.py": 32,
    "tests/train/test_train_loops.py": 30, "tests/synth/test_synth_intents.py": 29, "tests/synth/test_synth_cli.py": 28,
    "tests/env/test_navigation_policy.py": 27, "tests/env/test_env_server_hardening.py": 25,
    "tests/env/test_env_server_sources.py": 23, "tests/cache/test_demo_cache.py": 21, "tests/env/test_env_robustness.py": 19,
    "tests/synth/test_synth_catalog_size.py": 18, "tests/train/test_bench_learn_variants.py": 18,
    "tests/synth/test_synth_ticket_capacity.py": 16, "tests/synth/test_synth_best_available.py": 16,
    "tests/train/test_bench_learn.py": 16, "tests/synth/test_backend_retry_attacks.py": 15,
}


def unit_of(nodeid: str) -> str:
    """The unit a test is scheduled with: its file, or the group its file runs in."""
    path = nodeid.split("::", 1)[0]
    return TOGETHER.get(path, path)


def unit_costs() -> dict[str, float]:
    costs: dict[str, float] = {}
    for path, seconds in SERIAL_S.items():
        costs[unit_of(path)] = costs.get(unit_of(path), 0.0) + seconds
    return costs


@pytest.hookimpl(optionalhook=True)   # a hook of pytest-xdist: without it installed, never called
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class GroupedCostliestFirst(LoadFileScheduling):
        costs = unit_costs()

        def _split_scope(self, nodeid: str) -> str:
            return unit_of(nodeid)

        def _assign_work_unit(self, node: Any) -> None:
            # max keeps the first of equals: units without a cost go in xdist's own order
            costliest = max(self.workqueue, key=lambda unit: self.costs.get(unit, 0.0))
            self.workqueue.move_to_end(costliest, last=False)
            super()._assign_work_unit(node)

    return GroupedCostliestFirst(config, log)
