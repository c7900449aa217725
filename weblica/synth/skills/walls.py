"""The modern web's mechanics, part two (part one: weblica/synth/skills/mechanics.py): a sign-in wall in
front of the account, a consent wall that blocks its pages until it is answered, and dark patterns
(opt-ins ticked in advance, a confirmshaming dialog, a countdown that pressures). Checks read the
server-side state: the session, the account's saved details, the stored consent, the member record."""
from __future__ import annotations

from html import escape
from typing import Any

from weblica.serve.passwords import hash_password
from weblica.synth.checks import answer_text, state_count, state_is
from weblica.synth.data import CITIES, STREETS, make_people
from weblica.synth.intents import mechanics as asks
from weblica.synth.intents import say
from weblica.synth.intents.difficulty import planned
from weblica.synth.site import SiteBuilder, TaskDraft
from weblica.synth.skills.common import catalog_shell, skill
from weblica.synth.skills.mechanics import mech_page


def _password(rng: Any) -> str:
    words = ["maple", "harbor", "copper", "lantern", "meadow", "orbit", "velvet", "summit"]
    return f"{rng.choice(words)}-{rng.choice(words)}-{rng.randint(10, 99)}"


# ---- a sign-in wall: the account page sends a visitor without a session to sign in first -------------
@skill("login-wall")
def login_wall(site: SiteBuilder) -> None:
    catalog_shell(site, search=False, list_page=False, home_items=4)
    rng = site.rng
    people = make_people(rng, 4)
    accounts = []
    for person in people:
        accounts.append({"person": person, "email": person["email"], "password": _password(rng),
                         "member": f"M-{rng.randint(1_000_000, 9_999_999)}"})
    # passwords are stored hashed, as the site server stores every password (weblica/serve/passwords.py)
    site.add_state(users=[{"id": f"u{i + 1}", "username": a["email"], "password": hash_password(a["password"], a["email"])}
                          for i, a in enumerate(accounts)],
                   session={"user": None},
                   # keyed by user id, not email: a check's state path splits on dots
                   profiles={f"u{i + 1}": {"name": a["person"]["name"], "member": a["member"], "street": a["person"]["street"],
                                          "city": a["person"]["city"], "notifications": True} for i, a in enumerate(accounts)})
    site.add_data(accounts=[{"email": a["email"], "member": a["member"]} for a in accounts])
    body = ("<div data-auth-wall hidden><p>Signed in as <strong data-profile='name'></strong>.</p>"
            "<p>Membership number: <strong data-profile='member' id='member-number'></strong></p>"
            "<form id='profile-form'><h2>Delivery address</h2>"
            "<label for='p-street'>Street</label> <input id='p-street' type='text'> "
            "<label for='p-city'>City</label> <input id='p-city' type='text'>"
            "<p><label><input id='p-notify' type='checkbox'> Email me about orders and offers</label></p>"
            "<button type='submit' id='save-profile'>Save details</button> <span data-saved-profile hidden>Saved.</span>"
            "</form></div>")
    mech_page(site, "/account", "My account", body)
    signin = ("<form id='signin-form'><p>Sign in to see your account.</p>"
              "<label for='s-email'>Email</label> <input id='s-email' type='email' autocomplete='username'> "
              "<label for='s-password'>Password</label> <input id='s-password' type='password'>"
              "<p data-signin-error hidden></p><button type='submit' id='signin-submit'>Sign in</button></form>")
    mech_page(site, "/signin", "Sign in", signin, nav=False)
    save = [{"op": "click", "sel": "#save-profile"}, {"op": "reach", "sel": "[data-saved-profile]"}]
    members = [a["member"] for a in accounts]
    for i, account in enumerate(accounts):
        email, password, person = account["email"], account["password"], account["person"]
        uid = f"u{i + 1}"
        # the account link meets the wall: the sign-in page first, the account after it
        enter = [{"op": "click", "sel": "a[href='/account']"}, {"op": "fill", "sel": "#s-email", "text": email},
                 {"op": "fill", "sel": "#s-password", "text": password}, {"op": "click", "sel": "#signin-submit"},
                 {"op": "reach", "sel": "#member-number"}]
        signed = [state_is("session.user", email)]
        plan = enter + [{"op": "done", "answer": account["member"]}]
        wrong = [m for m in members if m != account["member"]]
        site.task(TaskDraft(**say(site, asks.SIGNED_IN_NUMBER, email=email, password=password), start_path="/", plan=plan,
                            checks=[answer_text(account["member"], wrong)], difficulty=planned(plan),
                            rubric=["The membership number shown once signed in"], wrong_answers=wrong))
        street = f"{rng.randint(1, 220)} {rng.choice(STREETS)}"
        city = rng.choice([c for c in CITIES if c != person["city"]])
        plan = enter + [{"op": "fill", "sel": "#p-street", "text": street}, {"op": "fill", "sel": "#p-city", "text": city}] + save
        site.task(TaskDraft(**say(site, asks.SIGNED_IN_ADDRESS, email=email, password=password, street=street, city=city),
                            start_path="/", plan=plan, difficulty=planned(plan), rubric=["The new address is saved"],
                            checks=signed + [state_is(f"profiles.{uid}.street", street),
                                             state_is(f"profiles.{uid}.city", city),
                                             state_is(f"profiles.{uid}.notifications", True)],
                            maximal=plan + [{"op": "click", "sel": "#p-notify"}] + save))
        plan = enter + [{"op": "click", "sel": "#p-notify"}] + save
        site.task(TaskDraft(**say(site, asks.SIGNED_IN_QUIET, email=email, password=password), start_path="/", plan=plan,
                            difficulty=planned(plan), rubric=["Notifications are off, the address unchanged"],
                            checks=signed + [state_is(f"profiles.{uid}.notifications", False),
                                             state_is(f"profiles.{uid}.street", person["street"])],
                            maximal=plan + [{"op": "fill", "sel": "#p-street", "text": street}] + save))


def _consent_wall() -> str:
    """A wall over the page until cookies are answered: "Accept all" big, "Reject all" a small link, the
    choices (ticked in advance) behind "Manage"."""
    return ("<div class='mech-wall' data-consent-wall role='dialog' aria-modal='true' aria-label='Cookie consent'>"
            "<div class='mech-panel'><h2>We value your privacy</h2>"
            "<p>We and our 214 partners use cookies to personalise offers and measure our audience.</p>"
            "<p><button type='button' class='big' id='consent-accept'>Accept all and continue</button></p>"
            "<p><button type='button' id='consent-manage'>Manage choices</button></p>"
            "<div data-consent-choices hidden>"
            "<label><input type='checkbox' id='c-essential' checked disabled> Essential (always on)</label>"
            "<label><input type='checkbox' id='c-analytics' checked> Analytics</label>"
            "<label><input type='checkbox' id='c-marketing' checked> Marketing</label>"
            "<p><button type='button' id='consent-save'>Save my choices</button></p></div>"
            "<p><a href='#' class='small' id='consent-reject'>Reject all</a></p></div></div>")


# ---- a consent wall and dark patterns ----------------------------------------------------------------
@skill("dark-patterns")
def dark_patterns(site: SiteBuilder) -> None:
    catalog_shell(site, search=False, list_page=False, home_items=4)
    rng = site.rng
    people = make_people(rng, 6)
    site.add_state(consent=None, members=[], newsletter={"subscribed": True})
    join = (f"{_consent_wall()}"
            "<p class='mech-offer'>Members save 10% — this welcome offer ends in <strong data-countdown='599'></strong></p>"
            "<form data-api='/api/members' data-redirect='/welcome' id='join-form'>"
            "<label for='j-name'>Full name</label> <input id='j-name' name='name' type='text' required>"
            "<p data-error-for='name' hidden></p>"
            "<label for='j-email'>Email</label> <input id='j-email' name='email' type='email' required>"
            "<p data-error-for='email' hidden></p>"
            "<p><label><input type='checkbox' id='j-marketing' name='marketing' checked> Yes! Send me exclusive offers "
            "and news by email</label></p>"
            "<p><label><input type='checkbox' id='j-partners' name='partners' checked> Share my details with carefully "
            "selected partners</label></p><p data-form-error hidden></p>"
            "<button type='submit' id='join-submit'>Join now</button></form>")
    mech_page(site, "/club", "Members' club", join)
    site.page("/welcome", "message.html.j2", title="Welcome", heading="Welcome to the club",
              text="Your membership is active.", page_kind="done")
    news = (f"{_consent_wall()}<p data-sub-status></p>"
            "<p><button type='button' id='unsubscribe'>Unsubscribe</button></p>"
            "<div class='mech-wall' data-shame hidden role='dialog' aria-modal='true' aria-label='Before you go'>"
            "<div class='mech-panel'><h2>Wait! You'll miss out</h2><p>Subscribers get our best deals first.</p>"
            "<p><button type='button' class='big' id='keep-subscription'>Keep my subscription</button></p>"
            "<p><a href='#' class='small' id='confirm-unsubscribe'>No thanks, I don't like saving money</a></p></div></div>")
    mech_page(site, "/newsletter", "Newsletter", news)
    club = [{"op": "click", "sel": "a[href='/club']"}]
    reject = [{"op": "click", "sel": "#consent-reject"}]
    refused = [state_is("consent.analytics", False), state_is("consent.marketing", False)]

    pages = [("members' club", club), ("newsletter", [{"op": "click", "sel": "a[href='/newsletter']"}])]
    for page, go in pages:
        plan = go + reject
        site.task(TaskDraft(**say(site, asks.REJECT_COOKIES, page=page), start_path="/", plan=plan, difficulty=planned(plan),
                            checks=refused + [state_is("consent.choice", "essential")],
                            rubric=["Only essential cookies are allowed"]))
        plan = go + [{"op": "click", "sel": "#consent-manage"}, {"op": "click", "sel": "#c-marketing"},
                     {"op": "click", "sel": "#consent-save"}]
        site.task(TaskDraft(**say(site, asks.ANALYTICS_ONLY, page=page), start_path="/", plan=plan, difficulty=planned(plan),
                            checks=[state_is("consent.analytics", True), state_is("consent.marketing", False)],
                            rubric=["Analytics allowed, marketing refused"]))
    for person in people[3:6]:
        plan = club + [{"op": "click", "sel": "#consent-accept"}, {"op": "fill", "sel": "#j-name", "text": person["name"]},
                       {"op": "fill", "sel": "#j-email", "text": person["email"]}, {"op": "click", "sel": "#j-partners"},
                       {"op": "click", "sel": "#join-submit"}]
        site.task(TaskDraft(**say(site, asks.JOIN_OFFERS_NO_PARTNERS, name=person["name"], email=person["email"]),
                            start_path="/", plan=plan, difficulty=planned(plan),
                            rubric=["One member with email offers and no partner sharing"],
                            checks=[state_count("members", 1), state_is("members.0.name", person["name"]),
                                    state_is("members.0.email", person["email"]), state_is("members.0.marketing", True),
                                    state_is("members.0.partners", False), state_is("consent.marketing", True)]))
    for person in people[:3]:
        plan = club + reject + [{"op": "fill", "sel": "#j-name", "text": person["name"]},
                                {"op": "fill", "sel": "#j-email", "text": person["email"]},
                                {"op": "click", "sel": "#j-marketing"}, {"op": "click", "sel": "#j-partners"},
                                {"op": "click", "sel": "#join-submit"}]
        site.task(TaskDraft(**say(site, asks.JOIN_NO_MARKETING, name=person["name"], email=person["email"]),
                            start_path="/", plan=plan, difficulty=planned(plan),
                            rubric=["One member, without marketing or partner sharing, essential cookies only"],
                            checks=[state_count("members", 1), state_is("members.0.name", person["name"]),
                                    state_is("members.0.email", person["email"]), state_is("members.0.marketing", False),
                                    state_is("members.0.partners", False)] + refused))
    plan = [{"op": "click", "sel": "a[href='/newsletter']"}] + reject + [
        {"op": "click", "sel": "#unsubscribe"}, {"op": "click", "sel": "#confirm-unsubscribe"},
        {"op": "reach", "sel": "[data-sub-status]", "text": "not subscribed"}]
    site.task(TaskDraft(**say(site, asks.UNSUBSCRIBE), start_path="/", plan=plan, difficulty=planned(plan),
                        checks=[state_is("newsletter.subscribed", False)] + refused,
                        rubric=["The subscription is cancelled despite the dialog"]))
