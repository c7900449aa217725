"""Task wording: instructions read as a person would ask them, in every genre.

The bad outputs seen in generated tasks ("Laptop gadget", "what is its documents needed?", "What is
the owners of…", "Book a event", "the Dr. Ana Dubois", "pay by Card", "two Prime Phone") are each
caught by the lint, and the fill helpers no longer produce them: a broad sample of generated sites
(every category, several skills, two seeds) has no draft the lint would drop, apart from the shopping
words a salary genre cannot say otherwise (those are dropped: a miss beats a wrong answer). Grammatical
but odd phrasings found by reading generated instructions ("which city is its make in?", a bank asking
to set "the number of units" and "the duration to 12 days", "1 years of experience") have rules too.
"""
from __future__ import annotations

import random
import re

import pytest

from weblica.synth.generate import build_site, emitted_drafts
from weblica.synth.intents import INTENTS, article, is_noun, phrase
from weblica.synth.intents.lint import genre_problems, problems
from weblica.synth.site import SiteBuilder
from weblica.synth.spec import categories, incompatibility, sample_spec

SKILLS = ("filter-sort", "hidden-content", "multi-page", "table-reasoning", "drag-reorder", "store-locator",
          "date-picker", "checkout", "numeric-widgets", "crud")
SEEDS = (1, 2)

# grammatical but odd: found by reading ~700 generated instructions (every category x skill, session 10), each
# fixed at its template; these rules keep them from coming back (a genre's numeric preferences are also held
# to its own words below)
ODD_PHRASINGS = [
    (r"\b(?:the|its|same|a) makes?\b(?! it\b| sure\b)", "a make said as a company (a make is the brand name itself)"),
    (r"\bthe number of units\b|\bthe (?:length|duration) to \d+ days\b", "a numeric preference in no genre's words"),
    (r"(?<![\d.,])\b1 (?:years|months|weeks|days|nights|guests|travellers|tickets|seats|cards|courses|stories)\b",
     "1 before a plural"),
]


def odd(text: str) -> list[str]:
    """The classes of odd phrasing in an instruction (ODD_PHRASINGS)."""
    return [why for pattern, why in ODD_PHRASINGS if re.search(pattern, text)]


@pytest.mark.parametrize("bad,why", [
    ("Prairie Hatchback: which city is its make in?", "a make said as a company"),
    ("In which city is the make of the Coastal Truck based?", "a make said as a company"),
    ("How many cars are listed from the same make as the Alpine Pickup?", "a make said as a company"),
    ("Please update my preferences: the number of units to 8. Save when done.", "a numeric preference in no genre's"),
    ("Could you set the length to 28 days and save my preferences?", "a numeric preference in no genre's"),
    ("Set the duration to 16 days, then save my preferences.", "a numeric preference in no genre's"),
    ("Apply to Nordwind's Recruiter position for Ines Costa: +1 555 900 4635, 1 years in the field.", "1 before a plural"),
])
def test_odd_phrasing_rules_catch_each_class(bad, why):
    assert any(why in p for p in odd(bad)), (bad, odd(bad))


@pytest.mark.parametrize("good", [
    "In which city is the manufacturer of the Coastal Truck based?", "I'd like to reserve the Summit SUV; make it Old Town.",
    "As liam78 (password varga-3418), make my display name \"Tara Jr.\".", "I can't make it before 12:00. Book the cheapest slot.",
    "Set my statement day to the 12th and the number of cards to 3, then save my preferences.",
    "Apply with 1 year of experience, able to start in 1 month.", "Book 11 nights for 21 guests.",
])
def test_odd_phrasing_rules_pass_the_fixed_wordings(good):
    assert odd(good) == [], odd(good)


def _said_as(template: str) -> str:
    """A genre's way to say a preference setting as a pattern: "{}" a value (a number or an amount),
    "{nth}" an ordinal day ("12th")."""
    value = r"[^\s,]*\d(?:[\d.,\u202f ]*\d)?(?:\s?[^\s\d,.]{1,3})?"
    parts = re.split(r"(\{\}|\{nth\})", template)
    return "".join(value if p == "{}" else r"\d{1,2}(?:st|nd|rd|th)" if p == "{nth}" else re.escape(p) for p in parts)


def test_numeric_preferences_are_asked_in_each_genres_own_words():
    """A bank's preferences form is a monthly fee limit, a statement day and a card count, not a budget, a
    duration in days and a number of units: every set-preferences task says each setting it asks for in
    its genre's words (synth/genres/<genre>.yaml `preferences`, else the shop's), and the form shows that
    genre's labels."""
    from weblica.synth.skills.forms import preference_words

    own = {c: genre["preferences"] for c, genre in categories().items() if genre.get("preferences")}
    assert {"banking", "government", "healthcare", "jobs", "news"} <= set(own)
    bank: list[str] = []
    for category in sorted(categories()):
        for seed in SEEDS:
            site = _site("numeric-widgets", category, seed)
            words = preference_words(site)
            for name, mine in own.get(category, {}).items():  # the genre's words, not a shop's
                assert words[name]["label"] == mine["label"] and words[name]["say"] == mine["say"], (category, name)
            form = site.pages["/preferences"][1]["fields"]
            assert [f["label"] for f in form] == [words[f["name"]]["label"] for f in form], category
            said = {name: re.compile("|".join(_said_as(t) for t in w["say"])) for name, w in words.items()}
            asked = [d for d in site.tasks if d.intent == "set-preferences"]
            assert len(asked) >= 6, category
            for draft in asked:
                fields = {step["sel"].split(" ")[0][3:] for step in draft.plan if step["sel"].startswith("#f-")}
                for name in words:
                    hit = said[name].search(draft.instruction)
                    assert bool(hit) == (name in fields), (category, name, draft.instruction)
                if category == "banking":
                    bank.append(draft.instruction)
    # what a bank would never ask of its customer's preferences
    assert bank and not [t for t in bank if re.search(r"budget|quantity|units|\d+ days", t)], bank
    assert any("statement day" in t or "statement date" in t for t in bank) and any("cards" in t for t in bank), bank


@pytest.mark.parametrize("bad,why", [
    ("Which is the cheapest Laptop gadget?", "type named with the generic noun"),
    ("Get the lowest-priced Coupe car into my cart.", "type named with the generic noun"),
    ("Family Tax Refund: what is its documents needed?", "field label that is no noun"),
    ("Could you find out the how to apply of the Student Vehicle Tax?", "field label that is no noun"),
    ("What is the owners of the Rally SUV?", "verb does not agree"),
    ("Glass Cipher: what are its series?", "verb does not agree"),
    ("Book a event for Ana.", "'a' before a vowel"),
    ("What's the best price for an one-way flight?", "'an' before a consonant sound"),
    ("Reserve the Dr. Ana Dubois at Bayside.", "'the' before a person's title"),
    ("Move the Rally SUV to the top of your wishlist and save.", "the user's own things called 'your'"),
    ("Order the Silent Life to Chloe Mensah, 206 Park Row, Westhaven, and pay by Card.", "capital inside a sentence"),
    ("Tell me the last listing listed among all the listings.", "a word said twice in two forms"),
    ("I'd like to see the accounts of the branch Northgate Branch, highest rating first.", "named with the genre's word twice"),
    ("Tell me Handy Helpers's listed price for light fitting.", "possessive of a name ending in s"),
    ("Add one Polar Laptop and two Prime Phone to my cart.", "a count before a singular name"),
    ("In which year was the branch of the Gold Saver founded?", "a branch or venue said to be founded"),
    ("Founding year of the Secure Saver's branch?", "a branch or venue said to be founded"),
    ("Tell me when the venue of the Electric Masterclass was founded.", "a branch or venue said to be founded"),
])
def test_lint_catches_each_class_of_bad_wording(bad, why):
    assert any(why in p for p in problems(bad)), (bad, problems(bad))


@pytest.mark.parametrize("good", [
    "How many dishes of type Indian are listed?",  # "type In…" is no "type in" hint
    "What's the top price for an SUV here?", "Which is the cheapest pair of headphones?",
    "Which city is the brand of the Rally SUV based in?", "What are the opening hours of the Oak Store?",
    "Book Dr. Ana Dubois' 11:00 appointment.", "Sort my wishlist from the lowest price to the highest and save.",
    "Put 1 × Paper Life and 2 × Crimson Empire in the cart.", "Order the Silent Life and pay by PayPal.",
    "Tell me the \"Documents needed\" entry of the Student Vehicle Tax.",
    "In which year was the branch of the Gold Saver opened?", "When was the brand behind the Apex Tab founded? Just the year.",
    "The Gold Saver's branch: what year was it opened?", "Since which year has the venue of the Crystal Concert been around?",
])
def test_lint_passes_the_fixed_wordings(good):
    assert problems(good) == [], problems(good)


def test_fill_helpers_cannot_produce_the_known_bad_fills():
    # a label that is no noun is asked about by name, never as "its <label>"
    for label in ("Documents needed", "How to apply", "Doors open", "Suitable for", "Dietary", "Bikes"):
        assert not is_noun(label), label
    for label in ("Warranty", "Opening hours", "Processing time", "Free trial"):
        assert is_noun(label), label
    assert article("event") == "an event" and article("SUV") == "an SUV" and article("sneaker") == "a sneaker"
    rng = random.Random(1)
    for which in [i for i in INTENTS.values() if {"kind"} <= i.slots]:
        texts = [phrase(which, rng, **{s: "one-way" if s == "kind" else "x" for s in which.slots})
                 for _ in which.phrasings]
        assert not any("an one-way" in t.lower() for t in texts), texts


def _site(skill: str, category: str, seed: int = 1) -> SiteBuilder:
    return build_site(sample_spec(seed, skill=skill, category=category))


def test_a_type_that_is_a_noun_is_said_alone_and_people_take_no_article():
    site = _site("filter-sort", "electronics")
    texts = [d.instruction for d in site.tasks]
    assert not any("gadget" in t and ("Laptop" in t or "Camera" in t or "Monitor" in t) for t in texts)
    assert any("laptop" in t or "pair of headphones" in t or "camera" in t or "monitor" in t for t in texts), texts
    people = [d.instruction for d in _site("multi-page", "healthcare").tasks]
    assert any("Dr. " in t for t in people) and not any("the Dr." in t.lower() or " its " in t for t in people)


def test_genre_words_fill_places_saved_lists_and_requests():
    banking = [d.instruction for d in _site("store-locator", "banking").tasks]
    assert banking and not any(" store" in t for t in banking) and any("branch" in t for t in banking)
    saved = [d.instruction for d in _site("drag-reorder", "healthcare").tasks]
    assert all("wishlist" not in t for t in saved) and any("saved doctors list" in t for t in saved)
    requests = [d.instruction for d in _site("date-picker", "real-estate").tasks]
    assert all("a listing" not in t for t in requests) and any("a move-in date" in t for t in requests)


def test_a_salary_genre_says_pay_words_and_the_lint_drops_shopping_words():
    site = _site("filter-sort", "jobs")
    texts = [d.instruction for d in site.tasks]
    assert any("lowest-paid" in t or "best-paid" in t for t in texts), texts
    assert genre_problems("Which is the cheapest Design job?", site)
    assert genre_problems("How much is the highest-rated Support job?", site)
    assert not genre_problems("Which is the lowest-paid Design job?", site)
    assert not genre_problems("Which is the cheapest laptop?", _site("filter-sort", "electronics"))
    kept = emitted_drafts(site)
    assert kept and not any(genre_problems(d.instruction, site) for d in kept)


def test_a_broad_sample_of_generated_tasks_has_no_bad_wording():
    """Every category, several skills, two seeds: no draft the lint would drop (the fix is at the
    source, not in the dropping), apart from a few shopping words on the salary genre."""
    drafts = genre_dropped = 0
    for category in sorted(categories()):
        for skill in [s for s in SKILLS if incompatibility(s, category) is None]:
            for seed in SEEDS:
                site = _site(skill, category, seed)
                for draft in site.tasks:
                    drafts += 1
                    assert problems(draft.instruction, draft.guided) == [], \
                        (category, skill, draft.instruction, problems(draft.instruction, draft.guided))
                    assert odd(draft.instruction) == [], (category, skill, draft.instruction, odd(draft.instruction))
                    genre_dropped += bool(genre_problems(draft.instruction, site))
    assert drafts > 2000
    assert genre_dropped <= 0.01 * drafts, genre_dropped


# ---- travel, events and education flows (issue #18 point 5) --------------------------------------------
FLOW_GENRES = ("events", "education", "travel")
import weblica.synth.genres.registry  # noqa: E402,F401  (every genre's intents)


def _flow_sites(category: str, seeds=(1, 2, 3)) -> list[SiteBuilder]:
    return [_site("filter-sort", category, seed) for seed in seeds]


def test_event_ticket_totals_are_asked_as_people_ask_them():
    total = INTENTS["events-ticket-total"]
    assert len(total.phrasings) >= 5
    assert not any("kind" in p or "all together" in p for p in total.phrasings), total.phrasings
    asked = [d.instruction for site in _flow_sites("events", (1, 2, 3, 4, 5, 6)) for d in site.tasks
             if d.intent == "events-ticket-total"]
    assert asked and not any("reserved seat tickets" in t or "of the" in t.split(" for ")[0] for t in asked), asked
    assert all(re.search(r"\b\d (general admission|reserved-seat|VIP) tickets\b", t) for t in asked), asked


def test_event_names_agree_with_their_kind():
    from weblica.synth.genres.events.flow import BANDS, COMEDIANS, COMPANIES, TEAMS
    cat = categories()["events"]
    kinds = cat["kinds"]
    for site in _flow_sites("events"):
        for event in site.data["events"]:
            name, kind = event["name"], event["kind"]
            # the event's noun is its own kind's ("Derby" is Sports), and who it is by fits that kind
            assert any(n in name for n in kinds[kind]), (kind, name)
            assert not any(n in name for k, ns in kinds.items() if k != kind for n in ns), (kind, name)
            if kind == "Sports":
                assert re.fullmatch(r"(Derby|Cup Final): .+ vs .+", name) and sum(t in name for t in TEAMS) == 2, name
            if kind == "Workshop":
                assert re.fullmatch(r".+ (Workshop|Masterclass) with .+", name), name
            by = name.split(": ")[0]
            if kind == "Theatre":
                assert by in COMPANIES, name
            if kind in ("Concert", "Sports", "Theatre", "Festival"):
                assert not any(c in name for c in COMEDIANS), name
            if kind in ("Sports", "Theatre", "Comedy"):
                assert not any(b in name for b in BANDS), name
        # the catalog's own entities: no sports match or play with a music adjective ("Acoustic Derby")
        for item in site.items():
            if item["kind"] in ("Sports", "Theatre"):
                assert not re.match(r"(Acoustic|Electric|Neon|Open Air) ", item["name"]), item["name"]
    assert set(cat["kind_adjectives"]) <= set(kinds)
    assert all(set(a) <= set(cat["adjectives"]) for a in cat["kind_adjectives"].values())


def test_counts_of_a_thing_use_the_times_sign_in_these_genres():
    prefixes = ("events-", "edu-", "travel-", "hotel-", "flight-")
    phrasings = [p for i in INTENTS.values() if i.name.startswith(prefixes) for p in i.phrasings]
    assert phrasings and not any(re.search(r"(\}|\d) x (\{|\w)", p) for p in phrasings), \
        [p for p in phrasings if re.search(r"(\}|\d) x (\{|\w)", p)]
    texts = [d.instruction for c in FLOW_GENRES for site in _flow_sites(c, (1, 2)) for d in site.tasks]
    assert not any(re.search(r"\d x [a-zA-Z]", t) for t in texts), [t for t in texts if re.search(r"\d x [a-zA-Z]", t)]
    buys = [t for t in texts if "×" in t]
    assert buys and all(re.search(r"\d × (general admission|reserved seat|VIP)\b", t) for t in buys), buys


def test_education_courses_are_named_in_the_catalogs_vocabulary():
    from weblica.synth.entities import kind_adjectives
    cat = categories()["education"]
    for site in _flow_sites("education"):
        catalog = {i["name"] for i in site.items()}
        courses = site.data["courses"]
        for course in courses:
            # departments are the catalog's kinds; a title is "<adjective> <noun>" of that kind's nouns
            assert course["dept"] in cat["kinds"], course
            assert any(course["title"] == f"{a} {n}" for a in kind_adjectives(cat, course["dept"])
                       for n in cat["kinds"][course["dept"]]), course
        assert {c["title"] for c in courses} & catalog  # the catalog's own courses are the timetable's
    texts = [d.instruction for site in _flow_sites("education") for d in site.tasks]
    assert not any(w in t for t in texts for w in ("Microeconomics", "World Wars", "Revolutions", "Number Theory"))
    # mid-sentence the type is written in the genre's words ("graphic design courses"); at a sentence's
    # start it is capitalised as any word is ("Graphic design courses only, ...")
    assert not any("Graphic design course" in t[1:] or "Languages course" in t for t in texts), texts


def test_meeting_days_are_asked_without_weekday_inversions():
    meets = INTENTS["edu-meeting-day"]
    assert not any("weekday are" in p or "Which weekday" in p for p in meets.phrasings), meets.phrasings
    asked = [d.instruction for site in _flow_sites("education", (1, 2, 3, 4, 5, 6)) for d in site.tasks
             if d.intent == "edu-meeting-day"]
    assert asked and not any("weekday are" in t for t in asked), asked


def test_seat_rows_and_zones_read_right():
    texts = [d.instruction for site in _flow_sites("events", (1, 2, 3, 4)) for d in site.tasks]
    assert not any(re.search(r"\brow An\b", t) for t in texts), [t for t in texts if "row An" in t]
    assert not any("seat seats" in t or "reserved seat zone" in t or "seats there are" in t for t in texts)


def test_a_branch_or_venue_opened_where_a_brand_was_founded(tmp_path):
    """Banking's branch and an events site's venue "opened" (9 of 17,870 instructions said a branch was
    "founded"): the maker-founded tasks and the maker page say it in the genre's word."""
    from weblica.synth.generate import write_unvalidated

    for category, word in (("banking", "opened"), ("events", "opened"), ("electronics", "founded")):
        asked = [d.instruction for seed in (1, 2) for d in _site("multi-page", category, seed).tasks
                 if d.intent == "maker-founded"]
        assert asked and all(word in a or "been around" in a for a in asked), (category, asked)
        assert not any(re.search(r"\bfound(?:ed|ing)\b", a, re.I) for a in asked) or word == "founded", asked
    path = write_unvalidated(sample_spec(1, "multi-page", "banking"), tmp_path)
    page = next(p for p in (path / "public").rglob("*.html") if "data-maker-city" in p.read_text())
    assert "<dt>Opened</dt>" in page.read_text() and "Founded" not in page.read_text()


def test_what_is_not_sold_does_not_go_for_a_price():
    """Seed 7 asked "What does Dr. Nils Okafor go for?": a genre that sells nothing asks for the fee
    in its own word ("What is the consultation fee for Dr. Nils Okafor?"); a shop still says "go for"."""
    said = {category: [d.instruction for seed in (7, 8, 9) for d in _site("search", category, seed).tasks
                       if d.intent == "ask-price"] for category in ("healthcare", "banking", "transit", "electronics")}
    assert not any("go for" in text for category in ("healthcare", "banking", "transit") for text in said[category]), said
    assert "What is the consultation fee for Dr. Nils Okafor?" in said["healthcare"], said["healthcare"]
    assert any("go for" in text for text in said["electronics"]), said["electronics"]


def test_a_banks_account_types_are_said_in_lower_case():
    """Seed 7 asked "Cheapest Deposit account?": a bank's account types are nouns of their own
    ("the cheapest deposit account", "the savings accounts")."""
    said = [d.instruction for skill in ("table-reasoning", "filter-sort") for d in _site(skill, "banking", 7).tasks
            if not d.intent.startswith("banking-")]  # the user's own accounts have names ("Holiday Savings")
    assert any(re.search(r"\b(?:deposit|savings|brokerage|checking) accounts?\b", text) for text in said), said
    assert not any(re.search(r"(?<!^)\b(?:Deposit|Savings|Brokerage|Checking) accounts?\b", text) for text in said), said
