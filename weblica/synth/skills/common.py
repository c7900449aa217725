"""Pieces most skills share: the catalog shell (home, item and maker pages, search), plan steps and
the blurbs that make item pages read like a shop rather than a table dump."""
from __future__ import annotations

import random
from typing import Any, Callable

from weblica.env.task import Check
from weblica.synth.checks import answer_number, answer_text
from weblica.synth.data import FIRST_NAMES, LAST_NAMES
from weblica.synth.components.content import about
from weblica.synth.entities import name_capacity, one_word_apart
from weblica.synth.site import SiteBuilder

Plan = list[dict[str, Any]]
SKILLS: dict[str, Callable[[SiteBuilder], None]] = {}


def skill(name: str) -> Callable[[Callable[[SiteBuilder], None]], Callable[[SiteBuilder], None]]:
    """Register a skill builder under its catalog id."""
    def register(fn: Callable[[SiteBuilder], None]) -> Callable[[SiteBuilder], None]:
        SKILLS[name] = fn
        return fn
    return register


SHOP_OPENERS = ["Made for everyday use", "A customer favourite", "New this season", "Built to last",
                "Carefully selected", "Great value"]
# genres that sell nothing say what an entity is without praising a purchase
PLAIN_OPENERS = ["Well reviewed", "Popular this month", "Recently updated", "Highly rated", "In demand", "Featured"]


def blurb(site: SiteBuilder, item: dict[str, Any]) -> str:
    openers = SHOP_OPENERS if site.labels["sells"] else PLAIN_OPENERS
    return about(site.cat, item, openers[sum(map(ord, item["name"])) % len(openers)])


def matches(item: dict[str, Any], query: str) -> bool:
    """The same rule as the site's search (site.js W.matches): every word is a substring."""
    words = query.lower().split()
    hay = f"{item['name']} {item['kind']} {item['maker']}".lower()
    return bool(words) and all(w in hay for w in words)


# Catalog sizes (issue 18: real catalogs hold dozens to hundreds of entities). A site's size is drawn
# from its own seed; genres that sell things (shops, their bigger ranges) draw from the larger range.
CATALOG_RANGE = (60, 160)
SHOP_RANGE = (100, 240)
SPARE_NAMES = 24  # base names left unused: absent-name tasks, a genre flow's "no name like the catalog's"
LISTING_PAGE = 24  # entities on one page of the /items listing (a real shop's 24-48)
# a skill whose one page shows the whole catalog (the comparison table)
# keeps it under 100, the size past which a real listing pages
ONE_PAGE = 90


def catalog_size(site: SiteBuilder, most: int | None = None) -> int:
    """The number of entities of this site's catalog: drawn per site (its id and seed, not the site's
    rng, so the rest of the site's draws stay put), at most `most` (a skill whose one page lists the
    whole catalog keeps it under 100), and never more than the genre can name without repeats."""
    # a genre may size its catalog itself (`catalog: [low, high]`: an events programme of dozens)
    low, high = site.cat.get("catalog") or (SHOP_RANGE if site.labels["sells"] else CATALOG_RANGE)
    if most is not None:
        high = min(high, most)
        low = min(low, high)
    drawn = random.Random(f"catalog-size:{site.spec.site_id}:{site.spec.seed}").randint(low, high)
    return min(drawn, name_capacity(site.cat, (FIRST_NAMES, LAST_NAMES), SPARE_NAMES))


def listing_href(page: int) -> str:
    return "/items" if page == 1 else f"/items/page/{page}"


def listing_pages(site: SiteBuilder, items: list[dict[str, Any]], size: int, **context: Any) -> int:
    """/items as numbered pages of `size` entities (/items, /items/page/2, ...), each with the pager;
    returns the number of pages. The page size is kept for plans (`open_item`)."""
    pages = (len(items) + size - 1) // size
    site.add_data(listing_page_size=size)
    for p in range(1, pages + 1):
        site.page(listing_href(p), "listing.html.j2", title=f"All {site.items_noun}" if p == 1 else
                  f"{site.items_noun} page {p}", heading=f"All {site.items_noun}", items=items[(p - 1) * size:p * size],
                  pages=pages if pages > 1 else 0, page=p, total=len(items), page_href=listing_href,
                  page_kind="listing", **context)
    return pages


def catalog_shell(site: SiteBuilder, *, most: int | None = None, search: bool = True, hidden: str | None = None,
                  home_items: int = 8, list_page: bool = True) -> list[dict[str, Any]]:
    """Items with their detail pages, maker pages, a home page and (optionally) search and the paged
    /items listing. The catalog's size is `catalog_size(site, most)`."""
    items = site.items(catalog_size(site, most))
    makers = {m["name"]: m for m in site.data["makers"]}
    if search:
        site.add_feature("search")
        site.page("/search", "search.html.j2", title="Search", page_kind="search")
    for item in items:
        site.page(f"/item/{item['slug']}", "item.html.j2", title=item["name"], item=item, maker=makers[item["maker"]],
                  hidden=hidden, blurb=blurb(site, item), page_kind="item")
    for maker in site.data["makers"]:
        site.page(f"/maker/{maker['slug']}", "maker.html.j2", title=maker["name"], maker=maker,
                  items=[i for i in items if i["maker"] == maker["name"]], page_kind="maker")
    if list_page:
        site.add_nav((f"All {site.items_noun}", "/items"))
        listing_pages(site, items, LISTING_PAGE,
                      intro=f"{len(items)} {site.items_noun} from {len(makers)} {site.labels['makers']}.")
    site.page("/", "home.html.j2", title="Home", heading=f"Welcome to {site.name}",
              intro=f"Browse {len(items)} {site.items_noun}: {', '.join(list(site.cat['kinds'])[:4]).lower()} and more.",
              items=items[:home_items], page_kind="home")
    return items


def open_item(site: SiteBuilder, item: dict[str, Any], via: str = "items") -> Plan:
    """Steps to reach an item's page: from the paged /items listing (its page's number clicked when it
    is not on the first), or via the search box."""
    if via == "search":
        return [{"op": "fill", "sel": "#search-input", "text": item["name"], "enter": True},
                {"op": "click", "sel": f"[data-search-results] [data-link=item-{item['id']}]"}]
    steps: Plan = [{"op": "click", "sel": "a[href='/items']"}]
    size = site.data.get("listing_page_size")
    index = site.data["items"].index(item)
    if size and index >= size:
        steps.append({"op": "click", "sel": f"[data-pager='{index // size + 1}']"})
    return steps + [{"op": "click", "sel": f"[data-link=item-{item['id']}]"}]


def others(values: list[Any], right: Any, k: int = 3) -> list[Any]:
    """Up to k values different from the right one (wrong answers for negatives); for a name, the names
    one word apart from it first ("Trail Crossover GTX" for "Trail Crossover"), the likeliest misreading."""
    if isinstance(right, str):
        values = sorted(values, key=lambda v: not (isinstance(v, str) and one_word_apart(v, right)))
    out = []
    for value in values:
        if value != right and value not in out:
            out.append(value)
        if len(out) >= k:
            break
    return out


# ---- unambiguous golds and their confusers ---------------------------------------------------------
# A task is emitted only when its gold is the one value a right procedure gives: no tie for "cheapest",
# no count that a wrong procedure (another group, no filter) also gives. Its confusers are the values of
# the same field the site shows for other entities, which an answer must not also assert.

def unique_extreme(entities: list[dict[str, Any]], key: str, highest: bool = False) -> dict[str, Any] | None:
    """The entity with the lowest (or highest) `key`, or None when another entity ties with it."""
    if not entities:
        return None
    best = (max if highest else min)(entities, key=lambda e: e[key])
    return best if sum(e[key] == best[key] for e in entities) == 1 else None


def distinct(values: list[Any], gold: Any) -> list[Any]:
    """The values other than the gold, each once, in order."""
    return [v for v in dict.fromkeys(values) if v != gold]


def count_confusers(gold: int, competing: list[int]) -> list[int] | None:
    """Confusers of a count: the counts a wrong procedure gives (another group, the filter left out,
    the total) and the neighbours gold ± 1. None when a competing count equals the gold: the answer
    would not tell a right procedure from a wrong one, so the task is not emitted."""
    if gold in competing:
        return None
    return sorted(set(competing) | {gold + 1} | ({gold - 1} if gold > 0 else set()))


def shown_money(site: SiteBuilder, values: list[float], k: int = 3) -> list[str]:
    """A few confusers as the site writes them (the listed wrong answers)."""
    return [site.money(v) for v in values[:k]]


def price_check(site: SiteBuilder, value: float, competing: list[float]) -> Check:
    """An answer check for a price: the site's notation, the other prices it shows as confusers."""
    return answer_number(value, site.fmt["decimals"], confusers=distinct(competing, value), locale=site.locale)


def name_check(gold: str, names: list[str]) -> Check:
    """An answer check for a name ("which item…"): every other name the site shows is a confuser."""
    return answer_text(gold, confusers=distinct(names, gold))
