"""Distractors: which pop-ups a site has, and the range each one varies in from episode to episode.

Two levels, so that no close button sits at one learnable pixel:
- per site (here, drawn with the spec and written into site.json as `spec.distractors`): the *menu*:
  which overlay kinds the site has at all and, for each, the positions, timings and dismissal controls
  it may use, and how often an episode shows it; plus the structural knobs `sticky_header` and
  `lazy_loading` (page classes the templates read), which say what the site's episodes vary around.
- per episode (in the page: weblica/site_runtime/distractors.js): the variant, drawn from (site id, episode
  seed) with a seeded PRNG, never Math.random or the clock: whether it shows, its text (phrasings from
  the genre's words, rendered by weblica/synth/templates/distractors.html.j2), position, size, inset, timing
  and control; and the page's structure (`STRUCTURE`). The episode seed reaches the page without
  touching the bundle's bytes: the env's
  backend sends it in a header (weblica/serve/backend.py) and the site server answers
  `/_weblica/episode.js` from that header.

Contract with the oracle (weblica/synth/player.py) and scripted policies: an open distractor is an
element `[data-distractor=KIND]` that is not `hidden`; `data-blocking` marks one that covers the whole
page (a backdrop: clicks underneath do not land until it is dismissed); `[data-close]` elements inside
close it; `data-dismiss="escape"` or `"outside"` names a distractor without a close button that the
Escape key or a click on its backdrop dismisses. Non-blocking ones never need dismissing unless they
cover what one wants to click.

Timings run on the page's clock and its own events, so they are deterministic in the env, whose clock
is virtual and advances a fixed amount per step: `load`, `clicks` (after the N-th click of the
episode, counted across pages), `scroll` (past a depth), `delay` (virtual milliseconds; non-blocking
kinds only: this rule dates from when validation ran a real clock, where a blocking pop-up landing
between a measurement and a click made the compiled oracle depend on timing; validation now runs the
env's virtual clock too, but blocking pop-ups on a delay have not been validated since).
"""
from __future__ import annotations

import random
from typing import Any

# kind -> what it may vary in. Positions that cover the page (a backdrop) are blocking.
OVERLAYS: dict[str, dict[str, list[str]]] = {
    "cookie": {"positions": ["bar-bottom", "bar-top", "corner-bl", "corner-br", "center"],
               "timings": ["load", "load", "clicks", "scroll"],
               "controls": ["accept", "reject", "x", "link", "escape", "outside"]},
    "promo": {"positions": ["center", "center-top", "corner-br", "corner-bl"],
              "timings": ["load", "clicks", "scroll", "delay"],
              "controls": ["x", "decline", "link", "escape", "outside"]},
    "chat": {"positions": ["corner-br", "corner-bl"],
             "timings": ["load", "delay", "clicks", "scroll"],
             "controls": ["x", "decline"]},
    "slidein": {"positions": ["side-right", "side-left", "corner-br", "corner-bl"],
                "timings": ["scroll", "delay", "clicks"],
                "controls": ["x", "decline", "link"]},
    "interstitial": {"positions": ["full"],
                     "timings": ["load", "clicks"],
                     "controls": ["link", "x", "decline", "escape"]},
}
BLOCKING_POSITIONS = frozenset({"center", "center-top", "full"})
STRUCTURAL = ("sticky_header", "lazy_loading")  # page classes read by base.html.j2, per site
# What distractors.js varies per episode around them (body data-header-mode, data-lazy-mode,
# data-lazy-margin). Episode seed 0, where validation compiles oracles, keeps the site's own behaviour;
# no other seed covers more of the page (the header never sticks where the site's does not, nor covers
# more than the whole one) or hides a row longer, so recorded clicks still land; a recorded click on the stuck
# header, where this episode's is elsewhere, is put back by the oracle policy (weblica/env/sticky_header.py).
STRUCTURE = {
    "header": ["full", "compact", "reveal", "static"],  # on sticky sites: the whole header, its lower
    # part (a multi-row header's first row or a bar's padding rides above), only on the way up, none
    "lazy": ["rows", "images", "none"],  # rows and start-page sections blank until near, or their pictures
    "margin": [-40, 0, 120, 320],  # px past the viewport's bottom edge where they appear (-40 only for
    # the template's rows past the twelfth, as seed 0 has them)
}
# catalog names (weblica/synth/catalogs/styles.yaml `distractors:`) of the overlay kinds
CATALOG_NAMES = {"cookie_banner": "cookie", "promo_modal": "promo", "chat_widget": "chat", "slide_in": "slidein",
                 "interstitial": "interstitial"}


def _subset(rng: random.Random, values: list[str], low: int, high: int) -> list[str]:
    """Between `low` and `high` distinct values, in the catalog's order (so the menu reads the same)."""
    distinct = list(dict.fromkeys(values))
    chosen = set(rng.sample(distinct, min(len(distinct), rng.randint(low, high))))
    return [v for v in distinct if v in chosen]


def sample_menu(rng: random.Random, probabilities: dict[str, float]) -> dict[str, Any]:
    """The site's distractor menu from the catalog's probabilities (`weblica/synth/catalogs/styles.yaml`): structural
    knobs as booleans, and for each overlay kind the site has, what its episodes draw from."""
    menu: dict[str, Any] = {}
    overlays: dict[str, Any] = {}
    for name, p in probabilities.items():
        on = rng.random() < float(p)
        if name in STRUCTURAL:
            menu[name] = on
            continue
        kind = CATALOG_NAMES.get(name)
        if kind is None:
            raise ValueError(f"unknown distractor '{name}' in weblica/synth/catalogs/styles.yaml; known: "
                             f"{', '.join([*STRUCTURAL, *CATALOG_NAMES])}")
        if not on:
            continue
        space = OVERLAYS[kind]
        overlays[kind] = {
            "show": round(rng.uniform(0.55, 1.0), 2),  # the share of episodes it appears in
            "positions": _subset(rng, space["positions"], 1, 3),
            "timings": _subset(rng, space["timings"], 1, 2),
            "controls": _subset(rng, space["controls"], 2, 3),
        }
    menu["overlays"] = overlays
    return menu

