"""The evaluation report page is rendered by jinja2 (weblica/eval/templates/report.html.j2, autoescaped):
every value that comes from a task file or a run (task ids, skills, metadata) is text on the page, never
markup; the figures are the report's."""
import re

from weblica.eval.report import render_html

HOSTILE = "<img src=x onerror=alert(1)>"


def report():
    metrics = {"episodes": 4, "tasks": 2, "success_rate": 0.5, "abort_excluded_success_rate": None,
               "pass_at_k": {"1": 0.5, "2": 1.0}, "aborted": 1, "mean_steps": 3.25,
               "termination_reasons": {"done": 3, "env_error": 1}}
    return {"meta": {"policy": "<script>alert(2)</script>", "out": "run'dir", "k": 2}, "ks": [1, 2],
            "overall": metrics, "breakdowns": {"skill": {HOSTILE: {**metrics, "success_rate": 1.0}}},
            "sections": {"blocked sites": {"evil.test": 2, "note": "<b>n/a</b>"}},
            "per_task": [{"task_id": HOSTILE, "n": 2, "c": 1, "aborted": 0, "skill": HOSTILE, "mean_steps": None}],
            "final_screens": {HOSTILE: "\" onload=\"alert(3)"}}


def test_untrusted_text_is_escaped_everywhere():
    html = render_html(report())
    assert "<img src=x" not in html and "<script>alert" not in html and "<b>n/a" not in html
    assert 'onload="alert' not in html
    assert html.count("&lt;img src=x onerror=alert(1)&gt;") == 3      # a breakdown row, a task row, its skill
    assert "weblica eval: &lt;script&gt;alert(2)&lt;/script&gt;" in html
    assert "weblica view run&#39;dir" in html


def test_the_figures_are_the_reports():
    html = render_html(report())
    cards = re.findall(r"<div class=\"card\"><b>([^<]*)</b><span>([^<]*)</span></div>", html)
    assert cards == [("50.0%", "success (official)"), ("–", "success, aborts excluded"), ("100.0%", "pass@2"),
                     ("4", "episodes"), ("2", "tasks"), ("1", "aborted"), ("3.2", "mean steps")]
    assert '<span style="width:75.0%"></span>' in html and '<span style="width:25.0%"></span>' in html
    assert "<th>pass@1</th><th>pass@2</th>" in html and "<h2>By skill</h2>" in html
    assert '<td class="ok">1/2</td>' in html and "<td>0.0</td>" in html   # a task's mean steps None: 0.0
    assert html.startswith("<!doctype html>") and html.endswith("</html>\n")
