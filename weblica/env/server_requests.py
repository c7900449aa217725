"""Validation of the env server's requests: JSON bodies checked for content type, size, syntax, depth and
unknown fields, and each field for its type and range, so that every refusal is a RequestError whose
message names the field and the fix (the app answers it as a JSON 4xx)."""
from __future__ import annotations

import json
import math
import sys
from typing import Any

from flask import Request
from werkzeug.exceptions import ClientDisconnected

MAX_BODY_BYTES = 1 << 20          # 1 MiB: a task or a turn of model text is far smaller
MAX_JSON_DEPTH = 32               # tasks and tool calls nest a few levels
MAX_SESSION_ID_CHARS = 64         # ids are uuid4 hex (32 characters)
SEED_RANGE = (-(2 ** 63), 2 ** 63 - 1)
MAX_ACTION_CHARS = 200_000        # one turn of model text
MAX_ACTION_CALLS = 64             # tool calls in one step given as a list

RESET_USAGE = ("POST /reset needs a JSON body with 'task' (a task object) and optional 'seed' (an integer), "
               "'session_id' (to reuse a session) and 'screenshot' (true/false)")
STEP_USAGE = ("POST /step needs a JSON body with 'session_id' and 'action' (model text, a tool call or a list "
              "of tool calls) and optional 'screenshot' (true/false)")
CLOSE_USAGE = "POST /close needs a JSON body with 'session_id'"


class RequestError(Exception):
    """A request the server refuses: `status` and a message that names the fix."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status, self.message = status, message



def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"the number {text[:40]} is out of range (numbers must be finite)")
    return value


def _finite_int(text: str) -> int:
    value = int(text)  # more than 4300 digits is a ValueError already
    if abs(value) > sys.float_info.max:  # a browser's JSON.parse reads it as Infinity
        raise ValueError(f"the number {text[:40]}... is out of range (numbers must be finite)")
    return value


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number JSON allows (numbers must be finite)")


def finite_json(data: bytes | str) -> Any:
    """JSON as Python reads it, except that NaN, Infinity and numbers too large for a float ("1e400",
    which Python reads as infinity, and a 400-digit integer, which a browser reads as Infinity) are a
    ValueError: stored or echoed, they would be no JSON a browser reads as it was sent. Also the synth
    site server's parser (weblica.serve.app)."""
    return json.loads(data, parse_float=_finite_float, parse_int=_finite_int, parse_constant=_refuse_constant)


def check_json_text(value: Any, max_depth: int | None = None) -> None:
    """ValueError naming the problem when a parsed JSON value nests deeper than `max_depth` (default
    MAX_JSON_DEPTH) or holds a string with a lone surrogate (text no file or page can hold)."""
    _check_nesting(value, max_depth or MAX_JSON_DEPTH)


def _check_nesting(value: Any, max_depth: int = MAX_JSON_DEPTH) -> None:
    """Depth and text checks over a parsed body, iteratively (no recursion for hostile nesting)."""
    stack = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > max_depth:
            raise ValueError(f"it nests deeper than {max_depth} levels")
        if isinstance(node, dict):
            for key, item in node.items():
                stack.append((key, depth))
                stack.append((item, depth + 1))
        elif isinstance(node, list):
            stack.extend((item, depth + 1) for item in node)
        elif isinstance(node, str):
            try:
                node.encode("utf-8")
            except UnicodeEncodeError:
                raise ValueError("a string holds a lone surrogate (\\ud800-\\udfff), which is not text") from None


def read_json_body(req: Request, usage: str, allowed: set[str]) -> dict[str, Any]:
    """The request's JSON object, checked for content type, size, syntax, depth and unknown fields."""
    if req.mimetype != "application/json":
        raise RequestError(415, f"{usage}; send it with Content-Type: application/json "
                                f"(got {req.mimetype or 'no content type'})")
    try:
        data = req.get_data(cache=False)  # Flask enforces MAX_CONTENT_LENGTH here (413) when a length is sent
    except (OSError, ClientDisconnected):  # the read time limit passed: a client sending its body too slowly
        raise RequestError(408, "the request body did not arrive within the server's read time limit "
                                "(--read-timeout); send it at once") from None
    if len(data) >= MAX_BODY_BYTES:  # a chunked body is cut at the limit instead: refuse it the same way
        raise RequestError(413, f"the request body is larger than {MAX_BODY_BYTES} bytes")
    try:
        body = finite_json(data)
        _check_nesting(body)
    except RecursionError:
        raise RequestError(400, f"{usage}; the body nests too deeply") from None
    except json.JSONDecodeError as exc:
        raise RequestError(400, f"{usage}; the body is not valid JSON ({exc.msg} at char {exc.pos})") from None
    except ValueError as exc:  # bad UTF-8, non-finite or overlong numbers, surrogates, depth
        raise RequestError(400, f"{usage}; the body is not valid JSON ({exc})") from None
    if not isinstance(body, dict):
        raise RequestError(400, f"{usage}; the body must be a JSON object, got {json_type(body)}")
    unknown = sorted(set(body) - allowed)
    if unknown:
        raise RequestError(400, f"unknown field(s) {', '.join(repr(k[:40]) for k in unknown[:5])}; "
                                f"allowed: {', '.join(sorted(allowed))}")
    return body


def json_type(value: Any) -> str:
    names = {dict: "an object", list: "a list", str: "a string", bool: "a boolean", int: "a number",
             float: "a number", type(None): "null"}
    return names.get(type(value), type(value).__name__)


def session_id_of(body: dict[str, Any], usage: str) -> str:
    value = body.get("session_id")
    if not isinstance(value, str) or not 1 <= len(value) <= MAX_SESSION_ID_CHARS:
        shown = "missing" if "session_id" not in body else json_type(value)
        raise RequestError(400, f"{usage}; 'session_id' must be a string of 1 to {MAX_SESSION_ID_CHARS} "
                                f"characters as /reset returned it (got {shown})")
    return value


def seed_of(body: dict[str, Any]) -> int:
    value = body.get("seed", 0)
    if isinstance(value, bool) or not isinstance(value, int) or not SEED_RANGE[0] <= value <= SEED_RANGE[1]:
        raise RequestError(400, f"'seed' must be an integer from -2**63 to 2**63-1 (got {json_type(value)}"
                                f"{' out of range' if isinstance(value, int) and not isinstance(value, bool) else ''})")
    return value


def flag_of(body: dict[str, Any], name: str, default: bool) -> bool:
    value = body.get(name, default)
    if not isinstance(value, bool):
        raise RequestError(400, f"'{name}' must be true or false (got {json_type(value)})")
    return value


def actions_of(body: dict[str, Any]) -> Any:
    """The turn's actions: model text, one tool call object, or a list of them. What they say is the
    model's business (bad calls become feedback and count for the format gate); their JSON type is
    the client's, so a wrong type is a 400."""
    if "action" in body and "actions" in body:
        raise RequestError(400, "give either 'action' or 'actions', not both")
    if "action" not in body and "actions" not in body:
        raise RequestError(400, STEP_USAGE)
    name = "action" if "action" in body else "actions"
    value = body[name]
    if isinstance(value, str):
        if len(value) > MAX_ACTION_CHARS:
            raise RequestError(400, f"'{name}' text is {len(value)} characters; the limit is {MAX_ACTION_CHARS}")
        return value
    if isinstance(value, dict):
        return value
    if isinstance(value, list):
        if len(value) > MAX_ACTION_CALLS:
            raise RequestError(400, f"'{name}' holds {len(value)} tool calls; the limit is {MAX_ACTION_CALLS}")
        return value
    raise RequestError(400, f"'{name}' must be model text, a tool call object or a list of them "
                            f"(got {json_type(value)})")
