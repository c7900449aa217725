"""Putting a design system's classes on the atoms of a rendered page: its buttons, form controls, tables,
headings and tags, in every template (the shared ones and every genre's) without each template naming
each system. The page frames, the header and footer variants, breadcrumbs and the checkbox and radio
markup are the templates' own (templates/design/, components/, macros.html.j2): where a system's markup
differs in structure, not only in classes, the template writes that structure.

A rule reads one start tag: its name, its classes and its type; the first rule of the tag that matches
adds the classes of its role in the site's kit (weblica/synth/design: `Kit.classes`), and a system whose
documentation styles plain elements only through classes (GOV.UK, NHS.UK: `govuk-body` on a paragraph,
`govuk-table__cell` on a cell) gets those on the plain elements too (`BARE`). Only start tags of weblica's
own templates are read, never text: the templates escape every `<` of content.
"""
from __future__ import annotations

import re
from functools import lru_cache

from weblica.synth.design import KITS, OWN

# (tag, condition, role): the condition is "bare" (no class), "class:<word>", "type:<t>|<t>", "id:<id>",
# "for" (a label for a control) or "any"
RULES: tuple[tuple[str, str, str], ...] = (
    ("button", "class:primary", "btn"), ("button", "id:submit", "btn"), ("button", "type:submit", "btn"),
    ("button", "class:button", "btn2"),
    ("a", "class:start", "start"), ("a", "class:primary", "btn"), ("a", "class:button", "btn2"),
    ("input", "type:text|email|number|search|tel|password|url|date|time", "input"),
    ("input", "type:checkbox", "check_input"), ("input", "type:radio", "radio_input"),
    ("select", "any", "select"), ("textarea", "any", "textarea"),
    ("label", "for", "label"),
    ("table", "any", "table"),
    ("h1", "bare", "h1"), ("h2", "bare", "h2"),
    ("div", "class:field", "field"), ("div", "class:panel", "card"), ("div", "class:notice", "alert"),
    ("section", "class:hero", "hero"), ("section", "class:panel", "card"),
    ("span", "class:kind-tag", "tag"), ("small", "class:kind-tag", "tag"), ("span", "class:badge", "tag"),
    ("p", "class:notice", "alert"), ("p", "class:lead", "lead"),
    ("fieldset", "any", "fieldset"), ("legend", "bare", "legend"),
    ("dl", "class:summary", "summary"),
)

# plain elements a system styles only through its classes
BARE: dict[str, dict[str, str]] = {
    "govuk": {"p": "govuk-body", "ul": "govuk-list", "ol": "govuk-list govuk-list--number", "a": "govuk-link",
              "h2": "govuk-heading-m", "h3": "govuk-heading-s", "h4": "govuk-heading-s", "thead": "govuk-table__head",
              "tbody": "govuk-table__body", "tr": "govuk-table__row", "th": "govuk-table__header",
              "td": "govuk-table__cell", "caption": "govuk-table__caption govuk-table__caption--m",
              "dl": "govuk-summary-list", "small": "govuk-body-s", "details": "govuk-details"},
    "nhsuk": {"p": "nhsuk-body", "ul": "nhsuk-list", "ol": "nhsuk-list nhsuk-list--number", "a": "nhsuk-link",
              "h2": "nhsuk-heading-m", "h3": "nhsuk-heading-s", "h4": "nhsuk-heading-xs", "thead": "nhsuk-table__head",
              "tbody": "nhsuk-table__body", "tr": "nhsuk-table__row", "th": "nhsuk-table__header",
              "td": "nhsuk-table__cell", "caption": "nhsuk-table__caption", "dl": "nhsuk-summary-list",
              "small": "nhsuk-body-s", "details": "nhsuk-details"},
    "uswds": {"ul": "usa-list", "ol": "usa-list", "a": "usa-link"},
}

_CLASS = re.compile(r'\sclass="([^"]*)"')
_TYPE = re.compile(r'\stype="([^"]*)"')
_ID = re.compile(r'\sid="([^"]*)"')


def _matches(condition: str, attrs: str, classes: list[str] | None) -> bool:
    if condition == "any":
        return True
    if condition == "bare":
        return classes is None
    if condition == "for":  # a control's own label, not a checkbox's or radio's (their kits class those)
        return ' for="' in attrs and classes is None
    kind, _, value = condition.partition(":")
    if kind == "class":
        return classes is not None and value in classes
    if kind == "type":
        found = _TYPE.search(attrs)
        return found is not None and found.group(1) in value.split("|")
    if kind == "id":
        found = _ID.search(attrs)
        return found is not None and found.group(1) == value
    raise ValueError(f"unknown markup rule condition {condition!r}")


@lru_cache(maxsize=None)
def _plan(system: str) -> tuple[re.Pattern[str] | None, dict[str, list[tuple[str, str]]], dict[str, str]]:
    """The kit's rules by tag (only roles it names classes for), its bare-element classes, and a pattern
    that finds only the start tags they concern."""
    kit = KITS[system]
    by_tag: dict[str, list[tuple[str, str]]] = {}
    for tag, condition, role in RULES:
        if kit.classes.get(role):
            by_tag.setdefault(tag, []).append((condition, kit.classes[role]))
    bare = BARE.get(system, {})
    tags = sorted(set(by_tag) | set(bare))
    if not tags:
        return None, by_tag, bare
    return re.compile(r"<(" + "|".join(tags) + r")((?:\s[^<>]*?)?)(/?)>"), by_tag, bare


def _with_classes(tag: str, attrs: str, end: str, classes: list[str] | None, added: str) -> str:
    if classes is None:
        return f'<{tag} class="{added}"{attrs}{end}>'
    have = set(classes)
    extra = " ".join(c for c in added.split() if c not in have)
    if not extra:
        return f"<{tag}{attrs}{end}>"
    return "<" + tag + _CLASS.sub(lambda m: f' class="{m.group(1)} {extra}"'.replace('class=" ', 'class="'), attrs,
                                  count=1) + end + ">"


def apply(html: str, system: str) -> str:
    """The page with the system's classes on its atoms; weblica's own pages are returned unchanged."""
    if system == OWN:
        return html
    pattern, by_tag, bare = _plan(system)
    if pattern is None:
        return html

    def rewrite(match: re.Match[str]) -> str:
        tag, attrs, end = match.group(1), match.group(2), match.group(3)
        found = _CLASS.search(attrs)
        classes = found.group(1).split() if found else None
        for condition, added in by_tag.get(tag, ()):
            if _matches(condition, attrs, classes):
                return _with_classes(tag, attrs, end, classes, added)
        if classes is None and tag in bare:
            return _with_classes(tag, attrs, end, classes, bare[tag])
        return match.group(0)

    return pattern.sub(rewrite, html)
