"""Input skills: multi-field forms, date pickers, numeric widgets, autocomplete, account flows."""
from __future__ import annotations

import datetime as dt
import re

from weblica.serve.passwords import with_hashed_passwords
from weblica.synth.checks import state_count, state_is
from weblica.synth.data import BASE_DATE, CITIES, DISTRICTS, make_people
from weblica.synth.intents import forms as asks
from weblica.synth.intents import article, listing, phrasing_rng, say, the_name
from weblica.synth.intents.difficulty import planned
from weblica.synth.site import SiteBuilder, TaskDraft
from weblica.synth.skills.common import catalog_shell, skill

RUBRIC_FORM = ["The form was submitted once", "Every requested field holds the requested value"]


def _form_page(site: SiteBuilder, path: str, heading: str, fields: list[dict], api: str, redirect: str,
               form_id: str = "main-form", method: str | None = None, intro: str = "", submit: str = "Submit") -> None:
    site.add_nav((heading.split(" ")[0] if len(heading) > 18 else heading, path))
    site.page(path, "form.html.j2", title=heading, heading=heading, fields=fields, api=api, redirect=redirect,
              form_id=form_id, method=method, intro=intro, submit_label=submit, page_kind="form")
    site.page(redirect, "message.html.j2", title="Thank you", heading="Thank you!",
              text="We have received your details.", back="/", page_kind="done")


def _fill(field: dict, value: object) -> dict:
    """The plan step that puts `value` into a field of the given kind."""
    sel = f"#f-{field['name']}"
    kind = field["type"]
    if kind == "select":
        return {"op": "select", "sel": sel, "value": value}
    if kind == "radio":
        return {"op": "click", "sel": f"#{field['name']}-{field['options'].index(value) + 1}"}
    if kind == "checkbox":
        return {"op": "click", "sel": sel}
    return {"op": "fill", "sel": sel, "text": str(value)}


@skill("forms")
def forms(site: SiteBuilder) -> None:
    catalog_shell(site, search=False, list_page=False, home_items=4)
    topics = [f"{k} question" for k in list(site.cat["kinds"])[:4]] + [site.labels["support"]]
    fields = [
        {"name": "name", "label": "Full name", "type": "text", "required": True},
        {"name": "email", "label": "Email", "type": "email", "required": True},
        {"name": "phone", "label": "Phone", "type": "tel"},
        {"name": "topic", "label": "Topic", "type": "select", "options": topics},
        {"name": "contact", "label": "Preferred contact", "type": "radio", "options": ["Email", "Phone"]},
        {"name": "newsletter", "label": "Send me the newsletter", "type": "checkbox"},
        {"name": "message", "label": "Message", "type": "textarea", "required": True},
    ]
    by_name = {f["name"]: f for f in fields}
    _form_page(site, "/contact", "Contact us", fields, "/api/submissions", "/thanks", form_id="contact-form",
               intro=f"Questions about our {site.items_noun}? Write to us.", submit="Send message")
    site.add_state(submissions=[])
    rng = site.rng
    people = make_people(rng, 12)
    for index, person in enumerate(people):
        item = rng.choice(site.data["items"])
        values: dict[str, object] = {"name": person["name"], "email": person["email"],
                                     "message": f"Please send me details about {the_name(site, item['name'])}."}
        fields_named = index % 3  # how many of the optional fields a task names: none, two, all four
        if fields_named >= 1:
            values["topic"] = rng.choice(topics)
            values["contact"] = rng.choice(["Email", "Phone"])
        if fields_named == 2:
            values["phone"] = person["phone"]
            values["newsletter"] = True
        parts = [f"the name \"{values['name']}\"", f"the email \"{values['email']}\""]
        if "phone" in values:
            parts.append(f"the phone number \"{values['phone']}\"")
        if "topic" in values:
            parts.append(f"the topic \"{values['topic']}\"")
        if "contact" in values:
            parts.append(f"{values['contact'].lower()} as the preferred contact")
        if values.get("newsletter"):
            parts.append("a newsletter sign-up")
        phrasing_rng(site).shuffle(parts)  # people name the fields in any order
        asked = say(site, asks.CONTACT_FORM, fields=listing(parts), message=values["message"])
        plan = [{"op": "click", "sel": "a[href='/contact']"}]
        plan += [_fill(by_name[name], values[name]) for name in
                 ("name", "email", "phone", "topic", "contact", "newsletter", "message") if name in values]
        plan.append({"op": "click", "sel": "#submit"})
        # a field the instruction does not name must stay empty: a form filled with everything fails
        left = {name: False if by_name[name]["type"] == "checkbox" else "" for name in by_name if name not in values}
        checks = [state_count("submissions", 1)] + [state_is(f"submissions.0.{k}", v)
                                                    for k, v in {**values, **left}.items()]
        site.task(TaskDraft(**asked, start_path="/", plan=plan, checks=checks, difficulty=planned(plan),
                            rubric=RUBRIC_FORM))


def _date_text(iso: str) -> str:
    return dt.date.fromisoformat(iso).strftime("%B %-d, %Y")


@skill("date-picker")
def date_picker(site: SiteBuilder) -> None:
    catalog_shell(site, search=False, list_page=False, home_items=4)
    month = BASE_DATE.strftime("%Y-%m")
    fields = [{"name": "name", "label": "Your name", "type": "text", "required": True},
              {"name": "start", "label": "From", "type": "date", "required": True, "month": month},
              {"name": "end", "label": "Until", "type": "date", "required": True, "month": month}]
    _form_page(site, "/request", site.labels["request"], fields, "/api/requests", "/requested",
               form_id="request-form", intro="Pick the dates you need.", submit="Send request")
    site.add_state(requests=[])
    rng = site.rng
    people = make_people(rng, 12)
    native = site.spec.style.widgets == "native"
    for index, person in enumerate(people):
        span = [(0, 25), (10, 60), (40, 110)][index % 3]
        start = BASE_DATE + dt.timedelta(days=rng.randint(*span))
        end = start + dt.timedelta(days=rng.randint(1, 12))
        s_iso, e_iso = start.isoformat(), end.isoformat()
        fill = "date" if native else "calendar"
        plan = [{"op": "click", "sel": "a[href='/request']"}, {"op": "fill", "sel": "#f-name", "text": person["name"]},
                {"op": fill, "sel": "#f-start", "value": s_iso}, {"op": fill, "sel": "#f-end", "value": e_iso},
                {"op": "click", "sel": "#submit"}]
        site.task(TaskDraft(
            **say(site, asks.REQUEST_DATES, person=person["name"], start=_date_text(s_iso), end=_date_text(e_iso)),
            start_path="/", plan=plan, difficulty=planned(plan), rubric=RUBRIC_FORM,
            checks=[state_count("requests", 1), state_is("requests.0.name", person["name"]),
                    state_is("requests.0.start", s_iso), state_is("requests.0.end", e_iso)]))
    site.add_feature("date-check")


# What the three numeric widgets mean on a shop; a genre where they mean something else says so in its genre
# file (`preferences`: a label and ways to say the setting per widget, "{}" the value, "{nth}" it as
# "12th"), so a bank asks for a monthly fee limit and a statement day, not a budget and a duration in days.
SHOP_PREFERENCES = {
    "budget": {"label": "Maximum {price}", "say": ["my budget to {}", "the maximum {price} to {}",
                                                  "the {price} limit to {}"]},
    "nights": {"label": "Delivery within (days)", "say": ["the delivery time limit to {} days",
                                                        "the longest delivery time to {} days"]},
    "quantity": {"label": "Default quantity", "say": ["the default quantity to {}", "the default order quantity to {}"]},
}


def nth(n: int) -> str:
    """12 -> "12th", 1 -> "1st", 22 -> "22nd"."""
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def preference_words(site: SiteBuilder) -> dict[str, dict]:
    """Per numeric widget (budget, nights, quantity) its label and ways to say its setting on this genre."""
    own = site.cat.get("preferences") or {}
    price = site.labels["price"]
    return {name: {"label": str((own.get(name) or default)["label"]).replace("{price}", price),
                   "say": [str(w).replace("{price}", price) for w in (own.get(name) or default)["say"]]}
            for name, default in SHOP_PREFERENCES.items()}


@skill("numeric-widgets")
def numeric_widgets(site: SiteBuilder) -> None:
    catalog_shell(site, search=False, list_page=False, home_items=4)
    lo, hi = site.cat["price"]
    step = max(1, int((hi - lo) / 40 // 5 * 5) or 1)
    budget_max = lo + step * 40
    words_for = preference_words(site)
    fields = [{"name": "budget", "label": words_for["budget"]["label"], "type": "range", "min": lo,
               "max": budget_max, "step": step, "value": lo + step * 20, "money": True},
              {"name": "nights", "label": words_for["nights"]["label"], "type": "number", "min": 1, "max": 30, "value": 1},
              {"name": "quantity", "label": words_for["quantity"]["label"], "type": "stepper", "min": 1, "max": 10,
               "value": 1}]
    _form_page(site, "/preferences", "Your preferences", fields, "/api/doc/preferences", "/saved", method="PUT",
               form_id="prefs-form", intro=f"Tell us what you are looking for in {article(site.item_noun)}.",
               submit="Save")
    site.add_state(preferences=None)
    rng = site.rng
    said = phrasing_rng(site)
    defaults = {f["name"]: f["value"] for f in fields}
    asked: set[tuple] = set()
    for index in range(12):
        for _ in range(8):  # a state another task already asks for is drawn again: one request, one task
            wanted: dict[str, int] = {}
            for name in rng.sample(["budget", "nights", "quantity"], index % 3 + 1):  # one, two or all three fields
                if name == "budget":
                    wanted[name] = lo + step * rng.choice([k for k in range(0, 41) if k != 20])
                elif name == "nights":
                    wanted[name] = rng.randint(2, 30)
                else:
                    wanted[name] = rng.randint(2, 10)
            final = tuple(sorted({**defaults, **wanted}.items()))
            if final not in asked:
                break
        if final in asked:
            continue
        asked.add(final)
        plan: list[dict] = [{"op": "click", "sel": "a[href='/preferences']"}]
        words = []
        for name, value in wanted.items():
            if name == "budget":
                plan.append({"op": "range", "sel": "#f-budget", "value": value})
            elif name == "nights":
                plan.append({"op": "fill", "sel": "#f-nights", "text": str(value)})
            else:
                plan += [{"op": "click", "sel": "#f-quantity [data-step-up]"}] * (value - 1)
            shown = site.money(value) if name == "budget" else str(value)
            words.append(said.choice(words_for[name]["say"]).format(shown, nth=nth(value)))
        plan.append({"op": "click", "sel": "#submit"})
        # the fields not named keep their defaults
        kept = {f["name"]: f["value"] for f in fields if f["name"] not in wanted}
        checks = [state_is(f"preferences.{k}", v, "numeric") for k, v in {**wanted, **kept}.items()]
        site.task(TaskDraft(**say(site, asks.SET_PREFERENCES, changes=listing(words)), start_path="/",
                            plan=plan, checks=checks, difficulty=planned(plan), rubric=["The saved values match"]))


AC_SHOWN = 8  # suggestions the widget lists (widgets.js)


def _shown_fragment(fragment: str, value: str, options: list[str]) -> str:
    """`fragment`, or a longer start of `value` when the fragment's suggestions (substring matches in
    sorted order, the first AC_SHOWN) would not list `value`: many names share a first word ("Dr. Priya")."""
    def listed(text: str) -> bool:
        return value in [o for o in options if text.lower() in o.lower()][:AC_SHOWN]
    if listed(fragment):
        return fragment
    return next((value[:n] for n in range(len(fragment) + 1, len(value) + 1) if listed(value[:n])), value)


@skill("autocomplete")
def autocomplete(site: SiteBuilder) -> None:
    items = catalog_shell(site, search=False, list_page=False, home_items=4)
    places = sorted(set(CITIES + DISTRICTS))
    names = sorted(i["name"] for i in items)
    site.share("ac_options", {"place": places, "item": names})
    fields = [{"name": "item", "label": f"Which {site.item_noun}?", "type": "autocomplete", "required": True},
              {"name": "place", "label": site.labels["pickup"], "type": "autocomplete", "required": True}]
    _form_page(site, "/reserve", site.labels["reserve"], fields, "/api/reservations", "/reserved", form_id="reserve-form",
               intro="Choose from the suggestions as you type.", submit="Reserve")
    site.add_state(reservations=[])
    rng = site.rng
    for index in range(12):
        item, place = rng.choice(names), rng.choice(places)
        level = index % 3
        # some plans type a shorter fragment, so the right suggestion must be picked among many
        cut = [len(item), 4, 2][level]
        frag_item = _shown_fragment(item[:cut] if level != 2 else item.split()[1][:3], item, names)
        frag_place = _shown_fragment(place[:max(3, cut)], place, places)
        plan = [{"op": "click", "sel": "a[href='/reserve']"},
                {"op": "fill", "sel": "#f-item", "text": frag_item},
                {"op": "click", "sel": f"[data-ac=item] [data-value=\"{item}\"]"},
                {"op": "fill", "sel": "#f-place", "text": frag_place},
                {"op": "click", "sel": f"[data-ac=place] [data-value=\"{place}\"]"},
                {"op": "click", "sel": "#submit"}]
        site.task(TaskDraft(
            **_reserve_said(site, item, place), start_path="/", plan=plan, difficulty=planned(plan),
            checks=[state_count("reservations", 1), state_is("reservations.0.item", item),
                    state_is("reservations.0.place", place)], rubric=RUBRIC_FORM))


# a reservation form titled with its own action ("Book an adviser", "Request a viewing", "Join the waitlist")
# is asked for by that action; a pick-up reservation ("Reserve for pick-up", "Order for collection") as one
_OWN_ACTION = re.compile(r"^(?:book|request|join|set up|hold a|reserve a)\b", re.IGNORECASE)


def _reserve_said(site: SiteBuilder, item: str, place: str) -> dict:
    label = site.labels["reserve"]
    if not _OWN_ACTION.match(label):
        return say(site, asks.RESERVE_AT, item=item, place=place)
    pickup = re.sub(r"^(?:your|preferred)\s+", "", site.labels["pickup"].lower())
    return say(site, asks.RESERVE_FOR, item=item, place=place, reserve_do=label[:1].lower() + label[1:],
               pickup_word=pickup)


@skill("account")
def account(site: SiteBuilder) -> None:
    catalog_shell(site, search=False, list_page=False, home_items=4)
    rng = site.rng
    people = make_people(rng, 14)
    users = [{"id": f"u{i + 1}", "username": p["first"].lower() + str(rng.randint(10, 99)), "email": p["email"],
              "password": f"{p['last'].lower()}-{rng.randint(1000, 9999)}"} for i, p in enumerate(people[:4])]
    # the site keeps hashes (weblica.serve.passwords); the tasks quote the passwords in clear
    site.add_state(users=[with_hashed_passwords(u, u["username"]) for u in users], session={"user": None},
                   settings=None)
    site.add_feature("account")
    site.add_nav(("Log in", "/login"), ("Sign up", "/signup"))
    site.page("/login", "form.html.j2", title="Log in", heading="Log in", api="/api/login", redirect="/account",
              form_id="login-form", submit_label="Log in", page_kind="form",
              fields=[{"name": "username", "label": "Username", "type": "text", "required": True},
                      {"name": "password", "label": "Password", "type": "password", "required": True}])
    site.page("/signup", "form.html.j2", title="Sign up", heading="Create an account", api="/api/signup",
              redirect="/account", form_id="signup-form", submit_label="Create account", page_kind="form",
              fields=[{"name": "username", "label": "Username", "type": "text", "required": True},
                      {"name": "email", "label": "Email", "type": "email", "required": True},
                      {"name": "password", "label": "Password", "type": "password", "required": True, "minlength": 8}])
    languages = ["English", "Deutsch", "Français", "Español", "日本語"]
    site.page("/account", "settings.html.j2", title="Account", heading="Account settings", page_kind="settings",
              languages=languages)
    for index in range(12):
        kind = ["login", "signup", "name", "prefs"][index % 4]
        user = users[(index + index // 4) % len(users)]  # each repeat of a kind of task for another user
        login = [{"op": "click", "sel": "a[href='/login']"}, {"op": "fill", "sel": "#f-username", "text": user["username"]},
                 {"op": "fill", "sel": "#f-password", "text": user["password"]}, {"op": "click", "sel": "#submit"}]
        if kind == "login":
            site.task(TaskDraft(
                **say(site, asks.LOG_IN, user=user["username"], password=user["password"]), start_path="/", plan=login,
                checks=[state_is("session.user", user["username"])], difficulty=planned(login),
                rubric=["The user is logged in"]))
        elif kind == "signup":
            person = people[4 + index]
            name = person["first"].lower() + person["last"][:3].lower() + str(rng.randint(100, 999))
            password = f"{person['last'].lower()}#{rng.randint(1000, 9999)}"
            plan = [{"op": "click", "sel": "a[href='/signup']"}, {"op": "fill", "sel": "#f-username", "text": name},
                    {"op": "fill", "sel": "#f-email", "text": person["email"]},
                    {"op": "fill", "sel": "#f-password", "text": password}, {"op": "click", "sel": "#submit"}]
            site.task(TaskDraft(
                **say(site, asks.SIGN_UP, user=name, email=person["email"], password=password),
                start_path="/", plan=plan, difficulty=planned(plan), rubric=["A new account exists and is logged in"],
                checks=[state_count("users", len(users) + 1), state_is("users.-1.username", name),
                        state_is("users.-1.email", person["email"]), state_is("users.-1.password", password, "password"),
                        state_is("session.user", name)]))
        elif kind == "name":
            display = f"{people[index]['first']} {rng.choice(['the Great', 'K.', 'Jr.', 'from ' + rng.choice(CITIES)])}"
            plan = login + [{"op": "fill", "sel": "#f-display_name", "text": display}, {"op": "click", "sel": "#submit"}]
            site.task(TaskDraft(
                **say(site, asks.LOG_IN_RENAME, user=user["username"], password=user["password"], display=display),
                start_path="/", plan=plan, difficulty=planned(plan),
                rubric=["Settings saved for the right user"],
                checks=[state_is("settings.user", user["username"]), state_is("settings.display_name", display),
                        state_is("settings.newsletter", False), state_is("settings.language", "")]))
        else:
            language = rng.choice(languages[1:])
            plan = login + [{"op": "click", "sel": "#f-newsletter"}, {"op": "select", "sel": "#f-language", "value": language},
                            {"op": "click", "sel": "#submit"}]
            site.task(TaskDraft(
                **say(site, asks.LOG_IN_PREFERENCES, user=user["username"], password=user["password"], language=language),
                start_path="/", plan=plan, difficulty=planned(plan),
                rubric=["Settings saved for the right user"],
                checks=[state_is("settings.user", user["username"]), state_is("settings.newsletter", True),
                        state_is("settings.language", language), state_is("settings.display_name", "")]))
