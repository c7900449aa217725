"""Issue 41, point 4: fresh replays. The members' site (tests/cache_sites/members.py) is recorded logging
in, and replayed with the network cut with `--shift-dates` at two virtual clocks a year apart: the screens
are identical except the date banner (the page's clock, `document.lastModified`, the `Date` header of an
API call), which shows each replay's own date; the login cookie, whose shifted `Expires` lies in the
machine's past, is still kept (its lifetime travels as `Max-Age`). `weblica cache age` reports the
recording's age and the responses that carry dates."""
import asyncio
import io
import json
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from PIL import Image, ImageChops

sys.path.insert(0, str(Path(__file__).parents[1]))

from cache_sites.members import LOGIN_ACTIONS, MembersSite  # noqa: E402
from listener import Listener  # noqa: E402

from weblica.cache.backend import CacheBackend  # noqa: E402
from weblica.cache.dates import parse_clock, shift_cookie, shift_headers  # noqa: E402
from weblica.cache.play import make_env  # noqa: E402
from weblica.cache.session import SessionHost  # noqa: E402
from weblica.cli import get_cli  # noqa: E402
from weblica.env.task import Task, TaskSource  # noqa: E402

BANNER_PX = 40   # the date banner's height on the member pages
CLOCKS = ("2025-01-15T10:00:00Z", "2026-01-15T10:00:00Z")


def invoke(*args):
    result = CliRunner().invoke(get_cli(), [*args, "--json"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return json.loads(result.output.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def recording(tmp_path_factory):
    base = tmp_path_factory.mktemp("dates")
    actions = base / "actions.json"
    actions.write_text(json.dumps(LOGIN_ACTIONS))
    with MembersSite() as site:
        args = ["record", site.url("/login"), "--actions", str(actions), "--runs", "1", "--out", str(base / "rec")]
        for spec in site.resolve:
            args += ["--resolve", spec]
        invoke(*args)
        return {"rec": base / "rec", "port": site.port, "url": site.url("/login")}


def replay(recording, clock: str | None, task_dates: str | None = None):
    """The logged-in dashboard replayed at `clock` (dates shifted to it; or as the task's `source.dates`
    says, at the env's own clock), with the site gone: its screenshot and visible text."""
    async def go():
        at = parse_clock(clock) if clock else None
        backend = CacheBackend([recording["rec"]], [], log_misses=False, clock=at)
        host = SessionHost(epoch_ms=round(at * 1000)) if at else None
        env = make_env({"cache": backend}, host)
        task = Task(id="dates", start_url=recording["url"], instruction="log in", max_steps=20,
                    source=TaskSource(kind="cache", recording=str(recording["rec"]), dates=task_dates))
        try:
            await env.reset(task, seed=3)
            for action in LOGIN_ACTIONS:
                obs, *_ = await env.step([action])
            text = (await env.page_snapshot())["text"]
        finally:
            await env.close()
            await backend.stop()
            if host is not None:
                await host.close()
        return obs.screenshot, text, backend.stats
    listener = Listener(recording["port"])
    try:
        return asyncio.run(go())
    finally:
        listener.close()
        assert listener.accepted == 0


def _split(png: bytes):
    image = Image.open(io.BytesIO(png)).convert("RGB")
    return image.crop((0, 0, image.width, BANNER_PX)), image.crop((0, BANNER_PX, image.width, image.height))


def _same(a, b) -> bool:
    return ImageChops.difference(a, b).getbbox() is None


@pytest.fixture(scope="module")
def replays(recording):
    return {clock: replay(recording, clock) for clock in (*CLOCKS, None)} | {"again": replay(recording, CLOCKS[0])}


def test_two_replays_a_virtual_year_apart_differ_only_in_the_dates(replays):
    (shot_a, text_a, stats_a), (shot_b, text_b, stats_b) = replays[CLOCKS[0]], replays[CLOCKS[1]]
    assert stats_a.tiers["miss"] == 0 and stats_b.tiers["miss"] == 0, (stats_a.misses, stats_b.misses)
    banner_a, page_a = _split(shot_a)
    banner_b, page_b = _split(shot_b)
    assert _same(page_a, page_b)                 # everything under the banner is the same pixels
    assert not _same(banner_a, banner_b)         # the banner shows each replay's own date
    for text, year in ((text_a, "2025"), (text_b, "2026")):
        banner = text.splitlines()[0]
        assert f"Today {year}-01-15" in banner and f"updated 01/15/{year}" in banner, banner
        assert f"server Wed, 15 Jan {year} 10:00:00 GMT" in banner or f"15 Jan {year} 10:00:00 GMT" in banner, banner
        assert "Member cookie: alice" in text, text    # the cookie's shifted Expires is in the machine's past


def test_the_same_clock_replays_to_the_same_bytes(replays):
    assert replays[CLOCKS[0]][0] == replays["again"][0]


def test_without_shifting_the_dates_are_the_recorded_ones_moved_to_the_wall_clock(replays):
    text = replays[None][1]
    banner = text.splitlines()[0]
    assert "server" in banner and "Jan 2025" not in banner and "Member cookie: alice" in text


def test_the_cli_replays_with_shifted_dates_and_refuses_a_bad_clock(recording):
    report = invoke("replay", str(recording["rec"]), "--check", "--shift-dates", "--clock", CLOCKS[1], "--seed", "3")
    assert report["clock"] == CLOCKS[1] and report["tiers"]["miss"] == 0, report
    result = CliRunner().invoke(get_cli(), ["replay", str(recording["rec"]), "--check", "--shift-dates", "--clock",
                                            "next tuesday", "--json"])
    assert result.exit_code != 0 and "ISO 8601" in result.output
    result = CliRunner().invoke(get_cli(), ["replay", str(recording["rec"]), "--check", "--clock", CLOCKS[1], "--json"])
    assert result.exit_code != 0 and "--shift-dates" in result.output


def test_cache_age_reports_the_age_and_the_responses_carrying_dates(recording):
    report = invoke("cache", "age", str(recording["rec"]))
    assert report["age_days"] is not None and 0 <= report["age_days"] < 1 and report["runs"] == 1
    assert report["carrying_dates"]["date"] >= 3 and report["carrying_dates"]["last-modified"] >= 2
    assert report["carrying_dates"]["cookie_expiry"] == 1
    login = next(r for r in report["listed"] if r["status"] == 302)
    assert sorted(login["cookie_expiry"]) == ["member", "session"]


def test_a_task_that_asks_for_shifted_dates_gets_them_at_the_envs_clock(recording, replays):
    shot, text, stats = replay(recording, None, task_dates="shift")   # as `weblica run` plays a cache task
    assert "Today 2025-01-15 | updated 01/15/2025 10:00:00 | server Wed, 15 Jan 2025 10:00:00 GMT" in text
    assert shot == replays[CLOCKS[0]][0] and stats.tiers["miss"] == 0


def test_a_task_asks_for_shifted_dates_in_its_source():
    task = Task.from_dict({"id": "t", "start_url": "https://a.test/", "instruction": "x",
                           "source": {"kind": "cache", "recording": "r", "dates": "shift"}})
    assert task.source.dates == "shift" and task.to_dict()["source"]["dates"] == "shift"
    with pytest.raises(ValueError, match="source.dates"):
        asyncio.run(CacheBackend([], []).begin(Task(id="t", start_url="https://a.test/", instruction="x",
                                                    source=TaskSource(kind="cache", recording="r", dates="yes")),
                                               "ep", 0))


def test_header_dates_keep_their_distance_from_the_response_date():
    clock = parse_clock("2030-06-01T00:00:00Z")
    shifted = dict(shift_headers([("Date", "Mon, 07 Dec 2026 12:00:00 GMT"),
                                  ("Expires", "Mon, 07 Dec 2026 13:00:00 GMT"),
                                  ("Last-Modified", "Sun, 06 Dec 2026 12:00:00 GMT"), ("Expires", "0")][:3], clock, 0))
    assert shifted == {"Date": "Sat, 01 Jun 2030 00:00:00 GMT", "Expires": "Sat, 01 Jun 2030 01:00:00 GMT",
                       "Last-Modified": "Fri, 31 May 2030 00:00:00 GMT"}
    assert dict(shift_headers([("Expires", "0")], clock, 0)) == {"Expires": "0"}   # "already expired" stays


def test_a_cookie_keeps_its_lifetime_and_a_deletion_stays_a_deletion():
    delta = parse_clock("2030-06-01T00:00:00Z") - parse_clock("2026-12-07T12:00:00Z")
    base = parse_clock("2026-12-07T12:00:00Z")
    kept = shift_cookie("sid=1; Expires=Mon, 07 Dec 2026 13:00:00 GMT; Path=/", delta, base)
    assert "Expires=Sat, 01 Jun 2030 01:00:00 GMT" in kept and "Max-Age=3600" in kept
    gone = shift_cookie("sid=; Expires=Thu, 01 Jan 1970 00:00:00 GMT; Path=/", delta, base)
    assert "Max-Age=0" in gone
    own = shift_cookie("sid=1; Max-Age=60; Expires=Mon, 07 Dec 2026 13:00:00 GMT", delta, base)
    assert own.count("Max-Age") == 1 and "Max-Age=60" in own


def test_a_cookie_sent_without_a_date_header_survives_a_shift_into_the_machines_past(tmp_path):
    # Chromium reads Expires against the response's Date when there is one; without it, against the
    # machine's clock, where the shifted expiry (a virtual 2026-01-15 11:00) lies in the past
    from weblica.cache.exchange import Exchange
    from weblica.cache.store import Store

    recorded = parse_clock("2026-12-01T12:00:00Z")
    html = (b"<!doctype html><title>c</title><p id=c></p><script>document.getElementById('c').textContent = "
            b"'cookie ' + (document.cookie || 'none');</script>")
    with Store.open_dir(tmp_path / "rec", create=True) as store:
        run = store.new_run("record", start_url="https://www.c.test/")
        store.add_exchange(Exchange(method="GET", url="https://www.c.test/", status=200, run_id=run, seq=0,
                                    response_headers=[("Content-Type", "text/html"), (
                                        "Set-Cookie", "member=alice; Expires=Tue, 01 Dec 2026 13:00:00 GMT; Path=/")],
                                    started=recorded, ended=recorded), None, html)
        store.finish_run(run)

    async def go():
        at = parse_clock(CLOCKS[1])
        backend = CacheBackend([tmp_path / "rec"], [], log_misses=False, clock=at)
        host = SessionHost(epoch_ms=round(at * 1000))
        env = make_env({"cache": backend}, host)
        task = Task(id="c", start_url="https://www.c.test/", instruction="x",
                    source=TaskSource(kind="cache", recording=str(tmp_path / "rec")))
        try:
            await env.reset(task, seed=1)
            await env.step([{"name": "goto_url", "arguments": {"url": "https://www.c.test/"}}])  # the cookie, read back
            return (await env.page_snapshot())["text"]
        finally:
            await env.close()
            await backend.stop()
            await host.close()

    assert "cookie member=alice" in asyncio.run(go())
