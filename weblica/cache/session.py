"""A browser host for cache work: a chosen virtual clock, and the session an episode leaves behind.

`SessionHost` hands out the env's deterministic contexts (it is a `BrowserHost`) with two additions the
cache needs and the env does not know about:

- `epoch_ms`: the virtual clock every context starts at (the determinism layer's epoch unless a replay
  names another: `weblica replay --shift-dates --clock`), so two replays can run a virtual year apart;
- `start_with`: Playwright storage state (cookies, localStorage, IndexedDB) a context starts with, and
  `left`: the storage state of the last context closed, read just before it closes. `cache build`
  reads what each recorded episode left (a login's cookies and tokens) and crawls the links around its
  pages with it, so logged-in pages are crawled as the logged-in user.
"""
from __future__ import annotations

import asyncio
from typing import Any

from weblica.browser.determinism import DEFAULT_EPOCH_MS
from weblica.browser.launcher import BrowserOptions
from weblica.browser.session import BrowserHost

STORAGE_TIMEOUT_S = 10.0


class SessionHost(BrowserHost):
    """A BrowserHost whose contexts start at `epoch_ms` (and with `start_with`) and leave `left`."""

    def __init__(self, options: BrowserOptions | None = None, epoch_ms: int = DEFAULT_EPOCH_MS) -> None:
        super().__init__(options)
        self.epoch_ms = epoch_ms
        self.start_with: dict[str, Any] | None = None
        self.left: dict[str, Any] | None = None

    def context_extras(self) -> dict[str, Any]:
        return {"storage_state": self.start_with} if self.start_with is not None else {}

    def opened(self, context: Any) -> None:
        self._keep_storage(context)

    def _keep_storage(self, context: Any) -> None:
        """Read the context's storage as it closes (the env closes it when the episode ends)."""
        close = context.close

        async def close_keeping_storage(*args: Any, **kwargs: Any) -> Any:
            try:
                self.left = await asyncio.wait_for(context.storage_state(indexed_db=True), STORAGE_TIMEOUT_S)
            except Exception:   # a crashed or hung context leaves no storage: nothing is carried
                self.left = None
            return await close(*args, **kwargs)

        context.close = close_keeping_storage
