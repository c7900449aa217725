"""`weblica analyze RUN_DIR [--compare RUN_DIR2]` and `weblica analyze --failures RUN_DIR`."""
from __future__ import annotations

import click

from weblica.cli import UserError, emit


def register(cli: click.Group) -> None:
    @cli.command("analyze")
    @click.argument("run_dir", type=click.Path(file_okay=False))
    @click.option("--compare", "compare_dir", type=click.Path(file_okay=False),
                  help="a second run (e.g. a later checkpoint): report the change from RUN_DIR to it")
    @click.option("--failures", is_flag=True, help="error analysis of the failed episodes instead")
    @click.option("--unit", type=click.Choice(["chars", "tokens"]), default="chars", show_default=True,
                  help="response length unit (tokens: the sampled token ids where recorded)")
    @click.option("--viewer-url", default="http://127.0.0.1:8765", show_default=True,
                  help="where `weblica view RUN_DIR` serves, for example links")
    @click.option("--examples", default=3, show_default=True, help="example episodes per failure category")
    @click.option("--json", "as_json", is_flag=True)
    def analyze(run_dir: str, compare_dir: str | None, failures: bool, unit: str, viewer_url: str, examples: int,
                as_json: bool) -> None:
        """Reasoning-pattern proxies per assistant turn (frequency, mean length, change between runs), or
        with --failures the failed episodes grouped into environment/access, reasoning/constraint,
        grounding/interaction and task definition."""
        from weblica.analysis.failures import analyze_failures, format_failures
        from weblica.analysis.reasoning import analyze_run, compare_reports, format_report

        try:
            if failures:
                report = analyze_failures(run_dir, viewer_url, examples)
                emit(report, as_json, format_failures(report))
                return
            report = analyze_run(run_dir, unit)
            if compare_dir:
                after = analyze_run(compare_dir, unit)
                comparison = compare_reports(report, after)
                emit({"before": report, "after": after, "change": comparison}, as_json,
                     format_report(report) + "\n\n" + format_report(after, comparison))
                return
            emit(report, as_json, format_report(report))
        except (FileNotFoundError, ValueError) as exc:
            raise UserError(str(exc)) from None
