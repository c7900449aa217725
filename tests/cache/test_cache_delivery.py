"""Replay behaves the same every time: a page whose loader batches and races by arrival time, recorded
through the real recorder with random server latency, replayed ten times with the network cut in real
Chromium. The replay must make the same requests and show the same screens in 10 of 10 rounds, the
screens the recording showed (the recorded arrival order: `b` before `a`, `y` winning the race)."""
import asyncio
import json
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

sys.path.insert(0, str(Path(__file__).parents[1]))

from cache_sites.loader import LOADER_ACTIONS, LoaderSite, replay_rounds  # noqa: E402
from listener import Listener  # noqa: E402

from weblica.cache.delivery import DeliveryOrder  # noqa: E402
from weblica.cache.exchange import Exchange  # noqa: E402
from weblica.cache.play import load_screens  # noqa: E402
from weblica.cache.store import Store, screens_dir  # noqa: E402
from weblica.cli import get_cli  # noqa: E402

ROUNDS = 10


def _ex(id_, seq, path, started, ended, run=1):
    return Exchange(method="GET", url=f"https://x.test{path}", started=started, ended=ended, seq=seq, run_id=run,
                    id=id_)


def test_a_response_waits_only_for_those_that_landed_while_it_was_in_flight():
    a = _ex(1, 0, "/a", 0.0, 0.09)
    b = _ex(2, 1, "/b", 0.001, 0.02)
    late = _ex(3, 2, "/late", 0.5, 0.6)     # asked after both landed: never held
    beacon = _ex(4, 3, "/beacon", 0.002, 0.01)
    order = DeliveryOrder([a, b, late, beacon], key_of=lambda ex: ex.url, skip=lambda ex: ex is beacon,
                          max_wait_s=5.0)
    assert order.predecessors(a) == [("https://x.test/b", 0)]   # the stubbed beacon is left out
    assert order.predecessors(b) == [] and order.predecessors(late) == []

    async def deliver():
        released = []

        async def serve(ex, delay):
            await asyncio.sleep(delay)
            await order.turn("ep", ex)
            released.append(ex.url.rsplit("/", 1)[1])
        await asyncio.gather(serve(a, 0), serve(b, 0.05))   # a is asked first, b later
        return released

    assert asyncio.run(deliver()) == ["b", "a"]   # in the recorded order
    order.reset("ep")
    order.max_wait_s = 0.05   # a predecessor never asked for holds a response only so long
    held = asyncio.run(order.turn("ep", a))
    assert 0.05 <= held < 1.0


def invoke(*args: str) -> dict:
    result = CliRunner().invoke(get_cli(), [*args, "--json"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return json.loads(result.output.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def loader(tmp_path_factory):
    base = tmp_path_factory.mktemp("loader")
    actions, rec = base / "actions.json", base / "rec"
    actions.write_text(json.dumps(LOADER_ACTIONS))
    with LoaderSite() as site:
        args = ["record", site.url("/"), "--actions", str(actions), "--runs", "2", "--out", str(rec)]
        for spec in site.resolve:
            args += ["--resolve", spec]
        summary = invoke(*args)
        port = site.port
    return {"rec": rec, "port": port, "summary": summary}


def test_ten_replays_make_the_same_requests_and_screens_as_the_recording(loader):
    assert not loader["summary"]["errors"]
    store = Store.open_dir(loader["rec"], readonly=True)
    first_run = store.runs()[0].id
    recorded = {e.url.split("/", 3)[3] for e in store.exchanges([first_run])}
    store.close()
    # live, the answers landed in another order than asked: the page batched b before a, y won
    assert {"load?modules=b,a", "winner?first=y"} <= recorded, recorded
    reference = load_screens(screens_dir(loader["rec"], first_run))
    listener = Listener(loader["port"])
    try:
        rounds = asyncio.run(replay_rounds(loader["rec"], ROUNDS))
    finally:
        listener.close()
    assert listener.accepted == 0
    first_requests, first_screens = rounds[0]
    same = sum(asked == first_requests and shots == first_screens for asked, shots in rounds)
    as_recorded = sum(shots == reference for _asked, shots in rounds)
    print(f"\nrepeat rate: same requests and screens in {same} of {ROUNDS} replays; "
          f"screens as recorded in {as_recorded} of {ROUNDS}")
    paths = {u.split("/", 3)[3] for u in first_requests}
    assert paths == recorded, paths ^ recorded   # every request recorded, none more (no miss)
    assert same == ROUNDS and as_recorded == ROUNDS
