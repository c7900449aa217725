"""Seeded site content drawn from a category's vocabulary. Everything a task's gold answer needs lives
here (and is written to `data.json`), so answers are computed, never typed."""
from __future__ import annotations

import colorsys
import datetime as dt
import random
import re
from functools import lru_cache
from typing import Any

from weblica.synth.entities import entity_names
from weblica.synth.spec import SiteSpec, categories

FIRST_NAMES = ["Ana", "Ben", "Chloe", "Dmitri", "Elena", "Farid", "Grace", "Hiro", "Ines", "Jonas", "Kemi", "Liam",
               "Maya", "Nils", "Olga", "Priya", "Quinn", "Rosa", "Sami", "Tara", "Umar", "Vera", "Wen", "Yusuf"]
LAST_NAMES = ["Alvarez", "Brooks", "Costa", "Dubois", "Eriksen", "Fischer", "Garcia", "Haddad", "Ito", "Jensen",
              "Kowalski", "Lopez", "Mensah", "Nakamura", "Okafor", "Petrov", "Rossi", "Schmidt", "Tanaka", "Varga"]
STREETS = ["Maple Street", "Harbor Road", "Elm Avenue", "Station Square", "Mill Lane", "Park Row", "King's Way",
           "River Walk", "Orchard Close", "Bridge Street"]
CITIES = ["Springfield", "Riverton", "Lakewood", "Fairview", "Brookhaven", "Ashford", "Millbrook", "Kingsport",
          "Westhaven", "Cedar Falls", "Oakridge", "Bayside"]
DISTRICTS = ["Old Town", "Harborside", "University", "Market Square", "Riverside", "Hillcrest", "Northgate",
             "Southbank", "Eastwood", "Westfield", "Parkview", "Lakeshore"]
PLACE_SERVICES = ["Pickup", "Returns", "Repairs", "Parking", "Café"]  # a shop's; genres may name their own
BASE_DATE = dt.date(2026, 3, 2)  # a Monday; dates in the data are offsets from it, never "today"


def slugify(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def price_scale(fmt: dict[str, Any]) -> int:
    """How many units of the site's currency a genre's price range unit is worth: a currency written
    without decimals (the yen) is about a hundred times smaller, so "a dish from 6 to 38" is ¥600-¥3,800
    there. Every price of a site (its catalog, offers and flows) is drawn on this one scale."""
    return 100 if int(fmt["decimals"]) == 0 else 1


def _money(rng: random.Random, low: float, high: float, decimals: int) -> float:
    value = rng.uniform(low, high)
    if decimals == 0 or high > 5000:
        return float(round(value / (100 if high > 20000 else 1)) * (100 if high > 20000 else 1))
    return round(int(value) + rng.choice([0.0, 0.49, 0.5, 0.95, 0.99, 0.25, 0.75]), 2)


def _hue_color(rng: random.Random, mode: str = "light") -> str:
    h = rng.random()
    r, g, b = colorsys.hls_to_rgb(h, 0.55 if mode == "light" else 0.45, 0.55)
    return "#%02x%02x%02x" % (int(r * 255), int(g * 255), int(b * 255))


def site_category(spec: SiteSpec) -> dict[str, Any]:
    """The category's genre file as this site sees it: a genre whose file gives `maker_names` (a pattern of
    weblica/synth/fake.py: "{last_name} Savings Bank") names its makers per site from the fake-data
    library, so two sites of the genre share none; the others keep the file's fixed makers."""
    return _site_category(spec.site_id, spec.seed, spec.style.locale, spec.category)


@lru_cache(maxsize=64)
def _site_category(site_id: str, seed: int, locale: str, category: str) -> dict[str, Any]:
    cat = categories()[category]
    pattern = cat.get("maker_names")
    if not pattern:
        return cat
    from weblica.synth.fake import Names

    source = Names(site_id, seed, locale, "makers")
    patterns = pattern if isinstance(pattern, list) else [pattern]
    makers = [source.unique(patterns[i % len(patterns)]) for i in range(len(cat["makers"]))]
    return {**cat, "makers": makers}


def make_items(spec: SiteSpec, rng: random.Random, count: int) -> list[dict[str, Any]]:
    """`count` entities of the category's genre (weblica/synth/entities.py): unique names drawn from their
    kind's own nouns (a few near-duplicates among them), unique prices and the genre's facts."""
    cat = site_category(spec)
    # a genre priced in whole units (salaries, rents) draws whole amounts
    decimals = 0 if cat.get("whole_money") else spec.style.locale_format["decimals"]
    scale = price_scale(spec.style.locale_format)
    lo, hi = cat["price"][0] * scale, cat["price"][1] * scale
    items, seen_prices = [], set()
    for index, entity in enumerate(entity_names(cat, rng, count, (FIRST_NAMES, LAST_NAMES))):
        price = _money(rng, lo, hi, decimals)
        while price in seen_prices:  # unique prices keep "cheapest"/"most expensive" unambiguous
            price = round(price + (1 if decimals == 0 or hi > 5000 else 0.1) * (100 if hi > 20000 else 1), 2)
        seen_prices.add(price)
        items.append(catalog_item(cat, rng, index, entity, price))
    return items


def catalog_item(cat: dict[str, Any], rng: random.Random, index: int, entity: dict[str, str], price: float, *,
                 maker: str | None = None, attr: int | None = None, date: str | None = None,
                 facts: dict[str, str] | None = None) -> dict[str, Any]:
    """One catalog entity: `entity` gives its name, kind and noun. A genre that derives its catalog from
    its own programme (events) passes what the programme says of it (venue, date, facts); what is not
    given is drawn, in this order, from `rng`."""
    name = entity["name"]
    attr_spec = cat["attr"]
    attr_values = range(int(attr_spec["min"]), int(attr_spec["max"]) + 1, int(attr_spec["step"]))
    item: dict[str, Any] = {"id": f"i{index + 1:03d}", "slug": slugify(name), "name": name, "kind": entity["kind"],
                            "noun": entity["noun"], "maker": maker or rng.choice(cat["makers"]), "price": price}
    item["rating"] = round(rng.uniform(2.5, 5.0), 1)
    item["reviews"] = rng.randint(3, 2400)
    item["attr"] = attr if attr is not None else rng.choice(list(attr_values))
    item["date"] = date or (BASE_DATE + dt.timedelta(days=rng.randint(0, 120))).isoformat()
    item["stock"] = rng.randint(0, 40)
    item["facts"] = facts if facts is not None else {label: rng.choice(values) for label, values in cat["facts"].items()}
    item["color"] = _hue_color(rng)
    item["image"] = f"/img/{slugify(name)}.png"
    return item


def make_makers(spec: SiteSpec, rng: random.Random) -> list[dict[str, Any]]:
    cat = site_category(spec)
    cities = rng.sample(CITIES, len(cat["makers"]))
    first, last = cat.get("founded_years", (1890, 2020))  # when a maker began (a classifieds seller: joined)
    return [{"name": m, "slug": slugify(m), "city": c, "founded": rng.randint(first, last),
             "employees": rng.randint(8, 4000)} for m, c in zip(cat["makers"], cities)]


def make_people(rng: random.Random, count: int) -> list[dict[str, Any]]:
    pairs = [(f, l) for f in FIRST_NAMES for l in LAST_NAMES]
    rng.shuffle(pairs)
    people = []
    for first, last in pairs[:count]:
        people.append({
            "name": f"{first} {last}", "first": first, "last": last,
            "email": f"{first.lower()}.{last.lower()}@example.test",
            "phone": f"+1 555 {rng.randint(100, 999)} {rng.randint(1000, 9999)}",
            "city": rng.choice(CITIES),
            "street": f"{rng.randint(1, 220)} {rng.choice(STREETS)}",
            "zip": f"{rng.randint(10000, 99999)}",
        })
    return people


def make_stores(spec: SiteSpec, rng: random.Random, count: int) -> list[dict[str, Any]]:
    """Stores on a 100x60 map grid (km); distances are computed from a home point."""
    cat = categories()[spec.category]
    site_word = cat["site_words"][0]
    services = cat.get("services", PLACE_SERVICES)  # what a place of this genre offers on site
    districts = rng.sample(DISTRICTS, count)
    stores = []
    spots: list[tuple[int, int]] = []
    while len(spots) < count:  # pins at least 6 km apart so each stays clickable on the map
        spot = (rng.randint(4, 96), rng.randint(6, 56))
        if all((spot[0] - x) ** 2 + (spot[1] - y) ** 2 >= 36 for x, y in spots):
            spots.append(spot)
    for index, district in enumerate(districts):
        stores.append({
            "id": f"s{index + 1:02d}", "name": f"{site_word} {district}", "district": district,
            "x": spots[index][0], "y": spots[index][1],
            "phone": f"+1 555 {rng.randint(100, 999)} {rng.randint(1000, 9999)}",
            "opens": rng.choice(["07:00", "08:00", "09:00", "10:00"]),
            "closes": rng.choice(["18:00", "19:00", "20:00", "21:00", "22:00"]),
            "services": sorted(rng.sample(services, 2)),
        })
    return stores


def make_offers(spec: SiteSpec, rng: random.Random, count: int) -> list[dict[str, Any]]:
    """Bookable offers (departures, slots, sessions) with a time, a price and seats left."""
    cat = site_category(spec)
    decimals = spec.style.locale_format["decimals"]
    scale = price_scale(spec.style.locale_format)
    lo, hi = cat["price"][0] * scale, min(cat["price"][1], cat["price"][0] + 400) * scale
    times, prices, offers = set(), set(), []
    bump = 1 if decimals == 0 or hi > 5000 else 0.5
    while len(offers) < count:
        minutes = rng.randrange(6 * 60, 22 * 60, 5)
        price = _money(rng, lo, hi, decimals)
        while minutes in times:  # unique times and prices keep "earliest"/"cheapest" unambiguous
            minutes = 6 * 60 + (minutes - 6 * 60 + 5) % (16 * 60)
        while price in prices:
            price = round(price + bump, 2)
        times.add(minutes)
        prices.add(price)
        offers.append({"time": f"{minutes // 60:02d}:{minutes % 60:02d}", "price": price,
                       "seats": rng.randint(0, 9), "provider": rng.choice(cat["makers"]),
                       "day": (BASE_DATE + dt.timedelta(days=rng.randint(1, 6))).isoformat()})
    offers.sort(key=lambda o: (o["day"], o["time"]))
    for index, offer in enumerate(offers):
        offer["id"] = f"o{index + 1:02d}"
    return offers


def distance(store: dict[str, Any], home: tuple[int, int]) -> float:
    return round(((store["x"] - home[0]) ** 2 + (store["y"] - home[1]) ** 2) ** 0.5, 1)


def site_name(spec: SiteSpec, rng: random.Random) -> str:
    """The site's name: from its genre's `site_names` patterns and the fake-data library where it has them
    (no closed list to repeat: "Hartley Savings Bank"), else a word and a suffix of its genre file."""
    cat = categories()[spec.category]
    if cat.get("site_names"):
        from weblica.synth.fake import Names

        pattern = rng.choice(cat["site_names"])
        return Names(spec.site_id, spec.seed, spec.style.locale, "site-name").fill(pattern)
    return f"{rng.choice(cat['site_words'])} {rng.choice(cat['site_suffix'])}"
