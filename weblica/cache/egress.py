"""The recording proxy's upstream policy: no connection to a loopback, link-local or private address
unless it is a configured server (a --resolve target, the start URL's own server) or private
addresses are allowed (`weblica record --allow-private`).

The check runs in mitmproxy's `server_connect` hook, before the connection opens, on the addresses the
host name resolves to (so a public-looking name that resolves to 169.254.169.254 is refused too); the
connection is then pinned to the address that was checked, so a second lookup cannot answer otherwise.
It goes after HostMapper in the addon chain: a mapped host is checked at its mapped address.
"""
from __future__ import annotations

import logging

from mitmproxy.proxy.server_hooks import ServerConnectionHookData

from weblica.browser.gateway import ConnectionCheck
from weblica.browser.navigation import ALLOW_HINT, NavigationPolicy, host_address

logger = logging.getLogger(__name__)


class EgressGuard:
    """Refuses upstream connections the navigation policy does not allow; keeps what it refused."""

    def __init__(self, policy: NavigationPolicy) -> None:
        self.policy = policy
        self.check = ConnectionCheck(policy, logger, logging.WARNING, prefix="weblica: ", hint=ALLOW_HINT)
        self.refused = self.check.refused  # what it refused, for the recording's summary

    async def server_connect(self, data: ServerConnectionHookData) -> None:
        if data.server.error or not data.server.address or not self.policy.checks_addresses:
            return
        host, port = str(data.server.address[0]), int(data.server.address[1])
        addresses, refusal = await self.check.addresses(host, port)
        if refusal:
            data.server.error = refusal
            return
        if addresses and host_address(host) is None:
            if data.server.sni is None:  # keep the TLS server name of the host, as HostMapper does
                data.server.sni = host
            data.server.address = (addresses[0], port)  # connect where the check looked
