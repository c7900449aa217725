"""The genre registry: every genre plug-in, listed explicitly (no discovery by import side effects), and
the one way to start a site of a spec, `new_site`, which gives the SiteBuilder its genre."""
from __future__ import annotations

from weblica.synth.genres import (automotive, banking, books, classifieds, education, electronics, events, fashion,
                                  fitness, government, groceries, healthcare, home_garden, jobs, local_services, music,
                                  news, pets, real_estate, restaurants, saas, transit, travel)
from weblica.synth.genres.genre import Genre, folder_of
from weblica.synth.site import SiteBuilder
from weblica.synth.spec import CatalogError, SiteSpec

_PLUGINS = (automotive, banking, books, classifieds, education, electronics, events, fashion, fitness, government,
            groceries, healthcare, home_garden, jobs, local_services, music, news, pets, real_estate, restaurants,
            saas, transit, travel)

GENRES: dict[str, Genre] = {plugin.GENRE.category: plugin.GENRE for plugin in _PLUGINS}
# the categories whose genre has flows of its own
FLOWS: frozenset[str] = frozenset(category for category, genre in GENRES.items() if genre.has_flows)


def genre_of(category: str) -> Genre:
    """The plug-in of a category; an unknown one is refused naming the known ones."""
    try:
        return GENRES[category]
    except KeyError:
        raise CatalogError(f"no genre plug-in for category '{category}': add weblica/synth/genres/"
                           f"{folder_of(category)}/ and list it in weblica/synth/genres/registry.py; "
                           f"known: {', '.join(sorted(GENRES))}") from None


def new_site(spec: SiteSpec, instance: int = 0) -> SiteBuilder:
    """A fresh SiteBuilder for the spec (instance `instance` of its data), with its category's genre."""
    return SiteBuilder(spec, genre_of(spec.category), instance)
