"""Open-ended names from a seeded fake-data library (Faker), in the site's locale: people, companies, places
and streets that no closed word list repeats from site to site.

Every draw comes from a Faker seeded by the site (its id and seed) and what the draw is for (`purpose`), so
one seed gives the same names, and drawing one more kind of name never moves another. A genre's grammar
says how names are put together (`pattern`: "{last_name} Savings Bank", "{street_name} stop"); Faker only
fills the slots. Faker's data is pinned with its version (a new Faker release may draw other names).
"""
from __future__ import annotations

import hashlib
import re
from functools import lru_cache
from typing import Any

try:
    from faker import Faker
except ModuleNotFoundError:  # a clear error when a site needs it, not at import
    Faker = None  # type: ignore[assignment,misc]

# the site's locale -> Faker's; the UI text stays English (languages are another axis), the names are local
LOCALES = {"en-US": "en_US", "en-GB": "en_GB", "de-DE": "de_DE", "fr-FR": "fr_FR", "ja-JP": "ja_JP",
           "es-ES": "es_ES"}
# the slots a pattern may name, each a Faker provider method
SLOTS = ("first_name", "last_name", "name", "city", "street_name", "company", "city_suffix", "color_name", "job",
         "home_city")  # home_city: the site's own town, the same in every pattern of the site
_SLOT = re.compile(r"\{(" + "|".join(SLOTS) + r")\}")
# Japanese Faker names are in kanji; an English site spells them in Latin letters as Japanese sites do in
# English, so ja-JP draws the romanized providers where Faker has them
_ROMANIZED = {"first_name": "first_romanized_name", "last_name": "last_romanized_name"}


class FakerMissing(ModuleNotFoundError):
    pass


@lru_cache(maxsize=8)
def _faker(locale: str) -> Any:
    if Faker is None:
        raise FakerMissing("the Faker package is missing: run `.ci/setup` (or `pip install faker`), "
                           "which synth sites draw their names from")
    return Faker(LOCALES.get(locale, "en_US"))


def _seed(*parts: Any) -> int:
    return int.from_bytes(hashlib.sha256(":".join(map(str, parts)).encode()).digest()[:8], "big")


class Names:
    """A site's source of names for one purpose; `unique` never gives a name twice."""

    def __init__(self, site_id: str, seed: int, locale: str, purpose: str) -> None:
        self.site_id, self.site_seed = site_id, seed
        self.locale = locale
        self.fake = _faker(locale)
        self._seed = _seed(site_id, seed, purpose)
        self._draws = 0
        self._given: set[str] = set()

    def slot(self, name: str) -> str:
        if name == "home_city":
            return Names(self.site_id, self.site_seed, self.locale, "home").slot("city")
        self.fake.seed_instance(self._seed + self._draws)  # Faker shares one rng per locale: reseed per draw
        self._draws += 1
        method, fake = name, self.fake
        if self.locale == "ja-JP":
            if name == "name":
                return f"{self.slot('first_name')} {self.slot('last_name')}"
            if name in ("first_name", "last_name"):
                method = _ROMANIZED[name]
            else:  # Faker's Japanese places and companies are in kanji, which an English page shows as tofu
                fake = _faker("en-US")
                fake.seed_instance(self._seed + self._draws + 7919)
        value = str(getattr(fake, method)())
        if name == "company":  # "Smith, Jones and Lee" reads as a law firm: keep the first name of it
            value = re.split(r",| and | und | et |-", value)[0].strip()
        return value

    def fill(self, pattern: str) -> str:
        """The pattern with every {slot} drawn."""
        return _SLOT.sub(lambda m: self.slot(m.group(1)), pattern)

    def unique(self, pattern: str, taken: set[str] | None = None, tries: int = 60) -> str:
        """A name of the pattern not given before (nor in `taken`); after `tries` draws, one with a number."""
        seen = self._given | (taken or set())
        for _ in range(tries):
            value = self.fill(pattern)
            if value not in seen:
                self._given.add(value)
                return value
        value = f"{self.fill(pattern)} {len(self._given) + 2}"
        self._given.add(value)
        return value

    def people(self, count: int) -> list[dict[str, str]]:
        """`count` distinct people: first and last name."""
        out: list[dict[str, str]] = []
        while len(out) < count:
            first, last = self.slot("first_name"), self.slot("last_name")
            full = f"{first} {last}"
            if full in self._given:
                continue
            self._given.add(full)
            out.append({"first": first, "last": last, "name": full})
        return out


def names(site: Any, purpose: str) -> Names:
    """The names source of a SiteBuilder (or a spec) for `purpose`."""
    spec = getattr(site, "spec", site)
    return Names(spec.site_id, spec.seed, spec.style.locale, purpose)


def home_city(site: Any) -> str:
    """The site's own town (the `{home_city}` of its patterns)."""
    return names(site, "home").slot("city")


def _ascii(text: str) -> str:
    import unicodedata

    folded = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    return re.sub(r"[^a-z0-9]+", "", folded.lower()) or "user"


def people(site: Any, purpose: str, count: int) -> list[dict[str, str]]:
    """`count` distinct people of the site's locale, shaped as weblica.synth.data.make_people's (name,
    first, last, email, phone, city, street, zip): task forms fill them in."""
    source = names(site, purpose)
    out = []
    for index, person in enumerate(source.people(count)):
        number = _seed(source._seed, index)
        out.append({**person, "email": f"{_ascii(person['first'])}.{_ascii(person['last'])}@example.test",
                    "phone": f"+1 555 {100 + number % 900} {1000 + (number // 900) % 9000}",
                    "city": source.slot("city"), "street": f"{1 + number % 220} {source.slot('street_name')}",
                    "zip": f"{10000 + (number // 7) % 90000}"})
    return out


def places(site: Any, purpose: str, count: int, pattern: str = "{street_name}") -> list[str]:
    """`count` distinct place names of the pattern (districts, stops, towns)."""
    source = names(site, purpose)
    return [source.unique(pattern) for _ in range(count)]
