"""Local services: providers by trade and area with ratings, each provider's price list, reviews and
visit slots, requesting a quote and booking a visit slot (both stored server-side)."""
from __future__ import annotations

import datetime as dt
from typing import Any

from weblica.synth.checks import answer_count, answer_text
from weblica.synth.data import BASE_DATE, CITIES, FIRST_NAMES, LAST_NAMES, make_people, slugify
from weblica.synth.genres.kit import (MAXIMAL_EXTRAS, Plan, act, amounts, ask, day_text, fill_plan, record_checks)
from weblica.synth.genres.local_services.intents import BOOK_BEST, BOOK_SLOT, FIVE_STARS, JOB_PRICE, QUOTE, WORST_REVIEW
from weblica.synth.site import SiteBuilder
from weblica.synth.skills.common import count_confusers, distinct, price_check, shown_money, unique_extreme

JOBS = {"Plumbing": ["Leaking tap repair", "Boiler service", "Toilet replacement", "Drain unblocking"],
        "Electrical": ["Socket installation", "Fuse box check", "Light fitting", "Safety inspection"],
        "Cleaning": ["Deep clean", "End of tenancy clean", "Window cleaning", "Carpet cleaning"],
        "Gardening": ["Lawn mowing", "Hedge trimming", "Garden clearance", "Tree pruning"],
        "Painting": ["Room painting", "Fence staining", "Door painting", "Wallpaper removal"],
        "Moving": ["Studio move", "Two-bedroom move", "Piano move", "Packing service"]}
REVIEW_TEXT = ["On time and tidy.", "Fair price, good work.", "Had to come back twice.", "Friendly and quick.",
               "Would book again.", "Left a mess behind.", "Explained everything clearly.", "A bit pricey."]


VISIT_FIELDS = [{"name": "name", "label": "Your name", "type": "text", "required": True},
                {"name": "email", "label": "Email", "type": "email", "required": True},
                {"name": "address", "label": "Street address", "type": "text", "required": True},
                {"name": "details", "label": "What needs doing? (optional)", "type": "textarea"}]


def quote_fields(provider: dict[str, Any]) -> list[dict[str, Any]]:
    """The quote form of one provider: its own jobs to choose from (a list of every trade's would run
    off the screen)."""
    return [{"name": "job", "label": "Job", "type": "select", "options": [q["job"] for q in provider["prices"]],
             "required": True},
            {"name": "name", "label": "Your name", "type": "text", "required": True},
            {"name": "email", "label": "Email", "type": "email", "required": True},
            {"name": "urgent", "label": "This is urgent (within 48 hours)", "type": "checkbox"},
            {"name": "details", "label": "Details (optional)", "type": "textarea"}]


def _providers(site: SiteBuilder) -> list[dict[str, Any]]:
    rng = site.rng
    areas = rng.sample(CITIES, 3)
    trades = [k for k in site.cat["kinds"] if k in JOBS] or list(JOBS)
    names = list(site.cat["makers"]) + [f"{rng.choice(LAST_NAMES)} & Sons {t}" for t in rng.sample(trades, 4)] + \
        [f"{rng.choice(FIRST_NAMES)}'s {t}" for t in rng.sample(trades, 4)]
    decimals = site.fmt["decimals"]
    low, high = site.cat["price"]
    providers, slots = [], []
    for index, name in enumerate(dict.fromkeys(names)):
        trade = next((t for t in trades if t.lower() in name.lower()), trades[index % len(trades)])
        prices = amounts(rng, low if decimals else low * 100, high if decimals else high * 100, decimals, 4)
        reviews = [{"author": f"{rng.choice(FIRST_NAMES)} {rng.choice(LAST_NAMES)[0]}.", "stars": rng.randint(2, 5),
                    "text": rng.choice(REVIEW_TEXT)} for _ in range(rng.randint(3, 6))]
        provider = {"id": f"v{index + 1}", "name": name, "slug": slugify(name), "trade": trade,
                    "areas": sorted(rng.sample(areas, rng.randint(1, 2))), "reviews": reviews,
                    "rating": round(sum(r["stars"] for r in reviews) / len(reviews), 2),
                    "prices": [{"job": j, "price": p} for j, p in zip(JOBS[trade], prices)], "slots": []}
        for day in sorted(rng.sample(range(1, 8), 2)):
            iso = (BASE_DATE + dt.timedelta(days=day)).isoformat()
            for hour in sorted(rng.sample(range(8, 18), 3)):
                slot = {"id": f"s{len(slots) + 1}", "provider": provider["id"], "day": iso, "time": f"{hour:02d}:00",
                        "open": rng.random() < 0.7}
                slot["when"] = f"{iso} {slot['time']}"
                slots.append(slot)
                provider["slots"].append(slot)
        providers.append(provider)
    return providers


def build_flows(site: SiteBuilder) -> None:
    providers = _providers(site)
    site.add_data(providers=providers)
    site.add_state(visits=[], quotes=[])
    areas = sorted({a for p in providers for a in p["areas"]})
    trades = sorted({p["trade"] for p in providers})
    filters = [{"name": "trade", "label": "Service", "type": "select", "options": trades},
               {"name": "area", "label": "Area", "type": "select", "options": areas}]
    by_id = {p["id"]: p for p in providers}
    site.add_nav(("Find a pro", "/pros"))
    site.page("/pros", "local_services/directory.html.j2", title="Find a pro", heading="Local pros",
              fields=filters, providers=providers, page_kind="provider-directory")
    for p in providers:
        site.page(f"/pros/{p['slug']}", "local_services/provider.html.j2", title=p["name"], provider=p,
                  page_kind="provider")
        site.page(f"/pros/{p['slug']}/quote", "local_services/quote.html.j2", title=f"Quote from {p['name']}",
                  heading="Request a quote", fields=quote_fields(p), provider=p, page_kind="quote-form")
    site.page("/visits/new", "local_services/book.html.j2", title="Book a visit", heading="Book a visit",
              fields=VISIT_FIELDS, slots=[s for p in providers for s in p["slots"] if s["open"]], providers=by_id,
              page_kind="visit-form")
    site.page("/visits/booked", "message.html.j2", title="Visit booked", heading="Your visit is booked",
              text="The provider will confirm by email.", back="/pros", page_kind="done")
    site.page("/quotes/sent", "message.html.j2", title="Quote requested", heading="Quote request sent",
              text="Expect an answer within two working days.", back="/pros", page_kind="done")
    _tasks(site, providers, filters)


def _open(provider: dict[str, Any]) -> Plan:
    return [{"op": "click", "sel": f"[data-row={provider['id']}] [data-provider-link]"}]


def _book(site: SiteBuilder, slot: dict[str, Any], values: dict[str, Any]) -> Plan:
    return [{"op": "click", "sel": f"[data-slot-link={slot['id']}]"}] + fill_plan(site, VISIT_FIELDS, values) + \
        [{"op": "click", "sel": "#submit"}]


def _tasks(site: SiteBuilder, providers: list[dict[str, Any]], filters: list[dict[str, Any]]) -> None:
    rng = site.rng
    start = "/pros"
    people = make_people(rng, 3)
    streets = ["12 Mill Lane", "4 Station Road", "88 Park Avenue", "31 Church Street", "7 Orchard Close"]

    pairs = sorted({(p["trade"], a) for p in providers for a in p["areas"]})
    rng.shuffle(pairs)
    for trade, area in pairs:
        there = [p for p in providers if p["trade"] == trade and area in p["areas"]]
        best = unique_extreme(there, "rating", highest=True)
        free = [s for s in best["slots"] if s["open"]] if best else []
        if len(there) < 2 or not free:
            continue
        first = min(free, key=lambda s: s["when"])
        values = {"name": people[0]["name"], "email": people[0]["email"], "address": rng.choice(streets)}
        plan = fill_plan(site, filters, {"trade": trade, "area": area}) + \
            [{"op": "click", "sel": "#find-pros"}, {"op": "click", "sel": "a[data-sort='-rating']"}] + _open(best) + \
            _book(site, first, values)
        more = [s for s in free if s is not first][:MAXIMAL_EXTRAS]
        act(site, BOOK_BEST, {"trade": trade.lower(), "area": area, **values}, start, plan,
            record_checks("visits", VISIT_FIELDS, values, {"slot": first["id"]}), "One visit, in the first free slot of the best-rated provider of that trade there",
            maximal=plan + [st for s in more for st in
                            [{"op": "goto", "url": site.url(f"/pros/{best['slug']}")}] + _book(site, s, values)])
        break

    provider = rng.choice([p for p in providers if any(s["open"] for s in p["slots"])])
    slot = rng.choice([s for s in provider["slots"] if s["open"]])
    values = {"name": people[1]["name"], "email": people[1]["email"], "address": rng.choice(streets)}
    act(site, BOOK_SLOT, {"provider": provider["name"], "day": day_text(slot["day"]), "time": slot["time"], **values},
        start, _open(provider) + _book(site, slot, values),
        record_checks("visits", VISIT_FIELDS, values, {"slot": slot["id"]}), "One visit in that slot")

    provider = rng.choice(providers)
    job = rng.choice(provider["prices"])["job"]
    values = {"job": job, "name": people[2]["name"], "email": people[2]["email"]}
    quote = quote_fields(provider)
    act(site, QUOTE, {"provider": provider["name"], "job": job.lower(), "name": values["name"], "email": values["email"]},
        start, _open(provider) + [{"op": "click", "sel": "#request-quote"}] + fill_plan(site, quote, values) +
        [{"op": "click", "sel": "#send-quote"}],
        record_checks("quotes", quote, values, {"provider": provider["id"]}), "One quote request to that provider for that job")

    def job_price() -> None:
        provider = rng.choice(providers)
        line = rng.choice(provider["prices"])
        others = [q["price"] for q in provider["prices"]]
        ask(site, JOB_PRICE, {"provider": provider["name"], "job": line["job"].lower()}, start,
            _open(provider) + [{"op": "reach", "sel": f"[data-price-line='{line['job']}']"}], site.money(line["price"]),
            price_check(site, line["price"], others), shown_money(site, distinct(others, line["price"])), "That job's price on the provider's price list")

    def five_stars() -> None:
        for provider in rng.sample(providers, len(providers)):
            gold = sum(r["stars"] == 5 for r in provider["reviews"])
            confusers = count_confusers(gold, [len(provider["reviews"]), sum(r["stars"] >= 4 for r in provider["reviews"])])
            if gold >= 1 and confusers:
                ask(site, FIVE_STARS, {"provider": provider["name"]}, start,
                    _open(provider) + [{"op": "reach", "sel": "[data-reviews]"}], str(gold),
                    answer_count(gold, confusers, unit="reviews"), [str(c) for c in confusers], "The number of five-star reviews")
                return

    def worst() -> None:
        for provider in rng.sample(providers, len(providers)):
            low = unique_extreme(provider["reviews"], "stars")
            authors = [r["author"] for r in provider["reviews"]]
            if low is not None and authors.count(low["author"]) == 1:
                ask(site, WORST_REVIEW, {"provider": provider["name"]}, start,
                    _open(provider) + [{"op": "reach", "sel": "[data-reviews]"}], low["author"],
                    answer_text(low["author"], distinct(authors, low["author"])), distinct(authors, low["author"]),
                    "The author of the lowest-rated review")
                return

    rng.choice([job_price, five_stars, worst])()
