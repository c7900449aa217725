"""The calendar widget keeps to the booking window (session 11's read-through: a hotel site's date
picker paged to months the server refuses). The check-in field offers the nights of the window
(hotel_nights.calendar_nights), the check-out field the mornings after them; prev/next stop at the
window's months and the days outside are disabled, in real Chromium on a real site server. A date
field without a window (the date-picker skill's request form) still pages freely."""
from __future__ import annotations

import asyncio
import datetime as dt
import json

from weblica.env.task import load_tasks
from weblica.synth.generate import write_unvalidated
from weblica.synth.genres.travel.nights import calendar_nights
from weblica.synth.spec import sample_spec
from tests_helpers import synth_episode

SEED = 13  # a travel site with custom widgets (the calendar, not the native date input)


def _calendar_state(page, sel):
    return page.eval_on_selector(sel, """box => ({
        month: box.querySelector('[data-dp-month]').textContent,
        prev: box.querySelector('[data-dp-prev]').disabled, next: box.querySelector('[data-dp-next]').disabled,
        enabled: [...box.querySelectorAll('[data-date]')].filter(b => !b.disabled).map(b => b.dataset.date),
        all: [...box.querySelectorAll('[data-date]')].map(b => b.dataset.date)})""")


def test_the_hotel_calendar_stops_at_the_booking_window(tmp_path):
    spec = sample_spec(SEED, "search", "travel")
    assert spec.style.widgets == "custom"
    path = write_unvalidated(spec, tmp_path)
    task = load_tasks(path / "tasks.jsonl")[0]
    origin = "http://" + json.loads((path / "site.json").read_text())["spec"]["host"]
    first, last = calendar_nights()
    after_last = (dt.date.fromisoformat(last) + dt.timedelta(days=1)).isoformat()

    async def play(page, backend):
        seen = {}
        await page.goto(f"{origin}/hotels", wait_until="load")
        for name in ("checkin", "checkout"):
            sel = f"#f-{name}"
            await page.click(f"{sel} [data-dp-open]")
            opened = await _calendar_state(page, sel)
            for _ in range(3):  # a user pressing "previous" and "next" again and again
                await page.click(f"{sel} [data-dp-prev]", force=True)
            back = await _calendar_state(page, sel)
            for _ in range(4):
                await page.click(f"{sel} [data-dp-next]", force=True)
            ahead = await _calendar_state(page, sel)
            # a disabled day does not take a click
            outside = next((d for d in ahead["all"] if d not in ahead["enabled"]), None)
            if outside:
                await page.click(f"{sel} [data-date='{outside}']", force=True)
            seen[name] = {"opened": opened, "back": back, "ahead": ahead,
                          "value": await page.eval_on_selector(f"{sel} input[type=hidden]", "e => e.value")}
            await page.click(f"{sel} [data-dp-open]")
        return seen

    seen = asyncio.run(synth_episode([path], task, "calendar", play))
    checkin, checkout = seen["checkin"], seen["checkout"]
    # check-in: one month, every night of the window enabled, nothing beyond; both arrows stop
    assert checkin["opened"]["prev"] and checkin["opened"]["next"], checkin["opened"]
    assert checkin["back"]["month"] == checkin["ahead"]["month"] == checkin["opened"]["month"]
    assert checkin["opened"]["enabled"][0] == first and checkin["opened"]["enabled"][-1] == last
    # check-out: the morning after the first night up to the morning after the last, one month further
    assert checkout["opened"]["prev"] and not checkout["opened"]["next"], checkout["opened"]
    assert first not in checkout["opened"]["enabled"] and checkout["opened"]["enabled"][0] > first
    assert checkout["ahead"]["next"] and checkout["ahead"]["enabled"] == [after_last], checkout["ahead"]
    assert checkout["back"]["month"] == checkout["opened"]["month"]
    assert checkin["value"] == "" and checkout["value"] == ""  # the disabled days were not taken


def test_a_calendar_without_a_window_still_pages_freely(tmp_path):
    spec = sample_spec(1, "date-picker", "fitness")  # custom widgets, a request form with no window
    assert spec.style.widgets == "custom"
    path = write_unvalidated(spec, tmp_path)
    task = load_tasks(path / "tasks.jsonl")[0]
    origin = "http://" + json.loads((path / "site.json").read_text())["spec"]["host"]

    async def play(page, backend):
        await page.goto(f"{origin}/request", wait_until="load")
        await page.click("#f-start [data-dp-open]")
        opened = await _calendar_state(page, "#f-start")
        for _ in range(3):
            await page.click("#f-start [data-dp-next]")
        return opened, await _calendar_state(page, "#f-start")

    opened, ahead = asyncio.run(synth_episode([path], task, "free", play))
    assert not opened["prev"] and not opened["next"] and ahead["month"] != opened["month"]
    assert ahead["enabled"] == ahead["all"]
