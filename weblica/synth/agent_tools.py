"""The LLM generator's tools: their schemas (one neutral list, rendered in each provider's format) and
the file tools, confined to one site bundle.

A tool call from the model is untrusted input: a path is relative, has no `..` component, resolves
(symlinks followed) inside the bundle, and writes go only to `public/…`, `data.json` or `tasks.jsonl`.
Anything else is an error result the model reads, never a write outside the bundle.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

MAX_FILE_BYTES = 2_000_000  # one written file; a site that needs more splits it
MAX_FILES = 400
READ_LIMIT_LINES = 400
MAX_READ_CHARS = 40_000  # one read_file result

_STR = {"type": "string"}
_INT = {"type": "integer"}
TOOL_SPECS: list[dict[str, Any]] = [
    {"name": "list_files", "description": "List the bundle's files with their sizes in bytes.",
     "parameters": {"type": "object", "properties": {}}},
    {"name": "read_file", "description": "Read a bundle file as numbered lines: `offset` is the first line "
                                         f"(1-based, default 1), `limit` how many lines (default {READ_LIMIT_LINES}).",
     "parameters": {"type": "object", "properties": {"path": _STR, "offset": _INT, "limit": _INT},
                    "required": ["path"]}},
    {"name": "write_file", "description": "Write a whole file (public/… is served; also data.json, tasks.jsonl). "
                                          "Prefer patch_file to change part of an existing file.",
     "parameters": {"type": "object", "properties": {"path": _STR, "content": _STR}, "required": ["path", "content"]}},
    {"name": "patch_file", "description": "Replace the text `search` by `replace` in a file. `search` must occur "
                                          "exactly once (copy it exactly, with enough context to be unique).",
     "parameters": {"type": "object", "properties": {"path": _STR, "search": _STR, "replace": _STR},
                    "required": ["path", "search", "replace"]}},
    {"name": "screenshot", "description": "Screenshot a page of the site (a path such as / or /cart) at 1280x720; "
                                          "returns its console errors and size (elements, links, screens).",
     "parameters": {"type": "object", "properties": {"path": _STR}, "required": ["path"]}},
    {"name": "run_checks", "description": "Validate every task in Chromium (plans run, checks pass, wrong answers "
                                          "rejected) and run the acceptance gate (gold answers on the pages, "
                                          "page-size minimums). The site is accepted when all pass.",
     "parameters": {"type": "object", "properties": {}}},
    {"name": "finish", "description": "Stop: the site and its tasks are complete (the checks are run once more).",
     "parameters": {"type": "object", "properties": {}}},
]
TOOL_ALIASES = {"validate": "run_checks"}  # the first version's name for run_checks


def openai_tools() -> list[dict[str, Any]]:
    """Chat-completions `tools`: function tools with JSON-schema parameters."""
    return [{"type": "function", "function": dict(t)} for t in TOOL_SPECS]


def anthropic_tools() -> list[dict[str, Any]]:
    """Messages API `tools`: name, description, input_schema."""
    return [{"name": t["name"], "description": t["description"], "input_schema": t["parameters"]} for t in TOOL_SPECS]


@dataclass
class ToolCall:
    id: str
    name: str
    arguments: dict[str, Any]


@dataclass
class ToolOutput:
    text: str
    image_png: bytes | None = None
    is_error: bool = False


class ToolError(Exception):
    """A tool call the model got wrong: its message goes back to the model as the tool's result."""


def error(text: str) -> ToolOutput:
    return ToolOutput("error: " + text, is_error=True)


class BundleFiles:
    """File operations of one bundle directory, each path checked before it is touched."""

    WRITABLE_TOP = ("data.json", "tasks.jsonl")

    def __init__(self, root: Path) -> None:
        self.root = root.resolve()

    def resolve(self, rel: Any, for_write: bool = False) -> Path:
        if not isinstance(rel, str) or not rel.strip():
            raise ToolError("path must be a non-empty string relative to the bundle, e.g. public/index.html")
        if "\x00" in rel or "\\" in rel:
            raise ToolError(f"path {rel!r} has a NUL or backslash; use forward slashes")
        pure = PurePosixPath(rel)
        if pure.is_absolute() or rel.startswith("~"):
            raise ToolError(f"path {rel!r} is absolute; give it relative to the bundle, e.g. public/index.html")
        if ".." in pure.parts:
            raise ToolError(f"path {rel!r} leaves the bundle ('..' is not allowed)")
        target = (self.root / pure).resolve()
        if target != self.root and self.root not in target.parents:
            raise ToolError(f"path {rel!r} resolves outside the bundle (a symlink?)")
        if for_write:
            inside = target.relative_to(self.root).parts
            if not (inside and (inside[0] == "public" and len(inside) > 1 or
                                (len(inside) == 1 and inside[0] in self.WRITABLE_TOP))):
                raise ToolError(f"cannot write {rel!r}: write only public/…, data.json or tasks.jsonl")
        return target

    def list(self) -> str:
        rows = []
        for path in sorted(self.root.rglob("*")):
            if path.is_file() and not path.is_symlink() and self.root in path.resolve().parents:
                rows.append(f"{path.relative_to(self.root).as_posix()}  {path.stat().st_size}")
        return "\n".join(rows) or "(empty)"

    def read(self, rel: Any, offset: Any = 1, limit: Any = READ_LIMIT_LINES) -> str:
        target = self.resolve(rel)
        if not target.is_file():
            raise ToolError(f"no file {rel!r}; list_files shows what exists")
        offset, limit = _positive(offset, "offset", 1), _positive(limit, "limit", READ_LIMIT_LINES)
        lines = target.read_text(encoding="utf-8", errors="replace").splitlines()
        chunk = lines[offset - 1: offset - 1 + limit]
        body = "\n".join(f"{offset + i:>5}  {line}" for i, line in enumerate(chunk))
        if len(body) > MAX_READ_CHARS:  # a minified file is one enormous line
            body = body[:MAX_READ_CHARS] + f"\n[cut at {MAX_READ_CHARS} characters: read fewer lines]"
        rest = len(lines) - (offset - 1 + len(chunk))
        more = f"\n[{rest} more lines: read_file with offset={offset + len(chunk)}]" if rest > 0 else ""
        return f"{rel} lines {offset}-{offset + len(chunk) - 1} of {len(lines)}\n{body}{more}"

    def write(self, rel: Any, content: Any) -> Path:
        target = self.resolve(rel, for_write=True)
        if not isinstance(content, str):
            raise ToolError("content must be a string")
        if len(content.encode("utf-8")) > MAX_FILE_BYTES:
            raise ToolError(f"{rel} is over {MAX_FILE_BYTES} bytes; split it into several files")
        if target.is_dir():
            raise ToolError(f"{rel!r} is a directory")
        if not target.exists() and sum(1 for p in self.root.rglob("*") if p.is_file()) >= MAX_FILES:
            raise ToolError(f"the bundle already holds {MAX_FILES} files")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content, encoding="utf-8")
        return target

    def patch(self, rel: Any, search: Any, replace: Any) -> tuple[Path, str]:
        """The patched text (not yet written: the caller may normalize it); the edit must be unambiguous."""
        target = self.resolve(rel, for_write=True)
        if not target.is_file():
            raise ToolError(f"no file {rel!r} to patch; write_file creates it")
        if not isinstance(search, str) or not search or not isinstance(replace, str):
            raise ToolError("search must be a non-empty string and replace a string")
        text = target.read_text(encoding="utf-8")
        count = text.count(search)
        if count == 0:
            hint = _nearest_line(text, search)
            raise ToolError(f"search text not found in {rel}" + (f"; the closest line is {hint!r}" if hint else "")
                            + "; read_file shows the exact text")
        if count > 1:
            raise ToolError(f"search text occurs {count} times in {rel}; include more surrounding text so it "
                            "matches exactly once")
        return target, text.replace(search, replace, 1)


def _positive(value: Any, name: str, default: int) -> int:
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ToolError(f"{name} must be a positive integer, got {value!r}")
    return value


def _nearest_line(text: str, search: str) -> str:
    """The file line sharing the longest prefix with the search's first line (helps a model that
    misremembered whitespace)."""
    first = search.strip().splitlines()[0].strip() if search.strip() else ""
    best, best_len = "", 0
    for line in text.splitlines():
        stripped = line.strip()
        n = 0
        while n < min(len(stripped), len(first)) and stripped[n] == first[n]:
            n += 1
        if n > best_len:
            best, best_len = stripped, n
    return best[:200] if best_len >= 8 else ""
