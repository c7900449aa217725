"""Restaurants and food delivery: a menu in sections, dish pages with sizes and extras (the price a
choice adds is listed), an order basket (server-side), delivery windows, and the order placed with a
delivery window and address (server-side)."""
from __future__ import annotations

import datetime as dt
from typing import Any

from weblica.synth.checks import answer_text
from weblica.synth.data import BASE_DATE, price_scale, slugify
from weblica.synth.fake import home_city
from weblica.synth.fake import names as name_source
from weblica.synth.fake import people as fake_people
from weblica.synth.genres.kit import Plan, act, amounts, ask, day_text, fill, fill_plan, record_checks
from weblica.synth.genres.restaurants.intents import BOOK_TABLE, CHEAPEST, COMBO_PRICE, EARLIEST_SLOT, ORDER
from weblica.synth.site import SiteBuilder
from weblica.synth.skills.common import distinct, name_check, price_check, unique_extreme

# section -> (dishes, what a dish is named after, extras that go with it)
SECTIONS = {"Starters": (["Soup", "Bruschetta", "Spring Rolls", "Salad", "Dumplings"],
                         ["Tomato", "Garlic", "Chili", "Mushroom", "Herb", "Lemon"],
                         ["Bread", "Parmesan", "Chili oil", "Croutons", "Dipping sauce"]),
            "Mains": (["Curry", "Pizza", "Burger", "Risotto", "Noodle Bowl", "Tacos"],
                      ["Smoked", "Spicy", "Garlic", "Mushroom", "Truffle", "Coconut", "Chicken"],
                      ["Cheese", "Avocado", "Bacon", "Fried egg", "Jalapeños", "Fries"]),
            "Desserts": (["Cheesecake", "Tiramisu", "Brownie", "Sorbet", "Panna Cotta"],
                         ["Lemon", "Chocolate", "Vanilla", "Raspberry", "Honey", "Salted Caramel"],
                         ["Whipped cream", "Ice cream", "Berries", "Chocolate sauce", "Nuts"])}
SIZES = ["Regular", "Large", "Family"]


def _menu(site: SiteBuilder) -> list[dict[str, Any]]:
    rng = site.rng
    dishes: list[dict[str, Any]] = []
    prices = amounts(rng, 4, 30, site.fmt["decimals"], 4 * len(SECTIONS))
    scale = price_scale(site.fmt)
    names: set[str] = set()
    for section, (bases, flavours, section_extras) in SECTIONS.items():
        for base in rng.sample(bases, 4):
            name = f"{rng.choice(flavours)} {base}"
            while name in names:
                name = f"{rng.choice(flavours)} {base}"
            names.add(name)
            price = prices.pop() * scale
            steps = sorted(rng.sample(range(1, 8), 2))
            sizes = [{"name": SIZES[0], "extra": 0.0}] + [{"name": s, "extra": float(k * scale)}
                                                          for s, k in zip(SIZES[1:], steps)]
            extras = [{"name": e, "slug": slugify(e).replace("-", "_"), "price": float(p * scale)}
                      for e, p in zip(rng.sample(section_extras, 3), rng.sample(range(1, 5), 3))]
            for s in sizes:
                s["extra_text"] = site.money(s["extra"])
            for e in extras:
                e["price_text"] = site.money(e["price"])
            dishes.append({"id": f"d{len(dishes) + 1}", "name": name, "slug": slugify(name), "section": section,
                           "price": price, "price_text": site.money(price), "sizes": sizes, "extras": extras,
                           "blurb": f"{name} made fresh to order."})
    return dishes


def _dish_fields(dish: dict[str, Any]) -> list[dict[str, Any]]:
    return ([{"name": "size", "label": "Size", "type": "radio", "options": [s["name"] for s in dish["sizes"]],
              "required": True}]
            + [{"name": f"extra_{e['slug']}", "label": f"Add {e['name']} (+{e['price_text']})", "type": "checkbox"}
               for e in dish["extras"]]
            + [{"name": "qty", "label": "Quantity", "type": "number", "min": 1, "max": 9, "value": 1}])


ORDER_FIELDS = [{"name": "slot", "label": "Delivery window", "type": "select", "required": True},
                {"name": "address", "label": "Delivery address", "type": "text", "required": True},
                {"name": "phone", "label": "Phone", "type": "tel", "required": True},
                {"name": "notes", "label": "Note for the rider (optional)", "type": "textarea"}]


WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
TABLE_TIMES = ["12:00", "12:30", "13:00", "18:00", "18:30", "19:00", "19:30", "20:00", "20:30", "21:00"]
TAGLINES = ["Seasonal cooking in the heart of {town}", "A neighbourhood kitchen in {town} since {year}",
            "Fresh plates, good wine and a warm welcome in {town}", "{town}'s favourite table for friends and family"]


def _table_fields(site: SiteBuilder) -> list[dict[str, Any]]:
    """The reservation form: a day of the coming week, a time, the party and who books."""
    days = [(BASE_DATE + dt.timedelta(days=k)).isoformat() for k in range(1, 8)]
    return [{"name": "day", "label": "Date", "type": "select", "options": days,
             "labels": {d: site.date(d) for d in days}, "required": True},
            {"name": "time", "label": "Time", "type": "select", "options": TABLE_TIMES, "required": True},
            {"name": "party", "label": "Guests", "type": "select", "options": [str(n) for n in range(1, 9)],
             "required": True},
            {"name": "guest", "label": "Name for the booking", "type": "text", "required": True},
            {"name": "guest_phone", "label": "Phone", "type": "tel", "required": True}]


def _home(site: SiteBuilder, dishes: list[dict[str, Any]], fields: list[dict[str, Any]]) -> None:
    """A restaurant's own start page: its name, a tagline and a table booking first, then a taste of the
    menu with prices, opening hours and where to find it (no "Shop by type", no ratings)."""
    rng = site.rng
    town = home_city(site)
    closed = rng.choice(["Monday", "Tuesday", "Sunday"])
    hours = [(d, "Closed" if d == closed else ("12:00–15:00, 18:00–22:30" if d in ("Friday", "Saturday")
                                                else "12:00–14:30, 18:00–22:00")) for d in WEEKDAYS]
    street = f"{rng.randint(2, 180)} {name_source(site, 'restaurant-street').fill('{street_name}')}"
    picks = [next(d for d in dishes if d["section"] == s) for s in SECTIONS]
    kitchen = [p["name"] for p in fake_people(site, "kitchen", 4)]
    site.add_data(restaurant={"street": street.split(" ", 1)[1], "town": town, "chef": kitchen[0], "team": kitchen[1:]})
    # the widget asks day, time and party and hands them to the booking page in the query (none required:
    # a person may pick them there)
    widget = [{**f, "required": False} for f in fields[:3]]
    site.page("/", "restaurants/home.html.j2", title="Book a table", fields=widget, town=town, kitchen=kitchen,
              tagline=rng.choice(TAGLINES).format(town=town, year=rng.randint(1978, 2019)), hours=hours,
              street=street, picks=picks + [d for d in dishes if d not in picks][:3], page_kind="home")
    site.page("/reservations", "restaurants/reserve.html.j2", title="Book a table", heading="Book a table",
              fields=fields, page_kind="table-booking")
    site.page("/reservations/booked", "message.html.j2", title="Table booked", heading="Your table is booked",
              text="We have sent the details by text message. See you soon!", back="/", page_kind="done")


def build_flows(site: SiteBuilder) -> None:
    rng = site.rng
    dishes = _menu(site)
    times = [f"{h}:{m:02d}" for h in range(17, 22) for m in (0, 30)]
    slots = [{"time": t, "full": i == 0 or (i < len(times) - 3 and rng.random() < 0.4)} for i, t in enumerate(times)]
    site.add_data(dishes=dishes, delivery_slots=slots)
    site.add_state(basket=[], orders=[], table_bookings=[])
    table_fields = _table_fields(site)
    _home(site, dishes, table_fields)
    order_fields = [dict(ORDER_FIELDS[0], options=[s["time"] for s in slots if not s["full"]])] + ORDER_FIELDS[1:]
    site.add_nav(("Menu", "/menu"), ("Delivery", "/delivery"), ("Your order", "/basket"))
    sections = [(s, [d for d in dishes if d["section"] == s]) for s in SECTIONS]
    site.page("/menu", "restaurants/menu.html.j2", title="Menu", heading="Our menu", sections=sections,
              page_kind="menu")
    for dish in dishes:
        site.page(f"/dishes/{dish['slug']}", "restaurants/dish.html.j2", title=dish["name"], dish=dish,
                  fields=_dish_fields(dish), page_kind="dish")
    site.page("/basket", "restaurants/basket.html.j2", title="Your order", heading="Your order",
              fields=order_fields, page_kind="basket")
    site.page("/delivery", "restaurants/delivery.html.j2", title="Delivery times", heading="Delivery times",
              slots=slots, page_kind="delivery-slots")
    site.page("/order/placed", "message.html.j2", title="Order placed", heading="Order placed",
              text="Your food is on its way in the window you chose.", back="/menu", page_kind="done")
    _tasks(site, dishes, slots, order_fields)
    _book_table(site, table_fields)


def _open(dish: dict[str, Any]) -> Plan:
    return [{"op": "click", "sel": f"[data-dish={dish['id']}] a"}]


def _tasks(site: SiteBuilder, dishes: list[dict[str, Any]], slots: list[dict[str, Any]],
           order_fields: list[dict[str, Any]]) -> None:
    rng = site.rng
    start = "/menu"  # the flow's own page: a site's nav may be folded into a menu
    dish = rng.choice(dishes)
    size = rng.choice(dish["sizes"][1:])
    extra = rng.choice(dish["extras"])
    open_slots = [s["time"] for s in slots if not s["full"]]
    person = fake_people(site, "diners", 1)[0]
    values = {"size": size["name"], f"extra_{extra['slug']}": True, "qty": rng.randint(2, 4)}
    delivery = {"slot": rng.choice(open_slots[1:]), "address": f"{rng.randint(2, 180)} {name_source(site, 'delivery-street').fill('{street_name}')}",
                "phone": person["phone"]}
    fields = _dish_fields(dish)
    plan = _open(dish) + fill_plan(site, fields, values) + [{"op": "click", "sel": "#add-dish"}] + \
        fill_plan(site, order_fields, delivery) + [{"op": "click", "sel": "#place-order"}]
    other = next(d for d in dishes if d is not dish)
    maximal = _open(dish) + fill_plan(site, fields, values) + [{"op": "click", "sel": "#add-dish"}] + \
        [{"op": "goto", "url": site.url("/menu")}] + _open(other) + [{"op": "click", "sel": "#size-1"}, {"op": "click", "sel": "#add-dish"}] + \
        fill_plan(site, order_fields, delivery) + [{"op": "click", "sel": "#place-order"}]
    act(site, ORDER, {"qty": values["qty"], "size": size["name"].lower(), "dish": dish["name"],
                      "extra": extra["name"].lower(), **delivery}, start, plan,
        record_checks("basket", fields, values, {"dish": dish["id"]}) + record_checks("orders", order_fields, delivery),
        "One basket line of that dish, size, extra and quantity, and one order for that window and address",
        maximal=maximal)

    dish = rng.choice(dishes)
    size, extra = rng.choice(dish["sizes"][1:]), rng.choice(dish["extras"])
    gold = dish["price"] + size["extra"] + extra["price"]
    wrong = [dish["price"], dish["price"] + size["extra"], dish["price"] + extra["price"],
             dish["price"] + sum(e["price"] for e in dish["extras"]) + size["extra"]]
    ask(site, COMBO_PRICE, {"size": size["name"].lower(), "dish": dish["name"], "extra": extra["name"].lower()},
        start, _open(dish) + [{"op": "reach", "sel": "[data-prices]"}], site.money(gold),
        price_check(site, gold, wrong), [site.money(w) for w in distinct(wrong, gold)], "Base price plus the size's and the extra's surcharges")

    for section in rng.sample(list(SECTIONS), len(SECTIONS)):
        there = [d for d in dishes if d["section"] == section]
        best = unique_extreme(there, "price")
        if best is not None and unique_extreme(dishes, "price") is not best:
            names = [d["name"] for d in dishes]
            ask(site, CHEAPEST, {"section": section.lower()}, start,
                [{"op": "reach", "sel": f"[data-section-menu={section.lower()}]"}],
                best["name"], name_check(best["name"], names), distinct([d["name"] for d in there], best["name"]),
                "The lowest-priced dish of that section")
            break

    full_before = [s["time"] for s in slots[:slots.index(next(s for s in slots if not s["full"]))]]
    if full_before:  # only a question when a full window comes first
        gold = open_slots[0]
        ask(site, EARLIEST_SLOT, {}, start, [{"op": "click", "sel": "a[href='/delivery']"},
                                            {"op": "reach", "sel": "[data-slots]"}], gold,
            answer_text(gold, [s["time"] for s in slots if s["time"] != gold]), full_before + open_slots[1:2],
            "The first window not marked full")


def _book_table(site: SiteBuilder, fields: list[dict[str, Any]]) -> None:
    """From the start page: one table booked for that day, time, party and name (one record, no other)."""
    rng = site.rng
    guest = fake_people(site, "guests", 1)[0]
    values = {"day": rng.choice(fields[0]["options"]), "time": rng.choice(TABLE_TIMES),
              "party": str(rng.randint(2, 8)), "guest": guest["name"], "guest_phone": guest["phone"]}
    # day, time and party in the start page's widget (native selects), the rest on the booking page, which the
    # query prefilled (genres/flows.js prefill)
    widget = {k: values[k] for k in ("day", "time", "party")}
    plan = [fill(f, widget[f["name"]], "native") for f in fields[:3]] + [{"op": "click", "sel": "#find-table"}] + \
        fill_plan(site, fields[3:], values) + [{"op": "click", "sel": "#book-table"}]
    other = {**values, "time": next(t for t in TABLE_TIMES if t != values["time"])}
    maximal = plan + [{"op": "goto", "url": site.url("/reservations")}] + fill_plan(site, fields, other) + \
        [{"op": "click", "sel": "#book-table"}]
    act(site, BOOK_TABLE, {"party": values["party"], "day": f"{WEEKDAYS[dt.date.fromisoformat(values['day']).weekday()]} "
                                                          f"{day_text(values['day'])}", "time": values["time"],
                           "name": guest["name"], "phone": guest["phone"]}, "/", plan,
        record_checks("table_bookings", fields, values), "One table booked for that day, time, party and name",
        maximal=maximal)
