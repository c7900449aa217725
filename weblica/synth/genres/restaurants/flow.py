"""Restaurants and food delivery: a menu in sections, dish pages with sizes and extras (the price a
choice adds is listed), an order basket (server-side), delivery windows, and the order placed with a
delivery window and address (server-side)."""
from __future__ import annotations

from typing import Any

from weblica.synth.checks import answer_text
from weblica.synth.data import STREETS, make_people, price_scale, slugify
from weblica.synth.genres.kit import Plan, act, amounts, ask, fill_plan, record_checks
from weblica.synth.genres.restaurants.intents import CHEAPEST, COMBO_PRICE, EARLIEST_SLOT, ORDER
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


def build_flows(site: SiteBuilder) -> None:
    rng = site.rng
    dishes = _menu(site)
    times = [f"{h}:{m:02d}" for h in range(17, 22) for m in (0, 30)]
    slots = [{"time": t, "full": i == 0 or (i < len(times) - 3 and rng.random() < 0.4)} for i, t in enumerate(times)]
    site.add_data(dishes=dishes, delivery_slots=slots)
    site.add_state(basket=[], orders=[])
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
    person = make_people(rng, 1)[0]
    values = {"size": size["name"], f"extra_{extra['slug']}": True, "qty": rng.randint(2, 4)}
    delivery = {"slot": rng.choice(open_slots[1:]), "address": f"{rng.randint(2, 180)} {rng.choice(STREETS)}",
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
