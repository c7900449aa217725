"""Real estate: homes for sale on a drawn street map and in a list filtered by type and neighbourhood
and sorted by price, home pages with a viewing (tour) form and an agent contact form (both stored
server-side), and a mortgage calculator (the monthly payment computed in flows.js; `monthly_payment`
is the same formula for the gold)."""
from __future__ import annotations

import datetime as dt
from functools import partial
from typing import Any

from weblica.synth import images
from weblica.synth.data import BASE_DATE, price_scale
from weblica.synth.fake import home_city
from weblica.synth.fake import names as name_source
from weblica.synth.fake import people as fake_people
from weblica.synth.genres.kit import Plan, act, ask, day_text, fill_plan, record_checks
from weblica.synth.genres.real_estate.intents import AGENT, BOOK_TOUR, CONTACT, MONTHLY
from weblica.synth.site import SiteBuilder
from weblica.synth.skills.common import distinct, name_check, price_check, unique_extreme

COLORS = ["#c8553d", "#588b8b", "#f2c14e", "#5d576b", "#8cb369", "#4d9de0"]
TOUR_TIMES = ["10:00", "12:30", "15:00", "17:30"]
# where the homes for sale are: neighbourhoods (the genre's makers are letting agencies, "Northside
# Lettings", which no home for sale is "in"), named per site from the fake-data library
NEIGHBOURHOODS = ["{last_name} Park", "{last_name} Heights", "{city} Village", "{last_name} Green", "Old {city}",
                  "{last_name} Hill"]

QUESTIONS = ["Is the price negotiable?", "Are pets allowed in the building?", "When could I move in?",
             "Is parking included?", "How high are the monthly charges?"]


def monthly_payment(price: float, down: float, rate: float, years: int) -> float:
    """The monthly payment of a fixed-rate loan of price - down at `rate` percent a year (flows.js mortgage())."""
    principal, r, n = price - down, rate / 1200, years * 12
    return principal / n if r == 0 else principal * r / (1 - (1 + r) ** -n)


def _homes(site: SiteBuilder) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    rng = site.rng
    agents = [{"name": p["name"], "phone": p["phone"]} for p in fake_people(site, "agents", 5)]
    areas = name_source(site, "neighbourhoods")
    neighbourhoods = [areas.unique(p) for p in NEIGHBOURHOODS]
    streets = [name_source(site, "streets").unique("{street_name}") for _ in range(14)]
    scale = price_scale(site.fmt)
    prices = rng.sample(range(120, 950), 24)
    homes, addresses, spots = [], set(), set()
    for index, price in enumerate(prices):
        address = f"{rng.randint(1, 199)} {rng.choice(streets)}"
        while address in addresses:
            address = f"{rng.randint(1, 199)} {rng.choice(streets)}"
        addresses.add(address)
        spot = (rng.randint(4, 96), rng.randint(4, 56))
        while any(abs(spot[0] - x) < 4 and abs(spot[1] - y) < 4 for x, y in spots):  # pins must not overlap
            spot = (rng.randint(4, 96), rng.randint(4, 56))
        spots.add(spot)
        kind, agent = rng.choice(list(site.cat["kinds"])), rng.choice(agents)
        value = float(price * 1000 * scale)
        days = sorted(rng.sample(range(1, 12), 2))
        homes.append({"id": f"h{index + 1}", "slug": f"h{index + 1}-{address.lower().replace(' ', '-').replace(chr(39), '')}",
                      "address": address, "kind": kind, "district": rng.choice(neighbourhoods), "price": value,
                      "price_text": site.money(value), "bedrooms": rng.randint(1, 5), "area": rng.randrange(30, 240, 5),
                      "listed": rng.randint(1, 60),  # days on the market
                      "agent": agent["name"], "x": spot[0], "y": spot[1], "image": f"/img/home-{index + 1}.png",
                      "color": rng.choice(COLORS),
                      "tour_days": [(BASE_DATE + dt.timedelta(days=d)).isoformat() for d in days]})
    for home in homes:  # a home has at most as many bathrooms as bedrooms, and one at least
        home["bathrooms"] = rng.randint(1, max(1, (home["bedrooms"] + 1) // 2))
    for agent in agents:
        agent["listings"] = sum(h["agent"] == agent["name"] for h in homes)
    return homes, agents


def _tour_fields(site: SiteBuilder, home: dict[str, Any]) -> list[dict[str, Any]]:
    slots = [f"{d} {t}" for d in home["tour_days"] for t in TOUR_TIMES]
    return [{"name": "slot", "label": "Viewing time", "type": "select", "options": slots, "required": True,
             "labels": {s: f"{site.date(s.split(' ')[0])} {s.split(' ')[1]}" for s in slots}},
            {"name": "name", "label": "Your name", "type": "text", "required": True},
            {"name": "email", "label": "Email", "type": "email", "required": True}]


# named apart from the viewing form's fields: both forms are on the home's page, and ids are unique
CONTACT_FIELDS = [{"name": "sender", "label": "Your name", "type": "text", "required": True},
                  {"name": "reply_to", "label": "Email", "type": "email", "required": True},
                  {"name": "sender_phone", "label": "Phone (optional)", "type": "tel"},
                  {"name": "message", "label": "Message", "type": "textarea", "required": True}]
MORTGAGE_FIELDS = [{"name": "price", "label": "Home price", "type": "number", "min": 0},
                   {"name": "down", "label": "Down payment", "type": "number", "min": 0},
                   {"name": "rate", "label": "Interest rate (% a year)", "type": "number", "min": 0},
                   {"name": "years", "label": "Term (years)", "type": "number", "min": 1, "max": 40}]


def build_flows(site: SiteBuilder) -> None:
    homes, agents = _homes(site)
    site.add_data(homes=homes, agents=agents)
    site.add_state(tours=[], agent_messages=[])
    for index, home in enumerate(homes):
        site.add_file(home["image"].lstrip("/"), partial(images.item_image, home["address"], home["kind"], home["color"]))
    pins = [{"id": h["id"], "x": h["x"], "y": h["y"], "district": h["district"]} for h in homes]
    site.add_file("img/listings-map.png", partial(images.map_image, pins, (50, 30), site.spec.style.palette, labels=False))
    filters = [{"name": "kind", "label": "Type", "type": "select", "options": sorted({h["kind"] for h in homes})},
               {"name": "district", "label": "Neighbourhood", "type": "select",
                "options": sorted({h["district"] for h in homes})}]
    site.add_nav(("Homes for sale", "/homes"), ("Mortgage calculator", "/mortgage"), ("Agents", "/agents"))
    site.page("/homes", "real_estate/listings.html.j2", title="Homes for sale", heading="Homes for sale",
              listings=homes, fields=filters, page_kind="home-listings")
    for home in homes:
        site.page(f"/homes/{home['slug']}", "real_estate/home.html.j2", title=home["address"], home=home,
                  tour_fields=_tour_fields(site, home), contact_fields=CONTACT_FIELDS, page_kind="home")
    site.page("/mortgage", "real_estate/mortgage.html.j2", title="Mortgage calculator",
              heading="Mortgage calculator", fields=MORTGAGE_FIELDS, page_kind="mortgage-calculator")
    site.page("/agents", "real_estate/agents.html.j2", title="Agents", heading="Our agents", agents=agents,
              page_kind="agents")
    _start(site, homes, agents, filters)
    site.page("/homes/requested", "message.html.j2", title="Request sent", heading="Thank you",
              text="The agent will get back to you by email.", back="/homes", page_kind="done")
    _tasks(site, homes, filters)


def _start(site: SiteBuilder, homes: list[dict[str, Any]], agents: list[dict[str, Any]],
           filters: list[dict[str, Any]]) -> None:
    """A property portal's start page: a search hero (buy or rent; area, type, bedrooms, price), the newest
    homes with beds, baths and price, popular areas and the agents; prices belong here (homes are priced),
    a basket and star reviews do not."""
    prices = sorted(h["price"] for h in homes)
    steps = [prices[len(prices) * k // 4] for k in (1, 2, 3)] + [prices[-1]]
    search = [{**filters[1], "label": "Area"}, {**filters[0], "label": "Property type"},
              {"name": "bedrooms", "label": "Bedrooms", "type": "select", "options": ["1", "2", "3", "4"],
               "labels": {str(n): f"{n}+ bedrooms" for n in range(1, 5)}},
              {"name": "price", "label": "Max price", "type": "select", "options": [str(int(p)) for p in steps],
               "labels": {str(int(p)): site.money(p) for p in steps}}]
    areas = sorted({h["district"] for h in homes}, key=lambda d: (-sum(h["district"] == d for h in homes), d))
    site.page("/", "real_estate/start.html.j2", title="Homes for sale and to rent", fields=search,
              newest=sorted(homes, key=lambda h: (h["listed"], h["id"]))[:6], homes=homes, agents=agents,
              areas=[(a, sum(h["district"] == a for h in homes)) for a in areas], town=home_city(site),
              page_kind="home")


def _open(home: dict[str, Any]) -> Plan:
    return [{"op": "click", "sel": f"[data-map-pin={home['id']}]"}]


def _tasks(site: SiteBuilder, homes: list[dict[str, Any]], filters: list[dict[str, Any]]) -> None:
    rng = site.rng
    start = "/homes"  # the flow's own page: a site's nav may be folded into a menu
    people = fake_people(site, "enquirers", 2)
    combos = sorted({(h["kind"], h["district"]) for h in homes})
    rng.shuffle(combos)
    for kind, district in combos:
        there = [h for h in homes if (h["kind"], h["district"]) == (kind, district)]
        best = unique_extreme(there, "price")
        if best is None or len(there) < 2:
            continue
        fields = _tour_fields(site, best)
        slot = rng.choice(fields[0]["options"])
        values = {"slot": slot, "name": people[0]["name"], "email": people[0]["email"]}
        plan = fill_plan(site, filters, {"kind": kind, "district": district}) + \
            [{"op": "click", "sel": "#filter-homes"}, {"op": "click", "sel": "a[data-sort='price']"},
             {"op": "click", "sel": f"[data-row={best['id']}] [data-home-link]"}] + fill_plan(site, fields, values) + \
            [{"op": "click", "sel": "#book-tour"}]
        other = next(h for h in there if h is not best)
        maximal = plan + [{"op": "goto", "url": site.url(f"/homes/{other['slug']}")}] + \
            fill_plan(site, _tour_fields(site, other), {**values, "slot": _tour_fields(site, other)[0]["options"][0]}) + \
            [{"op": "click", "sel": "#book-tour"}]
        day, time = slot.split(" ")
        act(site, BOOK_TOUR, {"kind": kind.lower(), "district": district, "day": day_text(day), "time": time,
                              "name": values["name"], "email": values["email"]}, start, plan,
            record_checks("tours", fields, values, {"listing": best["id"]}), "One viewing of that home at that time", maximal=maximal)
        break

    home = rng.choice(homes)
    values = {"sender": people[1]["name"], "reply_to": people[1]["email"], "message": rng.choice(QUESTIONS)}
    plan = _open(home) + fill_plan(site, CONTACT_FIELDS, values) + [{"op": "click", "sel": "#send-agent"}]
    act(site, CONTACT, {"kind": home["kind"].lower(), "address": home["address"], "name": values["sender"],
                        "email": values["reply_to"], "message": values["message"]}, start, plan,
        record_checks("agent_messages", CONTACT_FIELDS, values, {"listing": home["id"]}), "One message about that home with that text", maximal=plan + [{"op": "goto", "url": site.url("/homes")}] + _open(home) +
        [{"op": "click", "sel": "#book-tour"}] + fill_plan(site, CONTACT_FIELDS, values) + [{"op": "click", "sel": "#send-agent"}])

    decimals = site.fmt["decimals"]
    for home in rng.sample(homes, len(homes)):
        down = round(home["price"] * rng.choice([0.1, 0.15, 0.2, 0.25]), -3)
        rate, years = rng.choice([3.5, 4, 4.25, 5, 5.5, 6]), rng.choice([15, 20, 25, 30])
        gold = monthly_payment(home["price"], down, rate, years)
        if abs((gold * 10 ** decimals) % 1 - 0.5) < 0.05:
            continue  # too close to a rounding edge: JS and Python could round it apart
        wrong = [monthly_payment(home["price"], 0, rate, years), monthly_payment(home["price"], down, rate, years + 5),
                 (home["price"] - down) / (years * 12)]
        mortgage = {"price": home["price"], "down": down, "rate": rate, "years": years}
        plan = _open(home) + [{"op": "click", "sel": "#to-mortgage"}] + \
            fill_plan(site, MORTGAGE_FIELDS, {k: v for k, v in mortgage.items() if k != "price"}) + \
            [{"op": "click", "sel": "#calculate"}, {"op": "reach", "sel": "[data-monthly]"}]
        ask(site, MONTHLY, {"kind": home["kind"].lower(), "address": home["address"], "down": site.money(down),
                            "rate": rate, "years": years}, start, plan, site.money(round(gold, decimals)),
            price_check(site, gold, wrong), [site.money(w) for w in wrong], "The calculator's monthly payment for that price, down payment, rate and term")
        break

    home = rng.choice(homes)
    agents = sorted({h["agent"] for h in homes})
    ask(site, AGENT, {"kind": home["kind"].lower(), "address": home["address"]}, start,
        _open(home) + [{"op": "reach", "sel": "[data-home-agent]"}], home["agent"], name_check(home["agent"], agents),
        distinct(agents, home["agent"]), "The agent on the home's page")
