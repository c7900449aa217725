"""Downloads of one episode: into the episode's own folder, capped in count and bytes, reported to the agent.

Playwright saves a context's downloads into one temporary folder of the browser with no limit (one click
wrote 500 MiB in a second). Each episode's context is pointed at a folder of its own instead
(`Browser.setDownloadBehavior` for that browser context), and while a download runs its folder's size is
polled: past `max_bytes` every running download of the episode is cancelled (Chromium deletes the partial
file) and so is any later one (the episode's bytes are spent). Past `max_count` a new download is
cancelled at once. Chromium reports a download's progress only
every few hundred milliseconds, too late to hold a cap, hence the poll of the folder itself.
The folder is removed when the episode ends.
"""
from __future__ import annotations

import asyncio
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

POLL_S = 0.02  # a local server writes ~0.5 GiB/s: the cap may be passed by ~10 MiB before the cancel lands


@dataclass
class DownloadLimits:
    max_count: int = 10
    max_bytes: int = 64 << 20
    folder: str | None = None   # where episode folders are made (default: the system's temporary folder)


def _folder_bytes(folder: Path) -> int:
    total = 0
    try:
        with os.scandir(folder) as entries:
            for entry in entries:
                try:
                    total += entry.stat(follow_symlinks=False).st_size
                except OSError:  # finished or cancelled meanwhile
                    pass
    except OSError:
        pass
    return total


def _size(n: int) -> str:
    return f"{n / (1 << 20):.1f} MiB" if n >= 1 << 20 else f"{n} bytes"


class EpisodeDownloads:
    """The downloads of one browser context. `install(context, cdp_session, browser_session)` points the
    context's downloads at the episode folder; `take_notes()` says what happened since the last call."""

    def __init__(self, limits: DownloadLimits | None = None, label: str = "episode") -> None:
        self.limits = limits or DownloadLimits()
        base = Path(self.limits.folder or tempfile.gettempdir())
        base.mkdir(parents=True, exist_ok=True)
        self.folder = Path(tempfile.mkdtemp(prefix=f"weblica-downloads-{label[:40]}-", dir=base))
        self.started = 0
        self.completed: list[str] = []
        self._running: set[Any] = set()
        self._notes: list[str] = []
        self._tasks: set[asyncio.Task[Any]] = set()
        self._watcher: asyncio.Task[Any] | None = None
        self.cancelled_for_size = 0
        self.spent = False  # the byte cap was reached: no more downloads this episode
        self.peak_bytes = 0  # the most the folder held while a download ran (the cap plus what one poll lets by)

    async def install(self, context: Any, page_session: Any, browser_session: Any) -> "EpisodeDownloads":
        info = (await page_session.send("Target.getTargetInfo"))["targetInfo"]
        await browser_session.send("Browser.setDownloadBehavior", {
            "behavior": "allowAndName", "browserContextId": info["browserContextId"],
            "downloadPath": str(self.folder), "eventsEnabled": True})
        context.on("page", self._watch_page)
        for page in context.pages:
            self._watch_page(page)
        return self

    def _watch_page(self, page: Any) -> None:
        page.on("download", self._on_download)

    def _spawn(self, coro: Any) -> None:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _on_download(self, download: Any) -> None:
        self.started += 1
        name = download.suggested_filename
        if self.started > self.limits.max_count or self.spent:
            why = (f"an episode may download at most {self.limits.max_count} files" if not self.spent else
                   f"this episode's downloads already took their {_size(self.limits.max_bytes)}")
            self._notes.append(f"the download of {name!r} was cancelled: {why}")
            self._spawn(self._refuse(download))
            return
        self._running.add(download)
        self._spawn(self._follow(download, name))
        if self._watcher is None or self._watcher.done():
            self._watcher = asyncio.ensure_future(self._watch_size())

    async def _cancel(self, download: Any) -> None:
        try:
            await download.cancel()
        except Exception:  # finished, or its context closed meanwhile
            pass

    async def _refuse(self, download: Any) -> None:
        """Cancel a download past a cap; one that finished before the cancel landed is deleted."""
        await self._cancel(download)
        try:
            if await download.failure() is None:
                # Playwright names the file by Chromium's download id, in its own folder: ours holds that name
                (self.folder / Path(await download.path()).name).unlink(missing_ok=True)
        except Exception:  # cancelled (no file), or the context closed
            pass

    async def _follow(self, download: Any, name: str) -> None:
        try:
            failure = await download.failure()
        except Exception:  # the context closed: the episode is over
            failure = "closed"
        self._running.discard(download)
        if failure is None:
            self.completed.append(name)
            self._notes.append(f"downloaded {name!r} into this episode's downloads folder")
        elif failure == "canceled" and self.cancelled_for_size:
            pass  # said once by the size watcher
        elif failure not in ("canceled", "closed"):
            self._notes.append(f"the download of {name!r} failed ({failure})")

    async def _watch_size(self) -> None:
        while self._running and not self.spent:
            used = _folder_bytes(self.folder)
            self.peak_bytes = max(self.peak_bytes, used)
            if used > self.limits.max_bytes:
                self.spent = True
                running = list(self._running)
                self.cancelled_for_size += len(running)
                self._notes.append(f"{len(running)} download(s) were cancelled: an episode's downloads may take at "
                                   f"most {_size(self.limits.max_bytes)} ({_size(used)} were being written)")
                await asyncio.gather(*(self._cancel(d) for d in running))
                return
            await asyncio.sleep(POLL_S)

    @property
    def running(self) -> int:
        """Downloads started and not yet finished (completed, cancelled or failed)."""
        return len(self._running)

    def bytes_kept(self) -> int:
        return _folder_bytes(self.folder)

    def take_notes(self) -> list[str]:
        notes, self._notes = self._notes, []
        return notes

    async def close(self) -> None:
        """Stop watching and remove the episode's folder (its context is closed or closing)."""
        if self._watcher is not None:
            self._watcher.cancel()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, *([self._watcher] if self._watcher else []), return_exceptions=True)
        await asyncio.to_thread(shutil.rmtree, self.folder, True)
