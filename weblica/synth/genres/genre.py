"""The genre plug-in contract: what the generator asks of a category's package under
`weblica/synth/genres/<genre>/`, and the one implementation every package there uses.

A genre package holds everything of its kind of site: `genre.yaml` (its vocabulary and entity model,
read by `weblica.synth.spec.categories`), `flow.py` (the pages, data, state and tasks every site of the
category has), `intents.py` (what its users ask, in the task grammar), `templates/` (its pages) and,
where its pages behave, its part of the flows script (`flows.js`, spliced into `genres/flows.js`; see
`weblica/site_runtime`). Its `__init__.py` declares `GENRE`, which `registry.py` lists.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Protocol

if TYPE_CHECKING:
    from weblica.synth.site import SiteBuilder

Flows = Callable[["SiteBuilder"], None]
Catalog = Callable[["SiteBuilder", int], list[dict[str, Any]]]


class Genre(Protocol):
    """A category's plug-in. `build` runs after the skill's builder on every site of the category."""

    @property
    def category(self) -> str:
        """The catalog id ("real-estate"), as in a SiteSpec and a site id."""

    @property
    def templates(self) -> Path:
        """The folder of its page templates, named "<folder>/<file>" by its pages ("news/front.html.j2")."""

    @property
    def has_flows(self) -> bool:
        """Whether its sites get pages of the genre's own (False: a shop of its vocabulary)."""

    @property
    def folder(self) -> str:
        """The package folder's name: the category id with "_" for "-" ("real_estate")."""

    def catalog(self, site: SiteBuilder, count: int) -> list[dict[str, Any]] | None:
        """The site's catalog of `count` entities made by the genre itself (an events site's programme),
        or None: drawn from its vocabulary (weblica/synth/data.py make_items)."""

    def build(self, site: SiteBuilder) -> None:
        """Add the genre's own pages, data, state and task drafts to the site."""


def folder_of(category: str) -> str:
    """The package folder of a category: Python names take "_" where category ids take "-"."""
    return category.replace("-", "_")


@dataclass(frozen=True)
class GenrePackage:
    """A genre as a folder of its own: `flows` builds its pages and tasks (None: a genre whose sites are
    its skill's pages alone, a shop of its vocabulary), `own_catalog` makes its entities (None: drawn
    from its vocabulary)."""

    category: str
    root: Path
    flows: Flows | None = None
    own_catalog: Catalog | None = None

    @property
    def folder(self) -> str:
        return self.root.name

    @property
    def templates(self) -> Path:
        return self.root / "templates"

    @property
    def has_flows(self) -> bool:
        return self.flows is not None

    def catalog(self, site: SiteBuilder, count: int) -> list[dict[str, Any]] | None:
        return self.own_catalog(site, count) if self.own_catalog else None

    def build(self, site: SiteBuilder) -> None:
        if self.flows is not None:
            self.flows(site)
