"""The filler content components show around a skill's own data: testimonials, questions and answers,
service promises, guides, collections. Every phrase takes the genre's words (`site.labels`,
`site.cat`), so a clinic finder never offers "free shipping on every brand", and every choice comes from
the layout rng, so one seed gives one text.
"""
from __future__ import annotations

import random
from typing import TYPE_CHECKING, Any

from weblica.synth.data import slugify
from weblica.synth.intents import article

if TYPE_CHECKING:
    from weblica.synth.site import SiteBuilder

FIRST = ["Ana", "Ben", "Chloé", "Dev", "Elif", "Farah", "Gus", "Hana", "Ivo", "Jun", "Kemi", "Lars", "Mina", "Noor",
         "Oskar", "Priya", "Quinn", "Rosa", "Sami", "Tomás", "Uma", "Vik", "Wen", "Yara", "Zeno"]
CITIES = ["Lisbon", "Osaka", "Denver", "Leeds", "Pune", "Graz", "Quito", "Perth", "Bergen", "Tunis", "Hanoi", "Cork"]


def words(site: SiteBuilder) -> dict[str, Any]:
    """The genre's words, as templates and texts use them."""
    labels = site.labels
    item, items = site.cat["item"]
    return {"item": item, "items": items, "Items": items[:1].upper() + items[1:], "maker": labels["maker"],
            "makers": labels["makers"], "price": labels["price"], "buy": labels["buy"], "sells": bool(labels["sells"]),
            "ships": bool(labels["ships"]), "name": site.name}


def layout_rng(site: SiteBuilder, purpose: str) -> random.Random:
    return random.Random(f"{purpose}:{site.spec.site_id}:{site.spec.seed}")


def collections(site: SiteBuilder) -> list[dict[str, Any]]:
    """One collection per kind of entity the site lists: /c/<kind>, with a picture of its first item."""
    out: dict[str, dict[str, Any]] = {}
    for item in site.data.get("items", []):
        kind = item["kind"]
        entry = out.setdefault(kind, {"name": kind, "slug": slugify(kind), "image": item["image"], "entries": []})
        entry["entries"].append(item)
    return sorted(out.values(), key=lambda c: c["slug"])


def testimonials(site: SiteBuilder, n: int = 4) -> list[dict[str, Any]]:
    w = words(site)
    rng = layout_rng(site, "testimonials")
    lines = [f"Found the right {w['item']} in minutes, and the page told me everything I needed.",
             f"Clear {w['price']}s, no surprises. I keep coming back to {w['name']}.",
             f"The best selection of {w['items']} I have seen, from {w['makers']} I trust.",
             f"Friendly support answered within the hour. Highly recommended.",
             f"I compared {w['items']} side by side and picked one with confidence.",
             f"Simple to use on my phone and on my laptop alike.",
             f"Great choice of {w['makers']}, and the filters actually work."]
    picks = rng.sample(lines, n)
    return [{"text": text, "author": f"{rng.choice(FIRST)} {chr(65 + rng.randrange(26))}.", "city": rng.choice(CITIES),
             "stars": rng.choice([4, 5, 5])} for text in picks]


def faq(site: SiteBuilder, n: int = 6) -> list[tuple[str, str]]:
    w = words(site)
    rng = layout_rng(site, "faq")
    pairs = [(f"How do I find {article(w['item'])}?", f"Browse all {w['items']} from the menu, or open a collection and "
                                                f"narrow it down by {w['maker']}."),
             (f"Is every {w['maker']} on {w['name']} verified?", f"Yes. Every {w['maker']} is reviewed before "
                                                                  f"their {w['items']} appear here."),
             ("Do I need an account?", "No. You can browse without one; an account keeps your details for next time."),
             ("How can I contact you?", "Write to us from the contact page; we answer within one working day."),
             ("Which payment methods do you accept?", "Cards, bank transfer and the usual wallets."),
             ("Can I change my mind?", "Yes: see our policies page for the details that apply to you."),
             ("Where is my personal data kept?", "In the EU, encrypted at rest. Our privacy policy says more."),
             (f"How often are new {w['items']} added?", f"Every week; the start page shows the newest {w['items']}.")]
    if w["ships"]:  # tickets, stays, meals and services are not shipped (the genre's `ships` label)
        pairs.append(("How long does delivery take?", "Two to five working days, depending on where you live."))
    pairs += [(str(q), str(a)) for q, a in site.cat.get("faq", [])]  # the genre's own questions
    return rng.sample(pairs, min(n, len(pairs)))


def perks(site: SiteBuilder) -> list[tuple[str, str]]:
    w = words(site)
    rng = layout_rng(site, "perks")
    options = [("Support 7 days a week", "By chat, phone and e-mail."), ("Secure payments", "Encrypted end to end."),
               (f"Trusted {w['makers']}", f"Every {w['maker']} is checked."),
               ("Easy to compare", f"Side-by-side details of {w['items']}."),
               ("Member offers", "Sign up for early access.")]
    if w["ships"]:
        options += [("Free delivery", "On orders over a modest amount."), ("30-day returns", "No questions asked.")]
    return rng.sample(options, 4)


def guides(site: SiteBuilder) -> list[dict[str, str]]:
    """A few articles (real pages under /guides/) that the start page and footer link to."""
    w = words(site)
    kinds = [c["name"] for c in collections(site)] or list(site.cat.get("kinds", []))[:3]
    titles = [f"How to choose {article(w['item'])}", f"A beginner's guide to {w['items']}",
              f"What to ask {article(w['maker'])} before you decide"]
    if kinds:
        titles.append(f"{kinds[0]} or {kinds[-1]}? What to look for")
    return [{"title": t, "slug": slugify(t), "minutes": 3 + i * 2} for i, t in enumerate(titles)]


def searches(site: SiteBuilder) -> list[str]:
    """Popular search terms: the kinds and makers the catalog holds (each leads to real results)."""
    terms = [c["name"] for c in collections(site)] + [m["name"] for m in site.data.get("makers", [])][:4]
    return terms[:10]


def hours(site: SiteBuilder) -> list[tuple[str, str]]:
    rng = layout_rng(site, "hours")
    opens, closes = rng.choice(["8:00", "9:00", "10:00"]), rng.choice(["18:00", "19:00", "20:00"])
    return [("Monday–Friday", f"{opens}–{closes}"), ("Saturday", f"{rng.choice(['9:00', '10:00'])}–16:00"),
            ("Sunday", rng.choice(["Closed", "11:00–15:00"]))]


def about(cat: dict[str, Any], item: dict[str, Any], opener: str) -> str:
    """One sentence saying what the entity is, in the genre's words (`about:` pattern of the genre file,
    slots {name} {noun} {kind} {maker}, {a_noun}/{a_kind}/{a_maker} with their article, {Kind}/{a_Kind} as written)."""
    pattern = cat.get("about", "{opener}: the {name} is {a_kind} from {maker}.")
    noun, kind = _common(item["noun"]), _common(item["kind"])
    return pattern.format(opener=opener, name=item["name"], noun=noun, kind=kind, maker=item["maker"],
                          a_noun=article(noun), a_kind=article(kind), Kind=item["kind"], a_Kind=article(item["kind"]),
                          a_maker=article(item["maker"]))


def _common(words: str) -> str:
    """A noun as written inside a sentence: "Backend Engineer" -> "backend engineer", "SUV" stays."""
    return " ".join(w.lower() if w[1:].islower() or len(w) == 1 else w for w in words.split())
