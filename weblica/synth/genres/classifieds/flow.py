"""Classifieds: ads by category and location with filters and a price sort, an ad's page with its
seller and similar ads, messaging the seller (stored server-side) and posting an ad (one form)."""
from __future__ import annotations

from typing import Any

from weblica.synth.checks import answer_count
from weblica.synth.data import CITIES, make_people, slugify
from weblica.synth.genres.classifieds.intents import (ASKING_PRICE, COUNT_ADS, MESSAGE_AD, MESSAGE_CHEAPEST, POST_AD,
                                                      WHO_SELLS)
from weblica.synth.genres.kit import MAXIMAL_EXTRAS, Plan, act, amounts, ask, fill_plan, record_checks
from weblica.synth.intents import kind_noun
from weblica.synth.site import SiteBuilder
from weblica.synth.skills.common import count_confusers, distinct, name_check, price_check, shown_money, unique_extreme

CONDITIONS = ["New", "Like new", "Good", "Fair"]
# titles that say the thing was owned before: never in "New" condition ("Second-hand Games Console", new)
USED_WORDS = ("Used", "Vintage", "Refurbished", "Antique", "Retro", "Restored", "Second-hand", "Classic", "Spare", "Old")


def conditions_for(title: str) -> list[str]:
    """The conditions an ad with this title can be in."""
    return CONDITIONS[1:] if title.split(" ")[0] in USED_WORDS else CONDITIONS
QUESTIONS = ["Is it still available?", "Could I pick it up this weekend?", "Would you take a lower offer?",
             "Can you send more photos?", "Does it come with the original receipt?"]


MESSAGE_FIELDS = [{"name": "name", "label": "Your name", "type": "text", "required": True},
                  {"name": "email", "label": "Your email", "type": "email", "required": True},
                  {"name": "message", "label": "Message", "type": "textarea", "required": True}]


def _post_fields(site: SiteBuilder, locations: list[str]) -> list[dict[str, Any]]:
    return [{"name": "title", "label": "Title", "type": "text", "required": True},
            {"name": "category", "label": "Category", "type": "select", "options": list(site.cat["kinds"]), "required": True},
            {"name": "condition", "label": "Condition", "type": "radio", "options": CONDITIONS, "required": True},
            {"name": "price", "label": f"Asking price ({site.fmt['currency'].strip()})",
             "type": "number", "min": 0, "max": 100000},
            {"name": "location", "label": "Location", "type": "select", "options": locations, "required": True},
            {"name": "description", "label": "Description (optional)", "type": "textarea"},
            {"name": "email", "label": "Contact email", "type": "email", "required": True}]


def _ads(site: SiteBuilder) -> list[dict[str, Any]]:
    rng = site.rng
    cities = rng.sample(CITIES, 4)
    sellers = make_people(rng, 10)
    decimals = site.fmt["decimals"]
    low, high = site.cat["price"]
    prices = amounts(rng, low if decimals else low * 100, high if decimals else high * 100, decimals, 36)
    ads, seen = [], set()
    kinds = list(site.cat["kinds"])
    for index, price in enumerate(prices):
        category = rng.choice(kinds)  # an ad is titled like its category: a "Wool Coat" under Clothing
        title = f"{rng.choice(site.cat['adjectives'])} {rng.choice(site.cat['kinds'][category])}"
        location = rng.choice(cities)
        while (title, location) in seen:
            title = f"{rng.choice(site.cat['adjectives'])} {rng.choice(site.cat['kinds'][category])}"
        seen.add((title, location))
        seller = rng.choice(sellers)
        ads.append({"id": f"a{index + 1}", "title": title, "slug": slugify(f"{title} {location} {index + 1}"),
                    "category": category, "location": location, "price": price,
                    "condition": rng.choice(conditions_for(title)), "seller": seller["name"], "posted": rng.randint(1, 40),
                    "since": rng.randint(2012, 2025)})
    for ad in ads:
        similar = [a for a in ads if a["category"] == ad["category"] and a is not ad]
        ad["similar"] = [a["id"] for a in (similar or [a for a in ads if a is not ad])[:3]]
        ad["seller_ads"] = sum(a["seller"] == ad["seller"] for a in ads)
    return ads


def build_flows(site: SiteBuilder) -> None:
    ads = _ads(site)
    site.add_data(ads=ads)
    site.add_state(messages=[], posted_ads=[])
    locations = sorted({a["location"] for a in ads})
    filters = [{"name": "q", "label": "What are you looking for?", "type": "search", "placeholder": "e.g. sofa"},
               {"name": "category", "label": "Category", "type": "select", "options": list(site.cat["kinds"])},
               {"name": "location", "label": "Location", "type": "select", "options": locations},
               {"name": "condition", "label": "Condition", "type": "select", "options": CONDITIONS}]
    post = _post_fields(site, locations)
    by_id = {a["id"]: a for a in ads}
    site.add_nav(("Browse ads", "/ads"), ("Post an ad", "/ads/post"))
    site.page("/ads", "classifieds/listings.html.j2", title="Browse ads", heading="Ads near you", fields=filters,
              ads=ads, page_kind="ad-listings")
    for ad in ads:
        site.page(f"/ads/{ad['slug']}", "classifieds/ad.html.j2", title=ad["title"], ad=ad, ads=by_id,
                  fields=MESSAGE_FIELDS, page_kind="ad")
    site.page("/ads/post", "classifieds/post.html.j2", title="Post an ad", heading="Post an ad", fields=post,
              page_kind="post-ad")
    site.page("/ads/sent", "message.html.j2", title="Message sent", heading="Your message was sent",
              text="The seller will answer by email.", back="/ads", page_kind="done")
    site.page("/ads/posted", "message.html.j2", title="Ad posted", heading="Your ad is live",
              text="Buyers can now find it in the listings.", back="/ads", page_kind="done")
    _tasks(site, ads, filters, post)


def _message(site: SiteBuilder, values: dict[str, Any]) -> Plan:
    return fill_plan(site, MESSAGE_FIELDS, values) + [{"op": "click", "sel": "#send-message"}]


def _tasks(site: SiteBuilder, ads: list[dict[str, Any]], filters: list[dict[str, Any]],
           post: list[dict[str, Any]]) -> None:
    rng = site.rng
    start = "/ads"
    people = make_people(rng, 14)[-3:]
    prices = [a["price"] for a in ads]

    combos = sorted({(a["category"], a["location"]) for a in ads})
    rng.shuffle(combos)
    for category, location in combos:
        there = [a for a in ads if (a["category"], a["location"]) == (category, location)]
        cheapest = unique_extreme(there, "price")
        if len(there) < 2 or cheapest is None:
            continue
        person, question = people[0], rng.choice(QUESTIONS)
        values = {"name": person["name"], "email": person["email"], "message": question}
        plan = fill_plan(site, filters, {"category": category, "location": location}) + \
            [{"op": "click", "sel": "#find-ads"}, {"op": "click", "sel": "a[data-sort='price']"},
             {"op": "click", "sel": f"[data-row={cheapest['id']}] [data-ad-link]"}] + _message(site, values)
        extra = [a for a in there if a is not cheapest][:MAXIMAL_EXTRAS]
        act(site, MESSAGE_CHEAPEST, {"category": _attributive(site, category), "location": location, "question": question,
                                     "name": person["name"], "email": person["email"]}, start, plan,
            record_checks("messages", MESSAGE_FIELDS, values, {"ad": cheapest["id"]}), "One message, to the seller of the cheapest ad of that category there",
            maximal=plan + [s for a in extra for s in
                            [{"op": "goto", "url": site.url(f"/ads/{a['slug']}")}] + _message(site, values)])
        break

    ad = rng.choice(ads)
    person, question = people[1], rng.choice(QUESTIONS)
    values = {"name": person["name"], "email": person["email"], "message": question}
    act(site, MESSAGE_AD, {"title": ad["title"], "location": ad["location"], "question": question, **values}, start,
        fill_plan(site, filters, {"q": ad["title"], "location": ad["location"]}) +
        [{"op": "click", "sel": "#find-ads"}, {"op": "click", "sel": f"[data-row={ad['id']}] [data-ad-link]"}] +
        _message(site, values), record_checks("messages", MESSAGE_FIELDS, values, {"ad": ad["id"]}), "One message to that ad's seller")

    taken = {a["title"] for a in ads}
    category = rng.choice(list(site.cat["kinds"]))
    title = rng.choice([t for t in (f"{a} {n}" for a in site.cat["adjectives"] for n in site.cat["kinds"][category])
                        if t not in taken])
    price = float(rng.randint(2, 40) * (5 if site.fmt["decimals"] else 500))
    values = {"title": title, "category": category, "condition": rng.choice(conditions_for(title)),
              "price": price, "location": rng.choice(sorted({a["location"] for a in ads})), "email": people[2]["email"]}
    act(site, POST_AD, {**values, "category": values["category"].lower(), "condition": values["condition"].lower(),
                        "price": site.money(price, whole=True)}, start,
        [{"op": "click", "sel": "a[href='/ads/post']"}] + fill_plan(site, post, {**values, "price": int(price)}) +
        [{"op": "click", "sel": "#post-ad"}], record_checks("posted_ads", post, values), "One ad posted with exactly those details")

    def asking_price() -> None:
        ad = rng.choice(ads)
        ask(site, ASKING_PRICE, {"title": ad["title"], "location": ad["location"]}, start,
            fill_plan(site, filters, {"q": ad["title"], "location": ad["location"]}) +
            [{"op": "click", "sel": "#find-ads"}, {"op": "click", "sel": f"[data-row={ad['id']}] [data-ad-link]"},
             {"op": "reach", "sel": "[data-ad-price]"}], site.money(ad["price"]), price_check(site, ad["price"], prices),
            shown_money(site, distinct([by["price"] for by in ads if by["id"] in ad["similar"]], ad["price"])), "The ad's asking price")

    def count_ads() -> None:
        for category, location in rng.sample(combos, len(combos)):
            gold = sum((a["category"], a["location"]) == (category, location) for a in ads)
            confusers = count_confusers(gold, [sum(a["category"] == category for a in ads),
                                               sum(a["location"] == location for a in ads), len(ads)])
            if gold >= 2 and confusers:
                ask(site, COUNT_ADS, {"category": _attributive(site, category), "location": location}, start,
                    fill_plan(site, filters, {"category": category, "location": location}) +
                    [{"op": "click", "sel": "#find-ads"}, {"op": "reach", "sel": "[data-row-count]"}], str(gold),
                    answer_count(gold, confusers, unit="ads"), [str(c) for c in confusers], "The number of ads of that category in that location")
                return

    def who_sells() -> None:
        ad = rng.choice(ads)
        names = [next(a["seller"] for a in ads if a["id"] == s) for s in ad["similar"]] + [a["seller"] for a in ads]
        if len(set(names) - {ad["seller"]}) >= 2:
            ask(site, WHO_SELLS, {"title": ad["title"], "location": ad["location"]}, start,
                fill_plan(site, filters, {"q": ad["title"], "location": ad["location"]}) +
                [{"op": "click", "sel": "#find-ads"}, {"op": "click", "sel": f"[data-row={ad['id']}] [data-ad-link]"},
                 {"op": "reach", "sel": "[data-seller]"}], ad["seller"], name_check(ad["seller"], names),
                distinct(names, ad["seller"]), "The ad's seller")

    rng.choice([asking_price, count_ads, who_sells])()


def _attributive(site: SiteBuilder, category: str) -> str:
    """A category as said before "ad": "camera ad", not "cameras ad" (the genre's `kind_words`)."""
    words = kind_noun(site.cat, category)
    return words[0].removesuffix(" listing") if words else category.lower()
