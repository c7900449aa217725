"""The certificate authority of weblica's recording and replay proxy, shared by proxy and browser.

mitmproxy signs every HTTPS site with this CA (kept per user, created on the proxy's first start and
reused, so it stays stable). Contexts ignore certificate errors for page loads, but Chromium still
refuses to register a service worker whose script came with a certificate error; so Chromium is told
to accept certificates under this CA's key (`--ignore-certificate-errors-spki-list`), and a PWA's
worker runs under recording and replay as it does live. Only this key is trusted, nothing else.
"""
from __future__ import annotations

import base64
import hashlib
import os
from pathlib import Path

CA_CERT = "mitmproxy-ca-cert.pem"


def confdir() -> Path:
    """Where mitmproxy keeps its CA: per user, created once."""
    base = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "weblica" / "mitmproxy"
    base.mkdir(parents=True, exist_ok=True)
    return base


def ca_spki() -> str | None:
    """base64 sha256 of the CA's public key (Chromium's SPKI hash form); None before the CA exists."""
    path = confdir() / CA_CERT
    if not path.is_file():
        return None
    from cryptography import x509
    from cryptography.hazmat.primitives import serialization

    try:
        cert = x509.load_pem_x509_certificate(path.read_bytes())
    except ValueError:
        return None   # a damaged file: the proxy will say so; the browser trusts nothing extra
    spki = cert.public_key().public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    return base64.b64encode(hashlib.sha256(spki).digest()).decode()
