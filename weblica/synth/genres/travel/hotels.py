"""Travel, hotels: search by destination, check-in and check-out dates and guests -> results filtered by
price and stars and sorted by price, rating or stars -> a hotel's page with its room types and their
rates (refundable or not, breakfast or room only, the cancellation policy) -> booking form -> a booking
stored server-side (the server refuses an unknown rate, a check-out not after the check-in, more guests
than the room sleeps and a room sold out on a night of the stay). Each room type is sold out on some
nights (nights.py): results for a stay price each hotel by its rooms free every night and leave
out a hotel with none, and the hotel page lists each room's sold-out nights.
travel.py builds the flights of the same sites and calls `hotels`."""
from __future__ import annotations

import datetime as dt
import random
from typing import Any

from weblica.env.task import Check
from weblica.stay_nights import MAX_NIGHTS
from weblica.synth.checks import answer_count, answer_date
from weblica.synth.data import BASE_DATE, STREETS, make_people, slugify
from weblica.synth.genres.kit import MAXIMAL_EXTRAS, Plan, act, amounts, ask, day_text, fill_plan, record_checks
from weblica.synth.genres.travel.intents import (BEST_UNDER, BOOK_AVAILABLE, BOOK_BEST, BOOK_BREAKFAST,
                                                 BOOK_REFUNDABLE_ROOM, FREE_ROOM, POLICY, SOLD_OUT_NIGHT)
from weblica.synth.genres.travel.nights import (calendar_nights, draw_rooms, draw_sold_out, draw_stay, is_free, nights,
                                               open_rates, results_rooms, shown, stay_price)
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
                              "size": rng.randrange(14, 16 + 10 * sleeps, 2), "sold_out": draw_sold_out(rng)})
            hotels.append({"id": hid, "name": name, "slug": slugify(name), "city": city, "stars": stars,
                           "rating": rating / 10, "reviews": rng.randint(40, 2400),
                           "address": f"{rng.randint(1, 180)} {rng.choice(STREETS)}", "km": rng.randint(1, 90) / 10,
                           "amenities": rng.sample(AMENITIES, rng.randint(3, 6)), "rooms": rooms,
                           "checkin_from": rng.choice(["14:00", "15:00", "16:00"]),
                           "sleeps": max(r["sleeps"] for r in rooms),
                           "from": min(rate["price"] for r in rooms for rate in r["rates"])})
    return hotels


# the booking window: a check-in on one of the calendar's nights, a check-out the morning after one; the
# date fields offer those days alone and page no further (the server's open_dates rule refuses the rest)
FIRST_NIGHT, LAST_NIGHT = calendar_nights()
_MORNING_AFTER = {n: (dt.date.fromisoformat(n) + dt.timedelta(days=1)).isoformat() for n in (FIRST_NIGHT, LAST_NIGHT)}
SEARCH_FIELDS = [{"name": "checkin", "label": "Check-in", "type": "date", "required": True, "month": MONTH,
                  "min": FIRST_NIGHT, "max": LAST_NIGHT},
                 {"name": "checkout", "label": "Check-out", "type": "date", "required": True, "month": MONTH,
                  "min": _MORNING_AFTER[FIRST_NIGHT], "max": _MORNING_AFTER[LAST_NIGHT]},
                 {"name": "guests", "label": "Guests", "type": "number", "min": 1, "max": 6, "value": 2}]
BOOKING_FIELDS = SEARCH_FIELDS + [
    {"name": "name", "label": "Guest name", "type": "text", "required": True},
    {"name": "email", "label": "Email for the confirmation", "type": "email", "required": True},
    {"name": "phone", "label": "Phone (optional)", "type": "tel"},
    {"name": "requests", "label": "Special requests (optional)", "type": "textarea"}]


def rates_of(hotel: dict[str, Any]) -> list[dict[str, Any]]:
    """A hotel's rates, each with its room's name, what it sleeps and its sold-out nights."""
    return [{**rate, "room": room["name"], "sleeps": room["sleeps"], "sold_out": room["sold_out"],
             "room_key": room["key"], "rooms": room["rooms"]}
            for room in hotel["rooms"] for rate in room["rates"]]


def hotels(site: SiteBuilder, cities: list[str]) -> None:
    """The hotel pages and tasks of a travel site, in the given destination cities."""
    rng = site.rng
    chosen = rng.sample(cities, 3)
    found = _hotels(site, chosen)
    # a generator of its own: the hotels, stays and tasks drawn from the site's stay as they were
    draw_rooms(random.Random(f"hotel-rooms:{site.spec.site_id}:{site.spec.seed}"), found)
    site.add_data(hotels=found)
    site.add_state(hotel_bookings=[])
    site.add_record_rules(
        "hotel_bookings",
        {"kind": "requires", "field": "rate", "noun": "room rate", "have": [],
         "needs": {rate["id"]: [] for h in found for rate in rates_of(h)}},
        {"kind": "later", "field": "checkout", "than": "checkin", "error": "Check-out must be after check-in."},
        {"kind": "at_most", "field": "guests", "by": "rate", "error": "This room sleeps at most {limit} guests.",
         "limits": {rate["id"]: rate["sleeps"] for h in found for rate in rates_of(h)}},
        {"kind": "open_dates", "by": "rate", "from": "checkin", "to": "checkout",
         "error": "Sorry, this room is sold out on the night of {dates}; choose other dates or another room.",
         "closed": {rate["id"]: rate["sold_out"] for h in found for rate in rates_of(h)},
         "room_of": {rate["id"]: rate["room_key"] for h in found for rate in rates_of(h)},
         "rooms": {room["key"]: room["rooms"] for h in found for room in h["rooms"]},
         "first_night": calendar_nights()[0], "last_night": calendar_nights()[1], "max_nights": MAX_NIGHTS})
    for h in found:  # what a results row needs to price itself for the searched stay
        h["room_nights"] = results_rooms(h)
        h["rate_rooms"] = [[rate["id"], rate["room_key"]] for rate in rates_of(h)]  # whose rooms a booking uses
    search = [{"name": "city", "label": "Destination", "type": "select", "options": chosen, "required": True}] + SEARCH_FIELDS
    filters = search + [{"name": "max_price", "label": "Max price per night", "type": "number", "min": 0},
                        {"name": "stars", "label": "Stars", "type": "select", "options": ["2", "3", "4", "5"],
                         "labels": {s: f"{s} stars and up" for s in "2345"}}]
    site.add_nav(("Hotels", "/hotels"))
    site.page("/hotels", "travel/hotels.html.j2", title="Hotels", heading="Find a hotel", fields=search,
              cities=[(c, sum(h["city"] == c for h in found)) for c in chosen], page_kind="hotel-search")
    site.page("/hotels/results", "travel/hotel_results.html.j2", title="Hotel results", heading="Hotels",
              fields=filters, hotels=found, page_kind="hotel-results")
    for h in found:
        site.page(f"/hotels/{h['slug']}", "travel/hotel.html.j2", title=h["name"], hotel=h, page_kind="hotel")
    site.page("/hotels/book", "travel/hotel_book.html.j2", title="Guest details", heading="Guest details",
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
    """Every other rate of the hotel that sleeps the party and is free for the stay booked too (the gold
    one once more when there is none; the server refuses a room too small or sold out): a "book
    everything" run."""
    query = f"checkin={stay['checkin']}&checkout={stay['checkout']}&guests={stay['guests']}"
    others = [r for r in open_rates(rates_of(hotel), stay, stay["guests"]) if r["id"] != rate["id"]] or [rate]
    return [s for other in others[:MAXIMAL_EXTRAS]
            for s in [{"op": "goto", "url": site.url(f"/hotels/book?rate={other['id']}&{query}")}]
            + fill_plan(site, BOOKING_FIELDS, guest) + [{"op": "click", "sel": "#submit"}]]


def _checks(rate: dict[str, Any], stay: dict[str, Any], guest: dict[str, Any]) -> list[Check]:
    return record_checks("hotel_bookings", BOOKING_FIELDS, {**stay, **guest}, {"rate": rate["id"]})


def _cheapest(hotel: dict[str, Any], stay: dict[str, Any], rule: str = "refundable") -> dict[str, Any] | None:
    """The hotel's cheapest rate with `rule` ("refundable", "breakfast") whose room sleeps the stay's
    guests and is free every night of it; None on a tie."""
    return unique_extreme([r for r in open_rates(rates_of(hotel), stay, stay["guests"]) if r[rule]], "price")


def _top(hotels: list[dict[str, Any]]) -> dict[str, Any] | None:
    return unique_extreme(hotels, "rating", highest=True)


def _tasks(site: SiteBuilder, found: list[dict[str, Any]], search: list[dict[str, Any]],
           filters: list[dict[str, Any]]) -> None:
    """Every task states its stay, and only stays whose answer is one and the same with the nights'
    availability taken into account are asked (draw_stay)."""
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
                best = _top([h for h in here if h["stars"] >= stars])
                if best is None:
                    continue

                def fits(stay: dict[str, Any]) -> bool:
                    # the same best hotel whether the dates hide a sold-out one or not; the filter matters
                    seen = shown(here, stay, stay["guests"])
                    return (best is _top([h for h in seen if h["stars"] >= stars])
                            and best is not _top(seen) and _cheapest(best, stay) is not None)
                stay = draw_stay(rng, _stay, fits, rng.choice([2, 2, 3]))
                if stay is None:
                    continue
                rate = _cheapest(best, stay)
                guest = {"name": people[0]["name"], "email": people[0]["email"]}
                plan = (_search(site, search, {"city": city, **stay}) + fill_plan(site, filters, {"stars": str(stars)})
                        + [{"op": "click", "sel": "#filter-hotels"}, {"op": "click", "sel": "a[data-sort='-rating']"}]
                        + _reserve(site, best, rate, guest))
                act(site, BOOK_BEST, stay_slots(stay, guest, city=city, stars=stars), start, plan,
                    _checks(rate, stay, guest), "One booking, of the cheapest refundable room free for those nights of "
                    "the best-rated hotel with enough stars, for those dates and guests",
                    maximal=plan + _more_bookings(site, best, rate, stay, guest))
                return True
        return False

    best_rated()

    # the cheapest room of one named hotel under a rate rule (refundable, or with breakfast) that matters:
    # a cheaper room free for the stay that sleeps the party breaks it
    rules = [(BOOK_REFUNDABLE_ROOM, "refundable", "refundable"), (BOOK_BREAKFAST, "breakfast", "with breakfast included")]
    rng.shuffle(rules)
    booked = False
    for which, key, words in rules:
        for hotel in rng.sample(found, len(found)):
            def matters(stay: dict[str, Any]) -> bool:
                rate = _cheapest(hotel, stay, key)
                return rate is not None and any(r["price"] < rate["price"]
                                                for r in open_rates(rates_of(hotel), stay, stay["guests"]))
            stay = draw_stay(rng, _stay, matters, rng.choice([2, 2, 3]))
            if stay is None:
                continue
            rate = _cheapest(hotel, stay, key)
            guest = {"name": people[1]["name"], "email": people[1]["email"]}
            plan = _search(site, search, {"city": hotel["city"], **stay}) + _reserve(site, hotel, rate, guest)
            act(site, which, stay_slots(stay, guest, hotel=hotel["name"]), start, plan, _checks(rate, stay, guest),
                f"One booking, of the hotel's cheapest room {words} that sleeps the guests and is free those nights, "
                "for those dates", maximal=plan + _more_bookings(site, hotel, rate, stay, guest))
            booked = True
            break
        if booked:
            break

    for city in cities:
        here = [h for h in found if h["city"] == city]

        def under(stay: dict[str, Any]) -> tuple[float, dict[str, Any]] | None:
            """A round price between two hotels' prices for the stay ("under" is never a tie) and the
            best-rated hotel under it, when that is not the best-rated one overall."""
            seen = shown(here, stay, 1)
            if len(seen) < 5 or seen != shown(here, stay, 2):  # the question names no party: 1 or 2 agree
                return None
            prices = sorted(stay_price(h, stay) for h in seen)
            top = prices[4] - (1 if site.fmt["decimals"] == 0 else 0.01)
            limit = next((float(top // step * step) for step in (1000, 100, 50, 10, 5, 1) if top // step * step > prices[3]), None)
            best = _top([h for h in seen if stay_price(h, stay) < (limit or 0)])
            return None if limit is None or best is None or best is _top(seen) else (limit, best)
        stay = draw_stay(rng, _stay, lambda st: under(st) is not None)
        if stay is None:
            continue
        limit, best = under(stay)
        plan = (_search(site, search, {"city": city, **stay})
                + fill_plan(site, filters, {"max_price": str(int(limit))})
                + [{"op": "click", "sel": "#filter-hotels"}, {"op": "click", "sel": "a[data-sort='-rating']"},
                   {"op": "reach", "sel": f"[data-row={best['id']}]"}])
        names = [h["name"] for h in here]
        ask(site, BEST_UNDER, {"city": city, "price": site.money(limit), "checkin": day_text(stay["checkin"]),
                               "checkout": day_text(stay["checkout"])}, start, plan, best["name"],
            name_check(best["name"], names), distinct(names, best["name"]),
            "The best-rated hotel among those whose price for that stay starts under the price")
        break

    days = sorted({r["days"] for h in found for r in rates_of(h) if r["refundable"]})
    for hotel in rng.sample(found, len(found)):
        # a room with one rate, a refundable one: its policy is one deadline
        single = [room for room in hotel["rooms"] if len(room["rates"]) == 1 and room["rates"][0]["refundable"]]
        stay = draw_stay(rng, _stay, lambda st: bool(shown([hotel], st, 2))) if single else None  # listed for the stay
        if stay is None:
            continue
        room = rng.choice(single)
        rate = room["rates"][0]
        gold = rate["days"]
        confusers = sorted(set(days + [gold + 1, gold - 1]) - {gold, 0})
        ask(site, POLICY, {"room": room["name"], "hotel": hotel["name"]}, start,
            _search(site, search, {"city": hotel["city"], **stay}) + _open_hotel(hotel)
            + [{"op": "reach", "sel": f"[data-rate={rate['id']}] [data-policy]"}],
            str(gold), answer_count(gold, confusers, unit="days"), [str(c) for c in confusers],
            "The free-cancellation deadline of that room's only rate")
        break
    _night_tasks(site, found, search, people[0])


def _open_hotel(hotel: dict[str, Any]) -> Plan:
    return [{"op": "click", "sel": f"[data-row={hotel['id']}] [data-hotel-link]"}]


def _night_tasks(site: SiteBuilder, found: list[dict[str, Any]], search: list[dict[str, Any]],
                 person: dict[str, Any]) -> None:
    """The tasks about availability itself: a room's one sold-out night in a span, the one hotel of a
    city with a room type free for a stay, and the city's cheapest room free for a stay (where a
    cheaper one is sold out on a night of it, so the nights decide)."""
    rng = site.rng
    start = "/hotels"
    cities = sorted({h["city"] for h in found})
    rng.shuffle(cities)
    listed = lambda hotel: lambda st: bool(shown([hotel], st, 2))  # noqa: E731 (the hotel shows for the stay)

    for hotel, room in [(h, r) for h in rng.sample(found, len(found)) for r in h["rooms"] if r["sold_out"]]:
        night = rng.choice(room["sold_out"])
        first = dt.date.fromisoformat(night) - dt.timedelta(days=rng.randint(1, 3))
        last = dt.date.fromisoformat(night) + dt.timedelta(days=rng.randint(1, 3))
        span = nights(first.isoformat(), (last + dt.timedelta(days=1)).isoformat())
        stay = draw_stay(rng, _stay, listed(hotel))
        if first.month != last.month or set(span) & set(room["sold_out"]) != {night} or stay is None:
            continue  # the span leaves the month, holds another sold-out night, or the hotel never shows
        others = [d for d in span if d != night]
        ask(site, SOLD_OUT_NIGHT, {"first": day_text(span[0]), "last": day_text(span[-1]), "room": room["name"],
                                   "hotel": hotel["name"]}, start,
            _search(site, search, {"city": hotel["city"], **stay}) + _open_hotel(hotel)
            + [{"op": "reach", "sel": f"[data-room-availability=\"{hotel['rooms'].index(room)}\"]"}],
            site.date(night), answer_date(night, others, site.locale), [site.date(d) for d in others],
            "The one night in that span the room's availability lists as sold out")
        break

    def room_named(hotel: dict[str, Any], name: str) -> dict[str, Any] | None:
        return next((r for r in hotel["rooms"] if r["name"] == name), None)

    for city, name in [(c, r[0]) for c in cities for r in rng.sample(ROOMS, len(ROOMS))]:
        having = [h for h in found if h["city"] == city and room_named(h, name)]
        free_at = lambda st: [h for h in having if is_free(room_named(h, name), st)]  # noqa: E731
        stay = draw_stay(rng, _stay, lambda st: len(free_at(st)) == 1) if len(having) >= 2 else None
        if stay is None:
            continue
        gold = free_at(stay)[0]
        names = [h["name"] for h in found if h["city"] == city]
        ask(site, FREE_ROOM, {"city": city, "room": name, "checkin": day_text(stay["checkin"]),
                              "checkout": day_text(stay["checkout"])}, start,
            _search(site, search, {"city": city, **stay, "guests": 1}) + _open_hotel(gold)
            + [{"op": "reach", "sel": f"[data-rate={room_named(gold, name)['rates'][0]['id']}]"}],
            gold["name"], name_check(gold["name"], names), [h["name"] for h in having if h is not gold],
            "The one hotel of the city whose room of that type is free every night of the stay")
        break

    for city in cities:
        here = [h for h in found if h["city"] == city]

        def cheapest(stay: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]] | None:
            free = [(h, r) for h in here for r in open_rates(rates_of(h), stay, stay["guests"])]
            best = unique_extreme([r for _, r in free], "price")
            anyway = unique_extreme([r for h in here for r in rates_of(h) if r["sleeps"] >= stay["guests"]], "price")
            if best is None or anyway is None or anyway["id"] == best["id"]:
                return None  # a tie, or the nights would not matter
            return next(h for h, r in free if r is best), best
        stay = draw_stay(rng, _stay, lambda st: cheapest(st) is not None, rng.choice([2, 2, 3]))
        if stay is None:
            continue
        hotel, rate = cheapest(stay)
        guest = {"name": person["name"], "email": person["email"]}
        plan = _search(site, search, {"city": city, **stay}) + [{"op": "click", "sel": "a[data-sort='price']"}] \
            + _reserve(site, hotel, rate, guest)
        act(site, BOOK_AVAILABLE, {"city": city, "checkin": day_text(stay["checkin"]), "checkout": day_text(stay["checkout"]),
                                   "guests": stay["guests"], "name": guest["name"], "email": guest["email"]}, start, plan,
            _checks(rate, stay, guest), "One booking, of the city's cheapest room that sleeps the guests and is free "
            "every night of the stay, for those dates", maximal=plan + _more_bookings(site, hotel, rate, stay, guest))
        break
