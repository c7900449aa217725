"""The proxy's CA is created once when several processes start their first proxy at the same moment (two
xdist workers, Ray workers on one machine): each of them signs with the CA on disk, the one whose key the
browsers are told to trust (`ca_spki`). Four real processes, a fresh XDG_CACHE_HOME, a file barrier."""
import os
import subprocess
import sys

PROCESS = r"""
import base64, hashlib, sys, time
from pathlib import Path
from cryptography.hazmat.primitives import serialization
from mitmproxy.certs import CertStore
from weblica.browser.mitm_ca import ca_spki
from weblica.cache.proxy import confdir
barrier, me, count = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
(barrier / me).touch()
deadline = time.monotonic() + 120
while len(list(barrier.iterdir())) < count and time.monotonic() < deadline:
    time.sleep(0.002)
store = CertStore.from_store(confdir(), "mitmproxy", 2048)   # what mitmproxy's TLS addon loads
der = store.default_ca.public_key().public_bytes(serialization.Encoding.DER,
                                                 serialization.PublicFormat.SubjectPublicKeyInfo)
print(base64.b64encode(hashlib.sha256(der).digest()).decode(), ca_spki())
"""


def test_processes_starting_at_once_sign_with_the_one_ca_the_browser_trusts(tmp_path):
    barrier = tmp_path / "barrier"
    barrier.mkdir()
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    count = 4
    procs = [subprocess.Popen([sys.executable, "-c", PROCESS, str(barrier), str(i), str(count)], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for i in range(count)]
    outs = [p.communicate(timeout=180) for p in procs]
    assert all(p.returncode == 0 for p in procs), [err[-1500:] for _, err in outs]
    pairs = {tuple(out.split()) for out, _ in outs}
    assert len(pairs) == 1, pairs   # one CA for all of them
    (signing, trusted), = pairs
    assert signing == trusted
    confdir = tmp_path / "cache" / "weblica" / "mitmproxy"
    assert not [p for p in confdir.iterdir() if p.name.startswith(".creating-")]   # no staging left behind
