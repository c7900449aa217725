"""The synth site server: one Flask app serving every bundle under its own host name.

Browsers reach it as their HTTP proxy (absolute-form request targets, `GET http://host/path`), which
Werkzeug maps onto the Host header, so routing by host is all the gateway needs. A host that is not a
served site gets a local error page: nothing is ever forwarded to the network.
"""
from __future__ import annotations

import hmac
import html
import json
import mimetypes
import secrets
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from flask import Blueprint, Flask, Response, abort, current_app, g, jsonify, request

from weblica.env.backend import EPISODE_HEADER
from weblica.env.server_requests import check_json_text, finite_json
from weblica.serve.inflight import InFlight
from weblica.serve.passwords import verify_password, with_hashed_passwords
from weblica.serve.rules import RuleError, checked_rules, refusal
from weblica.serve.store import StateStore, with_views
from weblica.site_runtime import runtime_asset
from weblica.site_runtime.design_systems import DesignSystemMissing, require

ADMIN_HEADER = "X-Weblica-Admin"
# what the env's backend says about the episode besides its id: the episode seed (the page draws its
# distractors from it, through EPISODE_SCRIPT) and which instance of the site's data it plays
SEED_HEADER = "X-Weblica-Seed"
INSTANCE_HEADER = "X-Weblica-Instance"
EPISODE_SCRIPT = "/_weblica/episode.js"
DEFAULT_EPISODE = "default"
MAX_PATH_CHARS = 2048          # longer paths are not a page of a synth site
MAX_SEGMENT_CHARS = 255        # a file name the filesystem can hold
MAX_BODY_BYTES = 4 << 20       # forms and state documents are small
MAX_SITE_JSON_DEPTH = 64       # a bundle's spec, data and rules nest a dozen levels


@dataclass
class ServeConfig:
    """What the server serves: bundle folders (a bundle, or a folder of bundles), where state lives,
    and the token the env's backend shows to reach the admin endpoints (pages never see it)."""

    sites: list[Path] = field(default_factory=list)
    state_url: str = "sqlite://"
    admin_token: str = field(default_factory=lambda: secrets.token_hex(16))


@dataclass
class SiteEntry:
    site_id: str  # the state store's key: the site id, with `#k` for instance k of its data
    host: str
    root: Path
    initial_state: dict[str, Any]
    record_rules: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # weblica/serve/rules.py

    def __post_init__(self) -> None:
        # the served folder, resolved once (a resolve walks every path component: three a request cost
        # about as much as the rest of serving a cached page); None when `public` is symlinked out of
        # (or onto) the bundle. Each file is still resolved per request: it must lie in this folder.
        root = self.root.resolve()
        public = (root / "public").resolve()
        self.public: Path | None = public if root in public.parents else None


def _entry(root: Path) -> tuple[int, SiteEntry]:
    where = root / "site.json"
    try:  # finite numbers and bounded nesting: what the server serves from it must be JSON a page reads
        meta = finite_json(where.read_bytes())
        check_json_text(meta, MAX_SITE_JSON_DEPTH)
        spec, instance = meta["spec"], int(meta.get("instance", 0))
        key = spec["site_id"] + (f"#{instance}" if instance else "")
        host, initial = str(spec["host"]), meta.get("initial_state", {})
    except (ValueError, KeyError, TypeError, AttributeError, RecursionError, OSError) as exc:  # not JSON, no spec.site_id
        detail = f"{type(exc).__name__}: {exc}".splitlines()[0][:200]
        raise RuleError(f"{where} is no site bundle's site.json ({detail}); regenerate it with `weblica synth`") from None
    design = meta.get("design") or {}
    if isinstance(design, dict) and design.get("system", "weblica") != "weblica":
        require([str(design["system"])])  # its pages load the system's files: refuse to serve it without them
    return instance, SiteEntry(key, host, root, initial, checked_rules(meta.get("record_rules"), str(where)))


def discover_bundles(paths: list[Path]) -> dict[str, dict[int, SiteEntry]]:
    """Host name -> instance -> bundle, for every `site.json` at or one level below the given paths,
    and the instances a bundle holds (weblica/synth/instances.py: `<bundle>/instances/<k>/<site id>/`).
    Instance 0 is the bundle itself; an instance bundle given directly (validation) serves as its k."""
    found: dict[str, dict[int, SiteEntry]] = {}
    for path in paths:
        candidates = [path] if (path / "site.json").exists() else sorted(p for p in path.iterdir() if (p / "site.json").exists()) if path.is_dir() else []
        for root in candidates:
            for bundle in [root, *sorted((root / "instances").glob("*/*/site.json"))]:
                instance, entry = _entry(bundle if bundle == root else bundle.parent)
                found.setdefault(entry.host, {})[instance] = entry
    return found


def requested_instance() -> int | None:
    """The instance the request's episode plays (0 without the header); None for a malformed header."""
    raw = request.headers.get(INSTANCE_HEADER, "0").strip()
    return int(raw) if raw.isdigit() and len(raw) < 10 else None


def _episode() -> str:
    return request.headers.get(EPISODE_HEADER) or DEFAULT_EPISODE


def _store() -> StateStore:
    return current_app.extensions["weblica_store"]


def _error_page(status: int, title: str, detail: str) -> Response:
    body = (f"<!doctype html><title>{title}</title><body style='font-family:sans-serif;padding:2em'>"
            f"<h1>{title}</h1><p>{html.escape(detail)}</p><p><small>weblica synth gateway</small></p></body>")
    return Response(body, status=status, mimetype="text/html")


def malformed_path(path: str) -> str | None:
    """Why a request path can be no page of a site (None when it may be one). Werkzeug has already
    percent-decoded it, replacing undecodable bytes with U+FFFD."""
    if len(path) > MAX_PATH_CHARS:
        return f"the path is {len(path)} characters long (the limit is {MAX_PATH_CHARS})"
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in path):
        return "the path holds a control character (such as %00)"
    if "\ufffd" in path:
        return "the path holds a bad percent-encoding (bytes that are not UTF-8)"
    return None


def _json_body(want: type | None = None, default: Any = None) -> Any:
    """The request's JSON whatever its content type (`default` when absent or not JSON, hostile nesting,
    NaN/Infinity and numbers too large for a float included: a stored NaN would make the state
    unreadable to the page); with `want`, a body of another type is a 400."""
    try:
        body = finite_json(request.get_data(cache=True))
    except (ValueError, RecursionError):  # JSONDecodeError and undecodable bytes are ValueErrors
        body = None
    if body is None:
        body = default
    if want is not None and not isinstance(body, want):
        abort(Response(json.dumps({"ok": False, "error": f"a JSON {want.__name__.replace('dict', 'object')} "
                                                         "is required"}), 400, mimetype="application/json"))
    return body


# ---- site pages ----------------------------------------------------------------------------------------
pages = Blueprint("pages", __name__)


@pages.route(EPISODE_SCRIPT, methods=["GET", "HEAD"])
def episode_script() -> Response:
    """The episode's seed for the page's own draws (its distractors), from the env's header: the bundle's
    bytes stay the same for every episode. Never cached: the next episode may share the browser's cache."""
    raw = request.headers.get(SEED_HEADER, "0").strip()
    seed = int(raw) & 0xFFFFFFFF if raw.isdigit() and len(raw) < 20 else 0
    response = Response(f"window.WEBLICA_EPISODE = {json.dumps({'seed': seed})};\n", mimetype="text/javascript")
    response.headers["Cache-Control"] = "no-store"
    return response


@pages.route("/", defaults={"path": ""}, methods=["GET", "HEAD"])
@pages.route("/<path:path>", methods=["GET", "HEAD"])
def serve_page(path: str) -> Response:
    public = g.site.public
    rel = path.strip("/")
    if public is None:  # a `public` symlinked out of (or onto) the bundle serves nothing
        return _error_page(404, "Page not found", f"There is no page at /{rel[:200]} on {g.site.host}.")
    parts = rel.split("/")
    if ".." in parts or any(len(p) > MAX_SEGMENT_CHARS for p in parts):  # never a page, whatever the disk holds
        return _error_page(404, "Page not found", f"There is no page at /{rel[:200]} on {g.site.host}.")
    for candidate in ([rel + ".html", rel] if rel else ["index.html"]):
        try:
            target = (public / candidate).resolve()  # symlinks followed: the file itself must lie in public/
            found = target.is_file() and public in target.parents
        except (OSError, ValueError):  # a name the filesystem refuses is no page
            found = False
        if found:
            return _file_response(target.read_bytes(), target.name)
    # the site runtime's scripts (/assets/site.js, ...) come from the package unless the bundle has its own
    # (an older bundle, or an LLM-written site's scaffold)
    # and a design system's files (/_ds/<package>@<version>/...) from where .ci/setup installed them
    try:
        script = runtime_asset(rel)
    except DesignSystemMissing as exc:
        return _error_page(500, "Design system not installed", str(exc))
    if script is not None:
        return _file_response(script, rel)
    return _error_page(404, "Page not found", f"There is no page at /{rel[:200]} on {g.site.host}.")


def _file_response(body: bytes, name: str) -> Response:
    mime = mimetypes.guess_type(name)[0] or "application/octet-stream"
    response = Response(body, mimetype=mime)
    # HTML is revalidated so a new episode's state shows; assets may be reused within a context
    response.headers["Cache-Control"] = "no-store" if mime == "text/html" else "max-age=600"
    response.headers["Vary"] = INSTANCE_HEADER  # one URL, other bytes in another instance of the data
    return response


# ---- the sites' state API --------------------------------------------------------------------------------
api = Blueprint("api", __name__, url_prefix="/api")


def _change(fn: Any) -> Any:
    return _store().update(g.site.site_id, _episode(), g.site.initial_state, fn)


@api.get("/state")
def get_state() -> Response:
    return jsonify(_store().get(g.site.site_id, _episode(), g.site.initial_state))


@api.put("/doc/<name>")
def put_doc(name: str) -> Response:
    body = _json_body()
    if name in g.site.record_rules:  # a ruled collection changes one checked record at a time, never wholesale
        return jsonify({"ok": False, "error": f"{name} cannot be replaced; add or change its records one at a time"}), 409
    _change(lambda s: s.__setitem__(name, body))
    return jsonify({"ok": True, name: body})


def _ids(records: Any) -> set[str]:
    return {str(r.get("id")) for r in records if isinstance(r, dict) and "id" in r} if isinstance(records, list) else set()


def _free_id(taken: set[str], n: int) -> str:
    """`r<n>`, or the next number free: after a deletion `len + 1` is the id of a stored record."""
    while f"r{n}" in taken:
        n += 1
    return f"r{n}"


@api.post("/<collection>")
def add_record(collection: str) -> Response:
    record = with_hashed_passwords(_json_body(dict), collection)
    rules = g.site.record_rules.get(collection, [])

    def add(state: dict[str, Any]) -> dict[str, Any] | str:
        reason = refusal(rules, collection, record, state) if rules else None
        if reason:  # the site's own rules refuse it (a taken seat, a missing prerequisite): nothing stored
            return reason
        records = state.setdefault(collection, [])
        if not isinstance(records, list):  # replaced whole by PUT /api/doc with something else
            return f"{collection[:40]} holds no list of records; nothing was stored"
        taken = _ids(records)
        if "id" not in record:
            record["id"] = _free_id(taken, len(records) + 1)
        elif str(record["id"]) in taken:  # two records of one id: a PATCH or DELETE would reach the older
            return f"a record with id {str(record['id'])[:40]!r} is already stored; leave 'id' out to get a new one"
        records.append(record)
        return record
    stored = _change(add)
    if isinstance(stored, str):
        return jsonify({"ok": False, "error": stored}), 409
    return jsonify({"ok": True, "record": stored})


@api.route("/<collection>/<rid>", methods=["PATCH", "DELETE"])
def change_record(collection: str, rid: str) -> Response:
    patch = _json_body(dict) if request.method == "PATCH" else None
    if patch is not None:
        patch = with_hashed_passwords(patch, f"{collection}:{rid}")
    rules = g.site.record_rules.get(collection, [])

    def change(state: dict[str, Any]) -> bool | str:
        records = state.get(collection, [])
        for index, record in enumerate(records if isinstance(records, list) else []):
            if isinstance(record, dict) and str(record.get("id")) == rid:
                if patch is None:
                    del records[index]
                    return True
                changed = {**record, **patch}
                others = {**state, collection: records[:index] + records[index + 1:]}
                if "id" in patch and str(patch["id"]) in _ids(others[collection]):
                    return f"a record with id {str(patch['id'])[:40]!r} is already stored"
                reason = refusal(rules, collection, changed, others) if rules else None
                if reason:  # the changed record must pass the rules a new one would
                    return reason
                records[index] = changed  # as the rules left it (best-available seats picked again)
                return True
        return False
    found = _change(change)
    if isinstance(found, str):
        return jsonify({"ok": False, "error": found}), 409
    return jsonify({"ok": found}), (200 if found else 404)


@api.post("/login")
def login() -> Response:
    body = _json_body(dict, default={})

    def check(state: dict[str, Any]) -> bool:
        for user in state.get("users", []):
            if user.get("username") == body.get("username") and verify_password(body.get("password"), user.get("password")):
                state["session"] = {"user": user["username"]}
                state.setdefault("logins", []).append({"username": user["username"], "id": f"l{len(state.get('logins', [])) + 1}"})
                return True
        state["failed_logins"] = state.get("failed_logins", 0) + 1
        return False
    ok = _change(check)
    return jsonify({"ok": ok, "error": None if ok else "Wrong username or password"}), (200 if ok else 401)


@api.post("/logout")
def logout() -> Response:
    _change(lambda s: s.__setitem__("session", {"user": None}))
    return jsonify({"ok": True})


@api.post("/signup")
def signup() -> Response:
    body = _json_body(dict, default={})

    def add(state: dict[str, Any]) -> bool:
        users = state.setdefault("users", [])
        if not body.get("username") or any(u.get("username") == body["username"] for u in users):
            return False
        users.append({**with_hashed_passwords(body, str(body["username"])), "id": f"u{len(users) + 1}"})
        state["session"] = {"user": body["username"]}
        return True
    ok = _change(add)
    return jsonify({"ok": ok, "error": None if ok else "That username is taken"}), (200 if ok else 409)


# ---- admin: what the env's backend uses ------------------------------------------------------------------
admin = Blueprint("admin", __name__, url_prefix="/__weblica")


@admin.before_request
def _require_token() -> None:
    token = current_app.config["WEBLICA_ADMIN_TOKEN"]
    given = request.headers.get(ADMIN_HEADER, "").encode("utf-8", "replace")
    if token and not hmac.compare_digest(given, token.encode()):
        abort(403)


@admin.get("/state")
def admin_state() -> Response:
    return jsonify(with_views(_store().get(g.site.site_id, _episode(), g.site.initial_state)))


@admin.post("/reset")
def admin_reset() -> Response:
    _store().reset(g.site.site_id, _episode())
    return jsonify({"ok": True, "site": g.site.site_id, "episode": _episode()})


def create_app(config: ServeConfig) -> Flask:
    """The site server for the bundles in `config.sites`."""
    app = Flask(__name__)
    app.config["WEBLICA_ADMIN_TOKEN"] = config.admin_token
    app.config["MAX_CONTENT_LENGTH"] = MAX_BODY_BYTES
    app.extensions["weblica_store"] = StateStore(config.state_url)
    sites = discover_bundles([Path(p) for p in config.sites])
    app.extensions["weblica_sites"] = sites

    @app.before_request
    def refuse_malformed_paths() -> Response | None:
        reason = malformed_path(request.path)
        return None if reason is None else _error_page(400, "Bad request", f"{reason}; nothing was served.")

    @app.before_request
    def pick_site() -> Response | None:
        host = (request.host or "").split(":")[0].lower()
        instances = sites.get(host)
        if instances is None:
            return _error_page(502, "Not a synth site",
                               f"weblica serves only its synth sites; '{host}' is not one of them "
                               f"({len(sites)} served). Nothing was fetched from the network.")
        instance = requested_instance()
        site = instances.get(instance) if instance is not None else None
        if site is None:
            return _error_page(404, "No such instance",
                               f"{host} has no instance {request.headers.get(INSTANCE_HEADER, '')!r} of its data "
                               f"(served: {', '.join(map(str, sorted(instances)))}); regenerate with --instances.")
        g.site = site
        return None

    app.register_blueprint(pages)
    app.register_blueprint(api)
    app.register_blueprint(admin)
    inflight = app.extensions["weblica_inflight"] = InFlight()  # requests being answered, per episode
    app.wsgi_app = inflight.wrap(_refuse_connect(app.wsgi_app))  # type: ignore[method-assign]
    return app


def _refuse_connect(wsgi_app: Any) -> Any:
    """HTTPS through the proxy arrives as CONNECT; synth sites are plain HTTP, so refuse it locally."""
    def middleware(environ: dict[str, Any], start_response: Any) -> Any:
        if environ.get("REQUEST_METHOD") == "CONNECT":
            start_response("502 Bad Gateway", [("Content-Type", "text/plain"), ("Content-Length", "0")])
            return [b""]
        return wsgi_app(environ, start_response)
    return middleware
