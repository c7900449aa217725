"""Attacks on session 11's realism fixes at seeds it never looked at (31-40; tests/synth/test_synth_realism.py
checks 7, 11 and 23): can a generated site still put two price scales on one site, cents on salaries,
home prices and other amounts from 10,000, a bank branch or an events venue "founded", or an
instruction the intent lint or the genre lint refuses? Sites are built in memory (generate.build_site,
no browser), every category, the skills whose tasks read the catalog and the makers."""
from __future__ import annotations

import re

import pytest

from weblica.synth.generate import build_site, emitted_drafts
from weblica.synth.intents.lint import genre_problems, problems
from weblica.synth.spec import categories, sample_spec

SKILLS = ("search", "multi-page")  # multi-page asks about the makers ("In which year was ... founded?")
# flow entities priced like the catalog; real estate's homes for sale are not (its catalog is monthly rent)
FLOW_PRICED = ("dishes", "plans", "services", "fees", "accounts", "events")
CENTS = re.compile(r"(?<![\d.,])(\d{1,3}(?:[,.\u00a0\u202f ]\d{3})+)[.,]\d\d(?!\d)")
PLACES = ("banking", "events")  # makers that are branches and venues: they opened


def _large_with_cents(text: str) -> list[str]:
    return [m.group(0) for m in CENTS.finditer(text) if int(re.sub(r"\D", "", m.group(1))) >= 10_000]


@pytest.mark.parametrize("seed", range(31, 41))
def test_realism_classes_stay_fixed_at_other_seeds(seed):
    found: list[tuple] = []
    for category in sorted(categories()):
        for skill in SKILLS:
            site = build_site(sample_spec(seed, skill=skill, category=category))
            items = site.data.get("items", [])
            prices = [i["price"] for i in items if i.get("price")]
            for key in FLOW_PRICED:
                entities = [t for e in site.data.get(key) or [] for t in e["tickets"]] if key == "events" \
                    else site.data.get(key) or []  # an event's prices are its ticket types'
                others = [o["price"] for o in entities if isinstance(o, dict)
                          and isinstance(o.get("price"), (int, float)) and o["price"] > 0]
                if prices and others and max(max(prices) / min(others), max(others) / min(prices)) >= 100:
                    found.append((category, skill, f"two price scales: catalog vs {key}", min(prices), min(others)))
            if site.spec.style.locale == "ja-JP" and prices:
                low = categories()[category]["price"][0]
                if min(prices) < low * 100 * 0.5:
                    found.append((category, skill, "a yen catalog in the genre's units", min(prices)))
            shown = [str(i.get("price_text", "")) for i in items if i.get("price", 0) >= 10_000]
            shown += [j["salary_text"] for j in site.data.get("jobs") or []]
            shown += [h["price_text"] for h in site.data.get("homes") or []]
            found += [(category, skill, "cents on a large amount", t) for t in shown if _large_with_cents(t)]
            for draft in emitted_drafts(site):
                text = draft.instruction
                found += [(category, skill, "cents in an instruction", text) for _ in _large_with_cents(text)[:1]]
                if category in PLACES and re.search(r"\bfounded\b", text):
                    found.append((category, skill, "a branch or venue founded", text))
                found += [(category, skill, p, text) for p in problems(text, draft.guided) + genre_problems(text, site)]
            if category in PLACES:
                assert site.labels.get("founded", "").lower() == "opened", (category, site.labels.get("founded"))
    assert not found, found[:10]
