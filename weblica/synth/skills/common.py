"""Pieces most skills share: the catalog shell (home, item and maker pages, search), plan steps and
the blurbs that make item pages read like a shop rather than a table dump."""
from __future__ import annotations

from typing import Any, Callable

from weblica.env.task import Check
from weblica.synth.checks import answer_number, answer_text
from weblica.synth.entities import about, one_word_apart
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


def catalog_shell(site: SiteBuilder, count: int = 30, *, search: bool = True, hidden: str | None = None,
                  home_items: int = 8, list_page: bool = True) -> list[dict[str, Any]]:
    """Items with their detail pages, maker pages, a home page and (optionally) search and /items."""
    items = site.items(count)
    makers = {m["name"]: m for m in site.data["makers"]}
    if search:
        site.features.add("search")
        site.page("/search", "search.html.j2", title="Search", page_kind="search")
    for item in items:
        site.page(f"/item/{item['slug']}", "item.html.j2", title=item["name"], item=item, maker=makers[item["maker"]],
                  hidden=hidden, blurb=blurb(site, item), page_kind="item")
    for maker in site.data["makers"]:
        site.page(f"/maker/{maker['slug']}", "maker.html.j2", title=maker["name"], maker=maker,
                  items=[i for i in items if i["maker"] == maker["name"]], page_kind="maker")
    if list_page:
        site.nav.append((f"All {site.items_noun}", "/items"))
        site.page("/items", "listing.html.j2", title=f"All {site.items_noun}", heading=f"All {site.items_noun}",
                  intro=f"{len(items)} {site.items_noun} from {len(makers)} {site.labels['makers']}.", items=items,
                  pages=0, page_kind="listing")
    site.page("/", "home.html.j2", title="Home", heading=f"Welcome to {site.name}",
              intro=f"Browse {len(items)} {site.items_noun}: {', '.join(list(site.cat['kinds'])[:4]).lower()} and more.",
              items=items[:home_items], page_kind="home")
    return items


def open_item(item: dict[str, Any], via: str = "items") -> Plan:
    """Steps to reach an item's page: from the full listing, or via the search box."""
    if via == "search":
        return [{"op": "fill", "sel": "#search-input", "text": item["name"], "enter": True},
                {"op": "click", "sel": f"[data-search-results] [data-link=item-{item['id']}]"}]
    return [{"op": "click", "sel": "a[href='/items']"}, {"op": "click", "sel": f"[data-link=item-{item['id']}]"}]


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
