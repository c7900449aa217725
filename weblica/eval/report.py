"""Evaluation reports: `report.json` for machines and a self-contained `report.html` for people.

The report lives in the run directory beside `episodes.jsonl` and `screens/`, so the page can show
each task's final screenshot by relative path and `weblica view DIR` opens the same directory.
"""
from __future__ import annotations

import json
from datetime import datetime, timezone
from html import escape
from pathlib import Path
from typing import Any

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


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{value * 100:.1f}%"


def _bar(value: float | None) -> str:
    width = 0 if value is None else max(0.0, min(1.0, value)) * 100
    return f'<span class="bar"><span style="width:{width:.1f}%"></span></span>'


def _metrics_row(label: str, m: dict[str, Any], ks: list[int]) -> str:
    cells = [f"<th>{escape(label)}</th>", f"<td>{m['episodes']}</td>", f"<td>{m['tasks']}</td>",
             f"<td>{_bar(m['success_rate'])} {_pct(m['success_rate'])}</td>",
             f"<td>{_pct(m['abort_excluded_success_rate'])}</td>"]
    cells += [f"<td>{_pct(m['pass_at_k'].get(str(k)))}</td>" for k in ks]
    cells += [f"<td>{m['aborted']}</td>", f"<td>{m['mean_steps']:.1f}</td>"]
    return "<tr>" + "".join(cells) + "</tr>"


def _metrics_table(rows: list[tuple[str, dict[str, Any]]], ks: list[int], first: str) -> str:
    head = ([first, "episodes", "tasks", "success", "abort-excluded"] + [f"pass@{k}" for k in ks]
            + ["aborted", "mean steps"])
    return ("<table><thead><tr>" + "".join(f"<th>{escape(h)}</th>" for h in head) + "</tr></thead><tbody>"
            + "".join(_metrics_row(label, m, ks) for label, m in rows) + "</tbody></table>")


def _count_table(title: str, counts: dict[str, Any]) -> str:
    total = sum(v for v in counts.values() if isinstance(v, (int, float))) or 1
    rows = "".join(
        f"<tr><th>{escape(str(k))}</th><td>{escape(str(v))}</td>"
        f"<td>{_bar(v / total) if isinstance(v, (int, float)) else ''}</td></tr>" for k, v in counts.items())
    return f"<section><h2>{escape(title)}</h2><table class='counts'><tbody>{rows}</tbody></table></section>"


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
    """A static page: headline figures, breakdowns, termination reasons and a per-task table."""
    meta, overall, ks = report["meta"], report["overall"], report["ks"]
    title = meta.get("title") or f"weblica eval: {meta.get('policy', '')}"
    meta_line = " · ".join(f"{escape(str(k))}: {escape(str(v))}" for k, v in meta.items() if k != "title")
    cards = [("success (official)", _pct(overall["success_rate"])),
             ("success, aborts excluded", _pct(overall["abort_excluded_success_rate"]))]
    cards += [(f"pass@{k}", _pct(overall["pass_at_k"].get(str(k)))) for k in ks if k != 1]
    cards += [("episodes", str(overall["episodes"])), ("tasks", str(overall["tasks"])),
              ("aborted", str(overall["aborted"])), ("mean steps", f"{overall['mean_steps']:.1f}")]
    parts = [f"<!doctype html><html><head><meta charset='utf-8'><title>{escape(title)}</title>"
             f"<style>{CSS}</style></head><body><header><h1>{escape(title)}</h1>"
             f"<div class='meta'>{meta_line}</div></header><main>",
             "<div class='cards'>" + "".join(f"<div class='card'><b>{v}</b><span>{escape(k)}</span></div>"
                                              for k, v in cards) + "</div>",
             f"<section><h2>Overall</h2>{_metrics_table([('all', overall)], ks, '')}</section>"]
    for name, groups in report["breakdowns"].items():
        parts.append(f"<section><h2>By {escape(name)}</h2>"
                     f"{_metrics_table(list(groups.items()), ks, name)}</section>")
    parts.append(_count_table("Termination reasons", overall["termination_reasons"]))
    for name, counts in report.get("sections", {}).items():
        parts.append(_count_table(name, counts))
    labels = [key for key in ("skill", "category", "difficulty") if key in report["breakdowns"]]
    rows = []
    for t in report["per_task"]:
        sha = report["final_screens"].get(t["task_id"])
        img = f"<img class='thumb' loading='lazy' src='screens/{escape(sha)}.png' alt=''>" if sha else ""
        cls = "ok" if t["c"] else "bad"
        rows.append(f"<tr><th>{escape(t['task_id'])}</th><td class='{cls}'>{t['c']}/{t['n']}</td>"
                    f"<td>{t['aborted']}</td>" + "".join(f"<td>{escape(t[key])}</td>" for key in labels)
                    + f"<td>{t['mean_steps'] or 0:.1f}</td><td>{img}</td></tr>")
    head = ["task", "solved", "aborted", *labels, "mean steps", "final screen"]
    parts.append("<section><h2>Tasks</h2><table><thead><tr>" + "".join(f"<th>{h}</th>" for h in head)
                 + "</tr></thead><tbody>" + "".join(rows) + "</tbody></table></section>")
    parts.append("<p class='meta'>Step through every episode with <code>weblica view "
                 f"{escape(str(meta.get('out', 'RUN_DIR')))}</code>.</p></main></body></html>\n")
    return "\n".join(parts)
