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
import shutil
import tempfile
from pathlib import Path

CA_CERT = "mitmproxy-ca-cert.pem"
CA_KEY = "mitmproxy-ca.pem"   # key and certificate: what mitmproxy signs with


def confdir() -> Path:
    """Where mitmproxy keeps its CA: per user, created once."""
    base = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "weblica" / "mitmproxy"
    base.mkdir(parents=True, exist_ok=True)
    return base


def ensure_ca() -> Path:
    """The confdir, with its CA created once (under a file lock) if it is not there yet. mitmproxy
    creates a missing CA itself, but not atomically: two processes starting their first proxy at once
    (pytest-xdist workers, Ray workers on one machine) would each write a CA of their own over the
    other's, and one would read the other's half-written file or sign with a key its browser's
    `--ignore-certificate-errors-spki-list` does not name."""
    import fcntl

    base = confdir()
    if (base / CA_KEY).is_file():
        return base
    with open(base / ".create.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)   # released when the file closes
        if not (base / CA_KEY).is_file():
            from mitmproxy.certs import DEFAULT_DHPARAM, CertStore
            from mitmproxy.options import CONF_BASENAME, KEY_SIZE

            staging = Path(tempfile.mkdtemp(prefix=".creating-", dir=base))
            try:
                CertStore.create_store(staging, CONF_BASENAME, KEY_SIZE)
                # mitmproxy writes this one on load when missing, as racy as the CA
                (staging / f"{CONF_BASENAME}-dhparam.pem").write_bytes(DEFAULT_DHPARAM)
                # the key file last: it is what mitmproxy (and the check above) take as "the CA exists"
                for entry in sorted(staging.iterdir(), key=lambda p: p.name == CA_KEY):
                    os.replace(entry, base / entry.name)
            finally:
                shutil.rmtree(staging, ignore_errors=True)
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
