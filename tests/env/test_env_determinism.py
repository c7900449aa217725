"""Same task + seed + actions => same screenshot bytes; another seed => other random values."""
import hashlib

from weblica.env.task import Task


def clock_task(site):
    return Task(id="clock", start_url=site.url + "/clock", instruction="look", max_steps=5)


def test_ten_resets_give_identical_screenshots(site, sync_env):
    task = clock_task(site)
    shots, texts = set(), set()
    for _ in range(10):
        obs = sync_env.reset(task, seed=7)
        obs, *_ = sync_env.step('<tool_call>{"name": "wait", "arguments": {"seconds": 1}}</tool_call>')
        shots.add(obs.screenshot_sha256)
    assert len(shots) == 1
    # the page shows the frozen clock and the timer that fired in virtual time
    page = sync_env.env._tabs.page
    text = sync_env._call(page.inner_text("#out"))
    assert "Wed Jan 15 2025 10:00:00" in text and "timer at 1736935200300" in text


def test_other_seed_gives_other_values(site, sync_env):
    task = clock_task(site)
    values = {}
    for seed in (7, 8):
        sync_env.reset(task, seed=seed)
        page = sync_env.env._tabs.page
        values[seed] = sync_env._call(page.inner_text("#out")).splitlines()
        values[seed].append(hashlib.sha256(sync_env._call(page.screenshot())).hexdigest())
    a, b = values[7], values[8]
    assert a[0] == b[0] and a[1] == b[1]          # Date and Date.now: the same frozen epoch
    assert a[2] != b[2] and a[3] != b[3]          # Math.random
    assert a[5] != b[5] and a[6] != b[6]          # randomUUID, getRandomValues
    assert a[-1] != b[-1]                         # and so the pixels
    assert len(a[5]) == 36 and a[5][14] == "4"    # a well-formed v4 UUID


def test_timers_follow_virtual_clock(site, sync_env):
    sync_env.reset(clock_task(site), seed=1)
    page = sync_env.env._tabs.page
    before = sync_env._call(page.evaluate("[Date.now(), performance.now()]"))
    sync_env.step({"name": "wait", "arguments": {"seconds": 2}})
    after = sync_env._call(page.evaluate("[Date.now(), performance.now()]"))
    assert after[0] - before[0] == 2000 and after[1] - before[1] == 2000


def test_virtual_time_carries_into_new_documents_and_frames(site, sync_env):
    """A document loaded later starts at the episode's current virtual time (not back at the epoch),
    and an iframe's clock moves with its page's."""
    sync_env.reset(clock_task(site), seed=1)
    now = "Date.now()"
    sync_env.step({"name": "wait", "arguments": {"seconds": 2}})
    t_before = sync_env._call(sync_env.env._tabs.page.evaluate(now))
    sync_env.step({"name": "goto_url", "arguments": {"url": site.url + "/framed"}})
    page = sync_env.env._tabs.page
    t_main = sync_env._call(page.evaluate(now))
    frame = page.frames[1]
    t_frame = sync_env._call(frame.evaluate(now))
    # the navigation step advanced time by one step's worth; the new documents replayed the rest
    step_ms = sync_env.env.config.settle.step_virtual_ms
    assert t_main == t_before + step_ms
    assert t_frame == t_main
    sync_env.step({"name": "wait", "arguments": {"seconds": 1}})
    assert sync_env._call(page.evaluate(now)) == t_main + 1000
    assert sync_env._call(frame.evaluate(now)) == t_frame + 1000


def test_fonts_and_locale(site, sync_env):
    sync_env.reset(clock_task(site), seed=1)
    page = sync_env.env._tabs.page
    tz, lang = sync_env._call(page.evaluate("[Intl.DateTimeFormat().resolvedOptions().timeZone, navigator.language]"))
    assert (tz, lang) == ("UTC", "en-US")

    async def platform_fonts():
        cdp = await page.context.new_cdp_session(page)
        await cdp.send("DOM.enable")
        await cdp.send("CSS.enable")
        root = await cdp.send("DOM.getDocument")
        found = {}
        for selector, family in (("#out", "monospace"), ("#f", "sans-serif")):
            node = await cdp.send("DOM.querySelector", {"nodeId": root["root"]["nodeId"], "selector": selector})
            fonts = await cdp.send("CSS.getPlatformFontsForNode", {"nodeId": node["nodeId"]})
            found[selector] = {f["familyName"] for f in fonts["fonts"]}
        return found

    used = sync_env._call(platform_fonts())
    # the generic families resolve to the fonts the project ships, whatever the machine has installed
    assert used["#out"] == {"DejaVu Sans Mono"}
    assert used["#f"] == {"DejaVu Sans"}
