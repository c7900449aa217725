"""Secrets never leave in exports: a login site recorded for real through the recording proxy
(mitmproxy), exported as HAR and WARC, and the exported bytes searched for every secret value."""
import gzip
import json
import sys
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner
from flask import Flask, jsonify, make_response, redirect, request

sys.path.insert(0, str(Path(__file__).parents[1]))

from sites import LocalServer  # noqa: E402

from weblica.cache.addons import EpisodeHeader, Recorder  # noqa: E402
from weblica.cache.interop import import_file  # noqa: E402
from weblica.cache.proxy import ProxyServer  # noqa: E402
from weblica.cache.redact import REDACTED, Redactor, is_secret_header, is_secret_name, looks_like_token  # noqa: E402
from weblica.cache.store import Store  # noqa: E402
from weblica.cache.warc import read_warc  # noqa: E402
from weblica.cli import get_cli  # noqa: E402

JWT = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJib2ItNzcxMiJ9.Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MA"
# every secret the site sees or sends, by where it travels; each value is unique so a grep finds only it
SECRETS = {
    "form password": "pw-Hunter2-form-71",
    "form csrf_token": "csrf-form-9f8e7d6c5b4a",
    "form csrfmiddlewaretoken": "cmt-Django-4411aa",
    "form authenticity_token": "auth-Rails-55bb22",
    "form _csrf": "underscore-csrf-77cc33",
    "json password": "pw-Json-Hunter3-72",
    "json client_secret": "cs-ClientSecret-8833",
    "json nested refresh_token": "rt-Nested-Refresh-9944",
    "json list api_key": "ak-InList-1010",
    "login response access_token": JWT,
    "login response refresh_token": "rt-Response-Refresh-5566",
    "response session id": "sess-Cookie-ABCDEF12",
    "Set-Cookie": "setcookie-Value-3141",
    "X-Api-Key": "xak-HeaderKey-2718",
    "X-Auth-Token": "xat-AuthToken-1618",
    "X-CSRF-Token": "xcsrf-Header-1414",
    "X-Service-Key": "xsk-AnyKey-1732",
    "X-Client-Secret": "xcs-AnySecret-2236",
    "Authorization": "Bearer-cred-Zx81Qw92Er73Ty64",
    "Cookie": "cookie-Session-8080",
    "query api_key": "q-ApiKey-6060",
    "query apikey": "q-ApiKey2-6161",
    "query token": "q-Token-6262",
    "query session_id": "q-Session-6363",
    "query key (Google style)": "AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q",
    "path jsessionid": "JSESS-Path-7070",
    "multipart password": "pw-Multipart-73",
    "multipart token": "tok-Multipart-7474",
    "html csrf meta": "meta-Csrf-Token-9090",
    "html hidden csrf input": "hidden-Csrf-9191",
    "js api key": "js-ApiKey-Inline-9292",
    "AWS key in a page": "AKIAIOSFODNN7EXAMPLE",
    "JWT in a page": JWT.replace("Zm9v", "YmFy"),
    "bearer in a custom header": "customBearer-88Xy77Zw66",
}
PUBLIC = ["bob@example.test", "lamp", "page=2", "Welcome bob", "report.txt", "file body stays"]


def _app() -> Flask:
    app = Flask(__name__)
    s = SECRETS

    @app.get("/login")
    def login_page():
        return (f'<html><head><meta name="csrf-token" content="{s["html csrf meta"]}"></head><body>'
                f'<form method="post" action="/login"><input type="hidden" name="csrf" value="{s["html hidden csrf input"]}">'
                f'<input name="username"><input type="password" name="password"></form>'
                f'<script>window.apiKey = "{s["js api key"]}"; var q = "lamp";</script>'
                f'<p>{s["AWS key in a page"]} {s["JWT in a page"]}</p></body></html>')

    @app.post("/login")
    def login():
        assert request.form["password"] == s["form password"]
        resp = make_response(redirect("/home"))
        resp.set_cookie("sessionid", s["Set-Cookie"])
        return resp

    @app.post("/api/login")
    def api_login():
        assert request.get_json()["password"] == s["json password"]
        return jsonify(access_token=s["login response access_token"], refresh_token=s["login response refresh_token"],
                       session={"id": s["response session id"]}, user={"email": "bob@example.test", "greeting": "Welcome bob"})

    @app.get("/api/items")
    def items():
        return jsonify(items=["lamp"], page=request.args.get("page"))

    @app.get("/cart;jsessionid=<sid>")
    def cart(sid):
        return "cart"

    @app.post("/upload")
    def upload():
        return jsonify(got=sorted(request.form), files=sorted(request.files))

    return app


@pytest.fixture(scope="module")
def recording(tmp_path_factory):
    """The login site recorded through the real recording proxy (mitmproxy) into a real store."""
    rec = tmp_path_factory.mktemp("redact") / "rec"
    store = Store.open_dir(rec, create=True)
    recorder = Recorder(store, store.new_run("record", start_url="http://login.test/login"))
    s = SECRETS
    with LocalServer(_app()) as site, ProxyServer([EpisodeHeader(), recorder]) as proxy:
        base = site.url
        with httpx.Client(proxy=proxy.url, follow_redirects=False) as client:
            assert client.get(f"{base}/login").status_code == 200
            form = {"username": "bob@example.test", "password": s["form password"], "csrf_token": s["form csrf_token"],
                    "csrfmiddlewaretoken": s["form csrfmiddlewaretoken"],
                    "authenticity_token": s["form authenticity_token"], "_csrf": s["form _csrf"]}
            assert client.post(f"{base}/login", data=form).status_code == 302
            body = {"email": "bob@example.test", "password": s["json password"], "client_secret": s["json client_secret"],
                    "device": {"refresh_token": s["json nested refresh_token"]}, "keys": [{"api_key": s["json list api_key"]}]}
            assert client.post(f"{base}/api/login", json=body).status_code == 200
            headers = {"X-Api-Key": s["X-Api-Key"], "X-Auth-Token": s["X-Auth-Token"], "X-CSRF-Token": s["X-CSRF-Token"],
                       "X-Service-Key": s["X-Service-Key"], "X-Client-Secret": s["X-Client-Secret"],
                       "Authorization": f"Bearer {s['Authorization']}", "Cookie": f"sessionid={s['Cookie']}",
                       "X-Forwarded-Credential": f"Bearer {s['bearer in a custom header']}"}
            query = (f"page=2&api_key={s['query api_key']}&apikey={s['query apikey']}&token={s['query token']}"
                     f"&session_id={s['query session_id']}&key={s['query key (Google style)']}")
            assert client.get(f"{base}/api/items?{query}", headers=headers).json()["page"] == "2"
            assert client.get(f"{base}/cart;jsessionid={s['path jsessionid']}").status_code == 200
            files = {"report": ("report.txt", b"file body stays", "text/plain")}
            data = {"password": s["multipart password"], "token": s["multipart token"], "note": "lamp"}
            assert client.post(f"{base}/upload", data=data, files=files).json()["files"] == ["report"]
    assert not recorder.failures
    assert store.count_exchanges() == 6
    store.close()
    return rec


def _export(rec: Path, out: Path, fmt: str, *flags: str) -> bytes:
    result = CliRunner().invoke(get_cli(), ["export", str(rec), "--format", fmt, "--out", str(out), "--json", *flags],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    data = out.read_bytes()
    return gzip.decompress(data) if out.suffix == ".gz" else data


@pytest.mark.parametrize("name", ["rec.har", "rec.warc", "rec.warc.gz"])
def test_no_secret_value_is_left_in_the_exported_bytes(recording, tmp_path, name):
    fmt = "har" if name.endswith(".har") else "warc"
    exported = _export(recording, tmp_path / name, fmt)
    left = [what for what, value in SECRETS.items() if value.encode() in exported]
    assert not left, f"secrets left in the {name} export: {left}"
    assert REDACTED.encode() in exported
    for public in PUBLIC:
        assert public.encode() in exported, public  # redaction takes secrets, not the page

    kept = _export(recording, tmp_path / f"kept-{name}", fmt, "--keep-secrets")
    missing = [what for what, value in SECRETS.items() if value.encode() not in kept]
    assert not missing, f"--keep-secrets lost: {missing}"


def test_redacted_exports_stay_consistent_and_import_again(recording, tmp_path):
    har = tmp_path / "rec.har"
    _export(recording, har, "har")
    for entry in json.loads(har.read_text())["log"]["entries"]:
        post = entry["request"].get("postData")
        assert entry["request"]["bodySize"] == (len(post["text"].encode()) if post else 0)
        content = entry["response"]["content"]
        if "text" in content:
            assert content["size"] == entry["response"]["bodySize"] == len(content["text"].encode())
        for h in entry["request"]["headers"]:
            if h["name"].lower() == "content-length":
                assert int(h["value"]) == entry["request"]["bodySize"]
    warc = tmp_path / "rec.warc"
    _export(recording, warc, "warc")
    good, bad = read_warc(warc)  # block and payload digests, and every HTTP Content-Length, are checked
    assert bad == [] and len(good) == 12
    requests = [r for r in good if r.kind == "request" and r.body]
    assert requests and all(int(r.http_headers.get_header("Content-Length")) == len(r.body) for r in requests)
    assert import_file(warc, tmp_path / "from-warc")["exchanges"] == 6
    assert import_file(har, tmp_path / "from-har")["exchanges"] == 6


def test_the_recording_itself_keeps_its_secrets_for_replay(recording):
    with Store.open_dir(recording, readonly=True) as store:
        [login] = [e for e in store.exchanges() if e.method == "POST" and e.view.path == "/login"]
        assert SECRETS["form password"] in login.request_body.decode()


def test_names_and_patterns():
    for name in ["password", "passwd", "pwd", "user_password", "token", "access_token", "refreshToken", "api_key",
                 "apikey", "X-API-KEY", "secret", "client_secret", "csrf_token", "csrfmiddlewaretoken", "_csrf",
                 "authenticity_token", "__RequestVerificationToken", "session_id", "sessionid", "sid", "JSESSIONID",
                 "PHPSESSID", "aws_secret_access_key", "private_key"]:
        assert is_secret_name(name, "x"), name
    for name in ["q", "id", "page", "email", "author", "passenger", "compass", "session_length_hint"]:
        assert not is_secret_name(name, "value"), name
    assert is_secret_name("code", "4/0AX4XfWh7sPq2hG9kLmN3bV") and not is_secret_name("code", "FR")
    assert looks_like_token("a8F3k2LmQ9xZ7vB1") and not looks_like_token("aaaaaaaaaaaaaaaaaa")
    for header in ["Authorization", "Proxy-Authorization", "Cookie", "Set-Cookie", "X-Api-Key", "X-Auth-Token",
                   "X-CSRF-Token", "X-Amz-Security-Token", "X-Goog-Api-Key", "X-Whatever-Secret", "X-Any-Key"]:
        assert is_secret_header(header), header
    for header in ["Content-Type", "Accept", "User-Agent", "Cache-Control", "X-Requested-With"]:
        assert not is_secret_header(header), header
    r = Redactor()
    assert r.headers([("Proxy-Authorization", "Basic dXNlcjpwYXNz"), ("X-Note", "token Basic dXNlcjpwYXNzd29yZA==")]) \
        == [("Proxy-Authorization", "REDACTED-1"), ("X-Note", "token Basic REDACTED-2")]
    assert r.url("https://u:pw@a.test/cb?state=ok#access_token=abc&token_type=bearer") == \
        "https://u:REDACTED-3@a.test/cb?state=ok#access_token=REDACTED-4&token_type=REDACTED-5"
    assert r.url("https://a.test/search?q=lamp&page=2") == "https://a.test/search?q=lamp&page=2"
    # one value, one marker: an export still shows which values vary between runs, never the values
    assert r.url("https://a.test/x?sid=abc&csrf=zz") == "https://a.test/x?sid=REDACTED-4&csrf=REDACTED-6"
    pem = b"key:\n-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY-----\n"
    assert r.body(pem, "text/plain") == b"key:\nREDACTED-7\n"
    assert r.body(b"ghp_" + b"a1" * 18, "text/plain") == b"REDACTED-8"
    untouched = b'{"q":  "lamp", "page": 2}'
    assert r.body(untouched, "application/json") is untouched  # nothing secret: bytes as recorded
    assert r.body(b"\x89PNG password=x", "image/png") == b"\x89PNG password=x"
    graphql = json.dumps({"query": 'mutation { login(user: "bob", password: "gq-Secret-1") { ok } }'}).encode()
    assert b"gq-Secret-1" not in r.body(graphql, "application/json") and b'user: \\"bob\\"' in r.body(graphql, "")
    assert r.body(b"user=bob&password=pt-Secret-2", "text/plain") == b"user=bob&password=REDACTED-10"


BROWSER_SECRETS = {
    "typed password": "pw-Typed-In-Chromium-81",
    "hidden csrf": "csrf-Hidden-Input-82ab",
    "session cookie": "sess-Browser-Cookie-83cd",
    "token in the start URL (and so in Referer)": "q-Start-Token-84ef",
    "X-Api-Key set by page script": "xak-Script-Header-85",
    "JSON password sent by page script": "pw-Fetch-Json-86",
    "access_token in the JSON answer": JWT.replace("Zm9v", "QmFy"),
}
LOGIN_PAGE = """<!doctype html><html><head><title>Sign in</title></head><body style="margin:0;font-family:sans-serif">
<form method="post" action="/login"><input type="hidden" name="csrf_token" value="{csrf}">
<input id="u" name="username" style="position:absolute;left:100px;top:100px;width:200px;height:30px">
<input id="p" name="password" type="password" style="position:absolute;left:100px;top:160px;width:200px;height:30px">
<button style="position:absolute;left:100px;top:220px;width:100px;height:30px">Sign in</button></form></body></html>"""
HOME_PAGE = """<!doctype html><html><head><title>Home</title></head><body><p id="out">loading</p><script>
fetch('/api/session', {{method: 'POST', headers: {{'Content-Type': 'application/json', 'X-Api-Key': '{key}'}},
  body: JSON.stringify({{user: 'bob', password: '{password}'}})}})
  .then(r => r.json()).then(d => {{ document.getElementById('out').textContent = 'signed in ' + d.user; }});
</script></body></html>"""


def _browser_app() -> Flask:
    app = Flask(__name__)
    s = BROWSER_SECRETS

    @app.get("/login")
    def login_page():
        resp = make_response(LOGIN_PAGE.format(csrf=s["hidden csrf"]))
        resp.set_cookie("sessionid", s["session cookie"])
        return resp

    @app.post("/login")
    def login():
        ok = request.form.get("password") == s["typed password"] and request.form.get("csrf_token") == s["hidden csrf"]
        return redirect("/home" if ok else "/login?failed=1", code=303)

    @app.get("/home")
    def home():
        return HOME_PAGE.format(key=s["X-Api-Key set by page script"], password=s["JSON password sent by page script"])

    @app.post("/api/session")
    def session():
        ok = request.headers.get("X-Api-Key") == s["X-Api-Key set by page script"]
        ok = ok and request.cookies.get("sessionid") == s["session cookie"]
        return jsonify(user="bob" if ok else "nobody", access_token=s["access_token in the JSON answer"])

    return app


def test_a_login_browsed_in_chromium_exports_without_its_secrets(tmp_path):
    import asyncio

    from weblica.cache.record import record

    actions = [{"name": "click", "arguments": {"x": 200, "y": 115}}, {"name": "write", "arguments": {"text": "bob"}},
               {"name": "click", "arguments": {"x": 200, "y": 175}},
               {"name": "write", "arguments": {"text": BROWSER_SECRETS["typed password"]}},
               {"name": "click", "arguments": {"x": 150, "y": 235}}, {"name": "wait", "arguments": {"seconds": 1}}]
    rec = tmp_path / "rec"
    with LocalServer(_browser_app()) as site:
        url = f"http://login.test:{site.port}/login?next=/home&token={BROWSER_SECRETS['token in the start URL (and so in Referer)']}"
        summary = asyncio.run(record(url, actions, rec, runs=1, resolve=[f"login.test:{site.port}:127.0.0.1"]))
    assert not summary.errors
    with Store.open_dir(rec, readonly=True) as store:
        session = [e for e in store.exchanges() if e.view.path == "/api/session"]
        assert session and b'"user":"bob"' in store.bodies.get(session[0].response_body_digest).replace(b" ", b"")
    for name in ("rec.har", "rec.warc"):
        exported = _export(rec, tmp_path / name, "har" if name.endswith(".har") else "warc")
        left = [what for what, value in BROWSER_SECRETS.items() if value.encode() in exported]
        assert not left, f"secrets left in the {name} export: {left}"
        assert b"signed in" in exported and b"bob" in exported
        kept = _export(rec, tmp_path / f"kept-{name}", "har" if name.endswith(".har") else "warc", "--keep-secrets")
        assert all(value.encode() in kept for value in BROWSER_SECRETS.values())
