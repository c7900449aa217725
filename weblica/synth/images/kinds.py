"""Which drawing family depicts an entity kind: keywords matched in the kind (then in the item's name),
first match wins, so "Sneakers" is a shoe and "Credit card" a card. A keyword matches a whole word
(plurals too: "jean" matches "Jeans"); one ending in `*` matches a word's start ("cardiolog*" matches
"Cardiology"), so "card" never matches "Cardigan" and "top" never "Laptop". Unknown kinds fall back to
a landscape photo (`FALLBACK`)."""
from __future__ import annotations

import functools
import re

FALLBACK = "photo"

# (keyword, family): specific words before general ones ("pickup" is a car, "dog food" a package).
KEYWORDS: list[tuple[str, str]] = [
    # genres whose kind words would otherwise hit a wrong family below ("Graphic design" is a course, not
    # a designer; an app is drawn on a screen; a news section as a printed page)
    ("graphic design", "course"), ("automation", "laptop"), ("analytics", "laptop"), ("communication", "phone"),
    ("storage", "laptop"), ("security", "laptop"), ("diagram*", "laptop"), ("electronics", "laptop"),
    ("politics", "document"), ("economy", "document"), ("climate", "document"), ("culture", "document"),
    ("world", "document"), ("article", "document"),
    # clothing
    ("sneaker*", "shoe"), ("shoe", "shoe"), ("boot", "shoe"), ("loafer", "shoe"), ("oxford", "shoe"),
    ("sandal", "shoe"), ("heel", "shoe"), ("trainer", "shoe"),
    ("jean", "trousers"), ("chino", "trousers"), ("trouser", "trousers"), ("pant", "trousers"), ("short", "trousers"),
    ("dress", "dress"), ("skirt", "dress"), ("gown", "dress"), ("tunic", "dress"),
    ("scarf", "scarf"), ("shawl", "scarf"), ("poncho", "scarf"),
    ("jacket", "top"), ("clothing", "top"), ("shirt", "top"), ("cardigan", "top"), ("blazer", "top"), ("parka", "top"), ("coat", "top"),
    ("trench", "top"), ("bomber", "top"), ("sweater", "top"), ("hoodie", "top"), ("top", "top"),
    # pets (before furniture: a pet bed is a cushion, not a bed frame)
    ("dog food", "package"), ("cat food", "package"), ("kibble", "package"), ("cat toy", "package"),
    ("leash", "package"), ("harness", "package"), ("aquarium", "aquarium"), ("tank", "aquarium"),
    ("bird cage", "cage"), ("cage", "cage"), ("pet bed", "cushion"), ("cushion", "cushion"),
    # home
    ("sofa", "sofa"), ("couch", "sofa"), ("lounger", "sofa"), ("lamp", "lamp"), ("pendant", "lamp"),
    ("light", "lamp"), ("planter", "plant"), ("plant", "plant"), ("pot", "plant"), ("trellis", "plant"),
    ("rug", "rug"), ("carpet", "rug"), ("runner", "rug"), ("table", "table"), ("desk", "table"),
    ("shelf", "table"), ("cabinet", "table"), ("furniture", "table"), ("bookcase", "table"),
    ("wardrobe", "table"), ("chair", "chair"), ("stool", "chair"), ("bench", "chair"),
    # electronics
    ("laptop", "laptop"), ("monitor", "laptop"), ("computer", "laptop"), ("phone", "phone"), ("mobile", "phone"),
    ("tablet", "tablet"), ("headphone*", "headphones"), ("earbud", "headphones"), ("camera", "camera"),
    ("lens", "camera"), ("drone", "camera"),
    # vehicles
    ("sedan", "car"), ("suv", "car"), ("hatchback", "car"), ("pickup", "car"), ("coupe", "car"), ("van", "car"),
    ("car", "car"), ("wagon", "car"), ("convertible", "car"),
    # places
    ("townhouse", "house"), ("cottage", "house"), ("villa", "house"), ("bungalow", "house"), ("house", "house"),
    ("cabin", "house"), ("duplex", "house"), ("apartment", "building"), ("studio", "building"), ("loft", "building"),
    ("flat", "building"), ("condo", "building"), ("penthouse", "building"), ("hotel", "building"),
    ("hostel", "building"), ("resort", "building"), ("guesthouse", "building"), ("inn", "building"),
    ("office", "building"), ("branch", "building"),
    # food and drink
    ("fruit", "fruit"), ("apple", "fruit"), ("vegetable*", "fruit"), ("carrot", "fruit"), ("produce", "fruit"),
    ("beverage*", "bottle"), ("drink", "bottle"), ("lemonade", "bottle"), ("juice", "bottle"), ("dairy", "bottle"),
    ("milk", "bottle"), ("yogurt", "bottle"), ("wine", "bottle"), ("water", "bottle"),
    ("bakery", "bread"), ("bread", "bread"), ("sourdough*", "bread"), ("pastry", "bread"),
    ("snack*", "package"), ("granola*", "package"), ("cracker*", "package"), ("cereal", "package"),
    ("italian", "dish"), ("japanese", "dish"), ("mexican", "dish"), ("indian", "dish"), ("vegan", "dish"),
    ("bistro", "dish"), ("chinese", "dish"), ("thai", "dish"), ("dish", "dish"), ("meal", "dish"), ("pizza", "dish"),
    ("sushi", "dish"), ("burger", "dish"), ("salad", "dish"), ("menu", "dish"), ("restaurant", "dish"),
    # books, tickets, papers, money
    ("mystery", "book"), ("fantasy", "book"), ("biography", "book"), ("science", "book"), ("poetry", "book"),
    ("history", "book"), ("novel", "book"), ("romance", "book"), ("book", "book"), ("thriller", "book"),
    ("concert", "ticket"), ("theatre", "ticket"), ("theater", "ticket"), ("comedy", "ticket"), ("festival", "ticket"),
    ("sports", "ticket"), ("workshop", "ticket"), ("ticket", "ticket"), ("flight", "ticket"), ("fare", "ticket"),
    ("match", "ticket"), ("show", "ticket"), ("event", "ticket"), ("pass", "ticket"), ("train", "ticket"),
    ("bus", "ticket"), ("tram", "ticket"), ("metro", "ticket"), ("ferry", "ticket"), ("sport", "document"),
    ("permit", "document"), ("licen*", "document"), ("passport", "document"), ("certificate", "document"),
    ("application", "document"), ("form", "document"), ("tax", "document"), ("benefit", "document"),
    ("registration", "document"), ("statement", "document"), ("service", "document"), ("invoice", "document"),
    ("credit card", "card"), ("card", "card"), ("checking", "card"), ("savings", "card"), ("loan", "card"),
    ("deposit", "card"), ("brokerage", "card"), ("account", "card"), ("mortgage", "card"),
    # courses
    ("programming", "course"), ("languages", "course"), ("business", "course"), ("data", "course"),
    ("course", "course"), ("class", "course"), ("lesson", "course"), ("marketing", "course"),
    # music
    ("guitar", "guitar"), ("instrument*", "guitar"),
    ("violin", "guitar"), ("ukulele", "guitar"), ("bass", "guitar"), ("cello", "guitar"),
    ("keyboard", "keyboard"), ("piano", "keyboard"), ("synth", "keyboard"), ("drum", "drum"), ("snare", "drum"),
    ("cajon", "drum"), ("microphone", "microphone"), ("mic", "microphone"), ("amplifier", "speaker"),
    ("speaker", "speaker"), ("amp", "speaker"),
    # people: clinicians, job roles, instructors, agents
    ("dentist*", "person"), ("pediatric*", "person"), ("dermatolog*", "person"), ("cardiolog*", "person"),
    ("physio*", "person"), ("optometr*", "person"), ("doctor", "person"), ("nurse", "person"), ("therap*", "person"),
    ("engineer*", "person"), ("design*", "person"), ("sales", "person"), ("support", "person"), ("finance", "person"),
    ("operations", "person"), ("agent", "person"), ("author", "person"), ("person", "person"), ("people", "person"),
    ("staff", "person"), ("member", "person"), ("tutor", "person"), ("teacher", "person"), ("music", "course"),
    ("yoga", "person"), ("spin", "person"), ("hiit", "person"), ("pilates", "person"), ("boxing", "person"),
    ("swim", "person"), ("trainer", "person"), ("coach", "person"), ("plumb*", "person"),
    ("clean*", "person"), ("tutoring", "course"), ("handyman", "person"), ("electrical", "person"),
    ("gardening", "plant"), ("moving", "car"),
]


def family_of(kind: str, name: str = "") -> str:
    """The drawing family for an entity kind (and name, when the kind says nothing); FALLBACK when neither
    names a known thing."""
    for text in (kind.lower(), name.lower()):
        for pattern, fam in _patterns():
            if pattern.search(text):
                return fam
    return FALLBACK


@functools.lru_cache(maxsize=1)
def _patterns() -> list[tuple[re.Pattern[str], str]]:
    return [(re.compile(r"\b" + re.escape(kw[:-1]) if kw.endswith("*") else r"\b" + re.escape(kw) + r"(?:s|es)?\b"), fam)
            for kw, fam in KEYWORDS]
