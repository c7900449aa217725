"""The genre entity model: what one entity of a category is and how it is named.

A category's genre file (`weblica/synth/genres/<genre>/genre.yaml`) gives its `entity` (product, hotel, doctor, job
posting, article, route...), its `kinds`, each with its own nouns, and a `name` pattern:
`"{adjective} {noun}"` (a "Nimbus Ultrabook" is a laptop, a "Senior Backend Engineer" an Engineering
job) or a person's name (`"Dr. {first} {last}"`, the kind's noun then being the clinician's title). The
noun of every name is drawn from its own kind's nouns, so a name never contradicts its kind.

Near-duplicates on purpose: a few entities are a `variant` of another one ("Trail Crossover" and "Trail
Crossover GTX", same kind and noun), so an agent has to read a name to its end. Names stay unique; the
answer checks take every other name shown as a confuser, so a task about one never accepts the other.
"""
from __future__ import annotations

import random
from typing import Any

NAME_PATTERN = "{adjective} {noun}"
NEAR_DUPLICATE_SHARE = 8  # one entity in this many is a variant of another one


def kind_nouns(cat: dict[str, Any]) -> dict[str, list[str]]:
    """Kind -> the nouns its entities are named with."""
    return {str(kind): [str(n) for n in nouns] for kind, nouns in cat["kinds"].items()}


def kind_adjectives(cat: dict[str, Any], kind: str) -> list[str]:
    """The adjectives a kind's names take: the genre's `kind_adjectives` for that kind where it has them
    (a sports match is no "Acoustic Derby"), else all of its adjectives."""
    return [str(a) for a in (cat.get("kind_adjectives") or {}).get(kind) or cat["adjectives"]]


def is_person_named(cat: dict[str, Any]) -> bool:
    """Whether entities are people named by first and last name (the noun is then their title)."""
    return "{first}" in cat.get("name", NAME_PATTERN)


def _base_names(cat: dict[str, Any], people: tuple[list[str], list[str]]) -> list[tuple[str, str | None, str | None]]:
    """Every (name, kind, noun) the pattern allows, in catalog order; people get their kind later."""
    pattern = cat.get("name", NAME_PATTERN)
    if is_person_named(cat):
        first, last = people
        return [(pattern.format(first=f, last=l), None, None) for f in first for l in last]
    return [(pattern.format(adjective=a, noun=n), kind, n) for kind, nouns in kind_nouns(cat).items()
            for n in nouns for a in kind_adjectives(cat, kind) if a.lower() not in n.lower().split()]  # no "Stage Stage Piano"


def name_capacity(cat: dict[str, Any], people: tuple[list[str], list[str]], spare: int = 0) -> int:
    """The most entities `entity_names` can name uniquely while leaving `spare` base names unused: the
    base names, plus the near-duplicates (one in NEAR_DUPLICATE_SHARE) it adds on top of them."""
    base = max(0, len(_base_names(cat, people)) - spare)
    return base * NEAR_DUPLICATE_SHARE // (NEAR_DUPLICATE_SHARE - 1) if cat.get("variants") else base


def entity_names(cat: dict[str, Any], rng: random.Random, count: int,
                 people: tuple[list[str], list[str]]) -> list[dict[str, str]]:
    """`count` unique entities as {name, kind, noun}: names drawn from the kinds' own nouns, about one in
    NEAR_DUPLICATE_SHARE a variant of another ("<name> <variant>", same kind and noun), mixed in order.
    `people` (first names, last names) name person entities."""
    combos = _base_names(cat, people)
    rng.shuffle(combos)
    variants = [str(v) for v in cat.get("variants") or []]
    n_dup = count // NEAR_DUPLICATE_SHARE if variants else 0
    nouns = kind_nouns(cat)
    chosen: list[dict[str, str]] = []
    for name, kind, noun in combos[:count - n_dup]:
        if kind is None:  # a person: the kind (specialty) and its noun (title) are drawn for them
            kind = rng.choice(list(nouns))
            noun = rng.choice(nouns[kind])
        chosen.append({"name": name, "kind": kind, "noun": str(noun)})
    taken = {e["name"] for e in chosen}
    extra = iter(combos[count - n_dup:])
    for index in range(n_dup):
        source = chosen[index]
        name = f"{source['name']} {variants[index % len(variants)]}"
        if name in taken:  # a clash with another base name: take one more base name instead
            name, kind, noun = next(extra)
            chosen.append({"name": name, "kind": kind or source["kind"], "noun": str(noun or source["noun"])})
        else:
            chosen.append({**source, "name": name})
        taken.add(chosen[-1]["name"])
    rng.shuffle(chosen)
    return chosen


def absent_names(cat: dict[str, Any], present: set[str], people: tuple[list[str], list[str]]) -> list[str]:
    """Names the genre could have but the site does not (for infeasible tasks), in catalog order. A name
    that begins another present name is left out: searching it would show that entity."""
    return [name for name, _, _ in _base_names(cat, people)
            if name not in present and not any(p.startswith(name + " ") for p in present)]


def one_word_apart(a: str, b: str) -> bool:
    """Whether two names differ by one word: one word added at the end ("X" / "X GTX") or one changed."""
    wa, wb = a.split(), b.split()
    added = abs(len(wa) - len(wb)) == 1 and (wa[:len(wb)] == wb or wb[:len(wa)] == wa)
    return added or (len(wa) == len(wb) and sum(x != y for x, y in zip(wa, wb)) == 1)


def near_duplicates(names: list[str]) -> list[tuple[str, str]]:
    """Pairs of names one word apart."""
    return [(a, b) for i, a in enumerate(names) for b in names[i + 1:] if one_word_apart(a, b)]
