"""Skills that change server-side state: cart and checkout, record CRUD, constrained booking, store
locator, drag and reorder. Their checks read the episode's state, not the page."""
from __future__ import annotations

from functools import partial

from weblica.synth import images
from weblica.synth.checks import answer_text, state_count, state_is
from weblica.synth.data import CITIES, distance, make_offers, make_people, make_stores
from weblica.synth.intents import composed as chains
from weblica.synth.intents import say
from weblica.synth.intents import stateful as asks
from weblica.synth.intents.difficulty import planned
from weblica.synth.intents import article, the_name
from weblica.synth.site import SiteBuilder, TaskDraft
from weblica.synth.skills.common import (catalog_shell, distinct, name_check, open_item, others, price_check,
                                         shown_money, skill, unique_extreme)

MAXIMAL_EXTRAS = 3  # other items added, other slots booked, in a "do everything" negative


def _add_to_cart(site: SiteBuilder, item: dict, qty: int) -> list[dict]:
    steps = open_item(site, item)
    if qty != 1:
        steps.append({"op": "fill", "sel": "#qty", "text": str(qty)})
    return steps + [{"op": "click", "sel": "#add-to-cart"}, {"op": "reach", "sel": "[data-added]"}]


@skill("checkout")
def checkout(site: SiteBuilder) -> None:
    site.add_feature("cart")
    items = catalog_shell(site, search=False)
    site.add_state(cart={}, orders=[])
    site.page("/cart", "cart.html.j2", title="Cart", page_kind="cart")
    shipping = ["Standard", "Express", "Pick-up"]
    fields = [{"name": "name", "label": "Full name", "type": "text", "required": True},
              {"name": "street", "label": "Street", "type": "text", "required": True},
              {"name": "city", "label": "City", "type": "text", "required": True},
              {"name": "shipping", "label": "Shipping", "type": "radio", "options": shipping, "required": True},
              {"name": "payment", "label": "Payment", "type": "select", "options": ["Card", "Invoice", "PayPal"],
               "required": True}]
    site.page("/checkout", "form.html.j2", title="Checkout", heading="Checkout", fields=fields, api="/api/orders",
              redirect="/order-confirmed", form_id="checkout-form", submit_label="Place order", page_kind="checkout")
    site.page("/order-confirmed", "message.html.j2", title="Order placed", heading="Thank you for your order!",
              text="Your order is confirmed.", page_kind="order-done")
    rng = site.rng
    people = make_people(rng, 6)

    def extras(*wanted: dict) -> list[dict]:
        """Every other item added too (a few of them): the "do everything" negative of a cart task."""
        return [step for other in [i for i in items if i not in wanted][:MAXIMAL_EXTRAS] for step in _add_to_cart(site, other, 1)]

    for item in rng.sample(items, 4):
        qty = rng.randint(1, 4)
        plan = _add_to_cart(site, item, qty)
        site.task(TaskDraft(
            **say(site, asks.ADD_TO_CART, qty=qty, item=item["name"]), start_path="/", plan=plan,
            checks=[state_is(f"cart.{item['id']}", qty, "numeric"), state_count("cart", 1)], difficulty=planned(plan),
            rubric=["The cart holds exactly the requested line"], maximal=plan + extras(item)))
    for _ in range(3):
        a, b = rng.sample(items, 2)
        plan = _add_to_cart(site, a, 1) + _add_to_cart(site, b, 2)
        site.task(TaskDraft(
            **say(site, asks.ADD_TWO_TO_CART, a=a["name"], b=b["name"]), start_path="/",
            plan=plan, difficulty=planned(plan), rubric=["Both lines are in the cart"],
            checks=[state_is(f"cart.{a['id']}", 1, "numeric"), state_is(f"cart.{b['id']}", 2, "numeric"),
                    state_count("cart", 2)], maximal=plan + extras(a, b)))
    def order(entity: dict, person: dict, which, **slots: str) -> None:
        """Add one of the item, check out to the person with a drawn shipping and payment: one order,
        exactly that line, that address and those choices."""
        ship, pay = rng.choice(shipping), rng.choice(["Card", "Invoice", "PayPal"])
        to_checkout = [
            {"op": "click", "sel": "#cart-link"}, {"op": "click", "sel": "#to-checkout"},
            {"op": "fill", "sel": "#f-name", "text": person["name"]}, {"op": "fill", "sel": "#f-street", "text": person["street"]},
            {"op": "fill", "sel": "#f-city", "text": person["city"]},
            {"op": "click", "sel": f"#shipping-{shipping.index(ship) + 1}"},
            {"op": "select", "sel": "#f-payment", "value": pay}, {"op": "click", "sel": "#submit"}]
        plan = _add_to_cart(site, entity, 1) + to_checkout
        delivery = "pick-up" if ship == "Pick-up" else f"{ship.lower()} shipping"
        site.task(TaskDraft(
            **say(site, which, name=person["name"], street=person["street"], city=person["city"], delivery=delivery,
                  pay=pay if pay == "PayPal" else pay.lower(), **slots), start_path="/", plan=plan, difficulty=planned(plan),
            rubric=["One order with the item, the address, shipping and payment"],
            checks=[state_count("orders", 1), state_count("orders.0.items", 1),
                    state_is(f"orders.0.items.{entity['id']}", 1, "numeric"),
                    state_is("orders.0.name", person["name"]), state_is("orders.0.street", person["street"]),
                    state_is("orders.0.city", person["city"]),
                    state_is("orders.0.shipping", ship), state_is("orders.0.payment", pay)],
            maximal=extras(entity) + plan))

    for person in people[:5]:
        item = rng.choice(items)
        order(item, person, asks.BUY_AND_SHIP, item=item["name"])
    # composed: choose by comparing (the cheapest of a type, the best rated of an offerer), then act
    kinds = sorted({i["kind"] for i in items})
    for kind in rng.sample(kinds, len(kinds))[:2]:
        low = unique_extreme([i for i in items if i["kind"] == kind], "price")
        if low is None or sum(i["kind"] == kind for i in items) < 2:
            continue
        qty = rng.randint(2, 3)
        plan = _add_to_cart(site, low, qty)
        site.task(TaskDraft(
            **say(site, chains.CHEAPEST_KIND_TO_CART, kind=kind, qty=qty), start_path="/", plan=plan,
            checks=[state_is(f"cart.{low['id']}", qty, "numeric"), state_count("cart", 1)], difficulty=planned(plan),
            rubric=["The cart holds exactly the cheapest entity of the type, in the quantity asked"],
            maximal=plan + extras(low)))
    makers = sorted({i["maker"] for i in items})
    for maker in rng.sample(makers, len(makers)):
        group = [i for i in items if i["maker"] == maker]
        best = unique_extreme(group, "rating", highest=True) if len(group) >= 2 and site.labels["rates"] else None
        if best is not None:
            order(best, people[5], chains.BUY_BEST_RATED_OF_MAKER, maker=maker)
            break


@skill("crud")
def crud(site: SiteBuilder) -> None:
    items = catalog_shell(site, search=False, list_page=False, home_items=4)
    rng = site.rng
    people = make_people(rng, 6)
    verbs = list(site.cat.get("todo", ["Restock", "Review", "Photograph", "Reprice", "Order", "Inspect"]))
    records = [{"id": f"r{i + 1}", "title": f"{verbs[i % len(verbs)]} {item['name']}", "done": False,
                "note": f"for {people[i % len(people)]['first']}"} for i, item in enumerate(items[:8])]
    site.add_state(records=records)
    site.add_data(records=records)
    site.add_nav(("To-do", "/todo"))
    site.page("/todo", "records.html.j2", title="To-do", heading="Team to-do list", page_kind="records")
    ids = [r["id"] for r in records]
    go = [{"op": "click", "sel": "a[href='/todo']"}]

    def untouched(*changed: str) -> list:
        """Every other entry is still open: a task that toggles everything besides fails."""
        return [state_is(f"records_by_id.{i}.done", False) for i in ids if i not in changed]

    def toggle_others(*changed: str) -> list[dict]:
        return [{"op": "click", "sel": f"[data-toggle={i}]"} for i in ids if i not in changed]

    for record in rng.sample(records, 3):
        plan = go + [{"op": "click", "sel": f"[data-delete={record['id']}]"}]
        site.task(TaskDraft(
            **say(site, asks.DELETE_TODO, title=record["title"]), start_path="/", difficulty=planned(plan), plan=plan,
            checks=[state_is("records_ids", [i for i in ids if i != record["id"]], "set")] + untouched(record["id"]),
            rubric=["Only that entry is gone"], maximal=plan + toggle_others(record["id"])))
    for record in rng.sample(records, 3):
        plan = go + [{"op": "click", "sel": f"[data-toggle={record['id']}]"}]
        site.task(TaskDraft(
            **say(site, asks.COMPLETE_TODO, title=record["title"]), start_path="/", difficulty=planned(plan), plan=plan,
            checks=[state_is(f"records_by_id.{record['id']}.done", True), state_count("records", len(records))]
            + untouched(record["id"]), rubric=["The entry is marked done"], maximal=plan + toggle_others(record["id"])))
    for record in rng.sample(records, 3):
        new = f"{rng.choice(verbs)} {rng.choice(items)['name']} by {rng.choice(['Friday', 'Monday', 'noon', 'tonight'])}"
        plan = go + [{"op": "click", "sel": f"[data-edit={record['id']}]"},
                     {"op": "fill", "sel": f"[data-record={record['id']}] [data-edit-input]", "text": new},
                     {"op": "click", "sel": f"[data-save={record['id']}]"}]
        site.task(TaskDraft(
            **say(site, asks.RENAME_TODO, old=record["title"], new=new), start_path="/", difficulty=planned(plan),
            plan=plan, checks=[state_is(f"records_by_id.{record['id']}.title", new), state_count("records", len(records))]
            + untouched(), rubric=["The entry has the new title"], maximal=plan + toggle_others()))
    for _ in range(3):
        title = f"Call {rng.choice(people)['name']} about {the_name(site, rng.choice(items)['name'])}"
        done_one = rng.choice(records)
        plan = go + [{"op": "fill", "sel": "#new-title", "text": title}, {"op": "click", "sel": "#add-button"},
                     {"op": "click", "sel": f"[data-toggle={done_one['id']}]"}]
        site.task(TaskDraft(
            **say(site, asks.ADD_AND_COMPLETE_TODO, title=title, done=done_one["title"]), start_path="/",
            difficulty=planned(plan), plan=plan,
            checks=[state_count("records", len(records) + 1), state_is("records.-1.title", title),
                    state_is("records.-1.done", False), state_is(f"records_by_id.{done_one['id']}.done", True)]
            + untouched(done_one["id"]), rubric=["Both changes are saved"],
            maximal=go + [{"op": "fill", "sel": "#new-title", "text": title}, {"op": "click", "sel": "#add-button"},
                          {"op": "click", "sel": f"[data-toggle={done_one['id']}]"}] + toggle_others(done_one["id"])))


@skill("booking")
def booking(site: SiteBuilder) -> None:
    catalog_shell(site, search=False, list_page=False, home_items=4)
    rng = site.rng
    offers = make_offers(site.spec, rng, 24)
    site.add_data(offers=offers)
    site.add_state(bookings=[])
    days = sorted({o["day"] for o in offers})
    site.add_nav(("Book", "/book"))
    site.page("/book", "offers.html.j2", title="Book", heading=site.labels["book"],
              intro=f"Each slot shows its {site.labels['price']}. Sold-out slots cannot be booked.",
              days=[(d, [o for o in offers if o["day"] == d]) for d in days], page_kind="offers")
    site.page("/booked", "message.html.j2", title="Booked", heading="Booking confirmed", text="See you there!",
              page_kind="done")
    go = [{"op": "click", "sel": "a[href='/book']"}]
    bookable = [o for o in offers if o["seats"] > 0]

    def book(offer: dict | None, asked: dict) -> None:
        if offer is None:  # a tie: no single slot meets the constraints
            return
        plan = go + [{"op": "click", "sel": f"[data-book={offer['id']}]"}]
        more = [step for other in [o for o in bookable if o is not offer][:MAXIMAL_EXTRAS]
                for step in [{"op": "goto", "url": site.url("/book")}, {"op": "click", "sel": f"[data-book={other['id']}]"}]]
        site.task(TaskDraft(
            **asked, start_path="/", difficulty=planned(plan), plan=plan,
            checks=[state_count("bookings", 1), state_is("bookings.0.offer", offer["id"])],
            rubric=["Exactly one booking, of the slot meeting every constraint"], maximal=plan + more))

    made = 0
    for day in rng.sample(days, len(days)):
        group = [o for o in offers if o["day"] == day and o["seats"] > 0]
        if len(group) < 2:
            continue
        label = site.date(day)
        book(unique_extreme(group, "price"), say(site, asks.BOOK_CHEAPEST_ON, day=label))
        book(unique_extreme(group, "time"), say(site, asks.BOOK_EARLIEST_ON, day=label))
        noon = [o for o in group if o["time"] >= "12:00"]
        if noon:
            book(unique_extreme(noon, "price"), say(site, asks.BOOK_CHEAPEST_FROM, day=label, time="12:00"))
        made += 1
        if made == 3:
            break
    available = [o for o in offers if o["seats"] > 0]
    before = [o for o in available if o["time"] < "10:00"]
    if before:
        book(unique_extreme(before, "price"), say(site, asks.BOOK_CHEAPEST_BEFORE, time="10:00"))
    prices = [o["price"] for o in offers]
    for offer in rng.sample(available, 3):
        if sum((o["day"], o["time"]) == (offer["day"], offer["time"]) for o in offers) > 1:
            continue  # two slots at that time: the question names neither
        plan = go + [{"op": "reach", "sel": f"[data-offer={offer['id']}]"}, {"op": "done", "answer": site.money(offer["price"])}]
        site.task(TaskDraft(
            **say(site, asks.SLOT_PRICE, time=offer["time"], day=site.date(offer["day"])), start_path="/", plan=plan,
            checks=[price_check(site, offer["price"], prices)], difficulty=planned(plan), rubric=["The price from the schedule"],
            wrong_answers=shown_money(site, distinct(prices, offer["price"]))))


@skill("store-locator")
def store_locator(site: SiteBuilder) -> None:
    catalog_shell(site, search=False, list_page=False, home_items=4)
    rng = site.rng
    stores = make_stores(site.spec, rng, 9)
    home = (50, 30)
    while any((s["x"] - home[0]) ** 2 + (s["y"] - home[1]) ** 2 < 16 for s in stores):
        home = (rng.randint(20, 80), rng.randint(15, 45))
    for s in stores:
        s["distance"] = distance(s, home)
    site.add_data(stores=stores, home=list(home))
    site.add_file("img/map.png", partial(images.map_image, stores, home, site.spec.style.palette))
    site.add_state(mystore=None)
    places = site.labels["places"].capitalize()
    site.add_nav((places, "/stores"))
    site.page("/stores", "stores.html.j2", title=places, heading=f"Find {article(site.labels['place'])}", stores=stores,
              home=home, page_kind="stores")
    go = [{"op": "click", "sel": "a[href='/stores']"}]
    names = [s["name"] for s in stores]

    def choose(store: dict) -> list[dict]:
        return [{"op": "click", "sel": f"[data-pin={store['id']}]"}, {"op": "click", "sel": f"[data-choose={store['id']}]"}]

    ranked = sorted(stores, key=lambda s: s["distance"])
    if ranked[0]["distance"] != ranked[1]["distance"]:
        near = ranked[0]
        plan = go + choose(near)
        site.task(TaskDraft(
            **say(site, asks.SET_NEAREST_STORE), start_path="/", difficulty=planned(plan),
            plan=plan, checks=[state_is("mystore.id", near["id"])], rubric=["The nearest store is chosen"],
            maximal=go + choose(near) + [step for o in ranked[1:1 + MAXIMAL_EXTRAS] for step in choose(o)]))
        plan = go + [{"op": "click", "sel": f"[data-pin={near['id']}]"}, {"op": "done", "answer": near["name"]}]
        site.task(TaskDraft(
            **say(site, asks.NEAREST_STORE), start_path="/", difficulty=planned(plan),
            plan=plan, checks=[name_check(near["name"], names)], rubric=["The nearest store"],
            wrong_answers=others(names, near["name"])))
    districts = [s["district"] for s in stores]

    def card_facts(s: dict) -> list[str]:
        """The other facts the open store card shows (its card is the only one in view): an answer that
        copies the card asserts them too."""
        return [s["district"], f"{s['distance']} km", s["opens"], s["closes"], s["phone"]] + list(s["services"])

    # a district with two stores names neither of them
    in_own_district = [s for s in stores if districts.count(s["district"]) == 1]
    for s in rng.sample(in_own_district, min(4, len(in_own_district))):
        plan = go + choose(s)
        # "do everything": every other store chosen after it (the last choice is the one that stays)
        more = [step for other in [o for o in stores if o is not s][:MAXIMAL_EXTRAS] for step in choose(other)]
        site.task(TaskDraft(
            **say(site, asks.SET_STORE_IN, district=s["district"]), start_path="/", difficulty=planned(plan),
            plan=plan, checks=[state_is("mystore.id", s["id"])], rubric=["The requested store is chosen"],
            maximal=plan + more))
    for s in rng.sample(stores, 3):
        plan = go + [{"op": "click", "sel": f"[data-pin={s['id']}]"}, {"op": "done", "answer": s["phone"]}]
        site.task(TaskDraft(
            **say(site, asks.STORE_PHONE, store=s["name"]), start_path="/", difficulty=planned(plan), plan=plan,
            checks=[answer_text(s["phone"], distinct([o["phone"] for o in stores] + card_facts(s), s["phone"]))],
            rubric=["The phone number from the store card"], wrong_answers=[o["phone"] for o in others(stores, s)]))
    closing = [o["closes"] for o in stores]
    for s in rng.sample(in_own_district, min(3, len(in_own_district))):
        plan = go + [{"op": "click", "sel": f"[data-pin={s['id']}]"}, {"op": "done", "answer": s["closes"]}]
        site.task(TaskDraft(
            **say(site, asks.STORE_CLOSES, district=s["district"]), start_path="/", difficulty=planned(plan), plan=plan,
            checks=[answer_text(s["closes"], distinct(closing + ["18:00", "19:00", "20:00", "21:00", "22:00"]
                                                      + card_facts(s), s["closes"]))],
            rubric=["The closing time from the store card"],
            wrong_answers=[c for c in ["18:00", "19:00", "20:00", "21:00", "22:00"] if c != s["closes"]][:3]))
    if ranked[0]["distance"] != ranked[1]["distance"]:  # composed: locate the nearest store, then read its card
        near = ranked[0]
        plan = go + [{"op": "click", "sel": f"[data-pin={near['id']}]"}, {"op": "done", "answer": near["phone"]}]
        site.task(TaskDraft(
            **say(site, chains.NEAREST_STORE_PHONE), start_path="/", difficulty=planned(plan), plan=plan,
            checks=[answer_text(near["phone"], distinct([o["phone"] for o in stores] + card_facts(near), near["phone"]))],
            rubric=["The phone number of the nearest store"], wrong_answers=[o["phone"] for o in others(stores, near)]))


def _moves_to(order: list[str], target: list[str]) -> list[dict]:
    """Drag steps turning `order` into `target`: for each position, drag the right entry before the one there."""
    order, steps = list(order), []
    for pos, wanted in enumerate(target):
        if order[pos] == wanted:
            continue
        steps.append({"op": "drag", "sel": f"[data-id={wanted}] [data-handle]", "to": f"[data-id={order[pos]}]",
                      "where": "before"})
        order.remove(wanted)
        order.insert(pos, wanted)
    return steps


@skill("drag-reorder")
def drag_reorder(site: SiteBuilder) -> None:
    items = catalog_shell(site, search=False, list_page=False, home_items=4)
    rng = site.rng
    entries = [{"id": f"e{i + 1}", "name": item["name"], "price": item["price"]} for i, item in enumerate(rng.sample(items, 6))]
    order = [e["id"] for e in entries]
    site.add_data(entries=entries)
    site.add_state(order={"ids": order})
    saved = site.labels["saved"]
    site.add_nav((saved, "/wishlist"))
    site.page("/wishlist", "reorder.html.j2", title=saved, heading=f"Your {saved[0].lower() + saved[1:]}",
              entries=entries, intro="Drag the handles to put your favourites first, then save.", page_kind="reorder")
    go = [{"op": "click", "sel": "a[href='/wishlist']"}]
    by_id = {e["id"]: e for e in entries}

    def task(target: list[str], asked: dict, positions: list[int]) -> None:
        """The whole saved order is checked, not only the `positions` the instruction names: the other
        entries keep their relative order. The "do everything" negative also swaps two entries the
        instruction does not name (a check of `positions` alone would accept it)."""
        # the plan scrolls the list into view once, so both ends of a drag are on screen together
        save = [{"op": "click", "sel": "#save-order"}, {"op": "reach", "sel": "[data-saved]"}]
        plan = go + [{"op": "reach", "sel": "#save-order"}, {"op": "reach", "sel": "[data-sortable]"}] \
            + _moves_to(order, target) + save
        free = [p for p in range(len(target)) if p not in positions]
        maximal: list[dict] = []
        if len(free) >= 2:
            swapped = list(target)
            swapped[free[-2]], swapped[free[-1]] = swapped[free[-1]], swapped[free[-2]]
            maximal = plan + _moves_to(target, swapped) + save
        site.task(TaskDraft(**asked, start_path="/", plan=plan, difficulty=planned(plan),
                            checks=[state_count("order.ids", len(target))]
                            + [state_is(f"order.ids.{p}", target[p]) for p in range(len(target))],
                            rubric=["The saved order is as requested"], maximal=maximal))

    for e in rng.sample(entries[1:], 3):
        target = [e["id"]] + [i for i in order if i != e["id"]]
        task(target, say(site, asks.MOVE_TO_TOP, item=e["name"]), [0])
    for e in rng.sample(entries[:-1], 3):
        target = [i for i in order if i != e["id"]] + [e["id"]]
        task(target, say(site, asks.MOVE_TO_BOTTOM, item=e["name"]), [len(order) - 1])
    for _ in range(3):
        a, b = rng.sample(entries, 2)
        target = [i for i in order if i != a["id"]]
        target.insert(target.index(b["id"]), a["id"])
        if target == order:
            continue
        task(target, say(site, asks.PLACE_ABOVE, a=a["name"], b=b["name"]), [target.index(a["id"]), target.index(b["id"])])
    by_price = sorted(order, key=lambda i: by_id[i]["price"])
    every = list(range(len(order)))
    price = site.labels["price"]
    task(by_price, say(site, asks.SORT_WISHLIST, order=f"from the lowest {price} to the highest"), every)
    by_price_desc = list(reversed(by_price))
    task(by_price_desc, say(site, asks.SORT_WISHLIST, order=f"from the highest {price} to the lowest"), every)
    by_name = sorted(order, key=lambda i: by_id[i]["name"])
    task(by_name, say(site, asks.SORT_WISHLIST, order="alphabetically by name"), every)
    cheapest = unique_extreme(entries, "price")
    if cheapest is not None and cheapest["id"] != order[0]:  # composed: compare the prices, then reorder
        target = [cheapest["id"]] + [i for i in order if i != cheapest["id"]]
        task(target, say(site, chains.CHEAPEST_TO_TOP), [0])
