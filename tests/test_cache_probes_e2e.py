"""Issue 20 point 7, end to end in Chromium: a local multi-host HTTPS site whose home page varies with
Accept-Language (`Vary`) and whose account page with the login cookie, recorded through the real
recorder by real Chromium (two locales; logged out and logged in as alice; one article, one query, one
byte range), rules inferred, then replayed with the site gone. Each probe is answered with the live
page's content or as a miss, never with another variant's: the unrecorded locale, user, slug and query
miss; the unrecorded byte range is cut from the recorded whole body."""
import asyncio
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from cache_sites.probes import PROBES, ProbeSite, browse_probes, record_browse  # noqa: E402
from test_cache_proxy import Listener  # noqa: E402

from weblica.browser.launcher import context_kwargs, launch_browser  # noqa: E402
from weblica.cache.addons import EpisodeHeader, HostMapper, Recorder, Replayer, parse_resolve  # noqa: E402
from weblica.cache.backend import load_source  # noqa: E402
from weblica.cache.build import infer_into  # noqa: E402
from weblica.cache.proxy import ProxyServer  # noqa: E402
from weblica.cache.store import Store  # noqa: E402

EXPECTED = {p.name: "correct" if p.recorded or p.name.startswith("range from") else "miss" for p in PROBES}


async def _with_browser(proxy_url, go):
    from playwright.async_api import async_playwright

    async with async_playwright() as pw:
        browser = await launch_browser(pw)
        try:
            async def new_context(locale):
                return await browser.new_context(**{**context_kwargs(proxy_url, ignore_https_errors=True),
                                                    "locale": locale})
            return await go(new_context)
        finally:
            await browser.close()


def test_every_probe_is_answered_right_or_as_a_miss_never_with_another_variant(tmp_path):
    rec = tmp_path / "rec"
    with ProbeSite() as site:
        origin, port = site.url("").rstrip("/"), site.port
        with ProxyServer([HostMapper(parse_resolve(site.resolve))]) as proxy:   # the live site, not recorded
            live = asyncio.run(_with_browser(proxy.url, lambda new_context: browse_probes(new_context, origin)))
        assert set(live.values()) == {"correct"}, live   # each probe's expected content is what the site shows
        store = Store.open_dir(rec, create=True)
        recorder = Recorder(store, 0)
        with ProxyServer([EpisodeHeader(), HostMapper(parse_resolve(site.resolve)), recorder]) as proxy:
            async def record_runs(new_context):
                for _ in range(2):
                    recorder.begin_run(store.new_run("record", start_url=origin + "/"))
                    await record_browse(new_context, origin)
            asyncio.run(_with_browser(proxy.url, record_runs))
        store.close()
    rules = infer_into(rec)
    assert rules["require"] >= 1, rules   # cookie:sid (the account page changes with it)
    listener = Listener(port)   # where the live site was: the replay must never dial it
    source = load_source(rec, [], log_misses=False)
    try:
        with ProxyServer([EpisodeHeader(), Replayer(lambda episode: source)]) as proxy:
            replayed = asyncio.run(_with_browser(proxy.url, lambda new_context: browse_probes(new_context, origin)))
    finally:
        source.store.close()
        listener.close()
    assert listener.accepted == 0
    assert "wrong" not in replayed.values(), replayed
    assert replayed == EXPECTED, replayed
