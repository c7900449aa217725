"""Running one action in the browser and describing what it did (OpenWebRL appendix A.2).

Before an action the executor records the URL, the tab count, the scroll offsets, the focused element
and the element under the action's coordinates; after it, it compares. Each action's own run and
description is its `feedback` in the action table (weblica.env.actions.ACTIONS, written in
weblica/env/feedback.py). Exceptions become explicit failure messages; only a dead browser escapes (as
BrowserCrashed). What the episode's limits did meanwhile (tabs closed, a loop cut, a document removed,
downloads) is appended to the action's feedback, and the clipboard keys play against the episode's own
clipboard (weblica/env/clipboard.py).
"""
from __future__ import annotations

from typing import Any

from weblica.browser.navigation import SANDBOX, NavigationGuard
from weblica.env.actions import ACTIONS, Action
from weblica.env.clipboard import EpisodeClipboard
from weblica.env.feedback import ActionResult, describe_element
from weblica.env.tabs import BrowserCrashed, TabSet

__all__ = ["ActionExecutor", "ActionResult", "describe_element"]


class ActionExecutor:
    """Executes actions on an episode's tabs. One instance per episode."""

    def __init__(self, tabs: TabSet, navigation_timeout_s: float = 15.0, guard: NavigationGuard | None = None,
                 downloads: Any = None) -> None:
        self.tabs = tabs
        self.navigation_timeout_ms = navigation_timeout_s * 1000
        # the env's guard on this context (refusals to report); a bare executor checks URLs only
        self.guard = guard or NavigationGuard(SANDBOX)
        self.downloads = downloads  # the episode's EpisodeDownloads (weblica/browser/downloads.py), if any
        self.clipboard = EpisodeClipboard()

    async def run(self, action: Action) -> ActionResult:
        # refusals since the last report: this action's, or what the page tried after the last settle
        self.tabs.begin_action()
        result = await self._run(action)
        refused = self.guard.feedback()
        if refused:
            result.feedback = f"{result.feedback} {refused}"
        notes = self.limit_notes()
        if notes:
            result.feedback = f"{result.feedback} Note: {'; '.join(notes)}."
        return result

    def limit_notes(self) -> list[str]:
        """What the episode's limits did since the last call (weblica/env/tabs.py, browser/downloads.py)."""
        notes = self.tabs.take_notes()
        if self.downloads is not None:
            notes += self.downloads.take_notes()
        return notes

    async def _run(self, action: Action) -> ActionResult:
        try:
            return await ACTIONS[action.name].feedback(self, **action.args)
        except BrowserCrashed:
            raise
        except Exception as exc:  # any Playwright error is the agent's feedback, not a crash of the env
            self.tabs._raise_if_crashed(exc)
            first_line = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            return ActionResult(f"Failed: '{action.name}' raised an error: {first_line}", ok=False)

    async def state(self, x: float | None = None, y: float | None = None,
                    probed: dict[str, Any] | None = None) -> dict[str, Any]:
        """The browser state an action's feedback compares: the probe (at (x, y) when given), the URL, the
        tab count and the navigations so far."""
        state = probed if probed is not None else await self.tabs.probe(x, y)
        state["url"] = self.tabs.page.url
        state["tab_count"] = len(self.tabs.pages)
        state["navigations"] = self.tabs.navigations
        return state

    async def effects(self, before: dict[str, Any], settle_ms: int | None = None) -> tuple[list[str], dict[str, Any]]:
        """Settle, then describe navigation and new tabs; the newest opened tab becomes active."""
        settled = await self.tabs.settle(settle_ms, since_navigations=before["navigations"])
        notes = []
        opened = [p for p in self.tabs.take_opened() if not p.is_closed()]
        self.tabs.prune_closed()
        if opened:
            newest = opened[-1]
            self.tabs.active = self.tabs.pages.index(newest)
            try:
                await newest.wait_for_load_state("load", timeout=self.navigation_timeout_ms)
            except Exception as exc:
                self.tabs._raise_if_crashed(exc)
            await self.tabs.settle(0)
            notes.append(f"A new tab opened (index {self.tabs.active}) with {newest.url}; it is now active.")
            settled = None  # that state was read in the tab the action started in
        after = await self.state(probed=settled)
        self.tabs.note_title(after.get("title", ""))
        if not opened and after["url"] != before["url"]:
            notes.append(f"The page navigated to {after['url']}.")
        return notes, after
