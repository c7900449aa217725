"""Healthcare: a doctor directory filtered by specialty and insurance accepted, each doctor's page
with open appointment slots, booking a slot (stored server-side) and the patient's visit history."""
from __future__ import annotations

import datetime as dt
from typing import Any

from weblica.synth.checks import answer_date, answer_text
from weblica.synth.data import BASE_DATE, slugify
from weblica.synth.fake import home_city
from weblica.synth.fake import names as name_source
from weblica.synth.fake import people as fake_people
from weblica.synth.genres.healthcare.intents import (BOOK_EARLIEST, BOOK_SLOT, CLINIC, FIRST_SLOT, LAST_VISIT,
                                                     VISIT_BILLED, WHO_ACCEPTS)
from weblica.synth.genres.kit import (MAXIMAL_EXTRAS, Plan, act, amounts, ask, day_text, fill_plan, record_checks)
from weblica.synth.site import SiteBuilder
from weblica.synth.skills.common import distinct, name_check, price_check, shown_money, unique_extreme

SPECIALTIES = {"Cardiology": "cardiologist", "Dermatology": "dermatologist", "Pediatrics": "pediatrician",
               "Orthopedics": "orthopedic surgeon", "Family medicine": "family doctor", "Neurology": "neurologist"}
INSURANCES = ["BlueRiver PPO", "Sunrise HMO", "CareFirst Basic", "Medica Plus", "Union Health", "Public Plan"]
REASONS = ["Check-up", "Follow-up visit", "New symptoms", "Prescription renewal", "Test results"]


BOOKING_FIELDS = [{"name": "name", "label": "Patient name", "type": "text", "required": True},
                  {"name": "email", "label": "Email", "type": "email", "required": True},
                  {"name": "phone", "label": "Phone (optional)", "type": "tel"},
                  {"name": "reason", "label": "Reason for visit", "type": "select", "options": REASONS, "required": True},
                  {"name": "notes", "label": "Anything the doctor should know? (optional)", "type": "textarea"},
                  {"name": "first_visit", "label": "This is my first visit with this doctor", "type": "checkbox"}]


def _doctors(site: SiteBuilder) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    rng = site.rng
    clinics = list(site.cat["makers"])  # the practice's own sites, named per site (genre.yaml maker_names)
    names = [(p["first"], p["last"]) for p in fake_people(site, "doctors", 14)]
    specialties = list(SPECIALTIES)
    doctors, slots = [], []
    for index, (first, last) in enumerate(names):
        specialty = specialties[index % len(specialties)] if index < 12 else rng.choice(specialties)
        name = f"Dr. {first} {last}"
        doctor = {"id": f"d{index + 1}", "name": name, "slug": slugify(name), "specialty": specialty,
                  "specialist": SPECIALTIES[specialty], "clinic": rng.choice(clinics),
                  "insurances": sorted(rng.sample(INSURANCES, rng.randint(2, 4))),
                  "years": rng.randint(3, 30), "rating": round(rng.uniform(3.6, 5.0), 1), "slots": []}
        for day in sorted(rng.sample(range(1, 8), 3)):
            iso = (BASE_DATE + dt.timedelta(days=day)).isoformat()
            for minute in sorted(rng.sample(range(8 * 4, 17 * 4), 3)):
                slot = {"id": f"s{len(slots) + 1}", "doctor": doctor["id"], "day": iso,
                        "time": f"{minute // 4:02d}:{minute % 4 * 15:02d}", "open": rng.random() < 0.75}
                slot["when"] = f"{iso} {slot['time']}"
                slots.append(slot)
                doctor["slots"].append(slot)
        doctors.append(doctor)
    return doctors, slots


def _visits(site: SiteBuilder, doctors: list[dict[str, Any]]) -> list[dict[str, Any]]:
    rng = site.rng
    seen = rng.sample(doctors, 4)
    visits = []
    decimals = site.fmt["decimals"]
    for index in range(8):
        doctor = seen[index % len(seen)] if index < 6 else rng.choice(seen)
        day = (BASE_DATE - dt.timedelta(days=rng.randint(10, 400))).isoformat()
        billed = amounts(rng, 15 if decimals else 1500, 240 if decimals else 24000, decimals, 1)[0]
        visits.append({"id": f"v{index + 1}", "day": day, "doctor": doctor["name"], "specialty": doctor["specialty"],
                       "reason": rng.choice(REASONS), "billed": billed})
    return sorted(visits, key=lambda v: v["day"], reverse=True)


def build_flows(site: SiteBuilder) -> None:
    doctors, slots = _doctors(site)
    visits = _visits(site, doctors)
    site.add_data(doctors=doctors, visits=visits)
    site.add_state(appointments=[])
    filters = [{"name": "specialty", "label": "Specialty", "type": "select", "options": list(SPECIALTIES)},
               {"name": "insurance", "label": "Insurance accepted", "type": "select", "options": INSURANCES}]
    site.add_nav(("Find a doctor", "/doctors"), ("My visits", "/visits"))
    _home(site, doctors, filters)
    site.page("/doctors", "healthcare/directory.html.j2", title="Find a doctor", heading="Find a doctor",
              fields=filters, doctors=doctors, page_kind="doctor-directory")
    for doctor in doctors:
        site.page(f"/doctors/{doctor['slug']}", "healthcare/doctor.html.j2", title=doctor["name"], doctor=doctor,
                  page_kind="doctor")
    by_id = {d["id"]: d for d in doctors}
    site.page("/appointments/new", "healthcare/book.html.j2", title="Book an appointment",
              heading="Book an appointment", fields=BOOKING_FIELDS, slots=[s for s in slots if s["open"]], doctors=by_id,
              page_kind="appointment-form")
    site.page("/appointments/booked", "message.html.j2", title="Appointment booked", heading="Your appointment is booked",
              text="A confirmation has been sent to your email.", back="/doctors", page_kind="done")
    site.page("/visits", "healthcare/visits.html.j2", title="My visits", heading="Visit history", visits=visits,
              page_kind="visits")
    _tasks(site, doctors, slots, visits, filters)


HERO = ["Care for {town} and the towns around it", "Your family's health, close to home in {town}",
        "See a doctor in {town}, often this week", "Health care for everyone in {town}"]


def _home(site: SiteBuilder, doctors: list[dict[str, Any]], filters: list[dict[str, Any]]) -> None:
    """A practice's start page: find a doctor (by specialty and plan) first, then booking, services,
    patient information and the clinics with their addresses; no ratings, no basket."""
    rng = site.rng
    streets = name_source(site, "clinic-streets")
    town = home_city(site)
    clinics = [{"name": c, "street": f"{rng.randint(2, 180)} {streets.unique('{street_name}')}",
                "doctors": sum(d["clinic"] == c for d in doctors),
                "hours": rng.choice(["Mon–Fri 8:00–18:00", "Mon–Fri 7:30–19:00, Sat 9:00–12:00", "Mon–Sat 8:00–17:00"])}
               for c in sorted({d["clinic"] for d in doctors})]
    site.page("/", "healthcare/home.html.j2", title="Find a doctor and book", hero=rng.choice(HERO).format(town=town),
              fields=filters, specialties={sp: sum(d["specialty"] == sp for d in doctors) for sp in SPECIALTIES},
              clinics=clinics, doctor_count=len(doctors), town=town, page_kind="home")


def _open_slot(doctor: dict[str, Any], slot: dict[str, Any]) -> Plan:
    return [{"op": "click", "sel": f"[data-row={doctor['id']}] [data-doctor-link]"},
            {"op": "click", "sel": f"[data-slot-link={slot['id']}]"}]


def _tasks(site: SiteBuilder, doctors: list[dict[str, Any]], slots: list[dict[str, Any]],
           visits: list[dict[str, Any]], filters: list[dict[str, Any]]) -> None:
    rng = site.rng
    start = "/doctors"
    by_id = {d["id"]: d for d in doctors}
    people = fake_people(site, "patients", 3)
    open_slots = [s for s in slots if s["open"]]

    pairs = [(sp, ins) for sp in SPECIALTIES for ins in INSURANCES]
    rng.shuffle(pairs)
    for specialty, insurance in pairs:  # a specialty with two in-network doctors and one earliest slot
        matching = [d for d in doctors if d["specialty"] == specialty and insurance in d["insurances"]]
        candidates = [s for s in open_slots if by_id[s["doctor"]] in matching]
        first = unique_extreme(candidates, "when")
        if len(matching) < 2 or first is None:
            continue
        doctor, person, reason = by_id[first["doctor"]], people[0], rng.choice(REASONS)
        values = {"name": person["name"], "email": person["email"], "reason": reason}
        plan = fill_plan(site, filters, {"specialty": specialty, "insurance": insurance}) + \
            [{"op": "click", "sel": "#find-doctors"}] + _open_slot(doctor, first) + \
            fill_plan(site, BOOKING_FIELDS, values) + [{"op": "click", "sel": "#submit"}]
        act(site, BOOK_EARLIEST, {"specialist": SPECIALTIES[specialty], "insurance": insurance, **values,
                                  "reason": reason.lower()}, start, plan,
            record_checks("appointments", BOOKING_FIELDS, values, {"slot": first["id"]}), "One appointment, in the earliest open slot of an in-network doctor of that specialty")
        break

    for specialty, insurance in pairs:
        matching = [d for d in doctors if d["specialty"] == specialty and insurance in d["insurances"]]
        same = [d for d in doctors if d["specialty"] == specialty]
        if len(matching) == 1 and len(same) >= 2:
            doctor = matching[0]
            plan = fill_plan(site, filters, {"specialty": specialty, "insurance": insurance}) + \
                [{"op": "click", "sel": "#find-doctors"}, {"op": "reach", "sel": f"[data-row={doctor['id']}]"}]
            names = [d["name"] for d in doctors]
            ask(site, WHO_ACCEPTS, {"specialist": SPECIALTIES[specialty], "insurance": insurance}, start, plan,
                doctor["name"], name_check(doctor["name"], names), distinct([d["name"] for d in same], doctor["name"]),
                "The one doctor of that specialty accepting the insurance")
            break

    doctor = rng.choice(doctors)
    mine = [s for s in open_slots if s["doctor"] == doctor["id"]]
    if mine:
        slot, person, reason = rng.choice(mine), people[1], rng.choice(REASONS)
        values = {"name": person["name"], "email": person["email"], "reason": reason}
        plan = [{"op": "click", "sel": f"[data-row={doctor['id']}] [data-doctor-link]"},
                {"op": "click", "sel": f"[data-slot-link={slot['id']}]"}] + \
            fill_plan(site, BOOKING_FIELDS, values) + [{"op": "click", "sel": "#submit"}]
        others = [s for s in mine if s is not slot][:MAXIMAL_EXTRAS]
        more = [step for s in others for step in
                [{"op": "goto", "url": site.url(f"/doctors/{doctor['slug']}")}, {"op": "click", "sel": f"[data-slot-link={s['id']}]"}]
                + fill_plan(site, BOOKING_FIELDS, values) + [{"op": "click", "sel": "#submit"}]]
        act(site, BOOK_SLOT, {"doctor": doctor["name"], "time": slot["time"], "day": day_text(slot["day"]), **values,
                              "reason": reason.lower()}, start, plan,
            record_checks("appointments", BOOKING_FIELDS, values, {"slot": slot["id"]}), "One appointment, in that doctor's requested slot", maximal=plan + more)

    for doctor in rng.sample(doctors, len(doctors)):
        days = sorted({s["day"] for s in doctor["slots"] if s["open"]})
        if not days:
            continue
        day = rng.choice(days)
        that_day = [s for s in doctor["slots"] if s["day"] == day]
        first = min((s for s in that_day if s["open"]), key=lambda s: s["time"])
        times = [s["time"] for s in doctor["slots"]]
        plan = [{"op": "click", "sel": f"[data-row={doctor['id']}] [data-doctor-link]"},
                {"op": "reach", "sel": f"[data-slot={first['id']}]"}]
        ask(site, FIRST_SLOT, {"doctor": doctor["name"], "day": day_text(day)}, start, plan, first["time"],
            answer_text(first["time"], distinct(times, first["time"])), distinct(times, first["time"]), "The time of the first open slot that day (a booked one does not count)")
        break

    seen = sorted({v["doctor"] for v in visits})
    for name in rng.sample(seen, len(seen)):
        latest = unique_extreme([v for v in visits if v["doctor"] == name], "day", highest=True)
        if latest is None:
            continue
        dates = [v["day"] for v in visits]
        ask(site, LAST_VISIT, {"doctor": name}, start, [{"op": "click", "sel": "a[href='/visits']"},
                                                         {"op": "reach", "sel": f"[data-row={latest['id']}]"}],
            site.date(latest["day"]), answer_date(latest["day"], distinct(dates, latest["day"]), site.locale),
            [site.date(d) for d in distinct(dates, latest["day"])], "The date of the latest visit with that doctor")
        break

    def visit_billed() -> None:
        for visit in rng.sample(visits, len(visits)):
            if sum(v["day"] == visit["day"] for v in visits) == 1:
                billed = [v["billed"] for v in visits]
                ask(site, VISIT_BILLED, {"day": f"{day_text(visit['day'])}, {visit['day'][:4]}"}, start,
                    [{"op": "click", "sel": "a[href='/visits']"}, {"op": "reach", "sel": f"[data-row={visit['id']}]"}],
                    site.money(visit["billed"]), price_check(site, visit["billed"], billed),
                    shown_money(site, distinct(billed, visit["billed"])), "The amount billed for that visit")
                return

    def clinic() -> None:
        doctor = rng.choice(doctors)
        clinics = sorted({d["clinic"] for d in doctors})
        if len(clinics) >= 2:
            ask(site, CLINIC, {"doctor": doctor["name"]}, start, [{"op": "reach", "sel": f"[data-row={doctor['id']}]"}],
                doctor["clinic"], name_check(doctor["clinic"], clinics), distinct(clinics, doctor["clinic"]), "The doctor's clinic")

    rng.choice([visit_billed, clinic])()
