"""The demo's cache part (issue 20, point 9): a live-like news site recorded twice, rules inferred that do
something (the ad's cache-buster ignored, the beacon stubbed), replayed with the network cut with the
rules and without, side by side; the rules never serve less than none."""
import asyncio
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1]))

from listener import Listener  # noqa: E402

from weblica.cache import demo_site  # noqa: E402
from weblica.commands.demo import _cache_round_trip, _print_cache  # noqa: E402


def test_the_demo_records_a_live_like_site_and_shows_the_rules_at_work(tmp_path, monkeypatch):
    ports = []
    original = demo_site.NewsSite.stop

    def stop_and_listen(self):   # once the site stops, a listener on its port sees any outbound connection
        ports.append(self.port)
        original(self)
        ports.append(Listener(self.port))

    monkeypatch.setattr(demo_site.NewsSite, "stop", stop_and_listen)
    cache = asyncio.run(_cache_round_trip(tmp_path, 0))
    listener = ports[1]
    listener.close()
    assert not cache["record_errors"] and listener.accepted == 0
    found = {(r["kind"], r["field"].split(":")[-1]) for r in cache["rules_found"]}
    assert ("ignore", "cb") in found and ("stub", "/collect") in found, cache["rules_found"]
    with_rules, without = cache["with_rules"], cache["without_rules"]
    assert with_rules["misses"] == 0 and with_rules["served"] >= without["served"]
    assert with_rules["tiers"]["normalized"] >= 1 and with_rules["tiers"]["stub"] >= 1
    assert with_rules["screens_identical"] == "5/5" and without["screens_identical"] == "5/5"
    assert with_rules["outbound_connections"] == without["outbound_connections"] == 0

    class Console:
        lines: list[str] = []

        def print(self, text, **_):
            self.lines.append(text)

    console = Console()
    _print_cache(console, cache)
    assert any("ignore" in line and "query:cb" in line for line in console.lines)
    assert any(line.strip().startswith("replay with rules") for line in console.lines)
    assert any(line.strip().startswith("replay without rules") for line in console.lines)


def test_the_demo_builds_a_cached_environment_with_an_agent(tmp_path):
    from weblica.commands.demo import _cache_build
    from weblica.env.task import load_tasks

    built = _cache_build(tmp_path, 0)
    assert built["tasks"] == 3 and built["kept"] == 3 and built["misses"] == 0 and not built["dropped"], built
    cached = load_tasks(built["tasks_file"])
    assert [t.source.kind for t in cached] == ["cache"] * 3
