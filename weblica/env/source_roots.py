"""Where a task's files may come from: the folders an env server was told to serve.

A task sent over the network names its synth bundle (`source.bundle`, or the site id in `source.site`)
and its recording (`source.recording`) as paths; a client must not make the server open any folder of its
disk that way (serve `/etc` as a site's files, open a foreign SQLite file as a recording). `SourceRoots`
resolves each such path inside the configured roots: relative paths against each root, symlinks
resolved, `..` refused, anything that lands outside every root refused with the flag that would allow it.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path

from weblica.env.task import Task

BUNDLE_MARKER = "site.json"           # what makes a folder a synth bundle
RECORDING_MARKER = "recording.sqlite"  # what makes a folder a recording (weblica.cache.store.DB_NAME)
STORE_POINTER = "store.json"           # or a pointer to a shared store (weblica.cache.recording_dir)


class SourceRefused(ValueError):
    """A task names a bundle or recording outside the served roots (or none there)."""


def default_site_roots() -> list[Path]:
    """The folders `weblica run` finds bundles in: $WEBLICA_SITES, ./sites, the repository's sites/."""
    from weblica.synth.backend import search_dirs

    return [p for p in search_dirs() if p.is_dir()]


def _inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


@dataclass
class SourceRoots:
    """The folders of bundles (`sites`) and of recordings (`recordings`) tasks may name; a root may also be
    one bundle or one recording itself."""

    sites: list[Path] = field(default_factory=list)
    recordings: list[Path] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.sites = [Path(p).resolve() for p in self.sites]
        self.recordings = [Path(p).resolve() for p in self.recordings]

    def confine(self, task: Task) -> Task:
        """`task` with its bundle or recording replaced by the resolved path inside a root; raises
        SourceRefused naming the flag otherwise. Other kinds (local, live) name no files."""
        source = task.source
        if source.kind == "synth":
            ref = source.bundle or source.site
            if not ref:
                raise SourceRefused(f"task {task.id}: a synth task names its site (source.site) or bundle "
                                    "(source.bundle)")
            found = self._resolve(ref, self.sites, BUNDLE_MARKER, "bundle", "--sites")
            return dataclasses.replace(task, source=dataclasses.replace(source, bundle=str(found)))
        if source.kind == "cache":
            if not source.recording:
                raise SourceRefused(f"task {task.id}: a cache task needs source.recording (a recording folder)")
            found = self._resolve(source.recording, self.recordings, RECORDING_MARKER, "recording", "--recordings",
                                  also=STORE_POINTER)
            return dataclasses.replace(task, source=dataclasses.replace(source, recording=str(found)))
        return task

    @staticmethod
    def _resolve(ref: str, roots: list[Path], marker: str, what: str, flag: str, also: str | None = None) -> Path:
        shown = ref[:200]
        if not roots:
            raise SourceRefused(f"this env server serves no {what}s, so {what} '{shown}' is refused: "
                                f"start it with {flag} DIR (a folder of {what}s)")
        if "\x00" in ref:
            raise SourceRefused(f"{what} '{shown!r}' holds a NUL byte")
        path = Path(ref)
        if ".." in path.parts:
            raise SourceRefused(f"{what} '{shown}' climbs out of its folder ('..'); name it relative to a "
                                f"{flag} folder, without '..'")
        if path.is_absolute():
            candidates = [path]
        else:  # against each root; a root that is one bundle/recording answers to its own name too
            candidates = [root / path for root in roots]
            candidates += [root for root in roots if root.name == path.name]
            if len(path.parts) > 1:  # `sites/NAME` as written from a checkout: NAME in a root
                candidates += [root / path.name for root in roots]
        outside = None
        for candidate in candidates:
            try:
                real = candidate.resolve()
                held = marker if (real / marker).is_file() or also is None or not (real / also).is_file() else also
                holds = (real / held).is_file()
                real_marker = (real / held).resolve()
            except (OSError, RuntimeError, ValueError):  # a symlink loop, a name the filesystem refuses
                continue
            root = next((r for r in roots if _inside(real, r) and _inside(real_marker, r)), None)
            if root is None:
                outside = outside or real
                continue
            if holds:
                return real
        listed = ", ".join(str(r) for r in roots)
        if outside is not None and path.is_absolute():
            raise SourceRefused(f"{what} '{shown}' is outside the folders this env server serves ({listed}); "
                                f"start it with {flag} DIR to serve another folder")
        if outside is not None:
            raise SourceRefused(f"{what} '{shown}' resolves (through a symlink) outside the folders this env "
                                f"server serves ({listed}); start it with {flag} DIR to serve the target")
        raise SourceRefused(f"no {what} '{shown}' (a folder holding {marker}) in {listed}; "
                            f"start the env server with {flag} DIR for the folder that holds it")
