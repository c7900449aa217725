"""The page grammar: which structural variant of every component a site uses, and the pages around
the skill's own (info pages, collections, guides) that make a site as large as a real one.

A site's layout is drawn from its own rng (`layout:<site id>:<seed>`), never from the site rng the
skill and its data use, so the same seed gives the same layout and bytes, and adding a component here
never reshuffles a skill's data. The choice lands in site.json under "layout", so a bench or a held-out
split can group sites by it.
"""
from __future__ import annotations

import random
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from weblica.synth import components
from weblica.synth.components import content, info_pages

if TYPE_CHECKING:
    from weblica.synth.site import SiteBuilder

# sections of the start page that need entities to show (a site without items skips them)
_ITEM_SECTIONS = {"tiles", "arrivals", "top_rated", "deals", "brands", "masonry_picks"}


@dataclass(frozen=True)
class Layout:
    """The structural variant of every component, for one site."""

    skeleton: str
    header: str
    nav: str
    crumbs: bool
    listing: str
    detail: str
    footer: str
    hero: str
    home: tuple[str, ...] = field(default_factory=tuple)  # start-page sections after the hero, in order

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["home"] = list(self.home)
        return out


def choose_layout(site: SiteBuilder) -> Layout:
    """The site's layout: one variant per component, drawn from the layout rng."""
    spec = site.spec
    rng = random.Random(f"layout:{spec.site_id}:{spec.seed}")
    v = components.VARIANTS
    style = spec.style
    # the sidebar and dashboard archetypes are the sidebar navigation's own look
    nav = "sidebar" if style.archetype in ("sidebar", "dashboard") else rng.choice(v["nav"])
    listing = rng.choice(components.LISTINGS_FOR[style.listing])
    has_items = bool(site.data.get("items"))
    pool = [s for s in v["section"] if has_items or s not in _ITEM_SECTIONS]
    # search-only sections need the search page
    if "search" not in site.features:
        pool = [s for s in pool if s != "searches"]
    rng.shuffle(pool)
    count = min(len(pool), rng.randint(10, 12))
    sections = pool[:count]
    if has_items:  # the skill's own list sits among the sections, not always second
        sections.insert(rng.randint(0, min(3, len(sections))), "featured")
    return Layout(skeleton=rng.choice(v["skeleton"]), header=rng.choice(v["header"]), nav=nav,
                  crumbs=rng.random() < 0.7, listing=listing, detail=rng.choice(v["detail"]),
                  footer=rng.choice(v["footer"]), hero=rng.choice(v["hero"]), home=tuple(sections))


def compose(site: SiteBuilder) -> Layout:
    """Choose the site's layout and add the pages its components link to (once; later calls return the
    same layout). Pages a skill or genre flow registered are never replaced."""
    existing = getattr(site, "layout", None)
    if existing is not None:
        return existing
    layout = choose_layout(site)
    site.layout = layout  # type: ignore[attr-defined]
    info_pages.add_pages(site)
    return layout


def hero_copy(site: SiteBuilder) -> dict[str, str]:
    w = content.words(site)
    rng = content.layout_rng(site, "hero")
    title = rng.choice([site.name, f"Welcome to {site.name}", f"{w['Items']} worth choosing",
                        f"Find your next {w['item']}", f"The {w['items']} you were looking for"])
    tagline = rng.choice([f"{w['Items']} from {w['makers']} you can trust.",
                          f"Compare {w['items']} side by side and decide with confidence.",
                          f"New {w['items']} every week, all in one place.",
                          f"Every {w['item']} checked, every detail on the page."])
    href = "/items" if "/items" in site.pages else "/guides"
    cta = rng.choice(["Browse now", "Start exploring", f"See {w['items']}", "Discover more"])
    return {"title": title, "tagline": tagline, "href": href, "cta": cta}


def page_context(site: SiteBuilder, layout: Layout) -> dict[str, Any]:
    """What the components show besides the page's own context: the link groups, the genre's words and
    the sections' content (computed once per site)."""
    items = site.data.get("items", [])
    by_kind: dict[str, list[dict[str, Any]]] = {}
    for item in items:
        by_kind.setdefault(item["kind"], []).append(item)
    rng = content.layout_rng(site, "sections")
    colls = content.collections(site)
    names = [f"{a} {b}" for a in content.FIRST for b in "ABCDEFGHJKLMNPRST"]

    def related_of(item: dict[str, Any]) -> list[dict[str, Any]]:
        same = [i for i in by_kind.get(item["kind"], []) if i["id"] != item["id"]]
        return same[:4]

    def reviews_of(item: dict[str, Any]) -> list[dict[str, Any]]:
        r = random.Random(f"reviews:{site.spec.site_id}:{item['id']}")
        texts = [f"Exactly as described. The {site.item_noun} does what I hoped.",  # "the dish", not "the indian"
                 "Good value for what you get.", f"Would choose {item['maker']} again.",
                 "Took a while to decide, glad I did.", "Solid, no complaints so far."]
        return [{"author": r.choice(names), "stars": r.choice([3, 4, 4, 5, 5]), "text": t} for t in r.sample(texts, 3)]

    w = content.words(site)
    promo_title = rng.choice(["This week:", "Just in:", "Members' pick:"])
    return {
        "layout": layout, "link_groups": info_pages.link_groups(site), "words": w,
        "extras": {
            "hero": hero_copy(site), "collections": colls, "kind_slugs": {c["name"]: c["slug"] for c in colls},
            "maker_slugs": {m["name"]: m["slug"] for m in site.data.get("makers", [])},
            "makers": site.data.get("makers", [])[:8], "testimonials": content.testimonials(site),
            "faq": content.faq(site, 7), "perks": content.perks(site), "guides": content.guides(site),
            "searches": content.searches(site), "hours": content.hours(site),
            "arrivals": sorted(items, key=lambda i: (i["date"], i["id"]), reverse=True)[:12],
            "top_rated": sorted(items, key=lambda i: (-i["rating"], i["id"]))[:12],
            "deals": sorted(items, key=lambda i: (i["price"], i["id"]))[:8],
            "picks": rng.sample(items, min(8, len(items))),
            "promo": {"title": promo_title, "text": f"a new selection of {w['items']} picked by our team.",
                      "cta": "Take a look"},
            "related_of": related_of, "reviews_of": reviews_of,
        },
    }
