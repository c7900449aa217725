"""The site runtime: the scripts every procedural synth site's pages load, served by the site server
from the installed package (weblica/serve/app.py), never copied into a bundle. It sits beside `synth`
and `serve` rather than in either: the generator records its digest, the server serves it, and the
serving layer imports no synth module.

- `/assets/site.js`, `/assets/widgets.js`, `/assets/distractors.js`: the files beside this module.
- `/_ds/<package>@<version>/...`: the files of the design systems pages are built on, from where
  `.ci/setup` installed them (design_systems.py); not part of the digest, which their versions pin.
- `/assets/flows.js`: the genre flows' script, its core `weblica/synth/genres/flows.js` with each
  genre's part (`weblica/synth/genres/<genre>/flows.js`) spliced into its closure where its "@parts"
  line names them, in that order (a part's first lines say what it is and are not served).

A bundle records `runtime_digest()` in its site.json: which scripts its tasks were validated with.
This module reads files only, so the site server can import it without the generator.
"""
from __future__ import annotations

import hashlib
from functools import lru_cache
from pathlib import Path


HERE = Path(__file__).resolve().parent
GENRES = HERE.parent / "synth" / "genres"  # the flows core and the genre plug-ins' parts (read, not imported)
SCRIPTS = ("site.js", "widgets.js", "distractors.js")
FLOWS = "flows.js"
PARTS_MARK = "// @parts:"
PART_HEADER = 2  # the lines a part opens with to say what it is (not served)
URL_PREFIX = "assets/"  # where pages load them: /assets/<name>
DESIGN_PREFIX = "_ds/"  # a design system's files: /_ds/<package>@<version>/<path> (design_systems.URL_PREFIX)


class MissingPart(LookupError):
    """A part the flows core names is missing."""


def flows_parts() -> list[str]:
    """The genres whose part of flows.js the core splices in, in its order (its "@parts" line)."""
    for line in (GENRES / FLOWS).read_text(encoding="utf-8").splitlines():
        if line.strip().startswith(PARTS_MARK):
            return line.strip()[len(PARTS_MARK):].split()
    return []


def flows_script() -> bytes:
    """/assets/flows.js as served: the core with the genres' parts in place of its "@parts" line."""
    parts = []
    for genre in flows_parts():
        path = GENRES / genre / FLOWS
        if not path.is_file():
            raise MissingPart(f"{GENRES / FLOWS} names the part '{genre}', but {path} is missing")
        parts.append("".join(path.read_text(encoding="utf-8").splitlines(keepends=True)[PART_HEADER:]))
    core = (GENRES / FLOWS).read_text(encoding="utf-8").splitlines(keepends=True)
    return "".join("".join(parts) if line.strip().startswith(PARTS_MARK) else line for line in core).encode("utf-8")


@lru_cache(maxsize=None)
def _assets() -> dict[str, bytes]:
    """Every runtime script by its served path under public/ ("assets/site.js"), read once a process."""
    out = {URL_PREFIX + name: (HERE / name).read_bytes() for name in SCRIPTS}
    out[URL_PREFIX + FLOWS] = flows_script()
    return out


def runtime_asset(rel: str) -> bytes | None:
    """The runtime file served at /<rel>: a script ("assets/site.js") or a design system's file
    ("_ds/bootstrap@5.3.8/dist/css/bootstrap.min.css", weblica/site_runtime/design_systems.py); None when
    `rel` names none. A design system that is not installed raises DesignSystemMissing naming the setup step."""
    if rel.startswith(DESIGN_PREFIX):
        # imported here: `python -m weblica.site_runtime.design_systems` must not find it imported already
        from weblica.site_runtime.design_systems import design_asset

        return design_asset(rel)
    return _assets().get(rel)


def runtime_paths() -> list[str]:
    """The paths under public/ the runtime serves, sorted."""
    return sorted(_assets())


def runtime_digest() -> str:
    """A short digest of every runtime script's path and bytes: equal digests, equal scripts."""
    digest = hashlib.sha256()
    for rel, body in sorted(_assets().items()):
        digest.update(rel.encode() + b"\0" + hashlib.sha256(body).digest())
    return digest.hexdigest()[:16]
