"""Government: a service finder, eligibility questionnaires (yes/no and numeric questions -> eligible
or not, with the reason), a multi-step application form stored server-side, an office locator and
a fee table."""
from __future__ import annotations

from typing import Any

from weblica.synth.checks import answer_count, answer_text
from weblica.synth.data import price_scale, slugify
from weblica.synth.genres.government.intents import (APPLY, ELIGIBLE, FEE_DIFFERENCE, OFFICE_ADDRESS, OFFICE_FOR,
                                                     PROCESSING, SATURDAY)
from weblica.synth.fake import home_city, places
from weblica.synth.fake import people as fake_people
from weblica.synth.genres.kit import Plan, act, amounts, ask, fill_plan, record_checks
from weblica.synth.intents import article
from weblica.synth.site import SiteBuilder
from weblica.synth.skills.common import count_confusers, distinct, name_check, price_check, shown_money

# name, topic, what applying needs; the eligibility rules of those that have a questionnaire
SERVICES = [("Renew a passport", "Passports"), ("First adult passport", "Passports"),
            ("Apply for a driving licence", "Driving"), ("Replace a driving licence", "Driving"),
            ("Residential parking permit", "Parking"), ("Visitor parking permit", "Parking"),
            ("Housing benefit", "Benefits"), ("Child benefit", "Benefits"), ("Senior transit pass", "Benefits"),
            ("Register a business", "Business"), ("Street trading licence", "Business"),
            ("Copy of a birth certificate", "Records")]
RULES = {
    "Housing benefit": [("resident", "is", "Yes", "Only residents of the city can claim housing benefit."),
                        ("age", "min", 18, "You must be 18 or older to claim."),
                        ("income", "max", "housing_limit", "Your yearly income is above the limit for housing benefit.")],
    "Child benefit": [("children", "is", "Yes", "Child benefit is paid only for children living with you."),
                      ("income", "max", "child_limit", "Your yearly income is above the limit for child benefit.")],
    "Senior transit pass": [("resident", "is", "Yes", "The pass is issued to residents only."),
                            ("age", "min", 65, "You must be 65 or older for the senior pass.")]}
APPLY_SERVICE = "Residential parking permit"

TOPICS = ["Passports", "Driving", "Parking", "Benefits", "Business", "Records"]
FINDER_FIELDS = [{"name": "q", "label": "What do you need?", "type": "search", "placeholder": "e.g. passport, parking"},
                 {"name": "topic", "label": "Topic", "type": "select", "options": TOPICS}]
ELIGIBILITY_FIELDS = [{"name": "resident", "label": "Do you live in the city?", "type": "radio", "options": ["Yes", "No"],
                       "required": True},
                      {"name": "age", "label": "Your age", "type": "number", "min": 0, "max": 120, "required": True},
                      {"name": "income", "label": "Your yearly household income", "type": "number", "min": 0,
                       "required": True},
                      {"name": "children", "label": "Do children under 16 live with you?", "type": "radio",
                       "options": ["Yes", "No"], "required": True}]


def _apply_steps(districts: list[str]) -> list[tuple[str, list[dict[str, Any]]]]:
    return [("Applicant", [{"name": "name", "label": "Full name", "type": "text", "required": True},
                           {"name": "email", "label": "Email", "type": "email", "required": True},
                           {"name": "phone", "label": "Phone (optional)", "type": "tel"}]),
            ("Address and vehicle", [{"name": "street", "label": "Street address", "type": "text", "required": True},
                                     {"name": "district", "label": "District", "type": "select", "options": districts,
                                      "required": True},
                                     {"name": "plate", "label": "Vehicle registration number", "type": "text",
                                      "required": True}]),
            ("Processing and declaration", [{"name": "speed", "label": "Processing", "type": "radio",
                                             "options": ["Standard", "Express"], "required": True},
                                            {"name": "declare", "label": "I declare the details are true",
                                             "type": "checkbox"}])]


def _office_data(site: SiteBuilder) -> tuple[list[dict[str, Any]], list[dict[str, Any]], dict[str, float]]:
    rng = site.rng
    decimals = site.fmt["decimals"]
    scale = price_scale(site.fmt)
    fees = amounts(rng, 5 * scale, 160 * scale, decimals, len(SERVICES))
    extras = amounts(rng, 8 * scale, 90 * scale, decimals, len(SERVICES))
    services = []
    for (name, topic), fee, extra in zip(SERVICES, fees, extras):
        express = rng.random() < 0.75
        services.append({"name": name, "slug": slugify(name), "topic": topic, "fee": fee,
                         "express": round(fee + extra, 2) if express else None,
                         "days": rng.randint(10, 45), "express_days": rng.randint(2, 7),
                         "questionnaire": name in RULES, "online": name == APPLY_SERVICE or rng.random() < 0.5})
    districts = places(site, "districts", 5)  # its own town's districts (weblica/synth/fake.py)
    offices = []
    for index, district in enumerate(districts + rng.sample(districts, 2)):
        topics = sorted(rng.sample(TOPICS, 3))
        saturday = rng.choice([None, "12:00", "13:00", "14:00", "15:30"])
        offices.append({"id": f"o{index + 1}", "name": f"{district} Service Centre" if index < len(districts)
                        else f"{district} {rng.choice(['Civic Hall', 'Town Hall Annex', 'Citizen Desk'])}",
                        "district": district, "street": f"{rng.randint(1, 180)} {places(site, 'streets', 3)[rng.randint(0, 2)]}",
                        "weekdays": rng.choice(["08:30–17:00", "09:00–18:00", "08:00–16:30"]), "saturday": saturday,
                        "topics": topics})
    limits = {"housing_limit": float(rng.randrange(18, 40) * 1000 * scale),
              "child_limit": float(rng.randrange(45, 90) * 1000 * scale)}
    return services, offices, limits


def _rules(service: str, limits: dict[str, float]) -> list[dict[str, Any]]:
    return [{"field": f, "op": op, "value": limits.get(v, v) if isinstance(v, str) else v, "reason": why}
            for f, op, v, why in RULES[service]]


def decide(rules: list[dict[str, Any]], answers: dict[str, Any]) -> tuple[str, str | None]:
    """What the questionnaire says (the same rules, in the same order, as flows.js applies)."""
    for rule in rules:
        value = answers[rule["field"]]
        fails = value != rule["value"] if rule["op"] == "is" else \
            not value >= rule["value"] if rule["op"] == "min" else not value <= rule["value"]
        if fails:
            return "Not eligible", rule["reason"]
    return "Eligible", None


def build_flows(site: SiteBuilder) -> None:
    services, offices, limits = _office_data(site)
    site.add_data(services=services, offices=offices, eligibility_limits=limits)
    site.add_state(eligibility_checks=[], permit_applications=[])
    districts = sorted({o["district"] for o in offices})
    steps = _apply_steps(districts)
    site.add_nav(("Services", "/services"), ("Offices", "/offices"), ("Fees", "/fees"))
    site.page("/services", "government/services.html.j2", title="Find a service", heading="Find a service",
              services=services, fields=FINDER_FIELDS, page_kind="service-finder")
    for service in services:
        site.page(f"/services/{service['slug']}", "government/service.html.j2", title=service["name"],
                  service=service, apply_slug=slugify(APPLY_SERVICE), page_kind="service")
        if service["questionnaire"]:
            rules = {"service": service["name"], "rules": _rules(service["name"], limits),
                     "pass": f"You can apply for {service['name'].lower()}."}
            site.page(f"/eligibility/{service['slug']}", "government/eligibility.html.j2",
                      title=f"Eligibility: {service['name']}", heading=f"Can you get {service['name'].lower()}?",
                      fields=ELIGIBILITY_FIELDS, rules=rules, service=service, page_kind="eligibility")
    site.page(f"/apply/{slugify(APPLY_SERVICE)}", "government/apply.html.j2", title=f"Apply: {APPLY_SERVICE}",
              heading=f"Apply for a {APPLY_SERVICE.lower()}", steps=steps, service=APPLY_SERVICE,
              page_kind="application")
    site.page("/apply/done", "message.html.j2", title="Application received", heading="Application received",
              text="We will email you when your application has been processed.", back="/services", page_kind="done")
    _start_and_questions(site, services)
    site.page("/offices", "government/offices.html.j2", title="Find an office", heading="Find an office",
              offices=offices, topics=TOPICS, districts=districts, page_kind="office-locator")
    site.page("/fees", "government/fees.html.j2", title="Fees", heading="Fees and processing times",
              services=services, page_kind="fees")
    _tasks(site, services, offices, limits, steps)


def _start_and_questions(site: SiteBuilder, services: list[dict[str, Any]]) -> None:
    """The service's start page ("Start now") and its questions, one per page as GOV.UK services ask them,
    ending on the application form; the answers travel in the query string."""
    slug = slugify(APPLY_SERVICE)
    city = home_city(site)
    site.page("/", "government/start.html.j2", title=f"Apply for a {APPLY_SERVICE.lower()}", service=APPLY_SERVICE,
              services=services, home_city=city, page_kind="home")
    questions = [{"name": "resident", "label": f"Do you live in {city}?", "type": "radio", "options": ["Yes", "No"]},
                 {"name": "vehicle", "label": "Is a vehicle registered to you at this address?", "type": "radio",
                  "options": ["Yes", "No"]},
                 {"name": "permit", "label": "Do you already have a parking permit?", "type": "radio",
                  "options": ["No", "Yes, it is expiring", "Yes, it is valid"]}]
    for number, question in enumerate(questions, 1):
        site.page(f"/check/{number}", "government/question.html.j2", title=question["label"], question=question,
                  service=APPLY_SERVICE, back="/" if number == 1 else f"/check/{number - 1}",
                  next=f"/check/{number + 1}" if number < len(questions) else f"/apply/{slug}", page_kind="question")


def _tasks(site: SiteBuilder, services: list[dict[str, Any]], offices: list[dict[str, Any]],
           limits: dict[str, float], steps: list[tuple[str, list[dict[str, Any]]]]) -> None:
    rng = site.rng
    start = "/services"

    service = rng.choice([s for s in services if s["questionnaire"]])
    rules = _rules(service["name"], limits)
    want_eligible = rng.random() < 0.5
    for _ in range(40):
        answers = {"resident": rng.choice(["Yes", "Yes", "No"]), "age": rng.randint(17, 82),
                   "income": float(rng.randrange(8, 120) * 1000 * price_scale(site.fmt)),
                   "children": rng.choice(["Yes", "No"])}
        result, _ = decide(rules, answers)
        if (result == "Eligible") == want_eligible:
            break
    plan = [{"op": "click", "sel": f"[data-service='{service['slug']}'] a"}, {"op": "click", "sel": "#check-eligibility"}]
    plan += fill_plan(site, ELIGIBILITY_FIELDS, {**answers, "income": str(int(answers["income"]))})
    plan += [{"op": "click", "sel": "#submit"}, {"op": "reach", "sel": "[data-eligibility-result] [data-result]"}]
    other = "Not eligible" if result == "Eligible" else "Eligible"
    said = service["name"].lower()  # "housing benefit" is claimed as such, a pass is "a senior transit pass"
    ask(site, ELIGIBLE, {"service": said if said.endswith("benefit") else article(said), "age": answers["age"],
                         "lives": "I live in the city" if answers["resident"] == "Yes" else "I don't live in the city",
                         "income": site.money(answers["income"]),
                         "children": "I have children under 16 living with me" if answers["children"] == "Yes"
                         else "no children under 16 live with me"},
        start, plan, result, answer_text(result, [other]), [other], "The questionnaire's result for those answers")

    with_express = [s for s in services if s["express"] is not None]
    service = rng.choice(with_express)
    diff = round(service["express"] - service["fee"], 2)
    figures = [service["fee"], service["express"]] + [s["fee"] for s in services] + \
        [s["express"] - s["fee"] for s in with_express if s is not service]
    ask(site, FEE_DIFFERENCE, {"service": service["name"]}, start,
        [{"op": "click", "sel": "a[href='/fees']"}, {"op": "reach", "sel": f"[data-fee-row='{service['slug']}']"}],
        site.money(diff), price_check(site, diff, figures), shown_money(site, distinct(figures, diff)), "Express fee minus standard fee for that service")

    pairs = sorted({(o["district"], t) for o in offices for t in o["topics"]})
    rng.shuffle(pairs)
    names = [o["name"] for o in offices]
    for district, topic in pairs:
        there = [o for o in offices if o["district"] == district]
        handling = [o for o in there if topic in o["topics"]]
        if len(handling) == 1 and len(there) >= 2:  # the district has another office, which does not handle it
            office = handling[0]
            ask(site, OFFICE_FOR, {"district": district, "topic": topic.lower()}, start,
                [{"op": "click", "sel": "a[href='/offices']"}, {"op": "reach", "sel": f"[data-row={office['id']}]"}],
                office["name"], name_check(office["name"], names), distinct([o["name"] for o in there], office["name"]),
                "The one office in that district handling the topic")
            break

    open_saturday = [o for o in offices if o["saturday"]]
    if open_saturday:
        office = rng.choice(open_saturday)
        times = [o["saturday"] for o in open_saturday] + [o["weekdays"].split("–")[1] for o in offices]
        ask(site, SATURDAY, {"office": office["name"]}, start,
            [{"op": "click", "sel": "a[href='/offices']"}, {"op": "reach", "sel": f"[data-row={office['id']}]"}],
            office["saturday"], answer_text(office["saturday"], distinct(times, office["saturday"])),
            distinct(times, office["saturday"]), "The office's Saturday closing time")

    person = fake_people(site, "applicant", 1)[0]
    (_, first), (_, second), (_, third) = steps
    values = {"name": person["name"], "email": person["email"], "street": person["street"],
              "district": rng.choice(second[1]["options"]),
              "plate": f"{rng.choice('BCDFGHKLMNPRST')}{rng.choice('BCDFGHKLMNPRST')}-{rng.randint(100, 999)}-"
                       f"{rng.choice('ABCDEFGHJK')}", "speed": rng.choice(["Standard", "Express"]), "declare": True}
    slug = slugify(APPLY_SERVICE)
    plan: Plan = fill_plan(site, FINDER_FIELDS, {"q": "parking permit"}) + [
        {"op": "click", "sel": "#find-service"}, {"op": "click", "sel": f"[data-service='{slug}'] a"},
        {"op": "click", "sel": "#apply-online"}]
    plan += fill_plan(site, first, values) + [{"op": "click", "sel": "#next-1"}]
    plan += fill_plan(site, second, values) + [{"op": "click", "sel": "#next-2"}]
    plan += fill_plan(site, third, values) + [{"op": "click", "sel": "#submit"}]
    fields = first + second + third
    act(site, APPLY, {**values, "speed": values["speed"].lower()}, start, plan,
        record_checks("permit_applications", fields, values, {"service": APPLY_SERVICE}), "One application with every requested detail")

    def processing() -> None:
        service = rng.choice(services)
        confusers = count_confusers(service["days"], [s["days"] for s in services if s is not service]
                                    + [service["express_days"]])
        if confusers:
            ask(site, PROCESSING, {"service": service["name"]}, start,
                [{"op": "click", "sel": f"[data-service='{service['slug']}'] a"}, {"op": "reach", "sel": "[data-days]"}],
                str(service["days"]), answer_count(service["days"], confusers, unit="days"), [str(c) for c in confusers],
                "The standard processing time on the service's page")

    def office_address() -> None:
        office = rng.choice(offices)
        streets = [o["street"] for o in offices]
        ask(site, OFFICE_ADDRESS, {"office": office["name"]}, start,
            [{"op": "click", "sel": "a[href='/offices']"}, {"op": "reach", "sel": f"[data-row={office['id']}]"}],
            office["street"], answer_text(office["street"], distinct(streets, office["street"])),
            distinct(streets, office["street"]), "The office's street address")

    rng.choice([processing, office_address])()
