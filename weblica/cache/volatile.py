"""What request values look like: random or time-based (volatile), slugs and semantic names (never fuzzed).

`detect(value, capture_time, name)` names the kind of a random-looking value (epoch times near the
capture, UUIDs, hex, base32/36/64 ids, random floats, JSONP callback names, client ids such as
Google Analytics' `cid`, cache-busters named like one). A detector only *suggests* volatility: rules
still need evidence from the recorded runs. `looks_slug` recognizes readable path words
(`how-to-cook-pasta-in-2019`, `iphone-15-pro-max-256gb-blue`, `cafe2019`), which are content, not
tokens, however long they are. `semantic_name` says whether a field's name says it carries content (a
query, an id, a page number, a filter, a sort order): such a field is required by default. Names of
per-visit ids (`session_id`, `request_id`, `gclid`, `csrf_token`) are never semantic.
"""
from __future__ import annotations

import re
import time
from typing import Any

EPOCH_WINDOW_S = 5 * 365 * 86400   # timestamps within five years of the capture count as "now"

_UUID_RE = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")
_REDACTED_RE = re.compile(r"^REDACTED-\d+$")   # weblica.cache.redact's markers in an imported export
_HEX_RE = re.compile(r"^[0-9a-fA-F]{8,}$")
_FLOAT_RE = re.compile(r"^0?\.\d{6,}$")
# jQuery's and other libraries' generated JSONP callback names
_JSONP_RE = re.compile(r"^(?:jQuery\d+_\d+|jsonp_?\d+|__jp\d+|burt_callback_\w+|cb_\w*\d\w*|callback_\w*\d\w*"
                       r"|_?jsonp_\w*\d\w*|angular\.callbacks\._\w+)$")
_CLIENT_ID_RE = re.compile(r"^(?:GA\d\.\d\.)?\d{6,10}\.\d{6,10}$")   # GA: <random>.<first-visit epoch>
_BASE32_RE = re.compile(r"^[A-Z2-7]{10,}={0,6}$")
_BASE36_RE = re.compile(r"^[a-z0-9]{10,}$")
_BASE64_RE = re.compile(r"^[A-Za-z0-9+/]{16,}={0,2}$")
_TOKEN_RE = re.compile(r"^[A-Za-z0-9_\-]{20,}={0,2}$")
_WORD_NUMBER_RE = re.compile(r"^(?:[A-Za-z]+\d+|\d+[A-Za-z]+)$")   # cafe2019, 2019cafe: a word and a number
_SLUG_PART_RE = re.compile(r"^[a-z]{2,}$|^\d{1,4}$|^\d{1,4}[a-z]{1,3}$|^[a-z]{1,3}\d{1,4}$")
_VOWEL_RE = re.compile(r"[aeiouy]")

# fields that carry a fresh value on every request by convention (`cb=4820194331`, `ord=…`, `_=…`)
CACHE_BUSTER_NAMES = frozenset({"_", "cb", "cachebuster", "cache_buster", "cachebust", "bust", "buster", "nocache",
                                "rnd", "rand", "random", "r", "ord", "correlator", "z", "nc", "ts", "timestamp",
                                "t", "_t", "_ts", "v_", "uniq", "dt", "misc"})
JSONP_NAMES = frozenset({"callback", "jsonp", "jsonpcallback", "cb", "jsoncallback"})
CLIENT_ID_NAMES = frozenset({"cid", "_ga", "_gid", "clientid", "client_id", "uid", "vid", "visitor_id", "did"})

# names that say the value decides the content: a query, an id, a page, a filter, a sort
SEMANTIC_NAMES = frozenset({"q", "query", "search", "searchterm", "search_query", "keyword", "keywords", "term",
                            "terms", "text", "s", "k", "kw", "id", "ids", "pid", "sku", "slug", "item", "product",
                            "article", "post", "page", "p", "pg", "pageno", "page_no", "pagenumber", "offset",
                            "start", "cursor", "after", "before", "limit", "per_page", "perpage", "size", "count",
                            "filter", "filters", "facet", "facets", "category", "cat", "categories", "brand",
                            "color", "colour", "price", "min_price", "max_price", "sort", "sortby", "sort_by",
                            "order", "orderby", "order_by", "dir", "lang", "locale", "tab", "view", "variant",
                            "operationname", "variables", "tag", "tags", "year", "month", "date", "from", "to"})
_SEMANTIC_SUFFIX_RE = re.compile(r"(?:^|[_.\-])(?:id|ids|query|page|filter|sort|slug|sku)$", re.IGNORECASE)
# ids that name a visit, not content: `session_id`, `request_id`, `trace_id`, `gclid`, `fbclid`
_VISIT_ID_RE = re.compile(r"^(?:session|sess|request|req|trace|span|correlation|corr|client|visitor|device|anon|"
                          r"tracking|click|event|message|msg|transaction|txn|impression|view|page_?view)[_.\-]?id$"
                          r"|^(?:sessionid|jsessionid|phpsessid|sid|gclid|fbclid|msclkid|dclid|nonce|csrf|xsrf|"
                          r"csrf_?token|xsrf_?token|authenticity_token|state)$", re.IGNORECASE)


def short_name(name: str) -> str:
    """`query:utm_source` -> `utm_source`; `json:variables.page` -> `page`; `cookie:sid` -> `sid`."""
    bare = name.split(":", 1)[-1]
    return bare.rsplit(".", 1)[-1].lower()


def semantic_name(name: str) -> bool:
    """Whether a field's name says it carries content (required unless evidence says it is volatile)."""
    if name.startswith(("header:", "cookie:", "body:")):
        return False
    short = short_name(name)
    if _VISIT_ID_RE.match(short):
        return False
    return short in SEMANTIC_NAMES or bool(_SEMANTIC_SUFFIX_RE.search(short))


def looks_slug(value: str) -> bool:
    """Readable words (`how-to-cook-pasta-in-2019`, `iphone-15-pro-max-256gb-blue`, `cafe2019`): content."""
    if _WORD_NUMBER_RE.match(value) and len(value) <= 16:
        letters = re.sub(r"\d", "", value)
        return len(letters) >= 3 and bool(_VOWEL_RE.search(letters.lower()))
    parts = re.split(r"[-_.+]", value.lower())
    if len(parts) < 2 or value != value.lower() and value != value.title():
        return False
    words = [p for p in parts if re.fullmatch(r"[a-z]{2,}", p) and _VOWEL_RE.search(p)]
    return all(_SLUG_PART_RE.match(p) for p in parts if p) and len(words) * 2 >= len(parts)


def _mixed(value: str) -> bool:
    return bool(re.search(r"\d", value)) and bool(re.search(r"[A-Za-z]", value))


def detect(value: Any, capture_time: float | None = None, name: str = "") -> str | None:
    """The kind of random or time-based value `value` looks like, or None. `name` (the field's name)
    lets conventions count: `cb=4820194331` is a cache-buster, `callback=cb_12` a JSONP callback."""
    if not isinstance(value, str) or not value:
        return None
    now = capture_time or time.time()
    short = short_name(name) if name else ""
    if re.fullmatch(r"\d{9,10}(\.\d+)?", value) and abs(float(value) - now) < EPOCH_WINDOW_S:
        return "epoch_s"
    if re.fullmatch(r"\d{12,13}", value) and abs(int(value) / 1000 - now) < EPOCH_WINDOW_S:
        return "epoch_ms"
    if _UUID_RE.match(value):
        return "uuid"
    if _REDACTED_RE.match(value):  # a secret an export replaced: a replay can never match the original
        return "redacted"
    if _JSONP_RE.match(value) or (short in JSONP_NAMES and re.fullmatch(r"[A-Za-z_$][\w$.]*\d[\w$.]*", value)):
        return "jsonp_callback"
    if _CLIENT_ID_RE.match(value) or (short in CLIENT_ID_NAMES and len(value) >= 8 and re.search(r"\d", value)):
        return "client_id"
    if _FLOAT_RE.match(value):
        return "random_float"
    if short in CACHE_BUSTER_NAMES and re.fullmatch(r"[A-Za-z0-9._\-]{5,}", value) and re.search(r"\d", value):
        return "cache_buster"
    if short and _VISIT_ID_RE.match(short) and re.fullmatch(r"[A-Za-z0-9._\-]{8,}={0,2}", value) and _mixed(value):
        return "visit_id"
    if looks_slug(value):
        return None
    if _HEX_RE.match(value) and re.search(r"\d", value) and (len(value) >= 12 or (
            re.search(r"[a-fA-F]", value) and not _WORD_NUMBER_RE.match(value))):
        return "hex"
    if _BASE32_RE.match(value) and _mixed(value):
        return "base32"
    if _BASE36_RE.match(value) and len(re.findall(r"[a-z]\d|\d[a-z]", value)) >= 4:  # not iphone15pro
        return "base36"
    if _BASE64_RE.match(value) and _mixed(value) and re.search(r"[a-z]", value) and re.search(r"[A-Z]", value):
        return "base64"
    if _TOKEN_RE.match(value) and _mixed(value):
        return "token"
    return None


# the detectors, unanchored, for masking response bodies: what a page embeds fresh on every load
_MASK_RE = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
                      r"|jQuery\d+_\d+|\b1[5-9]\d{8}(?:\d{3})?(?:\.\d+)?\b|\b0\.\d{6,}\b"
                      r"|\b(?=[0-9a-fA-F]*\d)(?=[0-9a-fA-F]*[a-fA-F])[0-9a-fA-F]{8,}\b")


def mask(text: str) -> str:
    return _MASK_RE.sub("<*>", text)
