"""Issue 20 point 7, end to end in Chromium: a local multi-host HTTPS site whose home page varies with
Accept-Language (`Vary`) and whose account page with the login cookie, recorded through the real
recorder by real Chromium (two locales; logged out and logged in as alice; one article, one query, one
byte range), rules inferred, then replayed with the site gone. Each probe is answered with the live
page's content or as a miss, never with another variant's: the unrecorded locale, user, slug and query
miss; the unrecorded byte range is cut from the recorded whole body."""
import asyncio
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1]))

from cache_sites.probes import PROBES, ProbeSite, browse_probes, record_probe_site, with_browser  # noqa: E402
from listener import Listener  # noqa: E402

from weblica.cache.addons import EpisodeHeader, Replayer  # noqa: E402
from weblica.cache.backend import load_source  # noqa: E402
from weblica.cache.build import infer_into  # noqa: E402
from weblica.cache.proxy import ProxyServer  # noqa: E402

EXPECTED = {p.name: "correct" if p.recorded or p.name.startswith("range from") else "miss" for p in PROBES}


def test_every_probe_is_answered_right_or_as_a_miss_never_with_another_variant(tmp_path):
    rec = tmp_path / "rec"
    with ProbeSite() as site:
        origin, port = site.url("").rstrip("/"), site.port
        live = record_probe_site(site, rec)
    assert set(live.values()) == {"correct"}, live   # each probe's expected content is what the live site shows
    rules = infer_into(rec)
    assert rules["require"] >= 1, rules   # cookie:sid (the account page changes with it)
    listener = Listener(port)   # where the live site was: the replay must never dial it
    source = load_source(rec, [], log_misses=False)
    try:
        with ProxyServer([EpisodeHeader(), Replayer(lambda episode: source)]) as proxy:
            replayed = asyncio.run(with_browser(lambda new_context: browse_probes(new_context, origin), proxy.url))
    finally:
        source.store.close()
        listener.close()
    assert listener.accepted == 0
    assert "wrong" not in replayed.values(), replayed
    assert replayed == EXPECTED, replayed
