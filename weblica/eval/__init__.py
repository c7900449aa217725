"""Evaluation: metrics (success, pass@k, breakdowns), offline runs with reports, and live benchmarks
with their loaders, judges, host blocklist and fault attribution. `weblica eval` and `weblica view`
are registered from `weblica.eval.commands`."""
