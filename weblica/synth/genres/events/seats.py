"""Events, seat maps: the seated halls among a site's venues have a seating plan (rows x seats, the
front rows a VIP zone, the rest reserved seats, each zone at its ticket type's price); an event there
has its own taken seats, and its seat map page lets one pick free seats and buy them. The server
refuses a seat that is taken (at the start or by an order stored since), not on the map, or picked
twice. A ticket-type order for such an event (the event page's quantities: "best available") gets its
seats from the server too (weblica/serve/rules.py `best_items`), from the same pool, and is refused when
too few are free. events.py builds the events and calls `seat_maps`."""
from __future__ import annotations

import string
from typing import Any

from weblica.synth.checks import answer_count, state_count, state_is
from weblica.synth.data import make_people
from weblica.synth.genres.events.intents import FREE_IN_ROW, NAMED, TOGETHER
from weblica.synth.genres.kit import Plan, act, ask, fill_plan
from weblica.synth.site import SiteBuilder
from weblica.synth.skills.common import count_confusers

ZONES = ("VIP", "Reserved seat")  # front rows, then the rest: named as the ticket types that price them
# a zone as said in a task: "the reserved zone", "3 adjacent reserved seats" (not "reserved seat seats")
ZONE_WORDS = {"VIP": "VIP", "Reserved seat": "reserved"}
MAX_SEATS = 8  # per order, as box offices limit it
SEAT_FIELDS = [{"name": "name", "label": "Name on the tickets", "type": "text", "required": True},
               {"name": "email", "label": "Email for the tickets", "type": "email", "required": True}]


def _halls(site: SiteBuilder, venues: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The seating plan of the seated halls: venue id -> rows (letters, front first), seats per row, VIP rows."""
    rng = site.rng
    halls = {}
    for venue in rng.sample(venues, 2):
        rows = list(string.ascii_uppercase[:rng.randint(6, 8)])
        halls[venue["id"]] = {"rows": rows, "per_row": rng.randint(10, 14), "vip_rows": rows[:2]}
    return halls


def seat_maps(site: SiteBuilder, venues: list[dict[str, Any]], events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Seat maps for the events in seated halls (set on each as `seats`) and their pages; returns those events."""
    rng = site.rng
    halls = _halls(site, venues)
    seated = [e for e in events if e["venue_id"] in halls]
    for event in seated:
        hall = halls[event["venue_id"]]
        prices = {t["name"]: t for t in event["tickets"]}
        rows = []
        for row in hall["rows"]:
            zone = ZONES[0] if row in hall["vip_rows"] else ZONES[1]
            ticket = prices[zone]
            share = 1.0 if ticket["sold_out"] else rng.uniform(0.2, 0.6)
            rows.append({"row": row, "zone": zone, "price": ticket["price"], "seats": [
                {"id": f"{row}{n}", "n": n, "taken": rng.random() < share} for n in range(1, hall["per_row"] + 1)]})
        event["seats"] = rows
        for zone in ZONES:  # the event page counts a zone's free seats as its ticket type's number left
            prices[zone]["free_seats"] = free_in_zone(event, zone)
            prices[zone]["zone_rows"] = [r["row"] for r in rows if r["zone"] == zone]
        event["seat_zones"] = [{"name": z, "price": prices[z]["price"], "price_text": prices[z]["price_text"]} for z in ZONES]
    site.add_state(seat_orders=[])
    taken = {e["id"]: [s["id"] for r in e["seats"] for s in r["seats"] if s["taken"]] for e in seated}
    # seats picked on the map and seats a ticket-type order got as "best available" are one pool: an
    # order of either kind never gets a seat the other holds
    site.add_record_rules("seat_orders", {
        "kind": "free_items", "field": "seats", "by": "event", "max": MAX_SEATS, "shared": ["ticket_orders"],
        "offered": {e["id"]: [s["id"] for r in e["seats"] for s in r["seats"]] for e in seated}, "taken": taken,
        "error": "Sorry, these seats are no longer available: {items}."})
    site.add_record_rules("ticket_orders", {
        "kind": "best_items", "field": "seats", "by": "event", "shared": ["seat_orders"], "taken": taken,
        "counts": {f"qty_{t['slug']}": t["name"] for t in seated[0]["tickets"] if t["name"] in ZONES} if seated else {},
        "rows": {e["id"]: {z: [[s["id"] for s in r["seats"]] for r in e["seats"] if r["zone"] == z] for z in ZONES}
                 for e in seated},
        "error": "Sorry, not enough {zone} tickets are left for this event ({free} free, {count} asked for)."})
    for event in seated:
        site.page(f"/events/{event['slug']}/seats", "events/seats.html.j2", title=f"Seats: {event['name']}",
                  event=event, fields=SEAT_FIELDS, max_seats=MAX_SEATS, page_kind="seat-map")
    return seated


def free_in_zone(event: dict[str, Any], zone: str) -> int:
    """How many seats of the zone are free at the start: what a "best available" order may ask for."""
    return sum(not s["taken"] for r in event.get("seats", []) if r["zone"] == zone for s in r["seats"])


def _runs(row: dict[str, Any]) -> list[list[str]]:
    """The row's runs of adjacent free seats, front to back in seat order."""
    runs: list[list[str]] = [[]]
    for seat in row["seats"]:
        if seat["taken"]:
            runs.append([])
        else:
            runs[-1].append(seat["id"])
    return [r for r in runs if r]


def together(event: dict[str, Any], zone: str, count: int) -> list[str] | None:
    """The seats "`count` together in `zone`, nearest the stage" names: in the front-most row of the zone
    with `count` adjacent free seats, the one such block there is; None when that row has several."""
    for row in [r for r in event["seats"] if r["zone"] == zone]:
        fits = [run for run in _runs(row) if len(run) >= count]
        if fits:
            return fits[0] if len(fits) == 1 and len(fits[0]) == count else None
    return None


def _buy(site: SiteBuilder, event: dict[str, Any], seats: list[str], person: dict[str, Any]) -> Plan:
    return ([{"op": "click", "sel": "#choose-seats"}] + [{"op": "click", "sel": f"[data-seat={s}]"} for s in seats]
            + fill_plan(site, SEAT_FIELDS, person) + [{"op": "click", "sel": "#buy-seats"}])


def _checks(event: dict[str, Any], seats: list[str], person: dict[str, Any]) -> list:
    return [state_count("seat_orders", 1), state_is("seat_orders.0.event", event["id"]),
            state_is("seat_orders.0.seats", ",".join(seats), "set"),
            state_is("seat_orders.0.name", person["name"]), state_is("seat_orders.0.email", person["email"])]


def seat_tasks(site: SiteBuilder, seated: list[dict[str, Any]], open_event: Any) -> None:
    """One seat purchase (seats together nearest the stage, else named seats) and a free-seat count."""
    rng = site.rng
    start = "/events"
    if not seated:
        return
    person = make_people(rng, 1)[0]
    person = {"name": person["name"], "email": person["email"]}
    options = [(e, z, c) for e in seated for z in ZONES for c in (2, 3, 4)]
    rng.shuffle(options)
    found = next(((e, z, c, s) for e, z, c in options if (s := together(e, z, c))), None)
    if found:
        event, zone, count, seats = found
        plan = open_event(event) + _buy(site, event, seats, person)
        # the "do everything" run buys other free seats too (another zone's, else more of this one)
        free = ([s["id"] for r in event["seats"] if r["zone"] != zone for s in r["seats"] if not s["taken"]]
                or [s["id"] for r in event["seats"] for s in r["seats"] if not s["taken"] and s["id"] not in seats])[:2]
        act(site, TOGETHER, {"count": count, "zone": ZONE_WORDS[zone], "event": event["name"], **person}, start, plan,
            _checks(event, seats, person), "One order for that event, of the front-most block of that many adjacent free seats in the zone",
            maximal=plan + [{"op": "goto", "url": site.url(f"/events/{event['slug']}/seats")}]
            + [{"op": "click", "sel": f"[data-seat={s}]"} for s in free] + fill_plan(site, SEAT_FIELDS, person)
            + [{"op": "click", "sel": "#buy-seats"}])
    else:
        event = rng.choice(seated)
        row = rng.choice([r for r in event["seats"] if any(len(run) >= 2 for run in _runs(r))] or [None])
        if row is not None:
            run = rng.choice([run for run in _runs(row) if len(run) >= 2])
            seats = run[:2]
            act(site, NAMED, {"seats": f"{seats[0][1:]} and {seats[1][1:]}", "row": row["row"], "event": event["name"],
                              **person}, start, open_event(event) + _buy(site, event, seats, person),
                _checks(event, seats, person), "One order for that event, of exactly the named seats")

    event = rng.choice(seated)
    for row in rng.sample(event["seats"], len(event["seats"])):
        gold = sum(not s["taken"] for s in row["seats"])
        confusers = count_confusers(gold, [len(row["seats"]) - gold, len(row["seats"])])
        if gold >= 1 and confusers:
            ask(site, FREE_IN_ROW, {"row": row["row"], "event": event["name"]}, start,
                open_event(event) + [{"op": "click", "sel": "#choose-seats"}, {"op": "reach", "sel": f"[data-seat-row={row['row']}]"}],
                str(gold), answer_count(gold, confusers, unit="seats"), [str(c) for c in confusers],
                "The number of free seats in that row of the event's seat map")
            return
