"""Issue 39, point 7: malformed files get one-line errors (a `site.json` nested past its limit, a number no
JSON reader holds, a NaN initial state that was served as invalid JSON), and exports redact `auth`-like
query fields and credential fields in bodies whatever content type the body declares."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from weblica.cache.exchange import Exchange
from weblica.cache.redact import Redactor
from weblica.serve.app import discover_bundles
from weblica.serve.rules import RuleError

SITES = Path(__file__).resolve().parents[2] / "sites"
BUNDLE = "checkout-groceries-0bebe201"
WEBLICA = [sys.executable, "-m", "weblica.cli"]


def bundle_with(tmp_path: Path, edit) -> Path:
    root = tmp_path / BUNDLE
    shutil.copytree(SITES / BUNDLE, root)
    text = (root / "site.json").read_text(encoding="utf-8")
    (root / "site.json").write_text(edit(text), encoding="utf-8")
    return root


def _initial(text: str, value: str) -> str:
    meta = json.loads(text)
    meta["initial_state"] = {"cart": "__VALUE__"}
    return json.dumps(meta).replace('"__VALUE__"', value)


@pytest.mark.parametrize("name, edit, words", [
    ("nan", lambda t: _initial(t, "NaN"), ["NaN", "finite"]),
    ("infinity", lambda t: _initial(t, "-Infinity"), ["Infinity"]),
    ("1e999", lambda t: _initial(t, "1e999"), ["1e999", "out of range"]),
    ("long int", lambda t: _initial(t, "1" + "0" * 400), ["out of range"]),
    ("deep", lambda t: _initial(t, "[" * 100 + "]" * 100), ["deeper than 64 levels"]),
    ("very deep", lambda t: _initial(t, "[" * 200000 + "]" * 200000), ["site.json"]),
    ("surrogate", lambda t: _initial(t, '"\\udc00"'), ["lone surrogate"]),
])
def test_a_malformed_site_json_is_a_one_line_error(tmp_path, name, edit, words):
    root = bundle_with(tmp_path, edit)
    with pytest.raises(RuleError) as caught:
        discover_bundles([root])
    message = str(caught.value)
    assert "\n" not in message and str(root / "site.json") in message and "weblica synth" in message
    for word in words:
        assert word in message, message


def test_weblica_serve_refuses_it_with_one_json_line_and_a_good_bundle_still_serves(tmp_path):
    bad = bundle_with(tmp_path / "bad", lambda t: _initial(t, "NaN"))
    proc = subprocess.run(WEBLICA + ["serve", str(bad), "--port", "0", "--json"], capture_output=True, text=True,
                          timeout=120)
    lines = proc.stdout.strip().splitlines()
    assert proc.returncode != 0 and len(lines) == 1 and "Traceback" not in proc.stderr
    assert "NaN" in json.loads(lines[0])["error"]
    assert discover_bundles([SITES / BUNDLE])  # the shipped bundle loads as before


# ---- redaction -----------------------------------------------------------------------------------------

def test_auth_like_query_fields_are_redacted_and_look_alike_names_are_not():
    r = Redactor()
    url = r.url("https://api.a.test/v1/items?auth=hunter2&authToken=abc&q=lamp&author=Ann&authority=x")
    assert "hunter2" not in url and "authToken=abc" not in url
    assert "q=lamp" in url and "author=Ann" in url and "authority=x" in url
    assert "hunter2" not in r.url("https://a.test/?Auth=hunter2") and "s3cret" not in r.url("https://a.test/#auth=s3cret")


@pytest.mark.parametrize("declared", ["application/json", "text/plain", "application/octet-stream", "",
                                      "application/x-www-form-urlencoded", "text/html"])
def test_credential_fields_in_bodies_are_redacted_whatever_the_declared_type(declared):
    r = Redactor()
    form = r.body(b"user=ann&password=hunter2&remember=1", declared)
    assert b"hunter2" not in form and b"user=ann" in form and b"remember=1" in form
    as_json = r.body(b'{"user": "ann", "password": "hunter2", "nested": {"api_key": "k-123"}}', declared)
    assert b"hunter2" not in as_json and b"k-123" not in as_json and b'"user": "ann"' in as_json


def test_an_export_of_such_an_exchange_leaves_no_secret(tmp_path):
    r = Redactor()
    ex = Exchange(method="POST", url="https://a.test/login?auth=tok-99&next=/home", status=200,
                  request_headers=[("Content-Type", "application/json")],
                  response_headers=[("Content-Type", "text/plain")])
    out = r.exchange(ex, b"email=a%40b.test&password=hunter2", b'{"session": "s-1", "ok": true}')
    dumped = json.dumps([out.url, out.request_headers, out.request_body.decode(), out.response_body.decode()])
    for secret in ("tok-99", "hunter2", "s-1"):
        assert secret not in dumped
    assert "next=/home" in out.url and "email=a%40b.test" in out.request_body.decode()
