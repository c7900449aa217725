"""One Chromium process shared by many episodes, each in its own browser context.

The host relaunches Chromium when it has died, so a crashed browser costs the episodes that were
running in it and nothing more.
"""
from __future__ import annotations

import asyncio
from typing import Any

from weblica.browser.determinism import DEFAULT_EPOCH_MS, make_deterministic
from weblica.browser.launcher import BrowserOptions, context_kwargs, launch_browser


class BrowserHost:
    """Owns Playwright and one Chromium; hands out deterministic contexts."""

    def __init__(self, options: BrowserOptions | None = None) -> None:
        self.options = options or BrowserOptions()
        self._playwright: Any = None
        self._playwright_cm: Any = None
        self._browser: Any = None
        self._browser_session: tuple[Any, Any] | None = None  # (browser, its CDP session)
        self._lock = asyncio.Lock()
        self.launches = 0

    @property
    def browser(self) -> Any:
        return self._browser

    def is_alive(self) -> bool:
        return self._browser is not None and self._browser.is_connected()

    async def ensure(self) -> Any:
        """The running browser, launching (or relaunching after a crash) when needed."""
        async with self._lock:
            if self.is_alive():
                return self._browser
            if self._playwright is None:
                from playwright.async_api import async_playwright

                self._playwright_cm = async_playwright()
                self._playwright = await self._playwright_cm.__aenter__()
            if self._browser is not None:
                try:
                    await self._browser.close()
                except Exception:  # already gone; closing only frees Playwright's handle
                    pass
            self._browser = await launch_browser(self._playwright, self.options)
            self.launches += 1
            return self._browser

    async def browser_session(self) -> Any:
        """The running browser's own CDP session (browser-wide commands: a context's download folder)."""
        browser = await self.ensure()
        if self._browser_session is None or self._browser_session[0] is not browser:
            self._browser_session = (browser, await browser.new_browser_cdp_session())
        return self._browser_session[1]

    # the virtual clock's start for every context (a cache replay may move it: weblica.cache.session)
    epoch_ms: int = DEFAULT_EPOCH_MS

    async def new_context(self, seed: int, proxy: str | None = None, extra_headers: dict[str, str] | None = None,
                          ignore_https_errors: bool = False, service_workers: bool = False) -> Any:
        browser = await self.ensure()
        kwargs = context_kwargs(proxy, extra_headers, ignore_https_errors, service_workers)
        context = await browser.new_context(**kwargs, **self.context_extras())
        await make_deterministic(context, seed, self.epoch_ms)
        self.opened(context)
        return context

    def context_extras(self) -> dict[str, Any]:
        """More Playwright context options, for a host that adds some (none here)."""
        return {}

    def opened(self, context: Any) -> None:
        """Called with every context this host made, before it is handed out (nothing here)."""

    async def close(self) -> None:
        if self._browser is not None:
            try:
                await self._browser.close()
            except Exception:
                pass
            self._browser = None
        self._browser_session = None
        if self._playwright_cm is not None:
            await self._playwright_cm.__aexit__(None, None, None)
            self._playwright_cm = self._playwright = None
