"""Synth sites several test files read, built once per run: under pytest-xdist the first worker to ask
builds under a file lock in a folder beside the workers' own temporary folders, the others wait and read
it (they would otherwise spend as long building the same thing); in a plain run it sits in the run's temporary folder. Only for tests that read what they are handed
(a test that changes a bundle builds its own or copies it)."""
from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from build_once import built_once
from weblica.synth.spec import SiteSpec


def shared_root(tmp_path_factory: Any) -> Path:
    """The run's folder for shared builds: xdist gives each worker basetemp <root>/popen-gwN (one root)."""
    base = tmp_path_factory.getbasetemp()
    root = (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / "weblica-shared-sites"
    root.mkdir(parents=True, exist_ok=True)
    return root


def _key(*parts: Any) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()[:16]


def instance_family(tmp_path_factory: Any, spec: SiteSpec, count: int) -> tuple[Path, Path]:
    """`synthesize_instances([spec], out, count)` run once per run for this spec and count: (out, its
    base bundle). The key is the whole spec (skill, category, seed, style, distractors, options)."""
    from weblica.synth.instances import synthesize_instances

    out = shared_root(tmp_path_factory) / f"instances-{_key(spec.to_dict(), count)}"
    name = built_once(out, lambda: synthesize_instances([spec], out, count, concurrency=2)[0].path.name)
    return out, out / name
