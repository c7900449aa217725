"""Travel, hotels: search by destination, check-in and check-out dates and guests -> results filtered by
price and stars and sorted by price, rating or stars -> a hotel's page with its room types and their
rates (refundable or not, breakfast or room only, the cancellation policy) -> booking form -> a booking
stored server-side (the server refuses an unknown rate, a check-out not after the check-in and more
guests than the room sleeps).
travel.py builds the flights of the same sites and calls `hotels`."""
from __future__ import annotations

import datetime as dt
from typing import Any

from weblica.env.task import Check
from weblica.synth.checks import answer_count
from weblica.synth.data import BASE_DATE, STREETS, make_people, slugify
from weblica.synth.genres.kit import MAXIMAL_EXTRAS, Plan, act, amounts, ask, day_text, fill_plan, record_checks
from weblica.synth.intents import intent
from weblica.synth.site import SiteBuilder
from weblica.synth.skills.common import distinct, name_check, unique_extreme

LANDMARKS = ["Plaza", "Quay", "Terrace", "Pavilion", "Boulevard", "Citadel", "Arcade", "Bastion", "Promenade",
             "Observatory", "Cathedral", "Opera", "Market", "Station", "Palace", "Lighthouse", "Gallery"]
SUFFIXES = ["Hotel", "Suites", "Residence", "House", "Lodge"]
# room type, how many it sleeps, its beds
ROOMS = [("Single Room", 1, "1 single bed"), ("Standard Double", 2, "1 double bed"), ("Twin Room", 2, "2 single beds"),
         ("Superior King", 2, "1 king-size bed"), ("Junior Suite", 3, "1 king-size bed and a sofa bed"),
         ("Family Room", 4, "1 double bed and 2 single beds")]
AMENITIES = ["Free Wi-Fi", "Pool", "Fitness room", "Parking", "Spa", "Airport shuttle", "Bar", "Restaurant",
             "Pets allowed", "Air conditioning", "24-hour front desk", "Rooftop terrace"]
NON_REFUNDABLE = "Non-refundable"
MONTH = BASE_DATE.isoformat()[:7]  # every stay lies in the base date's month (_stay): the calendar opens on it


def policy(days: int) -> str:
    return f"Free cancellation until {days} day{'s' if days > 1 else ''} before check-in"


BOOK_REFUNDABLE = intent(
    "hotel-book-cheapest-refundable",
    "Book the cheapest refundable room at {hotel} from {checkin} to {checkout} for {guests} guests; name {name}, email {email}.",
    "{name} ({email}) needs a room at {hotel}, checking in {checkin} and out {checkout}, {guests} guests. Book the cheapest one that can be cancelled for a refund.",
    "Reserve the least expensive refundable room for {guests} guests at {hotel}, {checkin} to {checkout}, under {name}, {email}.",
    "For {guests} guests staying at {hotel} from {checkin} until {checkout}, book the lowest-priced room with free cancellation. Guest: {name}, {email}.",
    "I want the cheapest cancellable room at {hotel} for {guests} guests, arriving {checkin} and leaving {checkout}. Book it for {name}, email {email}.")
BOOK_BEST = intent(
    "hotel-book-best-rated",
    "In {city}, book the cheapest refundable room at the best-rated hotel with at least {stars} stars, {checkin} to {checkout}, {guests} guests; name {name}, email {email}.",
    "Find the hotel in {city} with {stars} or more stars and the highest guest rating, and book its cheapest refundable room from {checkin} to {checkout} for {guests} guests ({name}, {email}).",
    "{name} wants the top-rated hotel of at least {stars} stars in {city}: book the lowest-priced refundable room there, {checkin} to {checkout}, {guests} guests, email {email}.",
    "Book a stay in {city} from {checkin} to {checkout} for {guests} guests at the highest-rated hotel rated {stars} stars or more, taking its cheapest refundable room. Guest {name}, {email}.",
    "Among {city} hotels with at least {stars} stars, pick the one guests rate best and reserve its cheapest refundable room for {guests} guests, {checkin} to {checkout}, for {name} ({email}).")
BOOK_BREAKFAST = intent(
    "hotel-book-cheapest-breakfast",
    "Book the cheapest room with breakfast included at {hotel} from {checkin} to {checkout} for {guests} guests; name {name}, email {email}.",
    "{name} ({email}) wants breakfast included: book the lowest-priced such room at {hotel}, {checkin} to {checkout}, {guests} guests.",
    "Reserve the least expensive room at {hotel} whose rate includes breakfast, for {guests} guests from {checkin} until {checkout}. Guest {name}, {email}.",
    "For {guests} guests at {hotel}, arriving {checkin} and leaving {checkout}, book the cheapest rate with breakfast. Name {name}, email {email}.",
    "I'd like breakfast every morning at {hotel}: book the cheapest room that includes it, {checkin} to {checkout}, {guests} guests, for {name} ({email}).")
BEST_UNDER = intent(
    "hotel-best-rated-under",
    "Which hotel in {city} has the highest guest rating among those with rooms under {price} a night?",
    "I can spend less than {price} a night in {city}. Which hotel there is rated best?",
    "What is the best-rated hotel in {city} with a room for under {price} per night?",
    "Name the highest-rated {city} hotel whose rooms start below {price} a night.",
    "Among hotels in {city} starting under {price} a night, which one do guests rate highest?")
POLICY = intent(
    "hotel-free-cancellation-days",
    "Until how many days before check-in can the {room} at {hotel} be cancelled free of charge?",
    "How many days before arrival do I have to cancel the {room} at {hotel} to pay nothing?",
    "The {room} at {hotel} can be cancelled for free. Up to how many days before check-in?",
    "What is the free-cancellation deadline of the {room} at {hotel}, in days before check-in?",
    "How late can I cancel a {room} at {hotel} without being charged? Give the days before check-in.")


def _hotels(site: SiteBuilder, cities: list[str]) -> list[dict[str, Any]]:
    rng = site.rng
    taken = [i["name"].lower() for i in site.data.get("items", [])]  # the catalog's own stays: no name like theirs
    decimals = site.fmt["decimals"]
    lo, hi = (4000, 60000) if decimals == 0 else (45, 480)
    hotels: list[dict[str, Any]] = []
    names: set[str] = set()
    for city in cities:
        ratings = rng.sample(range(60, 99), 7)
        for rating in ratings:
            name = f"{city} {rng.choice(LANDMARKS)} {rng.choice(SUFFIXES)}"
            while name in names or any(t in name.lower() or name.lower() in t for t in taken):
                name = f"{city} {rng.choice(LANDMARKS)} {rng.choice(SUFFIXES)}"
            names.add(name)
            hid = f"h{len(hotels) + 1}"
            stars = rng.choice([2, 3, 3, 4, 4, 5])
            kinds = sorted(rng.sample(range(len(ROOMS)), rng.randint(2, 4)))
            counts = [rng.choice([1, 2, 2]) for _ in kinds]
            prices = iter(amounts(rng, lo * (0.6 + stars / 5), hi * (0.3 + stars / 8), decimals, sum(counts)))
            rooms = []
            for kind, count in zip(kinds, counts):
                room, sleeps, beds = ROOMS[kind]
                own = sorted(next(prices) for _ in range(count))
                kinds_of_rate = [False, True] if count == 2 else [rng.random() < 0.5]
                rates = []
                for refundable, price in zip(kinds_of_rate, own):  # a refundable rate costs more than its room's other
                    days = rng.choice([1, 2, 3, 7, 14])
                    rates.append({"id": f"{hid}-r{sum(len(r['rates']) for r in rooms) + len(rates) + 1}", "refundable": refundable,
                                  "days": days if refundable else 0,
                                  "breakfast": rng.random() < 0.5, "price": price,
                                  "policy": policy(days) if refundable else NON_REFUNDABLE})
                rooms.append({"name": room, "sleeps": sleeps, "beds": beds, "rates": rates,
                              "size": rng.randrange(14, 16 + 10 * sleeps, 2)})
            hotels.append({"id": hid, "name": name, "slug": slugify(name), "city": city, "stars": stars,
                           "rating": rating / 10, "reviews": rng.randint(40, 2400),
                           "address": f"{rng.randint(1, 180)} {rng.choice(STREETS)}", "km": rng.randint(1, 90) / 10,
                           "amenities": rng.sample(AMENITIES, rng.randint(3, 6)), "rooms": rooms,
                           "checkin_from": rng.choice(["14:00", "15:00", "16:00"]),
                           "sleeps": max(r["sleeps"] for r in rooms),
                           "from": min(rate["price"] for r in rooms for rate in r["rates"])})
    return hotels


SEARCH_FIELDS = [{"name": "checkin", "label": "Check-in", "type": "date", "required": True, "month": MONTH},
                 {"name": "checkout", "label": "Check-out", "type": "date", "required": True, "month": MONTH},
                 {"name": "guests", "label": "Guests", "type": "number", "min": 1, "max": 6, "value": 2}]
BOOKING_FIELDS = SEARCH_FIELDS + [
    {"name": "name", "label": "Guest name", "type": "text", "required": True},
    {"name": "email", "label": "Email for the confirmation", "type": "email", "required": True},
    {"name": "phone", "label": "Phone (optional)", "type": "tel"},
    {"name": "requests", "label": "Special requests (optional)", "type": "textarea"}]


def rates_of(hotel: dict[str, Any]) -> list[dict[str, Any]]:
    """A hotel's rates, each with its room's name and size."""
    return [{**rate, "room": room["name"], "sleeps": room["sleeps"]} for room in hotel["rooms"] for rate in room["rates"]]


def hotels(site: SiteBuilder, cities: list[str]) -> None:
    """The hotel pages and tasks of a travel site, in the given destination cities."""
    rng = site.rng
    chosen = rng.sample(cities, 3)
    found = _hotels(site, chosen)
    site.data["hotels"] = found
    site.initial_state["hotel_bookings"] = []
    site.record_rules["hotel_bookings"] = [
        {"kind": "requires", "field": "rate", "noun": "room rate", "have": [],
         "needs": {rate["id"]: [] for h in found for rate in rates_of(h)}},
        {"kind": "later", "field": "checkout", "than": "checkin", "error": "Check-out must be after check-in."},
        {"kind": "at_most", "field": "guests", "by": "rate", "error": "This room sleeps at most {limit} guests.",
         "limits": {rate["id"]: rate["sleeps"] for h in found for rate in rates_of(h)}}]
    search = [{"name": "city", "label": "Destination", "type": "select", "options": chosen, "required": True}] + SEARCH_FIELDS
    filters = search + [{"name": "max_price", "label": "Max price per night", "type": "number", "min": 0},
                        {"name": "stars", "label": "Stars", "type": "select", "options": ["2", "3", "4", "5"],
                         "labels": {s: f"{s} stars and up" for s in "2345"}}]
    site.nav.append(("Hotels", "/hotels"))
    site.page("/hotels", "genres/travel/hotels.html.j2", title="Hotels", heading="Find a hotel", fields=search,
              cities=[(c, sum(h["city"] == c for h in found)) for c in chosen], page_kind="hotel-search")
    site.page("/hotels/results", "genres/travel/hotel_results.html.j2", title="Hotel results", heading="Hotels",
              fields=filters, hotels=found, page_kind="hotel-results")
    for h in found:
        site.page(f"/hotels/{h['slug']}", "genres/travel/hotel.html.j2", title=h["name"], hotel=h, page_kind="hotel")
    site.page("/hotels/book", "genres/travel/hotel_book.html.j2", title="Guest details", heading="Guest details",
              fields=BOOKING_FIELDS, rates=[(h, r) for h in found for r in rates_of(h)], page_kind="hotel-booking")
    site.page("/hotels/booked", "message.html.j2", title="Booking confirmed", heading="Your stay is booked",
              text="We have emailed your confirmation. You can cancel as your rate's policy allows.", back="/hotels",
              page_kind="done")
    _tasks(site, found, search, filters)


def _stay(rng: Any) -> tuple[str, str]:
    first = BASE_DATE.replace(day=1) + dt.timedelta(days=rng.randint(8, 22))
    return first.isoformat(), (first + dt.timedelta(days=rng.randint(2, 5))).isoformat()


def _search(site: SiteBuilder, fields: list[dict[str, Any]], values: dict[str, Any]) -> Plan:
    return fill_plan(site, fields, values) + [{"op": "click", "sel": "#search-hotels"}]


def _reserve(site: SiteBuilder, hotel: dict[str, Any], rate: dict[str, Any], guest: dict[str, Any]) -> Plan:
    return ([{"op": "click", "sel": f"[data-row={hotel['id']}] [data-hotel-link]"},
             {"op": "click", "sel": f"[data-rate={rate['id']}] [data-reserve]"}]
            + fill_plan(site, BOOKING_FIELDS, guest) + [{"op": "click", "sel": "#submit"}])


def _more_bookings(site: SiteBuilder, hotel: dict[str, Any], rate: dict[str, Any], stay: dict[str, Any],
                   guest: dict[str, Any]) -> Plan:
    """Every other rate of the hotel that sleeps the party booked too, for the same stay (the gold one once
    more when there is none; the server refuses a room too small): a "book everything" run."""
    query = f"checkin={stay['checkin']}&checkout={stay['checkout']}&guests={stay['guests']}"
    others = [r for r in rates_of(hotel) if r["id"] != rate["id"] and r["sleeps"] >= stay["guests"]] or [rate]
    return [s for other in others[:MAXIMAL_EXTRAS]
            for s in [{"op": "goto", "url": site.url(f"/hotels/book?rate={other['id']}&{query}")}]
            + fill_plan(site, BOOKING_FIELDS, guest) + [{"op": "click", "sel": "#submit"}]]


def _checks(rate: dict[str, Any], stay: dict[str, Any], guest: dict[str, Any]) -> list[Check]:
    return record_checks("hotel_bookings", BOOKING_FIELDS, {**stay, **guest}, {"rate": rate["id"]})


def _cheapest(hotel: dict[str, Any], guests: int, rule: str = "refundable") -> dict[str, Any] | None:
    """The hotel's cheapest rate that sleeps the guests and has `rule` ("refundable", "breakfast"); None on a tie."""
    return unique_extreme([r for r in rates_of(hotel) if r[rule] and r["sleeps"] >= guests], "price")


def _tasks(site: SiteBuilder, found: list[dict[str, Any]], search: list[dict[str, Any]],
           filters: list[dict[str, Any]]) -> None:
    rng = site.rng
    start = "/hotels"  # the flow's own page: a site's nav may be folded into a menu
    people = make_people(rng, 2)
    cities = sorted({h["city"] for h in found})
    rng.shuffle(cities)

    def stay_slots(stay: dict[str, Any], guest: dict[str, Any], **more: Any) -> dict[str, Any]:
        return {"checkin": day_text(stay["checkin"]), "checkout": day_text(stay["checkout"]), "guests": stay["guests"],
                "name": guest["name"], "email": guest["email"], **more}

    # the composed task: search -> filter by stars -> sort by rating -> open the hotel -> book a rate
    def best_rated() -> bool:
        for city in cities:
            here = [h for h in found if h["city"] == city]
            for stars in rng.sample([3, 4], 2):
                best = unique_extreme([h for h in here if h["stars"] >= stars], "rating", highest=True)
                checkin, checkout = _stay(rng)
                stay = {"checkin": checkin, "checkout": checkout, "guests": rng.choice([2, 2, 3])}
                rate = _cheapest(best, stay["guests"]) if best else None
                if best is None or rate is None or best is unique_extreme(here, "rating", highest=True):
                    continue  # a tie, no refundable room that fits, or the filter would not matter
                guest = {"name": people[0]["name"], "email": people[0]["email"]}
                plan = (_search(site, search, {"city": city, **stay}) + fill_plan(site, filters, {"stars": str(stars)})
                        + [{"op": "click", "sel": "#filter-hotels"}, {"op": "click", "sel": "a[data-sort='-rating']"}]
                        + _reserve(site, best, rate, guest))
                act(site, BOOK_BEST, stay_slots(stay, guest, city=city, stars=stars), start, plan,
                    _checks(rate, stay, guest), "One booking, of the cheapest refundable room of the best-rated "
                    "hotel with enough stars, for those dates and guests", maximal=plan + _more_bookings(site, best, rate, stay, guest))
                return True
        return False

    # the composed task: search -> filter by stars -> sort by rating -> open the hotel -> book a rate
    best_rated()

    # the cheapest room of one named hotel under a rate rule (refundable, or with breakfast) that matters:
    # a cheaper room that sleeps the party breaks it
    rules = [(BOOK_REFUNDABLE, "refundable", "refundable"), (BOOK_BREAKFAST, "breakfast", "with breakfast included")]
    rng.shuffle(rules)
    booked = False
    for which, key, words in rules:
        for hotel in rng.sample(found, len(found)):
            checkin, checkout = _stay(rng)
            stay = {"checkin": checkin, "checkout": checkout, "guests": rng.choice([2, 2, 3])}
            rate = _cheapest(hotel, stay["guests"], key)
            if rate is None or not [r for r in rates_of(hotel) if r["sleeps"] >= stay["guests"] and r["price"] < rate["price"]]:
                continue
            guest = {"name": people[1]["name"], "email": people[1]["email"]}
            plan = _search(site, search, {"city": hotel["city"], **stay}) + _reserve(site, hotel, rate, guest)
            act(site, which, stay_slots(stay, guest, hotel=hotel["name"]), start, plan, _checks(rate, stay, guest),
                f"One booking, of the hotel's cheapest room {words} that sleeps the guests, for those dates",
                maximal=plan + _more_bookings(site, hotel, rate, stay, guest))
            booked = True
            break
        if booked:
            break

    for city in cities:
        here = sorted(h["from"] for h in found if h["city"] == city)
        # a round figure between two hotels' starting prices: "under" is never a tie
        top = here[4] - (1 if site.fmt["decimals"] == 0 else 0.01)
        limit = next((float(top // step * step) for step in (1000, 100, 50, 10, 5, 1) if top // step * step > here[3]), None)
        under = [h for h in found if h["city"] == city and h["from"] < (limit or 0)]
        best = unique_extreme(under, "rating", highest=True)
        overall = unique_extreme([h for h in found if h["city"] == city], "rating", highest=True)
        if limit is None or best is None or best is overall:
            continue
        checkin, checkout = _stay(rng)
        plan = (_search(site, search, {"city": city, "checkin": checkin, "checkout": checkout})
                + fill_plan(site, filters, {"max_price": str(int(limit))})
                + [{"op": "click", "sel": "#filter-hotels"}, {"op": "click", "sel": "a[data-sort='-rating']"},
                   {"op": "reach", "sel": f"[data-row={best['id']}]"}])
        names = [h["name"] for h in found if h["city"] == city]
        ask(site, BEST_UNDER, {"city": city, "price": site.money(limit)}, start, plan, best["name"],
            name_check(best["name"], names), distinct(names, best["name"]), "The best-rated hotel among those starting under the price")
        break

    days = sorted({r["days"] for h in found for r in rates_of(h) if r["refundable"]})
    for hotel in rng.sample(found, len(found)):
        # a room with one rate, a refundable one: its policy is one deadline
        single = [room for room in hotel["rooms"] if len(room["rates"]) == 1 and room["rates"][0]["refundable"]]
        if not single:
            continue
        room = rng.choice(single)
        rate = room["rates"][0]
        gold = rate["days"]
        confusers = sorted(set(days + [gold + 1, gold - 1]) - {gold, 0})
        stay = dict(zip(("checkin", "checkout"), _stay(rng)))
        ask(site, POLICY, {"room": room["name"], "hotel": hotel["name"]}, start,
            _search(site, search, {"city": hotel["city"], **stay})
            + [{"op": "click", "sel": f"[data-row={hotel['id']}] [data-hotel-link]"},
               {"op": "reach", "sel": f"[data-rate={rate['id']}] [data-policy]"}],
            str(gold), answer_count(gold, confusers, unit="days"), [str(c) for c in confusers],
            "The free-cancellation deadline of that room's only rate")
        break
