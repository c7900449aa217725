"""The component layer of a synth site: a real design system (GOV.UK Frontend, Bootstrap, Bulma, ...; the
packages and their files are weblica/site_runtime/design_systems.py) or weblica's own hand-written style.

Each system is a `Kit`: the classes its documentation gives each part of a page (a primary button is
`govuk-button` on GOV.UK Frontend, `btn btn-primary` on Bootstrap, `button is-primary` on Bulma), which the
shared templates put on their elements, and its `frame`: `variants` (the page grammar's header, navigation
and footer variants, carrying the system's navbar classes) or the system's own page template (GOV.UK, NHS.UK
and USWDS pages always open with that system's header and close with its footer; `templates/design/`).
weblica's own kit adds no class: its pages are byte for byte what they were before systems existed.

Which system a site uses is part of its style (`Style.design`, `Style.theme`), drawn per genre (`WEIGHTS`:
government sites mostly on GOV.UK Frontend or USWDS, dashboards on Tabler, ...) from its own rng, so adding
it moved no other draw of a spec.
"""
from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from markupsafe import Markup

from weblica.site_runtime.design_systems import BOOTSWATCH_THEMES, SYSTEMS

class DesignError(ValueError):
    """An unknown design system or theme."""


OWN = "weblica"  # weblica's hand-written style system: one option among the systems, not the default

# the parts of a page a kit names classes for
ROLES = ("html", "body", "container", "main", "header", "brand", "navlinks", "navlink", "search_input", "search_btn",
         "btn", "btn2", "field", "label", "input", "select", "select_wrap", "textarea", "check_item", "check_input",
         "check_label", "checkboxes", "radios", "radio_item", "radio_input", "radio_label", "fieldset", "legend",
         "hint", "table", "card",
         "card_body", "card_title", "tag", "alert", "crumbs", "crumbs_list", "crumbs_item", "crumbs_link", "pager",
         "pager_list", "pager_item", "pager_link", "pager_current", "footer", "footer_link", "h1", "h2", "lead",
         "hero", "summary", "summary_row", "summary_key", "summary_value", "link", "grid", "col_main", "col_side")


@dataclass(frozen=True)
class Kit:
    """A design system's classes per role (ROLES; a missing role adds none), its frame, and the CSS custom
    properties the shared widget styles read (colours of a dropdown, a date picker, a map pin), mapped
    onto the system's own."""

    id: str
    frame: str  # its page frame, templates/design/<frame>.html.j2: "own", "variants" or the system's own
    classes: dict[str, str]
    colours: dict[str, str] = field(default_factory=dict)
    # the checkbox and radio markup the system documents: input and label as siblings in an item
    # ("sibling"), or the input inside its label ("nested")
    choices: str = "sibling"


_BOOTSTRAP = {
    "container": "container", "main": "py-3", "header": "navbar navbar-expand bg-body-tertiary border-bottom px-3",
    "brand": "navbar-brand", "navlinks": "navbar-nav", "navlink": "nav-link", "search_input": "form-control",
    "search_btn": "btn btn-outline-primary", "btn": "btn btn-primary", "btn2": "btn btn-outline-secondary",
    "start": "btn btn-primary btn-lg",
    "field": "mb-3", "label": "form-label", "input": "form-control", "select": "form-select",
    "textarea": "form-control",
    "check_item": "form-check", "check_input": "form-check-input", "check_label": "form-check-label",
    "radio_item": "form-check form-check-inline", "radio_input": "form-check-input",
    "radio_label": "form-check-label",
    "legend": "form-label", "hint": "form-text", "table": "table table-striped table-hover align-middle",
    "card": "card",
    "card_body": "card-body", "card_title": "card-title h5", "tag": "badge text-bg-secondary",
    "alert": "alert alert-info",
    "crumbs_list": "breadcrumb", "crumbs_item": "breadcrumb-item", "pager_list": "pagination",
    "pager_item": "page-item",
    "pager_link": "page-link", "pager_current": "active", "footer": "border-top mt-5 py-4 bg-body-tertiary",
    "footer_link": "link-secondary", "h1": "display-6", "lead": "lead", "hero": "p-4 mb-4 border rounded-3",
    "summary": "row", "summary_key": "col-sm-4 text-body-secondary", "summary_value": "col-sm-8", "grid": "row g-4",
    "col_main": "col-lg-8", "col_side": "col-lg-4",
}
_TABLER = {**_BOOTSTRAP, "container": "container-xl", "main": "page-body",
"header": "navbar navbar-expand-md d-print-none",
           "table": "table table-vcenter card-table table-striped", "card_title": "card-title",
           "tag": "badge bg-blue-lt",
           "h1": "page-title", "hero": "card card-body mb-4", "footer": "footer footer-transparent d-print-none"}
_KITS = (
    Kit(OWN, "own", {}),
    Kit("bootstrap", "variants", _BOOTSTRAP,
        {"bg": "var(--bs-body-bg)", "bg2": "var(--bs-tertiary-bg)", "fg": "var(--bs-body-color)",
         "muted": "var(--bs-secondary-color)", "line": "var(--bs-border-color)", "primary": "var(--bs-primary)",
         "accent": "var(--bs-warning)", "radius": "var(--bs-border-radius)"}),
    Kit("tabler", "variants", _TABLER,
        {"bg": "var(--tblr-bg-surface)", "bg2": "var(--tblr-bg-surface-secondary)", "fg": "var(--tblr-body-color)",
         "muted": "var(--tblr-secondary)", "line": "var(--tblr-border-color)", "primary": "var(--tblr-primary)",
         "accent": "var(--tblr-orange)", "radius": "var(--tblr-border-radius)"}),
    Kit("bulma", "variants", {
        "container": "container", "main": "section pt-4", "header": "navbar is-spaced has-shadow",
        "brand": "navbar-item",
        "navlinks": "navbar-start is-flex", "navlink": "navbar-item", "search_input": "input",
        "search_btn": "button is-link",
        "btn": "button is-primary", "btn2": "button is-light", "start": "button is-primary is-medium",
        "field": "field", "label": "label", "input": "input",
        "select_wrap": "select is-fullwidth", "textarea": "textarea", "check_label": "checkbox",
        "radio_label": "radio",
        "legend": "label", "hint": "help", "table": "table is-striped is-hoverable is-fullwidth", "card": "card",
        "card_body": "card-content", "card_title": "title is-5", "tag": "tag is-info is-light",
        "alert": "notification is-info is-light", "crumbs": "breadcrumb", "pager": "pagination",
        "pager_list": "pagination-list", "pager_link": "pagination-link", "pager_current": "is-current",
        "footer": "footer", "h1": "title is-2", "h2": "title is-4", "lead": "subtitle",
        "hero": "hero is-light p-5 mb-5",
        "grid": "columns", "col_main": "column is-two-thirds", "col_side": "column"},
        {"bg": "var(--bulma-scheme-main)", "bg2": "var(--bulma-scheme-main-bis)", "fg": "var(--bulma-text)",
         "muted": "var(--bulma-text-weak)", "line": "var(--bulma-border)", "primary": "var(--bulma-link)",
         "accent": "var(--bulma-warning)", "radius": "var(--bulma-radius)"}, choices="nested"),
    Kit("uikit", "variants", {
        "container": "uk-container", "main": "uk-section uk-section-xsmall",
        "header": "uk-navbar-container uk-padding-small",
        "brand": "uk-logo", "navlinks": "uk-subnav", "search_input": "uk-input uk-form-width-medium",
        "search_btn": "uk-button uk-button-default", "btn": "uk-button uk-button-primary",
        "btn2": "uk-button uk-button-default", "start": "uk-button uk-button-primary uk-button-large",
        "field": "uk-margin", "label": "uk-form-label", "input": "uk-input",
        "select": "uk-select", "textarea": "uk-textarea", "check_input": "uk-checkbox", "radio_input": "uk-radio",
        "legend": "uk-legend", "hint": "uk-text-meta",
        "table": "uk-table uk-table-divider uk-table-striped uk-table-hover",
        "card": "uk-card uk-card-default", "card_body": "uk-card-body", "card_title": "uk-card-title",
        "tag": "uk-label", "alert": "uk-alert-primary", "crumbs_list": "uk-breadcrumb", "pager_list": "uk-pagination",
        "pager_current": "uk-active", "footer": "uk-section uk-section-muted uk-section-small",
        "h1": "uk-heading-small",
        "h2": "uk-h3", "lead": "uk-text-lead", "hero": "uk-section uk-section-muted uk-padding uk-margin-bottom",
        "grid": "uk-grid", "col_main": "uk-width-2-3@m", "col_side": "uk-width-1-3@m"},
        {"bg": "#fff", "bg2": "#f8f8f8", "fg": "#666", "muted": "#999", "line": "#e5e5e5", "primary": "#1e87f0",
         "accent": "#faa05a", "radius": "0px"}, choices="nested"),
    Kit("foundation", "variants", {
        "container": "grid-container", "main": "", "header": "top-bar", "brand": "menu-text", "navlinks": "menu",
        "search_btn": "button", "btn": "button", "btn2": "button hollow", "start": "button large",
        "hint": "help-text", "table": "hover",
        "card": "card", "card_body": "card-section", "card_title": "h5", "tag": "label", "alert": "callout primary",
        "crumbs_list": "breadcrumbs", "pager_list": "pagination", "pager_current": "current",
        "footer": "callout secondary", "lead": "lead", "hero": "callout large", "grid": "grid-x grid-margin-x",
        "col_main": "cell medium-8", "col_side": "cell medium-4"},
        {"bg": "#fefefe", "bg2": "#f1f1f1", "fg": "#0a0a0a", "muted": "#767676", "line": "#cacaca",
        "primary": "#1779ba",
         "accent": "#ffae00", "radius": "0px"}, choices="nested"),
    Kit("pico", "variants", {
        "container": "container", "main": "container", "btn2": "secondary", "table": "striped", "card": "",
        "hint": "", "alert": "", "tag": "", "footer": "container", "grid": "grid"},
        {"bg": "var(--pico-background-color)", "bg2": "var(--pico-card-sectioning-background-color)",
         "fg": "var(--pico-color)", "muted": "var(--pico-muted-color)", "line": "var(--pico-muted-border-color)",
         "primary": "var(--pico-primary)", "accent": "var(--pico-primary-hover)",
         "radius": "var(--pico-border-radius)"},
        choices="nested"),
    Kit("primer", "variants", {
        "container": "container-lg px-3", "main": "py-4", "header": "Header", "brand": "Header-link f4",
        "navlinks": "Header-item", "navlink": "Header-link mr-3", "search_input": "form-control",
        "search_btn": "btn", "btn": "btn btn-primary", "btn2": "btn", "field": "form-group", "input": "form-control",
        "select": "form-select", "textarea": "form-control", "hint": "note", "table": "", "card": "Box",
        "card_body": "Box-body", "card_title": "Box-title", "tag": "Label Label--accent", "alert": "flash",
        "crumbs_item": "breadcrumb-item", "pager": "paginate-container", "pager_list": "pagination",
        "pager_current": "current", "footer": "border-top color-fg-muted py-4 mt-6", "h1": "h1", "h2": "h3",
        "lead": "lead", "hero": "Box p-4 mb-4 color-bg-subtle", "summary": "Box", "summary_row": "Box-row d-flex",
        "summary_key": "col-4 color-fg-muted", "summary_value": "col-8", "grid": "d-flex gutter-md",
        "col_main": "col-8", "col_side": "col-4"},
        {"bg": "var(--bgColor-default, #fff)", "bg2": "var(--bgColor-muted, #f6f8fa)",
        "fg": "var(--fgColor-default, #1f2328)",
         "muted": "var(--fgColor-muted, #59636e)", "line": "var(--borderColor-default, #d1d9e0)",
         "primary": "var(--fgColor-accent, #0969da)", "accent": "var(--fgColor-attention, #9a6700)", "radius": "6px"},
        choices="nested"),
    Kit("govuk", "govuk", {
        "html": "govuk-template", "body": "govuk-template__body", "container": "govuk-width-container",
        "main": "govuk-main-wrapper", "btn": "govuk-button", "start": "govuk-button govuk-button--start",
        "btn2": "govuk-button govuk-button--secondary",
        "search_input": "govuk-input govuk-input--width-20", "search_btn": "govuk-button govuk-button--secondary",
        "field": "govuk-form-group", "label": "govuk-label", "input": "govuk-input", "select": "govuk-select",
        "textarea": "govuk-textarea", "check_item": "govuk-checkboxes__item",
        "check_input": "govuk-checkboxes__input",
        "check_label": "govuk-label govuk-checkboxes__label", "radio_item": "govuk-radios__item",
        "checkboxes": "govuk-checkboxes govuk-checkboxes--small", "radios": "govuk-radios govuk-radios--inline",
        "radio_input": "govuk-radios__input", "radio_label": "govuk-label govuk-radios__label",
        "fieldset": "govuk-fieldset", "legend": "govuk-fieldset__legend govuk-fieldset__legend--s",
        "hint": "govuk-hint", "table": "govuk-table", "card": "", "tag": "govuk-tag",
        "alert": "govuk-inset-text", "crumbs": "govuk-breadcrumbs", "crumbs_list": "govuk-breadcrumbs__list",
        "crumbs_item": "govuk-breadcrumbs__list-item", "crumbs_link": "govuk-breadcrumbs__link",
        "pager": "govuk-pagination", "pager_list": "govuk-pagination__list", "pager_item": "govuk-pagination__item",
        "pager_link": "govuk-link govuk-pagination__link", "pager_current": "govuk-pagination__item--current",
        "h1": "govuk-heading-xl", "h2": "govuk-heading-m", "lead": "govuk-body-l", "link": "govuk-link",
        "summary": "govuk-summary-list", "summary_row": "govuk-summary-list__row",
        "summary_key": "govuk-summary-list__key",
        "summary_value": "govuk-summary-list__value", "grid": "govuk-grid-row",
        "col_main": "govuk-grid-column-two-thirds",
        "col_side": "govuk-grid-column-one-third"},
        {"bg": "#ffffff", "bg2": "#f3f2f1", "fg": "#0b0c0c", "muted": "#505a5f", "line": "#b1b4b6",
        "primary": "#1d70b8",
         "accent": "#ffdd00", "radius": "0px"}),
    Kit("nhsuk", "nhsuk", {
        "container": "nhsuk-width-container", "main": "nhsuk-main-wrapper", "btn": "nhsuk-button",
        "btn2": "nhsuk-button nhsuk-button--secondary", "search_input": "nhsuk-input nhsuk-header__search-input",
        "search_btn": "nhsuk-button nhsuk-button--secondary", "field": "nhsuk-form-group", "label": "nhsuk-label",
        "input": "nhsuk-input", "select": "nhsuk-select", "textarea": "nhsuk-textarea",
        "check_item": "nhsuk-checkboxes__item",
        "check_input": "nhsuk-checkboxes__input", "check_label": "nhsuk-label nhsuk-checkboxes__label",
        "checkboxes": "nhsuk-checkboxes", "radios": "nhsuk-radios nhsuk-radios--inline",
        "radio_item": "nhsuk-radios__item", "radio_input": "nhsuk-radios__input",
        "radio_label": "nhsuk-label nhsuk-radios__label", "fieldset": "nhsuk-fieldset",
        "legend": "nhsuk-fieldset__legend nhsuk-fieldset__legend--s", "hint": "nhsuk-hint", "table": "nhsuk-table",
        "card": "nhsuk-card", "card_body": "nhsuk-card__content", "card_title": "nhsuk-card__heading",
        "tag": "nhsuk-tag", "alert": "nhsuk-inset-text", "crumbs": "nhsuk-breadcrumb",
        "crumbs_list": "nhsuk-breadcrumb__list",
        "crumbs_item": "nhsuk-breadcrumb__list-item", "crumbs_link": "nhsuk-breadcrumb__link",
        "pager_list": "nhsuk-list", "h1": "nhsuk-heading-xl", "h2": "nhsuk-heading-m", "lead": "nhsuk-lede-text",
        "summary": "nhsuk-summary-list", "summary_row": "nhsuk-summary-list__row",
        "summary_key": "nhsuk-summary-list__key",
        "summary_value": "nhsuk-summary-list__value", "grid": "nhsuk-grid-row",
        "col_main": "nhsuk-grid-column-two-thirds",
        "col_side": "nhsuk-grid-column-one-third"},
        {"bg": "#ffffff", "bg2": "#f0f4f5", "fg": "#212b32", "muted": "#4c6272", "line": "#d8dde0",
        "primary": "#005eb8",
         "accent": "#ffeb3b", "radius": "4px"}),
    Kit("uswds", "uswds", {
        "container": "grid-container", "main": "usa-section padding-top-4", "btn": "usa-button",
        "btn2": "usa-button usa-button--outline", "start": "usa-button usa-button--big",
        "search_input": "usa-input", "search_btn": "usa-button",
        "field": "usa-form-group", "label": "usa-label", "input": "usa-input", "select": "usa-select",
        "textarea": "usa-textarea", "check_item": "usa-checkbox", "check_input": "usa-checkbox__input",
        "check_label": "usa-checkbox__label", "radio_item": "usa-radio", "radio_input": "usa-radio__input",
        "radio_label": "usa-radio__label", "fieldset": "usa-fieldset", "legend": "usa-legend", "hint": "usa-hint",
        "table": "usa-table usa-table--striped", "card": "usa-card", "card_body": "usa-card__body",
        "card_title": "usa-card__heading", "tag": "usa-tag", "alert": "usa-alert usa-alert--info usa-alert--slim",
        "crumbs": "usa-breadcrumb", "crumbs_list": "usa-breadcrumb__list", "crumbs_item": "usa-breadcrumb__list-item",
        "crumbs_link": "usa-breadcrumb__link", "pager": "usa-pagination", "pager_list": "usa-pagination__list",
        "pager_item": "usa-pagination__item usa-pagination__page-no", "pager_link": "usa-pagination__button",
        "pager_current": "usa-current", "h1": "", "lead": "usa-intro", "link": "usa-link",
        "summary": "usa-list usa-list--unstyled", "grid": "grid-row grid-gap", "col_main": "tablet:grid-col-8",
        "col_side": "tablet:grid-col-4"},
        {"bg": "#ffffff", "bg2": "#f0f0f0", "fg": "#1b1b1b", "muted": "#71767a", "line": "#dfe1e2",
        "primary": "#005ea2",
         "accent": "#e5a000", "radius": "4px"}),
)
KITS: dict[str, Kit] = {kit.id: kit for kit in _KITS}

# Which systems sites of a genre are built on, with weights: what real sites of the kind use (public
# services on their government's or health service's system, dashboards and apps on admin kits, the rest
# on the general frameworks), and weblica's own style on a share of every genre.
_GENERAL = {"bootstrap": 5, "bulma": 2, "uikit": 2, "foundation": 2, "pico": 1, "tabler": 1, "primer": 1, OWN: 2}
WEIGHTS: dict[str, dict[str, int]] = {
    "government": {"govuk": 6, "uswds": 4, "bootstrap": 1, OWN: 1},
    "healthcare": {"nhsuk": 5, "uswds": 1, "bootstrap": 3, "foundation": 1, OWN: 1},
    "banking": {"bootstrap": 4, "tabler": 3, "foundation": 2, "uikit": 1, "primer": 1, OWN: 1},
    "saas": {"tabler": 4, "primer": 3, "bootstrap": 2, "bulma": 1, OWN: 1},
    "news": {"bootstrap": 3, "uikit": 2, "foundation": 2, "bulma": 2, "pico": 2, OWN: 1},
    "jobs": {"bootstrap": 3, "bulma": 2, "primer": 2, "uikit": 1, "tabler": 1, "foundation": 1, OWN: 1},
    "transit": {"uswds": 3, "bootstrap": 3, "bulma": 1, "foundation": 2, "uikit": 1, OWN: 1},
    "education": {"bootstrap": 3, "uswds": 1, "foundation": 2, "bulma": 2, "pico": 1, OWN: 1},
}


def weights_for(category: str) -> dict[str, int]:
    return WEIGHTS.get(category, _GENERAL)


def choose(category: str, seed: int, skill: str, aesthetic: str, mode: str) -> tuple[str, str]:
    """(system id, theme) of a site, from its own rng. Bootstrap sites take a Bootswatch theme on most
    sites (a dark one where the style is dark); other systems have none."""
    rng = random.Random(f"design:{seed}:{skill}:{category}:{aesthetic}")
    table = weights_for(category)
    names = sorted(table)
    system = rng.choices(names, weights=[table[n] for n in names])[0]
    theme = ""
    if system == "bootstrap" and rng.random() < 0.75:
        dark = {"darkly", "superhero"}
        pool = [t for t in BOOTSWATCH_THEMES if (t in dark) == (mode == "dark")]
        theme = rng.choice(pool)
    return system, theme


class _Attrs(dict):
    """role -> ` class="..."` (Markup) or "" where the kit names no class: for elements that have none."""

    def __missing__(self, role: str) -> str:
        return ""


class _Classes(dict):
    """role -> " classes" (with its leading space) or "": appended to an element's own classes."""

    def __missing__(self, role: str) -> str:
        return ""


@dataclass(frozen=True)
class DesignContext:
    """What templates read of the site's system: `c.<role>` (" classes" to append), `a.<role>`
    (` class="..."` for an element without classes), the stylesheets, and what site.json records."""

    id: str
    theme: str
    frame: str
    title: str
    version: str
    package: str
    stylesheets: tuple[str, ...]
    choices: str
    c: dict[str, str]
    a: dict[str, Any]
    colours: dict[str, str]

    @property
    def own(self) -> bool:
        return self.id == OWN

    def record(self) -> dict[str, str]:
        """The bundle's record of its system (site.json "design")."""
        out = {"system": self.id, "title": self.title, "version": self.version, "package": self.package}
        if self.theme:
            out["theme"] = self.theme
        return out


def context(system: str, theme: str = "") -> DesignContext:
    """The design context of a system; an unknown system is refused naming the known ones."""
    if system not in KITS:
        raise DesignError(f"unknown design system '{system}'; choose one of: {', '.join(sorted(KITS))}")
    kit = KITS[system]
    classes = _Classes({role: " " + value for role, value in kit.classes.items() if value})
    attrs = _Attrs({role: Markup(f' class="{value}"') for role, value in kit.classes.items() if value})
    if system == OWN:
        return DesignContext(OWN, "", "own", "weblica (hand-written)", "", "", (), "nested", classes, attrs, {})
    real = SYSTEMS[system]
    if theme and theme not in real.themes:
        raise DesignError(f"design system '{system}' has no theme '{theme}'; "
                           f"themes: {', '.join(sorted(real.themes)) or 'none'}")
    return DesignContext(system, theme, kit.frame, real.title, real.package.version, real.package.name,
                         tuple(real.stylesheets(theme)), kit.choices, classes, attrs, dict(kit.colours))
