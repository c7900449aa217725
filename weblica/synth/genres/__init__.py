"""Genres: what a category's sites are about. A genre has its own entity model (what its entities are
called, which fields they carry, whether they are sold) and its own flows (the pages and intents every
site of the category has: a bank's dashboard and transfers, a travel site's search -> results -> fare
rules -> booking). A skill (weblica/synth/skills) then adds what it needs on top.

`FLOWS` maps a category id to the builder of its flows; `build_site` runs it after the skill."""
from __future__ import annotations

from typing import Callable

from weblica.synth.site import SiteBuilder

FLOWS: dict[str, Callable[[SiteBuilder], None]] = {}


def flow(category: str) -> Callable[[Callable[[SiteBuilder], None]], Callable[[SiteBuilder], None]]:
    """Register the flows builder of a category."""
    def register(fn: Callable[[SiteBuilder], None]) -> Callable[[SiteBuilder], None]:
        FLOWS[category] = fn
        return fn
    return register


# the genres with flows of their own; importing them registers them in FLOWS
from weblica.synth.genres import (banking, classifieds, education, events, government, healthcare,  # noqa: E402,F401
                                  jobs, local_services, news, real_estate, restaurants, saas, transit, travel)
