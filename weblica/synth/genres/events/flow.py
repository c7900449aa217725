"""Events and ticketing: a calendar of events by day, venue pages with what is on there, event pages
with ticket types (price, how many are left) and quantities per type, and the ticket order stored
server-side. Events in the seated halls also have a seat map (seats.py), which is the stock of
their seated types (the event page shows a zone's free seats as "N seats left"); every other ticket
type has a number left ("N left"), and the server refuses an order for more than that (counting the
episode's earlier orders; weblica/serve/rules.py `in_stock`), an order of no ticket at all, and a
quantity that is no whole number or names a ticket type the event does not have; so does the page."""
from __future__ import annotations

import datetime as dt
import random
from typing import Any

from weblica.synth.checks import answer_date
from weblica.synth.data import BASE_DATE, STREETS, catalog_item, make_people, price_scale, slugify
from weblica.synth.entities import kind_adjectives
from weblica.synth.genres.events.intents import BUY, TOTAL, WHEN, WHERE
from weblica.synth.genres.events.seats import ZONES, free_in_zone, seat_maps, seat_tasks
from weblica.synth.genres.kit import Plan, act, amounts, ask, day_text, fill_plan, record_checks
from weblica.synth.site import SiteBuilder
from weblica.synth.skills.common import distinct, name_check, price_check

TICKETS = ["General admission", "Reserved seat", "VIP"]
# how an instruction names an event of a kind ("the comedy show at ...")
KIND_WORDS = {"Sports": "sports match", "Theatre": "theatre show", "Comedy": "comedy show"}
# a ticket type before "tickets" ("2 reserved-seat tickets"); the others read as they are
TICKET_MODIFIERS = {"Reserved seat": "reserved-seat"}
# who an event is by, per kind: a band plays a concert, a company stages a play, two teams meet in a derby
BANDS = ["The Lanterns", "Nova Quartet", "City Brass", "The Driftwood Band", "Northern Lights Choir",
         "Ruby & The Reeds", "Atlas Crew", "The Paper Kites Trio", "Kai Lennox", "Ivy Marlowe"]  # bands and solo acts
COMPANIES = ["Lantern Theatre Company", "Northgate Players", "Bell Street Rep", "Harbour Stage Company",
             "The Open Door Players"]
COMEDIANS = ["Maya Ortiz", "Juno Park", "Sam Okafor", "Lena Brandt", "Theo Marsh"]
TEAMS = ["Harbour United", "Northgate Rovers", "Riverside Athletic", "Westfield City", "Old Mill Town",
         "Eastbrook Wanderers", "Kingsbridge FC", "Southport Albion"]
TOWNS = ["Riverside", "Harbour", "Northfield", "Westgate", "Millbrook"]
HOSTS = ["Ivy Marlowe", "Dana Whitfield", "Omar Reyes", "Kai Lennox"]  # who leads a workshop
TOPICS = ["Songwriting", "Stage Lighting", "Drumming", "Improv", "Vocal", "Sound Engineering"]
# how many tickets of a type that is not sold out are left: a few for some, plenty for most
LEFT = [1, 2, 3, 4, 5, 6, 8, 12, 12, 20, 30, 45, 80, 150]
PROGRAMME = 18  # events on a site whose skill lists no catalog (otherwise the catalog's size)
EVENT_TIMES = ["18:30", "19:00", "19:30", "20:00", "21:00"]  # doors open half an hour before


def _said(name: str) -> str:
    return name if name.isupper() else name.lower()


def _before_tickets(name: str) -> str:
    return TICKET_MODIFIERS.get(name, _said(name))


def _event_name(site: SiteBuilder, kind: str) -> tuple[str, str]:
    """A name that agrees with the event's kind, and its noun: the noun is the kind's own ("Live Set",
    not "Play"), and who it is by fits it (a band's concert, a company's play, a comedian's hour, two
    teams' derby)."""
    rng = site.rng
    noun = rng.choice(site.cat["kinds"][kind])
    title = f"{rng.choice(kind_adjectives(site.cat, kind))} {noun}"
    if kind == "Sports":
        home, away = rng.sample(TEAMS, 2)
        return f"{noun}: {home} vs {away}", noun
    if kind == "Workshop":
        return f"{rng.choice(TOPICS)} {noun} with {rng.choice(HOSTS)}", noun
    if kind == "Festival":
        return f"{rng.choice(TOWNS)} {title}", noun
    by = {"Theatre": COMPANIES, "Comedy": COMEDIANS}.get(kind, BANDS)
    return f"{rng.choice(by)}: {title}", noun


def programme(site: SiteBuilder, count: int = PROGRAMME) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The site's venues and its one programme of events (made once per site): each event has a kind, a
    venue, a day and time and its ticket types (general admission the cheapest, unique across events,
    so "the cheapest concert" has one answer; all on the site's one price scale, `price_scale`). The
    catalog (`programme_catalog`) and the flow's pages are both made from it."""
    if "events" in site.data:
        return site.data["venues"], site.data["events"]
    rng = site.rng
    venues = [{"id": f"v{i + 1}", "name": name, "slug": slugify(name),
               "address": f"{rng.randint(1, 200)} {rng.choice(STREETS)}", "capacity": rng.randrange(200, 5000, 50)}
              for i, name in enumerate(site.cat["makers"])]
    events: list[dict[str, Any]] = []
    scale, decimals = price_scale(site.fmt), site.fmt["decimals"]
    low, high = site.cat["price"]
    admissions = amounts(rng, low, high * 0.55, decimals, count)  # general admission: one price per event
    names: set[str] = set()
    for index in range(count):
        kind = rng.choice(list(site.cat["kinds"]))
        name, noun = _event_name(site, kind)
        while name in names:
            name, noun = _event_name(site, kind)
        names.add(name)
        venue = rng.choice(venues)
        reserved = admissions[index] + amounts(rng, 4, 30, decimals, 1)[0]
        prices = [p * scale for p in (admissions[index], round(reserved, 2), round(reserved + 40, 2))]
        tickets = [{"name": t, "slug": slugify(t).replace("-", "_"), "price": float(p), "price_text": site.money(p),
                    "sold_out": t != TICKETS[0] and rng.random() < 0.2} for t, p in zip(TICKETS, prices)]
        day = (BASE_DATE + dt.timedelta(days=rng.randint(3, 40))).isoformat()
        events.append({"id": f"e{index + 1}", "name": name, "noun": noun, "slug": slugify(f"{name} {index + 1}"),
                       "kind": kind, "venue": venue["name"], "venue_slug": venue["slug"], "venue_id": venue["id"],
                       "day": day, "time": rng.choice(EVENT_TIMES), "tickets": tickets,
                       "from_text": tickets[0]["price_text"]})
    events.sort(key=lambda e: (e["day"], e["time"], e["id"]))
    for venue in venues:
        venue["events"] = [e for e in events if e["venue_id"] == venue["id"]]
    site.add_data(venues=venues, events=events)
    return venues, events


def programme_catalog(site: SiteBuilder, count: int) -> list[dict[str, Any]]:
    """The catalog of an events site: its programme's events as catalog entities (name, kind, venue as
    the maker, the general admission price, the day, doors opening before the start), each linking to
    its event page, so a catalog task and a ticket task speak of the same events."""
    _, events = programme(site, count)
    rng = site.rng
    running = site.cat["attr"]
    items = []
    for index, event in enumerate(events):
        start = dt.datetime.strptime(event["time"], "%H:%M")
        facts = {"Doors open": (start - dt.timedelta(minutes=30)).strftime("%H:%M"),
                 **{label: rng.choice(values) for label, values in site.cat["facts"].items() if label != "Doors open"}}
        item = catalog_item(site.cat, rng, index, {"name": event["name"], "kind": event["kind"], "noun": event["noun"]},
                            event["tickets"][0]["price"], maker=event["venue"], date=event["day"], facts=facts,
                            attr=rng.randrange(int(running["min"]), int(running["max"]) + 1, int(running["step"])))
        item["page"] = f"/events/{event['slug']}"
        event["item"] = item["id"]
        items.append(item)
    return items



def _stock(site: SiteBuilder, events: list[dict[str, Any]]) -> None:
    """How many tickets of each type are left (`left` on the ticket; 0 when sold out), except the types a
    seated event's seat map sells, and the server rule that holds orders to it. Drawn from a generator
    of its own, so the events, seats and tasks drawn before it stay as they were."""
    rng = random.Random(f"tickets-left:{site.spec.site_id}:{site.spec.seed}")
    for event in events:
        for ticket in event["tickets"]:
            if not (event.get("seats") and ticket["name"] in ZONES):
                ticket["left"] = 0 if ticket["sold_out"] else rng.choice(LEFT)
    site.add_record_rules("ticket_orders", {
        "kind": "in_stock", "by": "event", "noun": "event", "prefix": "qty_", "item": "ticket type",
        "empty": "Choose at least one ticket.", "counts": {f"qty_{t['slug']}": t["name"] for t in events[0]["tickets"]},
        "left": {e["id"]: {f"qty_{t['slug']}": t["left"] for t in e["tickets"] if "left" in t} for e in events},
        "error": "Sorry, only {left} {what} tickets are left for this event ({count} asked for)."})


def available(event: dict[str, Any], ticket: dict[str, Any]) -> int:
    """How many tickets of the type can be had at the start: its number left, or its zone's free seats."""
    return ticket["left"] if "left" in ticket else free_in_zone(event, ticket["name"])


def _fields(event: dict[str, Any]) -> list[dict[str, Any]]:
    return ([{"name": f"qty_{t['slug']}", "label": f"{t['name']} ({t['price_text']})", "type": "number", "min": 0,
              "max": min(10, available(event, t)), "value": 0} for t in event["tickets"] if available(event, t)]
            + [{"name": "name", "label": "Name on the tickets", "type": "text", "required": True},
               {"name": "email", "label": "Email for the tickets", "type": "email", "required": True}])


def build_flows(site: SiteBuilder) -> None:
    venues, events = programme(site)
    seated = seat_maps(site, venues, events)
    _stock(site, events)  # programme() stored venues and events in the site's data
    site.add_state(ticket_orders=[])
    site.add_nav(("Events", "/events"), ("Venues", "/venues"), ("Your tickets", "/tickets"))
    days = [(d, [e for e in events if e["day"] == d]) for d in dict.fromkeys(e["day"] for e in events)]
    site.page("/events", "events/calendar.html.j2", title="Events", heading="What's on", days=days,
              events=events, page_kind="event-calendar")
    for event in events:
        site.page(f"/events/{event['slug']}", "events/event.html.j2", title=event["name"], event=event,
                  fields=_fields(event), page_kind="event",
                  more=[e for e in events if e["venue_id"] == event["venue_id"] and e is not event][:4])
    site.page("/venues", "events/venues.html.j2", title="Venues", heading="Venues", venues=venues,
              page_kind="venues")
    for venue in venues:
        site.page(f"/venues/{venue['slug']}", "events/venue.html.j2", title=venue["name"], venue=venue,
                  page_kind="venue")
    site.page("/tickets", "events/tickets.html.j2", title="Your tickets", heading="Your tickets",
              page_kind="tickets")
    _tasks(site, venues, events)
    seat_tasks(site, seated, _open)


def _open(event: dict[str, Any]) -> Plan:
    return [{"op": "click", "sel": f"[data-event={event['id']}] a.item-name"}]


def _tasks(site: SiteBuilder, venues: list[dict[str, Any]], events: list[dict[str, Any]]) -> None:
    rng = site.rng
    start = "/events"  # the flow's own page: a site's nav may be folded into a menu
    for event in rng.sample(events, len(events)):
        same = [e for e in events if (e["kind"], e["venue"], e["day"]) == (event["kind"], event["venue"], event["day"])]
        # a type the order and the "buy everything" run's one more can both have (left or free seats)
        open_types = [t for t in event["tickets"] if available(event, t) >= 2]
        if len(same) != 1 or len(open_types) < 2:
            continue
        a, b = rng.sample(open_types, 2)
        person = make_people(rng, 1)[0]
        values = {f"qty_{a['slug']}": rng.randint(1, min(4, available(event, a) - 1)),
                  f"qty_{b['slug']}": rng.randint(1, min(3, available(event, b) - 1)),
                  "name": person["name"], "email": person["email"]}
        fields = _fields(event)
        plan = [{"op": "click", "sel": "a[href='/venues']"},
                {"op": "click", "sel": f"[data-venue={event['venue_id']}] a"},
                {"op": "click", "sel": f"[data-venue-events] [data-event={event['id']}] a"}] + \
            fill_plan(site, fields, values) + [{"op": "click", "sel": "#buy-tickets"}]
        maximal = plan + [{"op": "goto", "url": site.url(f"/events/{event['slug']}")}] + \
            fill_plan(site, fields, {f["name"]: 1 for f in fields if f["type"] == "number"}) + \
            fill_plan(site, fields, {"name": person["name"], "email": person["email"]}) + [{"op": "click", "sel": "#buy-tickets"}]
        act(site, BUY, {"count_a": values[f"qty_{a['slug']}"], "type_a": _said(a["name"]),
                        "count_b": values[f"qty_{b['slug']}"], "type_b": _said(b["name"]),
                        "kind": KIND_WORDS.get(event["kind"], event["kind"].lower()),
                        "venue": event["venue"], "day": day_text(event["day"]), "name": person["name"],
                        "email": person["email"]}, start, plan,
            record_checks("ticket_orders", fields, values, {"event": event["id"]}), "One order for that event with those quantities per ticket type", maximal=maximal)
        break

    # never a price for more tickets than there are
    event = rng.choice([e for e in events if any(available(e, t) >= 2 for t in e["tickets"])])
    ticket = rng.choice([t for t in event["tickets"] if available(event, t) >= 2])
    count = rng.randint(2, min(5, available(event, ticket)))
    gold = count * ticket["price"]
    wrong = [ticket["price"]] + [count * t["price"] for t in event["tickets"] if t is not ticket] + [gold + ticket["price"]]
    ask(site, TOTAL, {"count": count, "type": _before_tickets(ticket["name"]), "event": event["name"]}, start,
        _open(event) + [{"op": "reach", "sel": "[data-ticket-types]"}], site.money(gold), price_check(site, gold, wrong),
        [site.money(w) for w in distinct(wrong, gold)], "The ticket type's price times the count")

    event = rng.choice(events)
    names = [v["name"] for v in venues]
    ask(site, WHERE, {"event": event["name"]}, start, _open(event) + [{"op": "reach", "sel": "[data-event-venue]"}],
        event["venue"], name_check(event["venue"], names), distinct(names, event["venue"]), "The venue on the event's page")

    event = rng.choice(events)
    days = [e["day"] for e in events]
    ask(site, WHEN, {"event": event["name"]}, start, _open(event) + [{"op": "reach", "sel": "[data-event-date]"}],
        site.date(event["day"]), answer_date(event["day"], distinct(days, event["day"]), site.locale),
        [site.date(d) for d in distinct(days, event["day"])], "The event's date")
