"""Run analysis: reasoning-pattern proxies on assistant turns (OpenWebRL appendix D) and rule-based error
analysis of failed episodes (appendix E)."""
from weblica.analysis.failures import CATEGORIES, analyze_failures, classify, failure_report
from weblica.analysis.patterns import LABELS, proxy_labels, reasoning_text
from weblica.analysis.reasoning import analyze_run, compare_reports, pattern_report

__all__ = ["CATEGORIES", "LABELS", "analyze_failures", "analyze_run", "classify", "compare_reports",
           "failure_report", "pattern_report", "proxy_labels", "reasoning_text"]
