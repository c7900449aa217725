"""`weblica synth gallery DIR`: an HTML contact sheet of every site bundle in DIR, to look at them.

Each site's start page and one inner page (the first task's start page when that is not the start
page, else the first same-site link on the start page) are screenshotted in real Chromium through the
site server with the determinism layer, as validation loads them. The PNGs are written next to the HTML
(`<site_id>-start.png`, `<site_id>-inner.png`) and the sheet links to them at full size.
"""
from __future__ import annotations

import asyncio
import html
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from weblica.env.task import load_tasks
from weblica.synth.content_metrics import language

# the first link of the page that stays on the site and is not the page itself
_FIRST_INNER_LINK_JS = """() => {
  for (const a of document.querySelectorAll('a[href]')) {
    const u = new URL(a.href, location.href);
    if (u.origin === location.origin && u.pathname !== location.pathname) return u.href;
  }
  return null;
}"""


@dataclass
class GalleryEntry:
    site_id: str
    skill: str
    category: str
    style: str
    tasks: int
    design: str = "weblica"     # the design system and its version
    language: str = ""          # the language the start page's text is in (weblica.synth.content_metrics)
    skills: list[str] = field(default_factory=list)   # the skills its tasks exercise
    shots: dict[str, str] = field(default_factory=dict)  # "start"/"inner" -> PNG file name
    urls: dict[str, str] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"site_id": self.site_id, "skill": self.skill, "category": self.category, "style": self.style,
                "tasks": self.tasks, "design": self.design, "language": self.language, "skills": self.skills,
                "shots": self.shots, "urls": self.urls, "errors": self.errors}


def _entry(root: Path) -> tuple[GalleryEntry, str, list[str]]:
    meta = json.loads((root / "site.json").read_text(encoding="utf-8"))
    spec = meta.get("spec", {})
    tasks = load_tasks(root / "tasks.jsonl") if (root / "tasks.jsonl").exists() else []
    design = meta.get("design") or {}
    home = root / "public" / "index.html"
    entry = GalleryEntry(root.name, spec.get("skill", "?"), spec.get("category", "?"),
                         (spec.get("style") or {}).get("aesthetic", "?"), len(tasks),
                         design=f"{design['title']} {design['version']}" if design else "weblica (its own styles)",
                         language=language(home.read_text(encoding="utf-8")) if home.exists() else "",
                         skills=sorted({t.skill for t in tasks if t.skill}))
    return entry, spec.get("base_url") or f"http://{root.name}", [t.start_url for t in tasks]


async def _shoot(roots: list[Path], out_dir: Path, inner: bool) -> list[GalleryEntry]:
    from playwright.async_api import async_playwright

    from weblica.browser.launcher import context_kwargs, launch_browser
    from weblica.serve.server import SiteServer
    from weblica.browser.determinism import determinism_script

    entries = []
    async with async_playwright() as pw:
        browser = await launch_browser(pw)
        try:
            with SiteServer(roots) as server:
                context = await browser.new_context(**context_kwargs(proxy=server.url))
                await context.add_init_script(determinism_script(0))
                page = await context.new_page()
                for root in roots:
                    entry, base, starts = _entry(root)
                    entries.append(entry)
                    targets = [("start", base + "/")]
                    try:
                        await page.goto(base + "/", wait_until="load")
                        if inner:
                            others = [u for u in starts if u.rstrip("/") != base]
                            link = others[0] if others else await page.evaluate(_FIRST_INNER_LINK_JS)
                            if link:
                                targets.append(("inner", link))
                            else:
                                entry.errors.append("no inner page: no task starts elsewhere and no same-site link")
                    except Exception as exc:  # one broken site must not lose the sheet
                        entry.errors.append(f"start page did not load: {type(exc).__name__}: {str(exc)[:200]}")
                        continue
                    for label, url in targets:
                        try:
                            if label != "start":
                                await page.goto(url, wait_until="load")
                            name = f"{entry.site_id}-{label}.png"
                            (out_dir / name).write_bytes(await page.screenshot())
                            entry.shots[label], entry.urls[label] = name, url
                        except Exception as exc:
                            entry.errors.append(f"{label} page {url}: {type(exc).__name__}: {str(exc)[:200]}")
                await context.close()
        finally:
            await browser.close()
    return entries


def write_gallery(path: Path, out: Path | None = None, inner: bool = True) -> tuple[Path, list[GalleryEntry]]:
    """Screenshot every bundle under `path` and write the contact sheet (default `<path>/gallery.html`);
    returns the HTML's path and one entry per site."""
    from weblica.synth.bundles import bundle_dirs

    roots = bundle_dirs(path)
    if not roots:
        raise ValueError(f"no site bundle (a folder with site.json) at {path}: run `weblica synth --out {path}` first")
    out = out or path / "gallery.html"
    out.parent.mkdir(parents=True, exist_ok=True)
    entries = asyncio.run(_shoot(roots, out.parent, inner))
    out.write_text(render_html(entries, str(path)), encoding="utf-8")
    return out, entries


def render_html(entries: list[GalleryEntry], title: str) -> str:
    cards = []
    for e in entries:
        shots = "".join(
            f'<a href="{html.escape(e.shots[k])}" title="{html.escape(e.urls[k])}"><img src="{html.escape(e.shots[k])}" '
            f'alt="{html.escape(e.site_id)} {k} page" loading="lazy"><span>{k}</span></a>'
            for k in ("start", "inner") if k in e.shots)
        errors = "".join(f'<p class="err">{html.escape(x)}</p>' for x in e.errors)
        cards.append(f'<section class="site"><h2>{html.escape(e.site_id)}</h2><p class="meta">skill '
                     f'<b>{html.escape(e.skill)}</b> · category <b>{html.escape(e.category)}</b> · style '
                     f'<b>{html.escape(e.style)}</b> · design <b>{html.escape(e.design)}</b> · language '
                     f'<b>{html.escape(e.language or "?")}</b> · {e.tasks} tasks ({html.escape(", ".join(e.skills))})</p><div class="shots">{shots}</div>{errors}</section>')
    return ("<!doctype html><html><head><meta charset='utf-8'><title>weblica gallery: " + html.escape(title) +
            "</title><style>body{font:14px sans-serif;margin:20px;background:#f4f4f6}"
            ".site{background:#fff;border:1px solid #ddd;border-radius:6px;padding:10px 14px;margin:0 0 16px}"
            "h2{font-size:16px;margin:0}.meta{color:#555;margin:4px 0 8px}.shots{display:flex;gap:12px}"
            ".shots a{display:flex;flex-direction:column;color:#333;text-decoration:none}"
            ".shots img{width:480px;height:270px;object-fit:cover;object-position:top;border:1px solid #ccc}"
            ".err{color:#b00020}</style></head><body><h1>" + f"{len(entries)} sites in {html.escape(title)}</h1>"
            + "".join(cards) + "</body></html>\n")
