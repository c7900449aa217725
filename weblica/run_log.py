"""A run directory's episode log: each finished episode appended as it ends, one lock per directory, resume.

`weblica run` and `weblica eval` kept every trajectory in memory and wrote `episodes.jsonl` at the end, so
a kill lost the whole run. `RunLog` appends each finished episode to `episodes.jsonl` as one whole line
(written with a single system call and flushed), so a `kill -9` loses at most the episodes still
running. `run.json` names what the run plays (seed, repeats, the tasks' digest, the policy); `--resume`
checks it, keeps the whole lines already written (a line torn by the kill is dropped) and plays only the
episodes they lack. When the run completes, `episodes.jsonl` is rewritten in task order, so a resumed
run's file is the one an uninterrupted run writes. `OUT/.lock` is held (`flock`) for the whole run: a
second process writing the same directory is refused instead of silently losing one run's episodes.
"""
from __future__ import annotations

import fcntl
import hashlib
import json
import os
from pathlib import Path
from typing import Any, Iterable

from weblica.env.episode import Trajectory

EPISODES = "episodes.jsonl"
MANIFEST = "run.json"
LOCK = ".lock"
CUT_OFF = "cut off: the run's completion threshold was reached"  # episodes a resume plays again


class RunDirError(RuntimeError):
    """The run directory is locked by another process, or cannot be resumed as asked; names the fix."""


def tasks_digest(task_dicts: Iterable[dict[str, Any]]) -> str:
    digest = hashlib.sha256()
    for item in task_dicts:
        digest.update(json.dumps(item, sort_keys=True, ensure_ascii=True).encode() + b"\n")
    return digest.hexdigest()


def episode_line(traj: Trajectory) -> str:
    return json.dumps(traj.to_dict(), sort_keys=True, ensure_ascii=False) + "\n"


def read_whole_lines(path: Path) -> tuple[list[Trajectory], int]:
    """The trajectories of the whole lines of `path`, and the byte length they span (what follows is a
    line torn by a kill)."""
    if not path.exists():
        return [], 0
    data = path.read_bytes()
    out, good_end, start = [], 0, 0
    while True:
        end = data.find(b"\n", start)
        if end < 0:
            break
        line = data[start:end]
        try:
            out.append(Trajectory.from_dict(json.loads(line)))
        except (ValueError, TypeError, KeyError):  # a torn or foreign line: what follows it is not kept either
            break
        good_end = start = end + 1
    return out, good_end


class RunLog:
    """The episode log of one run directory, locked for the life of the object (use it as a context)."""

    def __init__(self, out: str | Path, identity: dict[str, Any], resume: bool = False) -> None:
        self.out = Path(out)
        self.identity = identity
        self.resume = resume
        self.kept: list[Trajectory] = []
        self._lock_fd: int | None = None
        self._file: Any = None

    def __enter__(self) -> "RunLog":
        self.out.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.out / LOCK, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 32, 0).decode(errors="replace").strip() or "another process"
            os.close(fd)
            raise RunDirError(f"{self.out} is being written by another weblica run (pid {holder}); wait for it to "
                              "finish, or choose another --out") from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, str(os.getpid()).encode(), 0)
        self._lock_fd = fd
        try:
            self._open()
        except BaseException:
            self._unlock()
            raise
        return self

    def _open(self) -> None:
        episodes, manifest = self.out / EPISODES, self.out / MANIFEST
        if self.resume and (episodes.exists() or manifest.exists()):
            try:
                earlier = json.loads(manifest.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                raise RunDirError(f"{self.out} has no readable {MANIFEST}, so what it played is unknown; run again "
                                  "without --resume (its episodes are replaced)") from None
            differs = sorted(k for k in set(earlier) | set(self.identity) if earlier.get(k) != self.identity.get(k))
            if differs:
                shown = ", ".join(f"{k} {earlier.get(k)!r} -> {self.identity.get(k)!r}" for k in differs)
                raise RunDirError(f"--resume continues the run in {self.out} with the same tasks, policy, --seed and "
                                  f"--repeats; these differ: {shown[:400]}. Give the same options, or another --out")
            trajectories, good_end = read_whole_lines(episodes)
            with open(episodes, "r+b") as f:  # a line torn by the kill goes; the whole ones stay
                f.truncate(good_end)
            self.kept = [t for t in trajectories if t.error != CUT_OFF]
            if len(self.kept) != len(trajectories):
                self._rewrite(self.kept)
            self._begin()
        # a new run replaces what the directory holds when its first episode ends: a run that fails to
        # start (no browser, a source that cannot be opened) loses nothing

    def _begin(self) -> None:
        """Name the run in run.json and open the log for appending (emptied first for a new run)."""
        if not self.resume:
            self._rewrite([])
        manifest = self.out / MANIFEST
        tmp = manifest.with_suffix(".tmp")
        tmp.write_text(json.dumps(self.identity, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        os.replace(tmp, manifest)
        self._file = open(self.out / EPISODES, "ab", buffering=0)

    def done(self) -> set[tuple[str, str]]:
        """(task id, episode id) of the episodes already in the log."""
        return {(t.task_id, t.episode_id) for t in self.kept}

    def append(self, traj: Trajectory) -> None:
        """One finished episode, as one whole line (one write: a kill leaves it whole or absent)."""
        if self._file is None:
            self._begin()
        data = episode_line(traj).encode("utf-8")
        view = memoryview(data)
        while view:
            written = self._file.write(view)
            view = view[written:]

    def _rewrite(self, trajectories: list[Trajectory]) -> None:
        path = self.out / EPISODES
        tmp = path.with_suffix(".jsonl.tmp")
        with open(tmp, "w", encoding="utf-8") as f:
            for traj in trajectories:
                f.write(episode_line(traj))
        os.replace(tmp, path)

    def finish(self, trajectories: list[Trajectory]) -> None:
        """Rewrite the log in task order once the run is complete (the file an uninterrupted run writes)."""
        if self._file is not None:
            self._file.close()
            self._file = None
        elif not self.resume:  # nothing was played (every episode cut off): still this run's directory now
            self._begin()
            self._file.close()
            self._file = None
        self._rewrite(trajectories)

    def _unlock(self) -> None:
        if self._lock_fd is not None:
            os.close(self._lock_fd)  # the kernel drops the flock with its last descriptor
            self._lock_fd = None

    def __exit__(self, *exc: Any) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None
        self._unlock()
