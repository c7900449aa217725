"""Running one action in the browser and describing what it did (OpenWebRL appendix A.2).

Before an action the executor records the URL, the tab count, the scroll offsets, the focused element
and the element under the action's coordinates; after it, it compares. Exceptions become explicit
failure messages; only a dead browser escapes (as BrowserCrashed).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from weblica.browser.navigation import SANDBOX, NavigationGuard
from weblica.env import gestures
from weblica.env.actions import Action
from weblica.env.tabs import BrowserCrashed, TabSet

def describe_element(el: dict[str, Any] | None) -> str:
    if not el:
        return "nothing"
    text = f"<{el['tag']}>"
    if el.get("text"):
        text += f' "{el["text"]}"'
    elif el.get("label"):
        text += f' "{el["label"]}"'
    if el.get("role"):
        text += f" (role {el['role']})"
    return text


@dataclass
class ActionResult:
    feedback: str
    done: bool = False
    answer: str | None = None
    ok: bool = True
    infeasible: bool = False  # `done` with infeasible: true


def _coords(x: float, y: float) -> str:
    return f"({x:g}, {y:g})"


class ActionExecutor:
    """Executes actions on an episode's tabs. One instance per episode."""

    def __init__(self, tabs: TabSet, navigation_timeout_s: float = 15.0, guard: NavigationGuard | None = None) -> None:
        self.tabs = tabs
        self.navigation_timeout_ms = navigation_timeout_s * 1000
        # the env's guard on this context (refusals to report); a bare executor checks URLs only
        self.guard = guard or NavigationGuard(SANDBOX)

    async def run(self, action: Action) -> ActionResult:
        # refusals since the last report: this action's, or what the page tried after the last settle
        result = await self._run(action)
        refused = self.guard.feedback()
        if refused:
            result.feedback = f"{result.feedback} {refused}"
        return result

    async def _run(self, action: Action) -> ActionResult:
        handler = getattr(self, f"_do_{action.name}")
        try:
            return await handler(**action.args)
        except BrowserCrashed:
            raise
        except Exception as exc:  # any Playwright error is the agent's feedback, not a crash of the env
            self.tabs._raise_if_crashed(exc)
            first_line = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            return ActionResult(f"Failed: '{action.name}' raised an error: {first_line}", ok=False)

    async def _state(self, x: float | None = None, y: float | None = None,
                     probed: dict[str, Any] | None = None) -> dict[str, Any]:
        state = probed if probed is not None else await self.tabs.probe(x, y)
        state["url"] = self.tabs.page.url
        state["tab_count"] = len(self.tabs.pages)
        state["navigations"] = self.tabs.navigations
        return state

    async def _effects(self, before: dict[str, Any], settle_ms: int | None = None) -> tuple[list[str], dict[str, Any]]:
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
        after = await self._state(probed=settled)
        self.tabs.note_title(after.get("title", ""))
        if not opened and after["url"] != before["url"]:
            notes.append(f"The page navigated to {after['url']}.")
        return notes, after

    async def _do_click(self, x: float, y: float, button: str = "left", clicks: int = 1) -> ActionResult:
        before = await self._state(x, y)
        await gestures.perform(self.tabs.page, gestures.click(x, y, button, clicks))
        notes, after = await self._effects(before)
        kind = {1: "click", 2: "double-click", 3: "triple-click"}[clicks]
        if button != "left":
            kind = f"{button} {kind}"
        msg = f"Success: {kind} on {describe_element(before['at'])} at {_coords(x, y)}."
        if after.get("focused") and after["focused"].get("editable") and after["focused"] != before.get("focused"):
            notes.append(f"Focused field: {describe_element(after['focused'])}.")
        if not notes:
            notes.append("Note: no navigation or new tab was detected.")
        return ActionResult(" ".join([msg] + notes))

    async def _do_hover(self, x: float, y: float) -> ActionResult:
        before = await self._state(x, y)
        await gestures.perform(self.tabs.page, gestures.hover(x, y))
        notes, after = await self._effects(before)
        changed = after["mutations"] != before["mutations"]
        msg = f"Success: hovering over {describe_element(before['at'])} at {_coords(x, y)}."
        # CSS-only effects (:hover menus) change no DOM node, so silence is not proof of no effect
        notes.append("The page content changed." if changed else "No DOM change was detected.")
        return ActionResult(" ".join([msg] + notes))

    async def _do_drag(self, x1: float, y1: float, x2: float, y2: float) -> ActionResult:
        before = await self._state(x1, y1)
        target = (await self.tabs.probe(x2, y2))["at"]
        await gestures.perform(self.tabs.page, gestures.drag(x1, y1, x2, y2))
        notes, after = await self._effects(before)
        changed = after["mutations"] != before["mutations"]
        msg = (f"Success: dragged {describe_element(before['at'])} from {_coords(x1, y1)} to "
               f"{describe_element(target)} at {_coords(x2, y2)}.")
        notes.append("The page content changed." if changed else "Note: the page did not change.")
        return ActionResult(" ".join([msg] + notes))

    async def _do_write(self, text: str, x: float | None = None, y: float | None = None,
                        enter: bool = False) -> ActionResult:
        prefix = ""
        if x is not None and y is not None:
            clicked = await self._do_click(x, y)
            prefix = clicked.feedback + " "
        before = await self._state()
        field = before.get("focused")
        if not field or not field.get("editable"):
            return ActionResult(prefix + "Failed: 'write' found no focused input field; click on a field first.",
                                ok=False)
        await gestures.perform(self.tabs.page, gestures.write(text, enter, focused=field))
        notes, after = await self._effects(before)
        target = describe_element(field)
        msg = f'Success: wrote "{text}" into {target}.'
        actual = (after.get("focused") or {}).get("value") if not notes else None
        if actual is not None and actual != text:
            notes.append(f'Note: the field now holds "{actual}", which differs from the text written.')
        if enter:
            notes.insert(0, "Pressed Enter.")
        return ActionResult(prefix + " ".join([msg] + notes))

    async def _do_press_keys(self, keys: list[str]) -> ActionResult:
        before = await self._state()
        names = await gestures.perform(self.tabs.page, gestures.press_keys(keys))
        notes, _ = await self._effects(before)
        return ActionResult(" ".join([f"Success: pressed {names}."] + notes))

    async def _do_scroll(self, direction: str, amount: float = 0.5, x: float | None = None,
                         y: float | None = None) -> ActionResult:
        vertical = direction in ("up", "down")
        where = "the page"
        if x is not None and y is not None:
            before = await self._state(x, y)
            where = describe_element(before["at"])
            key = "elementScroll"
        else:
            before = await self._state()
            key = "scroll"
        await gestures.perform(self.tabs.page, gestures.scroll(direction, amount, x, y))
        notes, after = await self._effects(before)
        moved_before = before.get(key)
        if key == "elementScroll":
            # the wheel scrolls the page when no element under the pointer can scroll
            key = key if moved_before is not None else "scroll"
            moved_before = before[key]
            moved_after = await self._wheel_scroll_result(x, y, key, moved_before)
        else:
            moved_after = after.get(key)
        msg = f"Success: scrolled {direction} by {amount:.0%} of the viewport on {where}."
        if moved_before == moved_after:
            notes.append("Note: the scroll position did not change; a boundary may have been reached.")
        else:
            delta = [int(round(a - b)) for a, b in zip(moved_after, moved_before)]
            notes.append(f"The view moved by {abs(delta[1] if vertical else delta[0])} px.")
        return ActionResult(" ".join([msg] + notes))

    async def _wheel_scroll_result(self, x: float, y: float, key: str, moved_before: Any) -> Any:
        async def read() -> Any:
            return (await self._state(x, y)).get(key)

        return await gestures.wheel_landed(read, moved_before)

    async def _do_goto_url(self, url: str) -> ActionResult:
        refusal = self.guard.policy.url_refusal(url)
        if refusal:  # never handed to the browser
            return ActionResult(f"Refused: 'goto_url' to {url}: {refusal}.", ok=False)
        before = await self._state()
        try:
            response = await self.tabs.page.goto(url, wait_until="load", timeout=self.navigation_timeout_ms)
        except Exception as exc:
            self.tabs._raise_if_crashed(exc)
            refused = [r for r in self.guard.take() if r.navigation]
            if refused:  # the browser saw another form of a refused URL, or its redirect
                return ActionResult(f"Refused: 'goto_url' to {url}: {refused[0].reason}.", ok=False)
            return ActionResult(f"Failed: 'goto_url' to {url} failed: {str(exc).splitlines()[0]}", ok=False)
        notes, after = await self._effects(before)
        refused = [r for r in self.guard.refused if r.navigation]
        if refused:  # the gateway answered in the site's place (a name that resolves to a private address)
            self.guard.take()
            return ActionResult(f"Refused: 'goto_url' to {url}: {refused[0].reason}.", ok=False)
        status = f" (HTTP {response.status})" if response is not None and response.status >= 400 else ""
        return ActionResult(f"Success: opened {after['url']}{status}.")

    async def _history(self, direction: str) -> ActionResult:
        before = await self._state()
        page = self.tabs.page
        go = page.go_back if direction == "back" else page.go_forward
        response = await go(wait_until="load", timeout=self.navigation_timeout_ms)
        notes, after = await self._effects(before)
        if response is None and after["url"] == before["url"]:
            return ActionResult(f"Failed: 'go_{direction}' found no {'previous' if direction == 'back' else 'next'} "
                                "page in this tab's history.", ok=False)
        return ActionResult(f"Success: went {direction} to {after['url']}.")

    async def _do_go_back(self) -> ActionResult:
        return await self._history("back")

    async def _do_go_forward(self) -> ActionResult:
        return await self._history("forward")

    async def _do_wait(self, seconds: float = 1.0) -> ActionResult:
        before = await self._state()
        notes, after = await self._effects(before, settle_ms=int(seconds * 1000))
        changed = "the page changed" if after["mutations"] != before["mutations"] else "the page did not change"
        return ActionResult(" ".join([f"Success: waited {seconds:g} s; {changed}."] + notes))

    async def _do_new_tab(self) -> ActionResult:
        page = await self.tabs.context.new_page()
        self.tabs._on_page(page)
        self.tabs.take_opened()
        self.tabs.active = self.tabs.pages.index(page)
        return ActionResult(f"Success: opened a new blank tab (index {self.tabs.active}); it is now active.")

    async def _do_switch_tab(self, index: int) -> ActionResult:
        self.tabs.prune_closed()
        if index >= len(self.tabs.pages):
            return ActionResult(f"Failed: 'switch_tab' to index {index}: there are only {len(self.tabs.pages)} "
                                f"tab(s) (0..{len(self.tabs.pages) - 1}).", ok=False)
        self.tabs.active = index
        await self.tabs.page.bring_to_front()
        return ActionResult(f"Success: switched to tab {index} ({self.tabs.page.url}).")

    async def _do_close_tab(self) -> ActionResult:
        page = self.tabs.page
        closed_url = page.url
        if len(self.tabs.pages) == 1:
            return ActionResult("Failed: 'close_tab' cannot close the last open tab.", ok=False)
        index = self.tabs.active
        await page.close()
        self.tabs.forget(page)
        self.tabs.active = min(index, len(self.tabs.pages) - 1)
        await self.tabs.page.bring_to_front()
        return ActionResult(f"Success: closed tab {index} ({closed_url}); now on tab {self.tabs.active} "
                            f"({self.tabs.page.url}).")

    async def _do_done(self, answer: str = "", infeasible: bool = False) -> ActionResult:
        said = " (declared infeasible)" if infeasible else ""
        return ActionResult(f"Success: the task is marked as done{said}. Answer: {answer}", done=True, answer=answer,
                            infeasible=infeasible)
