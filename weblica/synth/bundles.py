"""Where synth site bundles are on disk: a bundle is a folder holding `site.json` (and `tasks.jsonl`)."""

from __future__ import annotations

from pathlib import Path


def bundle_dirs(path: Path) -> list[Path]:
    """The bundle at `path`, or the bundles directly under it (sorted); none when `path` is neither."""
    if (path / "site.json").exists():
        return [path]
    return sorted(p for p in path.iterdir() if (p / "site.json").exists()) if path.is_dir() else []
