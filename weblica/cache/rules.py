"""Replay rules: which request fields to ignore or require, which paths to normalize, which endpoints to stub.

One YAML file per registrable domain, `cache_rules/<domain>.yaml` (schema in cache_rules/README.md).
Hand-written and inferred rules load the same way; inferred ones carry `evidence` and a `confidence`.
A field is named as in `weblica.cache.canonical` (`query:_`, `form:csrf`, `json:variables.cursor`,
`header:x-request-id`, `cookie:sid`); a bare name (`_`) matches that name in any location, and a
value starting with `re:` is a regular expression over the full field name.

Rule regexes run under the same time limit as check patterns (`weblica.scoring.answer.safe_search`):
a rules file with a catastrophic pattern (`(a+)+$`) cannot hang a replay. A rule whose pattern runs past
the limit on a request does not apply to it (its path stays, its field is not matched) and is logged once.
"""
from __future__ import annotations

import fnmatch
import ipaddress
import logging
from dataclasses import dataclass
from dataclasses import field as dc_field
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterable

import regex
import yaml

from weblica.cache.volatile import looks_slug
from weblica.scoring.answer import REGEX_TIMEOUT_S, PatternError, safe_search

log = logging.getLogger(__name__)

RULE_KINDS = ("ignore", "require", "path", "stub")
SECTIONS = {"ignore": "ignore", "require": "require", "path": "paths", "stub": "stubs"}
SCHEMA_VERSION = 1


class RuleError(ValueError):
    """A rules file that does not follow the schema; the message names the file and the entry."""


@lru_cache(maxsize=1)
def _extractor() -> Any:
    import tldextract

    # the bundled public-suffix snapshot only: no network, no cache directory to write
    return tldextract.TLDExtract(suffix_list_urls=(), cache_dir=None)


@lru_cache(maxsize=4096)
def registrable_domain(host: str) -> str:
    """`www.shop.co.uk` -> `shop.co.uk`. Hosts outside the public suffix list (`.test`, `.localhost`,
    `.internal`) use their last two labels; IP addresses and single labels are their own domain."""
    host = host.lower().rstrip(".")
    if host.startswith("["):
        host = host[1:host.index("]")]
    elif host.count(":") == 1:
        host = host.split(":")[0]
    try:
        ipaddress.ip_address(host)
        return host
    except ValueError:
        pass
    result = _extractor()(host)
    if result.suffix and result.domain:
        return f"{result.domain}.{result.suffix}"
    labels = host.split(".")
    return ".".join(labels[-2:]) if len(labels) >= 2 else host


@dataclass
class Rule:
    """One rule. `host`, `path` and `method` scope it (globs; `*` = everywhere in the domain)."""

    kind: str                      # ignore | require | path | stub
    field: str = ""                # ignore/require: field name, bare name, or `re:` regex
    host: str = "*"
    path: str = "*"
    method: str = "*"
    pattern: str = ""              # path: regex over the path
    replace: str = ""              # path: what the matched part becomes in the path template
    response: dict[str, Any] | None = None   # stub: {"status": 204, "headers": {..}, "body": ""}
    confidence: float = 1.0
    source: str = "manual"         # manual | inferred
    evidence: dict[str, Any] = dc_field(default_factory=dict)
    note: str = ""

    def __post_init__(self) -> None:
        if self.kind not in RULE_KINDS:
            raise RuleError(f"unknown rule kind {self.kind!r} (use {', '.join(RULE_KINDS)})")
        if self.kind in ("ignore", "require") and not self.field:
            raise RuleError(f"a {self.kind} rule needs a 'field'")
        if self.kind == "path":
            if not self.pattern:
                raise RuleError("a path rule needs a 'pattern' (a regular expression over the path)")
            _compile(self.pattern)
        if self.field.startswith("re:"):
            _compile(self.field[3:])

    def scope_matches(self, method: str, host: str, path: str) -> bool:
        return ((self.method == "*" or self.method.upper() == method.upper())
                and fnmatch.fnmatchcase(host.lower(), self.host.lower())
                and fnmatch.fnmatchcase(path, self.path))

    def field_matches(self, name: str) -> bool:
        if self.field.startswith("re:"):
            return _bounded(lambda: safe_search(rf"\A(?:{self.field[3:]})\Z", name), self.field) is not None
        if ":" in self.field:
            return name == self.field
        return name.split(":", 1)[-1] == self.field

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key in ("field", "pattern", "replace", "method", "host", "path"):
            value = getattr(self, key)
            if value and not (key in ("host", "path", "method") and value == "*"):
                out[key] = value
        if self.kind == "path" and "replace" not in out:
            out["replace"] = ""
        if self.response is not None:
            out["response"] = self.response
        if self.source != "manual":
            out["source"] = self.source
        if self.confidence != 1.0 or self.source == "inferred":
            out["confidence"] = round(self.confidence, 3)
        if self.evidence:
            out["evidence"] = self.evidence
        if self.note:
            out["note"] = self.note
        return out


def _slug_slotted(path: str, templated: str) -> bool:
    before, after = path.split("/"), templated.split("/")
    return len(before) == len(after) and any(a != b and looks_slug(a) for a, b in zip(before, after))


@lru_cache(maxsize=1024)
def _compile(pattern: str) -> str:
    """`pattern` when it compiles (RuleError otherwise)."""
    try:
        safe_search(pattern, "")
    except PatternError as exc:
        if "does not compile" in str(exc):
            raise RuleError(f"bad regular expression {pattern!r}: {exc}") from None
    return pattern


_slow_patterns: set[str] = set()


def _bounded(search: Any, pattern: str) -> Any:
    """`search()` (a bounded search); None when it ran past the time limit, logged once per pattern."""
    try:
        return search()
    except (PatternError, TimeoutError) as exc:
        if pattern not in _slow_patterns:
            _slow_patterns.add(pattern)
            log.warning("rule pattern %r is skipped where it %s", pattern[:200],
                        "runs past its time limit" if "limit" in str(exc) or isinstance(exc, TimeoutError) else exc)
        return None


def bounded_sub(pattern: str, replace: str, text: str) -> str:
    """`regex.sub(pattern, replace, text)` within the check patterns' time limit; `text` unchanged when
    the pattern does not match it or runs past the limit."""
    if _bounded(lambda: safe_search(pattern, text), pattern) is None:
        return text
    result = _bounded(lambda: regex.sub(pattern, replace, text, timeout=REGEX_TIMEOUT_S), pattern)
    return text if result is None else result


@dataclass
class RuleSet:
    """The rules of one registrable domain."""

    domain: str
    rules: list[Rule] = dc_field(default_factory=list)

    def of_kind(self, kind: str) -> list[Rule]:
        return [r for r in self.rules if r.kind == kind]

    def add(self, rule: Rule) -> None:
        self.rules.append(rule)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"domain": self.domain, "version": SCHEMA_VERSION}
        for kind, section in SECTIONS.items():
            entries = [r.to_dict() for r in self.of_kind(kind)]
            if entries:
                out[section] = entries
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any], origin: str = "<rules>") -> "RuleSet":
        if not isinstance(data, dict) or not isinstance(data.get("domain"), str):
            raise RuleError(f"{origin}: a rules file is a mapping with a 'domain' key")
        unknown = set(data) - {"domain", "version", *SECTIONS.values()}
        if unknown:
            raise RuleError(f"{origin}: unknown section(s) {', '.join(sorted(unknown))} "
                            f"(use {', '.join(SECTIONS.values())})")
        rules = []
        for kind, section in SECTIONS.items():
            for i, entry in enumerate(data.get(section) or []):
                if isinstance(entry, str) and kind in ("ignore", "require"):
                    entry = {"field": entry}
                if not isinstance(entry, dict):
                    raise RuleError(f"{origin}: {section}[{i}] must be a mapping")
                allowed = set(Rule.__dataclass_fields__) - {"kind"}
                extra = set(entry) - allowed
                if extra:
                    raise RuleError(f"{origin}: {section}[{i}] has unknown key(s) {', '.join(sorted(extra))}")
                try:
                    rules.append(Rule(kind=kind, **entry))
                except RuleError as exc:
                    raise RuleError(f"{origin}: {section}[{i}]: {exc}") from None
        return cls(domain=data["domain"], rules=rules)


def load_rules(path: str | Path) -> RuleSet:
    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise RuleError(f"{path}: not valid YAML ({exc})") from None
    return RuleSet.from_dict(data, str(path))


def save_rules(ruleset: RuleSet, directory: str | Path) -> Path:
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{ruleset.domain}.yaml"
    path.write_text(yaml.safe_dump(ruleset.to_dict(), sort_keys=False, allow_unicode=True, width=110),
                    encoding="utf-8")
    return path


class RuleBook:
    """All rules that apply to a replay: every `<domain>.yaml` in some directories, by domain.

    Later directories add to earlier ones, so a recording's own inferred rules can sit on top of the
    curated project-wide `cache_rules/`.
    """

    def __init__(self, rulesets: Iterable[RuleSet] = ()):
        self.by_domain: dict[str, RuleSet] = {}
        for ruleset in rulesets:
            self.merge(ruleset)

    @classmethod
    def load(cls, *directories: str | Path | None) -> "RuleBook":
        book = cls()
        for directory in directories:
            if directory is None or not Path(directory).is_dir():
                continue
            for path in sorted(Path(directory).glob("*.yaml")):
                book.merge(load_rules(path))
        return book

    def merge(self, ruleset: RuleSet) -> None:
        target = self.by_domain.setdefault(ruleset.domain, RuleSet(ruleset.domain))
        target.rules.extend(ruleset.rules)

    def rules_for(self, kind: str, method: str, host: str, path: str) -> list[Rule]:
        ruleset = self.by_domain.get(registrable_domain(host))
        if ruleset is None:
            return []
        return [r for r in ruleset.of_kind(kind) if r.scope_matches(method, host, path)]

    def ignored(self, method: str, host: str, path: str, names: Iterable[str]) -> set[str]:
        rules = self.rules_for("ignore", method, host, path)
        return {n for n in names if any(r.field_matches(n) for r in rules)}

    def required(self, method: str, host: str, path: str, names: Iterable[str]) -> set[str]:
        rules = self.rules_for("require", method, host, path)
        return {n for n in names if any(r.field_matches(n) for r in rules)}

    def path_template(self, method: str, host: str, path: str) -> str:
        """The path with every normalizing rule applied (`/cart/9f3a…/items` -> `/cart/{token}/items`).
        An inferred rule never turns a readable slug into a slot (older inferred files did, from one
        sighting: `/nyheter/how-to-cook-pasta-in-2019/` -> `/nyheter/{token}/`)."""
        for rule in self.rules_for("path", method, host, path):
            templated = bounded_sub(_compile(rule.pattern), rule.replace, path)
            if rule.source == "inferred" and _slug_slotted(path, templated):
                continue
            path = templated
        return path

    def stub_for(self, method: str, host: str, path: str) -> Rule | None:
        rules = self.rules_for("stub", method, host, path)
        return rules[0] if rules else None

    def __len__(self) -> int:
        return sum(len(r.rules) for r in self.by_domain.values())
