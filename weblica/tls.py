"""A process-wide TLS context for the short-lived httpx clients we make per call.

Building a verifying context loads the CA bundle (~60 ms of CPU, blocking the event loop); the synth
backend and the token-engine client make a client per call (they may be used from several event
loops), so they share one context instead.
"""
from __future__ import annotations

import functools
import ssl


@functools.lru_cache(maxsize=1)
def tls_context() -> ssl.SSLContext:
    return ssl.create_default_context()
