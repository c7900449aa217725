"""The one upstream-connection check both proxies make (weblica.browser.gateway.ConnectionCheck): the live
gateway and the recorder's EgressGuard refuse the same addresses, keep the same refusal text (each with
its own prefix and hint) and log it at their own level."""
from __future__ import annotations

import asyncio
import logging

from weblica.browser.gateway import LiveGateway
from weblica.browser.navigation import ALLOW_HINT, NavigationPolicy
from weblica.cache.egress import EgressGuard


def test_both_proxies_refuse_alike_and_keep_what_they_refused(caplog):
    policy = NavigationPolicy("live", allowed_endpoints=frozenset({("127.0.0.1", 8080)}))
    gateway, guard = LiveGateway(policy), EgressGuard(policy)

    async def go() -> list[tuple[list[str], str | None]]:
        return [await gateway.check.addresses("127.0.0.2", 80), await guard.check.addresses("127.0.0.2", 80),
                await gateway.check.addresses("127.0.0.1", 8080), await guard.check.addresses("169.254.169.254", 80)]
    with caplog.at_level(logging.INFO):
        refused_gw, refused_rec, allowed, metadata = asyncio.run(go())
    assert refused_gw[0] == [] and refused_gw[1] == "the connection to 127.0.0.2:80 is refused: " \
        + refused_gw[1].split(" is refused: ", 1)[1] and "loopback" in refused_gw[1]
    assert refused_rec == ([], f"weblica: {refused_gw[1]} ({ALLOW_HINT})")
    assert allowed == (["127.0.0.1"], None)  # a configured server: its checked address, nothing kept
    assert metadata[0] == [] and "169.254.169.254:80" in metadata[1] and metadata[1].endswith(f"({ALLOW_HINT})")
    assert gateway.refused == [refused_gw[1]] and guard.refused == [refused_rec[1], metadata[1]]
    levels = {(r.levelname, r.getMessage()) for r in caplog.records}
    assert ("INFO", f"weblica live gateway: {refused_gw[1]}") in levels and ("WARNING", refused_rec[1]) in levels
