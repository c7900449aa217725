"""Evaluation reports: `report.json` for machines and a self-contained `report.html` for people.

The report lives in the run directory beside `episodes.jsonl` and `screens/`, so the page can show
each task's final screenshot by relative path and `weblica view DIR` opens the same directory.
"""
from __future__ import annotations

import json
from datetime import datetime, timezone
from functools import lru_cache
from pathlib import Path
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined
from markupsafe import Markup

from weblica.env.episode import Trajectory
from weblica.eval.metrics import EvalMetrics

REPORT_JSON = "report.json"
REPORT_HTML = "report.html"


def build_report(metrics: EvalMetrics, trajectories: list[Trajectory], meta: dict[str, Any],
                 sections: dict[str, dict[str, Any]] | None = None) -> dict[str, Any]:
    """The report as one JSON-able dict: run metadata, every metric, and extra count tables
    (live mode adds fault attribution and the host blocklist)."""
    final_screens: dict[str, str] = {}
    for traj in trajectories:  # the first episode's last screenshot stands for each task
        if traj.task_id not in final_screens:
            last = traj.steps[-1].screenshot_sha256 if traj.steps else traj.start_screenshot_sha256
            if last:
                final_screens[traj.task_id] = last
    return {
        "meta": {"created": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"), **meta},
        **metrics.to_dict(),
        "final_screens": final_screens,
        "sections": sections or {},
    }


def write_report(out_dir: str | Path, report: dict[str, Any]) -> tuple[Path, Path]:
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    json_path, html_path = out / REPORT_JSON, out / REPORT_HTML
    json_path.write_text(json.dumps(report, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    html_path.write_text(render_html(report), encoding="utf-8")
    return json_path, html_path


CSS = """
body{font:14px/1.45 system-ui,sans-serif;margin:0;color:#1d2330;background:#f5f6f8}
header{background:#1d2330;color:#fff;padding:18px 28px} header h1{margin:0 0 4px;font-size:20px}
header .meta{opacity:.75;font-size:12px} main{padding:20px 28px;max-width:1200px}
.cards{display:flex;gap:14px;flex-wrap:wrap;margin-bottom:18px}
.card{background:#fff;border-radius:8px;padding:12px 18px;min-width:130px;box-shadow:0 1px 2px #0002}
.card b{display:block;font-size:24px} .card span{font-size:12px;color:#667}
section{background:#fff;border-radius:8px;padding:6px 18px 14px;margin-bottom:16px;box-shadow:0 1px 2px #0002}
h2{font-size:15px;margin:12px 0 8px} table{border-collapse:collapse;width:100%}
th,td{text-align:left;padding:4px 8px;border-bottom:1px solid #eceef2;font-variant-numeric:tabular-nums}
thead th{font-size:12px;color:#667;font-weight:600}
.bar{display:inline-block;width:80px;height:8px;background:#e4e7ec;border-radius:4px;vertical-align:middle}
.bar span{display:block;height:100%;background:#2f9e6b;border-radius:4px}
.ok{color:#2f9e6b;font-weight:600} .bad{color:#c2413b;font-weight:600}
img.thumb{width:160px;border:1px solid #ccd;border-radius:4px}
"""


def render_html(report: dict[str, Any]) -> str:
    """A static page: headline figures, breakdowns, termination reasons and a per-task table
    (templates/report.html.j2; every value escaped)."""
    meta, overall, ks = report["meta"], report["overall"], report["ks"]

    def pct(value: float | None) -> str:
        return "–" if value is None else f"{value * 100:.1f}%"

    cards = [("success (official)", pct(overall["success_rate"])),
             ("success, aborts excluded", pct(overall["abort_excluded_success_rate"]))]
    cards += [(f"pass@{k}", pct(overall["pass_at_k"].get(str(k)))) for k in ks if k != 1]
    cards += [("episodes", str(overall["episodes"])), ("tasks", str(overall["tasks"])),
              ("aborted", str(overall["aborted"])), ("mean steps", f"{overall['mean_steps']:.1f}")]
    return _template().render(
        title=meta.get("title") or f"weblica eval: {meta.get('policy', '')}", meta=meta, css=Markup(CSS),
        cards=cards, overall=overall, ks=ks, breakdowns=report["breakdowns"], sections=report.get("sections", {}),
        labels=[key for key in ("skill", "category", "difficulty") if key in report["breakdowns"]],
        per_task=report["per_task"], final_screens=report["final_screens"]) + "\n"


@lru_cache(maxsize=1)
def _template() -> Any:
    env = Environment(loader=PackageLoader("weblica.eval", "templates"), autoescape=True, undefined=StrictUndefined,
                      trim_blocks=False, keep_trailing_newline=False)
    return env.get_template("report.html.j2")
