"""How the env runs each action and says what it did: the feedback half of the action table
(weblica.env.actions.ACTIONS), OpenWebRL appendix A.2.

Each function runs one action on an episode's executor (weblica.env.executor.ActionExecutor): it reads the
browser state before (`ex.state`), performs the action's gesture (weblica.env.gestures), settles and reads
the state after (`ex.effects`), and describes the difference. Exceptions are the executor's to turn into
failure messages.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from weblica.env import gestures
from weblica.env.clipboard import ClipboardPage
from weblica.env.clock import wait_ms

if TYPE_CHECKING:
    from weblica.env.executor import ActionExecutor


@dataclass
class ActionResult:
    feedback: str
    done: bool = False
    answer: str | None = None
    ok: bool = True
    infeasible: bool = False  # `done` with infeasible: true


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


def _coords(x: float, y: float) -> str:
    return f"({x:g}, {y:g})"


async def click(ex: ActionExecutor, x: float, y: float, button: str = "left", clicks: int = 1) -> ActionResult:
    before = await ex.state(x, y)
    await gestures.perform(ex.tabs.page, gestures.click(x, y, button, clicks))
    notes, after = await ex.effects(before)
    kind = {1: "click", 2: "double-click", 3: "triple-click"}[clicks]
    if button != "left":
        kind = f"{button} {kind}"
    msg = f"Success: {kind} on {describe_element(before['at'])} at {_coords(x, y)}."
    if after.get("focused") and after["focused"].get("editable") and after["focused"] != before.get("focused"):
        notes.append(f"Focused field: {describe_element(after['focused'])}.")
    if not notes:
        notes.append("Note: no navigation or new tab was detected.")
    return ActionResult(" ".join([msg] + notes))


async def hover(ex: ActionExecutor, x: float, y: float) -> ActionResult:
    before = await ex.state(x, y)
    await gestures.perform(ex.tabs.page, gestures.hover(x, y))
    notes, after = await ex.effects(before)
    changed = after["mutations"] != before["mutations"]
    msg = f"Success: hovering over {describe_element(before['at'])} at {_coords(x, y)}."
    # CSS-only effects (:hover menus) change no DOM node, so silence is not proof of no effect
    notes.append("The page content changed." if changed else "No DOM change was detected.")
    return ActionResult(" ".join([msg] + notes))


async def drag(ex: ActionExecutor, x1: float, y1: float, x2: float, y2: float) -> ActionResult:
    before = await ex.state(x1, y1)
    target = (await ex.tabs.probe(x2, y2))["at"]
    await gestures.perform(ex.tabs.page, gestures.drag(x1, y1, x2, y2))
    notes, after = await ex.effects(before)
    changed = after["mutations"] != before["mutations"]
    msg = (f"Success: dragged {describe_element(before['at'])} from {_coords(x1, y1)} to "
           f"{describe_element(target)} at {_coords(x2, y2)}.")
    notes.append("The page content changed." if changed else "Note: the page did not change.")
    return ActionResult(" ".join([msg] + notes))


async def write(ex: ActionExecutor, text: str, x: float | None = None, y: float | None = None,
                enter: bool = False) -> ActionResult:
    prefix = ""
    if x is not None and y is not None:
        clicked = await click(ex, x, y)
        prefix = clicked.feedback + " "
    before = await ex.state()
    field = before.get("focused")
    if not field or not field.get("editable"):
        return ActionResult(prefix + "Failed: 'write' found no focused input field; click on a field first.",
                            ok=False)
    await gestures.perform(ex.tabs.page, gestures.write(text, enter, focused=field))
    notes, after = await ex.effects(before)
    msg = f'Success: wrote "{text}" into {describe_element(field)}.'
    actual = (after.get("focused") or {}).get("value") if not notes else None
    if actual is not None and actual != text:
        notes.append(f'Note: the field now holds "{actual}", which differs from the text written.')
    if enter:
        notes.insert(0, "Pressed Enter.")
    return ActionResult(prefix + " ".join([msg] + notes))


async def press_keys(ex: ActionExecutor, keys: list[str]) -> ActionResult:
    before = await ex.state()
    # the clipboard keys play against the episode's own clipboard (weblica/env/clipboard.py)
    names = await gestures.perform(ClipboardPage(ex.tabs.page, ex.clipboard), gestures.press_keys(keys))
    notes, _ = await ex.effects(before)
    return ActionResult(" ".join([f"Success: pressed {names}."] + notes))


async def scroll(ex: ActionExecutor, direction: str, amount: float = 0.5, x: float | None = None,
                 y: float | None = None) -> ActionResult:
    vertical = direction in ("up", "down")
    where = "the page"
    if x is not None and y is not None:
        before = await ex.state(x, y)
        where = describe_element(before["at"])
        key = "elementScroll"
    else:
        before = await ex.state()
        key = "scroll"
    await gestures.perform(ex.tabs.page, gestures.scroll(direction, amount, x, y))
    notes, after = await ex.effects(before)
    moved_before = before.get(key)
    if key == "elementScroll":
        assert x is not None and y is not None
        # the wheel scrolls the page when no element under the pointer can scroll
        key = key if moved_before is not None else "scroll"
        moved_before = before[key]

        async def read() -> Any:
            return (await ex.state(x, y)).get(key)

        moved_after = await gestures.wheel_landed(read, moved_before)
    else:
        moved_after = after.get(key)
    msg = f"Success: scrolled {direction} by {amount:.0%} of the viewport on {where}."
    if moved_before == moved_after:
        notes.append("Note: the scroll position did not change; a boundary may have been reached.")
    else:
        delta = [int(round(a - b)) for a, b in zip(moved_after, moved_before)]
        notes.append(f"The view moved by {abs(delta[1] if vertical else delta[0])} px.")
    return ActionResult(" ".join([msg] + notes))


async def goto_url(ex: ActionExecutor, url: str) -> ActionResult:
    refusal = await ex.guard.policy.resolved_refusal(url)
    if refusal:  # never handed to the browser
        return ActionResult(f"Refused: 'goto_url' to {url}: {refusal}.", ok=False)
    before = await ex.state()
    try:
        response = await gestures.perform(ex.tabs.page, gestures.navigate(url, ex.navigation_timeout_ms))
    except Exception as exc:
        ex.tabs._raise_if_crashed(exc)
        refused = [r for r in ex.guard.take() if r.navigation]
        if refused:  # the browser saw another form of a refused URL, or its redirect
            return ActionResult(f"Refused: 'goto_url' to {url}: {refused[0].reason}.", ok=False)
        return ActionResult(f"Failed: 'goto_url' to {url} failed: {str(exc).splitlines()[0]}", ok=False)
    notes, after = await ex.effects(before)
    refused = [r for r in ex.guard.refused if r.navigation]
    if refused:  # the gateway answered in the site's place (a name that resolves to a private address)
        ex.guard.take()
        return ActionResult(f"Refused: 'goto_url' to {url}: {refused[0].reason}.", ok=False)
    status = f" (HTTP {response.status})" if response is not None and response.status >= 400 else ""
    return ActionResult(f"Success: opened {after['url']}{status}.")


async def _history(ex: ActionExecutor, direction: str) -> ActionResult:
    before = await ex.state()
    response = await gestures.perform(ex.tabs.page, gestures.history(direction, ex.navigation_timeout_ms))
    notes, after = await ex.effects(before)
    if response is None and after["url"] == before["url"]:
        return ActionResult(f"Failed: 'go_{direction}' found no {'previous' if direction == 'back' else 'next'} "
                            "page in this tab's history.", ok=False)
    return ActionResult(f"Success: went {direction} to {after['url']}.")


async def go_back(ex: ActionExecutor) -> ActionResult:
    return await _history(ex, "back")


async def go_forward(ex: ActionExecutor) -> ActionResult:
    return await _history(ex, "forward")


async def wait(ex: ActionExecutor, seconds: float = 1.0) -> ActionResult:
    before = await ex.state()
    notes, after = await ex.effects(before, settle_ms=wait_ms(seconds))
    changed = "the page changed" if after["mutations"] != before["mutations"] else "the page did not change"
    return ActionResult(" ".join([f"Success: waited {seconds:g} s; {changed}."] + notes))


async def new_tab(ex: ActionExecutor) -> ActionResult:
    tabs = ex.tabs
    tabs.prune_closed()
    if len(tabs.pages) >= tabs.limits.max_tabs:
        return ActionResult(f"Failed: 'new_tab': this episode already has {len(tabs.pages)} tabs, the most "
                            "it may keep; close one first ('close_tab').", ok=False)
    page = await tabs.context.new_page()
    tabs._on_page(page)
    tabs.take_opened()
    tabs.active = tabs.pages.index(page)
    return ActionResult(f"Success: opened a new blank tab (index {tabs.active}); it is now active.")


async def switch_tab(ex: ActionExecutor, index: int) -> ActionResult:
    tabs = ex.tabs
    tabs.prune_closed()
    if index >= len(tabs.pages):
        return ActionResult(f"Failed: 'switch_tab' to index {index}: there are only {len(tabs.pages)} "
                            f"tab(s) (0..{len(tabs.pages) - 1}).", ok=False)
    tabs.active = index
    await tabs.page.bring_to_front()
    return ActionResult(f"Success: switched to tab {index} ({tabs.page.url}).")


async def close_tab(ex: ActionExecutor) -> ActionResult:
    tabs = ex.tabs
    page = tabs.page
    closed_url = page.url
    if len(tabs.pages) == 1:
        return ActionResult("Failed: 'close_tab' cannot close the last open tab.", ok=False)
    index = tabs.active
    await page.close()
    tabs.forget(page)
    tabs.active = min(index, len(tabs.pages) - 1)
    await tabs.page.bring_to_front()
    return ActionResult(f"Success: closed tab {index} ({closed_url}); now on tab {tabs.active} "
                        f"({tabs.page.url}).")


async def done(ex: ActionExecutor, answer: str = "", infeasible: bool = False) -> ActionResult:
    said = " (declared infeasible)" if infeasible else ""
    return ActionResult(f"Success: the task is marked as done{said}. Answer: {answer}", done=True, answer=answer,
                        infeasible=infeasible)
