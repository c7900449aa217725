"""Secrets out of exported traffic: what a HAR or WARC written by `weblica export` must not carry.

A recording keeps every credential (replay needs them); an export is meant to leave the machine, so
each exchange passes through `redact_exchange` first. Secrets are found two ways:

- by name: credential headers (Authorization, Cookie, Set-Cookie, X-Api-Key, any `*-token`, `*-key`,
  `*-secret` header …) and query, form, multipart and JSON fields (at any depth) named like passwords,
  tokens, keys, secrets, CSRF tokens and session ids; a few ambiguous names (`key`, `code`, `state`,
  `signature` …) only when their value looks like a token (long and high-entropy);
- by value: JWTs, `Bearer …` credentials, AWS access key ids, GitHub/Slack/Google/Stripe keys and PEM
  private keys, wherever they appear (headers, URLs, fields, text bodies such as HTML and JS).

A secret value becomes a marker, `REDACTED-1`, `REDACTED-2`, …: the same value gets the same marker
throughout one export and different values different ones, so an export still shows which values
vary from run to run (rule inference from an exported HAR needs that) and nothing of the values
themselves. Every Content-Length is recomputed so the exported file stays consistent; bytes that hold
no secret are exported unchanged.
"""
from __future__ import annotations

import json
import math
import re
from collections import Counter
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote_plus, unquote_plus, urlsplit, urlunsplit

from weblica.cache.exchange import Exchange, Headers, header

REDACTED = "REDACTED"

SECRET_HEADERS = frozenset({
    "authorization", "proxy-authorization", "cookie", "cookie2", "set-cookie", "set-cookie2", "x-api-key",
    "x-auth-token", "x-csrf-token", "x-xsrf-token", "x-csrftoken", "x-amz-security-token", "x-session-id",
    "x-access-token", "x-refresh-token", "x-client-secret", "www-authenticate-token",
})
SECRET_HEADER_SUFFIXES = ("-token", "-key", "-secret", "-password", "-session", "-session-id", "-sessionid",
                          "-signature", "-credentials", "-auth")
URL_HEADERS = frozenset({"location", "referer", "content-location", "origin", "link", "refresh"})

# field names, compared lowercased with everything but letters and digits removed ("csrf_token" -> "csrftoken")
SECRET_NAMES = frozenset({
    "password", "passwd", "pwd", "pass", "passphrase", "passcode", "pin", "secret", "token", "accesstoken",
    "refreshtoken", "idtoken", "authtoken", "bearertoken", "apikey", "apisecret", "apitoken", "clientsecret",
    "csrf", "csrftoken", "csrfmiddlewaretoken", "xsrf", "xsrftoken", "authenticitytoken",
    "requestverificationtoken", "session", "sessionid", "sessid", "sid", "jsessionid", "phpsessid",
    "aspnetsessionid", "connectsid", "otp", "totp", "mfacode", "privatekey", "secretkey", "accesskey",
    "accesskeyid", "secretaccesskey", "authorization", "cookie", "credentials",
    "auth", "authcode", "authdata", "authinfo", "authn", "authz", "basicauth", "httpauth", "userauth",
})
SECRET_NAME_PARTS = ("password", "passwd", "secret", "token", "apikey", "csrf", "xsrf", "sessionid", "sessid",
                     "privatekey", "accesskey", "authkey", "credential", "authcode")
# names that hold a secret only sometimes (`?key=AIza…`, an OAuth `code`): redacted when the value looks like one
TOKEN_LIKE_NAMES = frozenset({"key", "code", "state", "nonce", "sig", "signature", "hmac", "hash",
                              "ticket", "verifier", "codeverifier", "salt", "license", "licence"})

VALUE_PATTERNS = [
    re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*"),          # JWT
    re.compile(r"(?<=Bearer )(?=[A-Za-z0-9._~+/-]*\d)[A-Za-z0-9._~+/-]{16,}=*"),           # Bearer credential
    re.compile(r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[A-Z0-9]{16}\b"),           # AWS access key id
    re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})"),           # GitHub
    re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}"),                                         # Slack
    re.compile(r"\bAIza[0-9A-Za-z_-]{35}"),                                                # Google API key
    re.compile(r"\b[sr]k_(?:live|test)_[0-9A-Za-z]{16,}"),                                 # Stripe
    re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?-----END [A-Z ]*PRIVATE KEY-----", re.S),
]
# credentials in header values of any name: "Bearer x", "Basic x", "Token x"
HEADER_CREDENTIAL = re.compile(r"\b(Bearer|Basic|Token|Digest|Negotiate)\s+([A-Za-z0-9._~+/=-]{8,})", re.I)
# HTML: <input name="csrf" value="…">, <input type="password" value="…">, <meta name="csrf-token" content="…">
HTML_TAG = re.compile(r"<(?:input|meta)\b[^>]*>", re.I)
HTML_ATTR = re.compile(r"""(?P<name>[\w:-]+)\s*=\s*(?:(?P<q>["'])(?P<value>.*?)(?P=q)|(?P<bare>[^\s"'>]+))""", re.S)
# scripts and inline JSON: csrfToken = "…", "api_key": '…'
SCRIPT_ASSIGNMENT = re.compile(
    r"""(?<![\w$-])(?P<key>[A-Za-z_$][\w$-]*)(?P<mid>["']?\s*[:=]\s*)(?P<q>["'])(?P<value>[^"'\\\s<>]{4,})(?P=q)""")
# a form body sent without its content type: a=1&b=2
FORM_LIKE = re.compile(r"[^\s=&]+=[^\s&]*(?:&[^\s=&]+=[^\s&]*)*")
# path parameters: /cart;jsessionid=…
PATH_PARAMETER = re.compile(r";([^;/=?#]+)=([^;/?#]*)")
TEXT_TYPES = ("text/", "application/javascript", "application/ecmascript", "application/xml", "+xml")


def _normal(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", name.lower())


def looks_like_token(value: str) -> bool:
    """Long, without spaces, and high in entropy: a random credential rather than a word or a number."""
    if len(value) < 16 or not re.fullmatch(r"[A-Za-z0-9+/=_.~%:-]+", value):
        return False
    if not (re.search(r"\d", value) and re.search(r"[A-Za-z]", value)):
        return False
    counts = Counter(value)
    entropy = -sum(c / len(value) * math.log2(c / len(value)) for c in counts.values())
    return entropy >= 3.0


def is_secret_name(name: str, value: Any = None) -> bool:
    """Whether a query, form, multipart or JSON field of this name (with this value) holds a secret."""
    key = _normal(name)
    if not key:
        return False
    if key in SECRET_NAMES or any(part in key for part in SECRET_NAME_PARTS):
        return True
    return key in TOKEN_LIKE_NAMES and isinstance(value, str) and looks_like_token(value)


def is_secret_header(name: str) -> bool:
    lower = name.lower()
    return (lower in SECRET_HEADERS or lower.endswith(SECRET_HEADER_SUFFIXES) or "apikey" in _normal(lower)
            or "authorization" in lower)


class Redactor:
    """Redacts the exchanges of one export; `marker(value)` numbers each distinct secret value."""

    def __init__(self) -> None:
        self.markers: dict[str, str] = {}

    def marker(self, value: str) -> str:
        if value not in self.markers:
            self.markers[value] = f"{REDACTED}-{len(self.markers) + 1}"
        return self.markers[value]

    def text(self, text: str) -> str:
        """Value patterns (JWTs, bearer credentials, well-known key formats) replaced wherever they occur."""
        for pattern in VALUE_PATTERNS:
            text = pattern.sub(lambda m: self.marker(m.group(0)), text)
        return text

    def pairs(self, text: str, separator: str = "&") -> str:
        """`name=value` pairs (a query, a form): pair by pair on the raw text, so other bytes stay as they were."""
        out = []
        for pair in text.split(separator):
            name, eq, value = pair.partition("=")
            decoded = unquote_plus(value)
            if eq and value and is_secret_name(unquote_plus(name), decoded):
                out.append(f"{name}={self.marker(decoded)}")
            elif eq:
                cleaned = self.text(decoded)
                out.append(f"{name}={quote_plus(cleaned, safe='/:')}" if cleaned != decoded else pair)
            else:
                out.append(pair)
        return separator.join(out)

    def url(self, url: str) -> str:
        """Query, fragment and path-parameter fields named like secrets, userinfo passwords, secret values."""
        try:
            parts = urlsplit(url)
        except ValueError:
            return self.text(url)
        netloc = parts.netloc
        if "@" in netloc:
            userinfo, _, hostport = netloc.rpartition("@")
            user, colon, password = userinfo.partition(":")
            netloc = f"{user}:{self.marker(password)}@{hostport}" if colon else netloc
        query = self.pairs(parts.query)
        fragment = self.pairs(parts.fragment) if "=" in parts.fragment else parts.fragment
        path = PATH_PARAMETER.sub(lambda m: f";{m.group(1)}={self.marker(m.group(2))}"
                                  if is_secret_name(m.group(1), m.group(2)) else m.group(0), self.text(parts.path))
        if (netloc, path, query, fragment) == (parts.netloc, parts.path, parts.query, parts.fragment):
            return url
        return urlunsplit((parts.scheme, netloc, path, query, fragment))

    def headers(self, headers: Headers) -> Headers:
        out = []
        for name, value in headers:
            lower = name.lower()
            if is_secret_header(name):
                value = self.marker(value)
            elif lower in URL_HEADERS:
                value = self.url(value) if lower != "refresh" else self.text(value)
            else:
                value = HEADER_CREDENTIAL.sub(lambda m: f"{m.group(1)} {self.marker(m.group(2))}", self.text(value))
            out.append((name, value))
        return out

    def json(self, value: Any, secret: bool = False) -> Any:
        if isinstance(value, dict):
            return {k: self.json(v, secret or is_secret_name(str(k), v)) for k, v in value.items()}
        if isinstance(value, list):
            return [self.json(v, secret) for v in value]
        if secret and isinstance(value, (str, int, float)) and not isinstance(value, bool):
            return self.marker(str(value))
        if isinstance(value, str):  # a GraphQL document inlines its arguments: login(password: "…")
            return self.text(SCRIPT_ASSIGNMENT.sub(self._script_assignment, value))
        return value

    def _html_tag(self, match: re.Match[str]) -> str:
        tag = match.group(0)
        attrs = {m.group("name").lower(): m.group("value") if m.group("q") else m.group("bare")
                 for m in HTML_ATTR.finditer(tag)}
        field = attrs.get("name") or attrs.get("id") or attrs.get("property") or ""
        secret = attrs.get("type", "").lower() == "password" or is_secret_name(
            field, attrs.get("value", attrs.get("content")))
        if not secret:
            return tag

        def value_attr(m: re.Match[str]) -> str:
            value = m.group("value") if m.group("q") else m.group("bare")
            holds_value = m.group("name").lower() in ("value", "content") and value
            return f'{m.group("name")}="{self.marker(value)}"' if holds_value else m.group(0)
        return HTML_ATTR.sub(value_attr, tag)

    def _script_assignment(self, match: re.Match[str]) -> str:
        if not is_secret_name(match.group("key"), match.group("value")):
            return match.group(0)
        q = match.group("q")
        return f"{match.group('key')}{match.group('mid')}{q}{self.marker(match.group('value'))}{q}"

    def _multipart(self, body: bytes, content_type: str) -> bytes:
        found = re.search(r'boundary="?([^";]+)"?', content_type, re.I)
        if not found:
            return body
        delimiter = b"--" + found.group(1).encode("latin-1")
        pieces = body.split(delimiter)
        for i, piece in enumerate(pieces[1:], start=1):
            head, sep, content = piece.partition(b"\r\n\r\n")
            disposition = head.decode("latin-1")
            if not sep or re.search(r"\bfilename\*?=", disposition, re.I):
                continue  # uploaded files are content, not fields
            name = re.search(r'\bname="([^"]*)"', disposition, re.I)
            trailer = b"\r\n" if content.endswith(b"\r\n") else b""
            value = content[: len(content) - len(trailer)]
            text = value.decode("utf-8", "replace")
            if name and is_secret_name(name.group(1), text):
                new = self.marker(text).encode()
            else:
                cleaned = self.text(text)
                new = cleaned.encode() if cleaned != text else value
            pieces[i] = head + sep + new + trailer
        return delimiter.join(pieces)

    def body(self, body: bytes, content_type: str, content_encoding: str = "") -> bytes:
        """A request or response body with its secrets replaced; binary and still-encoded bodies unchanged."""
        if not body or content_encoding:
            return body
        ctype = content_type.split(";")[0].strip().lower()
        if ctype.startswith("multipart/"):
            return self._multipart(body, content_type)
        try:
            text = body.decode("utf-8")
        except UnicodeDecodeError:
            return body
        # what the body is, read from the body itself too: a client may send a form as JSON, JSON as text
        is_json = ctype == "application/json" or ctype.endswith("+json")
        if is_json or text.lstrip()[:1] in ("{", "["):
            try:
                data = json.loads(text)
            except (ValueError, RecursionError):
                data = None
            if isinstance(data, (dict, list)):
                cleaned = self.json(data)
                return body if cleaned == data else json.dumps(cleaned, ensure_ascii=False).encode("utf-8")
        if ctype == "application/x-www-form-urlencoded" or FORM_LIKE.fullmatch(text):
            cleaned_text = self.pairs(text)
        elif is_json or ctype.startswith(TEXT_TYPES) or ctype.endswith(TEXT_TYPES) or not ctype:
            cleaned_text = SCRIPT_ASSIGNMENT.sub(self._script_assignment, HTML_TAG.sub(self._html_tag, text))
            cleaned_text = self.text(cleaned_text)
        else:
            return body
        return body if cleaned_text == text else cleaned_text.encode("utf-8")

    def exchange(self, exchange: Exchange, request_body: bytes, response_body: bytes) -> "ExportedExchange":
        """The exchange as it may leave the machine, every Content-Length matching its redacted body."""
        request = self.body(request_body, header(exchange.request_headers, "content-type"),
                            header(exchange.request_headers, "content-encoding"))
        response = self.body(response_body, header(exchange.response_headers, "content-type"),
                             header(exchange.response_headers, "content-encoding"))
        return ExportedExchange(self.url(exchange.url), _with_length(self.headers(exchange.request_headers), request),
                                request, _with_length(self.headers(exchange.response_headers), response), response)


def _with_length(headers: Headers, body: bytes) -> Headers:
    return [(k, str(len(body)) if k.lower() == "content-length" else v) for k, v in headers]


@dataclass
class ExportedExchange:
    """An exchange as it is written into a HAR or WARC file: URL, headers and bodies."""

    url: str
    request_headers: Headers
    request_body: bytes
    response_headers: Headers
    response_body: bytes


def exported_exchange(exchange: Exchange, request_body: bytes, response_body: bytes,
                      redactor: Redactor | None) -> ExportedExchange:
    """The exchange to export: redacted by `redactor`, or as recorded when it is None (--keep-secrets)."""
    if redactor is not None:
        return redactor.exchange(exchange, request_body, response_body)
    return ExportedExchange(exchange.url, list(exchange.request_headers), request_body,
                            list(exchange.response_headers), response_body)
