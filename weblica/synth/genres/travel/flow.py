"""Travel: flight search (origin, destination, date, travellers) -> results sortable by price and
duration, with stops and airline -> a fare's rules (baggage, change fee, refund) -> booking form ->
a booking stored server-side. The same sites' hotel search is in hotels.py."""
from __future__ import annotations

import datetime as dt
from typing import Any

from weblica.synth.checks import answer_count, answer_text
from weblica.synth.data import BASE_DATE, make_people
from weblica.synth.genres.kit import (MAXIMAL_EXTRAS, Plan, act, amounts, ask, day_text, fill_plan, record_checks)
from weblica.synth.genres.travel.hotels import hotels
from weblica.synth.genres.travel.intents import (ARRIVAL, BOOK_EARLIEST, BOOK_REFUNDABLE_FLIGHT, CHANGE_FEE, CHEAPEST,
                                                 FASTEST, NONSTOP_COUNT)
from weblica.synth.site import SiteBuilder
from weblica.synth.skills.common import count_confusers, distinct, name_check, price_check, shown_money, unique_extreme

AIRPORTS = [("Lisbon", "LIS"), ("Oslo", "OSL"), ("Madrid", "MAD"), ("Vienna", "VIE"), ("Dublin", "DUB"),
            ("Athens", "ATH"), ("Prague", "PRG"), ("Helsinki", "HEL"), ("Zurich", "ZRH"), ("Porto", "OPO")]
AIRLINES = [("Aurora Air", "AU"), ("Bluewing", "BW"), ("Coastline Airways", "CL"), ("Nordic Sky", "NS"),
            ("Sol Express", "SX"), ("Meridian Air", "MR"), ("Atlas Jet", "AJ"), ("Pelican Airlines", "PL")]
FARES = {"Basic": {"bags": "Cabin bag only", "refundable": False},
         "Standard": {"bags": "1 checked bag (23 kg)", "refundable": False},
         "Flex": {"bags": "2 checked bags (23 kg each)", "refundable": True}}


def _flights(site: SiteBuilder) -> tuple[list[tuple[str, str]], list[dict[str, Any]], list[str]]:
    rng = site.rng
    ports = rng.sample(AIRPORTS, 5)
    airlines = rng.sample(AIRLINES, 5)
    start = BASE_DATE + dt.timedelta(days=rng.randint(6, 16))
    days = [(start + dt.timedelta(days=k)).isoformat() for k in range(3)]
    routes = rng.sample([(a, b) for a in ports for b in ports if a != b], 3)
    decimals = site.fmt["decimals"]
    lo, hi = (4000, 60000) if decimals == 0 else (39, 480)
    flights: list[dict[str, Any]] = []
    for (origin, o_code), (dest, d_code) in routes:
        for day in days:
            count = rng.randint(5, 7)
            prices = amounts(rng, lo, hi, decimals, count)
            departs = rng.sample(range(6 * 12, 22 * 12), count)  # five-minute steps
            for price, depart in zip(prices, sorted(departs)):
                airline, code = rng.choice(airlines)
                stops = rng.choice([0, 0, 1, 1, 2])
                duration = rng.randint(95, 200) + stops * rng.randint(70, 160)
                fare = rng.choice(list(FARES))
                refundable = FARES[fare]["refundable"] or (fare == "Standard" and rng.random() < 0.3)
                fee = 0.0 if fare == "Flex" else amounts(rng, lo * 0.3, hi * 0.4, decimals, 1)[0]
                minutes = depart * 5
                number = f"{code}{rng.randint(100, 989)}"
                while any(f["code"] == number for f in flights):  # a flight number names one flight
                    number = f"{code}{rng.randint(100, 989)}"
                arrive = minutes + duration
                flights.append({
                    "id": f"f{len(flights) + 1}", "code": number, "airline": airline,
                    "origin": origin, "from": o_code, "destination": dest, "to": d_code, "day": day,
                    "depart": f"{minutes // 60:02d}:{minutes % 60:02d}",
                    "arrive": f"{arrive // 60 % 24:02d}:{arrive % 60:02d}" + (" +1" if arrive >= 24 * 60 else ""),
                    "duration": duration, "stops": stops, "price": price, "fare": fare,
                    "bags": FARES[fare]["bags"], "change_fee": fee, "refundable": refundable})
    return ports, flights, days


def _hours(minutes: int) -> str:
    return f"{minutes // 60} h {minutes % 60:02d} min"


BOOKING_FIELDS = [{"name": "name", "label": "Lead passenger (full name)", "type": "text", "required": True},
                  {"name": "email", "label": "Email for the e-ticket", "type": "email", "required": True},
                  {"name": "phone", "label": "Mobile phone (optional)", "type": "tel"},
                  {"name": "guests", "label": "Travellers", "type": "number", "min": 1, "max": 9, "value": 1},
                  {"name": "insurance", "label": "Add travel insurance", "type": "checkbox"}]


def build_flows(site: SiteBuilder) -> None:
    ports, flights, days = _flights(site)
    site.add_data(flights=flights)
    site.add_state(flight_bookings=[])
    cities = {code: name for name, code in ports}
    search_fields = [
        {"name": "from", "label": "From", "type": "select", "options": [c for _, c in ports],
         "labels": {c: f"{n} ({c})" for n, c in ports}, "required": True},
        {"name": "to", "label": "To", "type": "select", "options": [c for _, c in ports],
         "labels": {c: f"{n} ({c})" for n, c in ports}, "required": True},
        {"name": "date", "label": "Departure date", "type": "date", "required": True, "month": days[0][:7]},
        {"name": "guests", "label": "Travellers", "type": "number", "min": 1, "max": 9, "value": 1}]
    site.add_nav(("Flights", "/flights"))
    routes = sorted({(f["origin"], f["destination"]) for f in flights})
    site.page("/flights", "travel/search.html.j2", title="Flights", heading="Search flights", fields=search_fields,
              routes=routes, days=days, page_kind="flight-search")
    site.page("/flights/results", "travel/results.html.j2", title="Flight results", heading="Choose your flight",
              fields=search_fields, flights=flights, hours=_hours, page_kind="flight-results")
    for f in flights:
        site.page(f"/flights/fare/{f['id']}", "travel/fare.html.j2", title=f"{f['code']} fare rules", flight=f,
                  hours=_hours, fares=FARES, page_kind="fare-rules")
    site.page("/flights/book", "travel/book.html.j2", title="Passenger details", heading="Passenger details",
              fields=BOOKING_FIELDS, flights=flights, hours=_hours, page_kind="flight-booking")
    site.page("/flights/booked", "message.html.j2", title="Booking confirmed", heading="Your flight is booked",
              text="We have sent the e-ticket to your email address.", back="/flights", page_kind="done")
    _tasks(site, flights, days, cities, search_fields)
    hotels(site, [name for name, _ in ports])  # drawn after the flights: a site's flights stay as they were


def _search(site: SiteBuilder, fields: list[dict[str, Any]], f: dict[str, Any], sort: str | None = None) -> Plan:
    plan = fill_plan(site, fields, {"from": f["from"], "to": f["to"], "date": f["day"]})
    plan.append({"op": "click", "sel": "#search-flights"})
    if sort:
        plan.append({"op": "click", "sel": f"a[data-sort={sort}]"})
    return plan


def _book(site: SiteBuilder, f: dict[str, Any], values: dict[str, Any]) -> Plan:
    plan: Plan = [{"op": "click", "sel": f"[data-row={f['id']}] [data-fare-link]"},
                  {"op": "click", "sel": "#continue-booking"}]
    plan += fill_plan(site, BOOKING_FIELDS, values)
    return plan + [{"op": "click", "sel": "#submit"}]


def _tasks(site: SiteBuilder, flights: list[dict[str, Any]], days: list[str], cities: dict[str, str],
           fields: list[dict[str, Any]]) -> None:
    rng = site.rng
    groups = {}
    for f in flights:
        groups.setdefault((f["from"], f["to"], f["day"]), []).append(f)
    keys = sorted(groups)
    rng.shuffle(keys)
    people = make_people(rng, 4)
    start = "/flights"
    prices = [f["price"] for f in flights]

    def slots(f: dict[str, Any], **more: Any) -> dict[str, Any]:
        return {"origin": f["origin"], "destination": f["destination"], "day": day_text(f["day"]), **more}

    key = keys[0]
    group = groups[key]
    best = unique_extreme(group, "price")
    if best:
        competing = [f["price"] for f in group] + [f["price"] for f in flights if (f["from"], f["to"]) == key[:2]]
        ask(site, CHEAPEST, slots(best), start, _search(site, fields, best, "price") +
            [{"op": "reach", "sel": f"[data-row={best['id']}]"}], site.money(best["price"]),
            price_check(site, best["price"], competing), shown_money(site, distinct(competing, best["price"])),
            "The lowest fare among that day's flights on the route")
    group = groups[keys[1]]
    fast = unique_extreme(group, "duration")
    airlines = sorted({f["airline"] for f in flights})
    if fast:
        ask(site, FASTEST, slots(fast), start, _search(site, fields, fast, "duration") +
            [{"op": "reach", "sel": f"[data-row={fast['id']}]"}], fast["airline"], name_check(fast["airline"], airlines),
            distinct(airlines, fast["airline"]), "The airline of the shortest flight")
    group = [f for f in groups[keys[2]] if f["stops"] == 0]
    direct = unique_extreme(group, "price")
    if direct and direct["change_fee"] > 0:
        fees = [f["change_fee"] for f in flights if f["change_fee"] > 0]
        ask(site, CHANGE_FEE, slots(direct), start, _search(site, fields, direct, "price") +
            [{"op": "click", "sel": f"[data-row={direct['id']}] [data-fare-link]"}, {"op": "reach", "sel": "[data-change-fee]"}],
            site.money(direct["change_fee"]), price_check(site, direct["change_fee"], fees + [direct["price"]]),
            shown_money(site, distinct(fees, direct["change_fee"])), "The change fee from the fare rules of the cheapest nonstop flight")
    group = [f for f in groups[keys[3]] if f["refundable"]]
    refundable = unique_extreme(group, "price")
    if refundable:
        person, guests = people[0], rng.randint(2, 4)
        values = {"name": person["name"], "email": person["email"], "guests": guests}
        plan = _search(site, fields, refundable, "price") + _book(site, refundable, values)
        others = [f for f in groups[keys[3]] if f is not refundable][:MAXIMAL_EXTRAS]
        act(site, BOOK_REFUNDABLE_FLIGHT, slots(refundable, name=person["name"], email=person["email"], guests=guests), start,
            plan, record_checks("flight_bookings", BOOKING_FIELDS, values, {"flight": refundable["id"]}), "One booking, of the cheapest refundable flight, for the named passenger and travellers",
            maximal=plan + [s for o in others for s in [{"op": "goto", "url": site.url(f"/flights/fare/{o['id']}")},
                                                       {"op": "click", "sel": "#continue-booking"}]
                            + fill_plan(site, BOOKING_FIELDS, values) + [{"op": "click", "sel": "#submit"}]])
    group = groups[keys[4]]
    first = unique_extreme(group, "depart")
    if first:
        person = people[1]
        values = {"name": person["name"], "email": person["email"]}
        plan = _search(site, fields, first) + _book(site, first, values)
        act(site, BOOK_EARLIEST, slots(first, name=person["name"], email=person["email"]), start, plan,
            record_checks("flight_bookings", BOOKING_FIELDS, values, {"flight": first["id"]}), "One booking, of the day's first flight, for the named passenger")

    def nonstop_count() -> None:
        group = groups[keys[5]]
        gold = sum(f["stops"] == 0 for f in group)
        route = [f for f in flights if (f["from"], f["to"]) == keys[5][:2]]
        confusers = count_confusers(gold, [len(group), sum(f["stops"] == 0 for f in route)])
        if gold >= 1 and confusers:
            plan = _search(site, fields, group[0]) + [{"op": "click", "sel": "#f-nonstop"},
                                                      {"op": "click", "sel": "#search-flights"},
                                                      {"op": "reach", "sel": "[data-row-count]"}]
            ask(site, NONSTOP_COUNT, slots(group[0]), start, plan, str(gold), answer_count(gold, confusers, unit="flights"),
                [str(c) for c in confusers], "The number of that day's nonstop flights on the route")

    def arrival() -> None:
        group = groups[keys[6]]
        times = [f["arrive"] for f in group] + [f["depart"] for f in group]
        for f in rng.sample(group, len(group)):
            if "+" not in f["arrive"] and times.count(f["arrive"]) == 1:
                ask(site, ARRIVAL, slots(f, airline=f["airline"], code=f["code"]), start,
                    _search(site, fields, f) + [{"op": "reach", "sel": f"[data-row={f['id']}]"}], f["arrive"],
                    answer_text(f["arrive"], distinct(times, f["arrive"])), distinct(times, f["arrive"]), "The arrival time of that flight")
                return

    rng.choice([nonstop_count, arrival])()
