"""What a person notices first about a set of synth sites, measured from their bundles (no browser): which
design systems they are built on, how much of a shop's skeleton shows on sites that sell nothing, and how
many names same-genre sites share (bench/synth.py prints these; tests/synth/test_synth_genre_pages.py holds them)."""
from __future__ import annotations

import itertools
import json
import re
import statistics
from collections import Counter
from html import unescape
from pathlib import Path
from typing import Any

# what a shop's skeleton says: on a bank, a council, a paper, a job board, a transit site, a work app, a
# clinic, a school, a property portal or a restaurant none of it belongs
SHOP_PHRASES = ("Shop by type", "New arrivals", "Best value", "Add to cart", "reviews", "Top rated", "Customers love")
STARS = re.compile(r"★\s*\d")  # a rating ("★ 4.2"), not a map's "you are here" star
_TAG = re.compile(r"<[^>]+>")
# words of a bank statement, not names
_NOT_NAMES = {"Salary", "Refund", "Interest", "Cash machine", ""}


def page_text(html: str) -> str:
    return unescape(_TAG.sub(" ", re.sub(r"<(script|style)\b.*?</\1>", " ", html, flags=re.S)))


def shop_phrases(text: str) -> list[str]:
    """The shop phrases a page's text holds (a rating counts as "★")."""
    return [p for p in SHOP_PHRASES if p in text] + ["★"] * len(STARS.findall(text))


def entity_names(data: dict[str, Any], name: str, makers: list[str]) -> set[str]:
    """The names of people, places and companies a site shows: its name, its makers, and its genre's own
    (payees and shops of a bank, writers and readers of a paper, employers and towns of a job board,
    districts of a council, stops of a network)."""
    names = {name, *makers}
    bank = data.get("bank") or {}
    names |= {p["name"] for p in bank.get("payees", [])} | {t["who"] for t in bank.get("transactions", [])}
    for article in data.get("articles", []):
        names |= {article["author"]} | {c["name"] for c in article["comments"]}
    names |= {c["name"] for c in data.get("companies", [])} | {j["location"] for j in data.get("jobs", [])}
    names |= {o.get("district", "") for o in data.get("offices", [])}
    names |= {stop for line in data.get("lines", []) for stop in line["stops"]}
    # a workspace's teams and members (its projects are named as teams name them: "Website relaunch"); a
    # practice's doctors and clinics; a school's instructors; a property portal's agents, streets and
    # neighbourhoods; a restaurant's street, town and kitchen team
    for project in data.get("projects", []):
        names |= {project["team"]} | {m["name"] for m in project["members"]}
    place = data.get("restaurant") or {}
    names |= {place[k] for k in ("street", "town", "chef") if k in place} | set(place.get("team", []))
    names |= {d["name"] for d in data.get("doctors", [])} | {d["clinic"] for d in data.get("doctors", [])}
    names |= {c["instructor"] for c in data.get("courses", [])}
    names |= {a["name"] for a in data.get("agents", [])}
    for home in data.get("homes", []):
        names |= {home["district"], home["address"].split(" ", 1)[1]}
    return names - _NOT_NAMES


def overlap(a: set[str], b: set[str]) -> float:
    """The share of the smaller set's names the other set has too."""
    return len(a & b) / min(len(a), len(b)) if a and b else 0.0


def bundle_figures(paths: list[Path]) -> dict[str, Any]:
    """Design systems used, shop phrases per genre (pages with any, of all pages) and within-genre name
    overlap (mean and max over pairs) of written bundles."""
    systems: Counter[str] = Counter()
    shop: dict[str, list[int]] = {}
    by_genre: dict[str, list[set[str]]] = {}
    for path in paths:
        site = json.loads((path / "site.json").read_text(encoding="utf-8"))
        data = json.loads((path / "data.json").read_text(encoding="utf-8"))
        category = site["spec"]["category"]
        systems[(site.get("design") or {"system": "weblica"})["system"]] += 1
        pages = sorted((path / "public").rglob("*.html"))
        hits = sum(1 for page in pages if shop_phrases(page_text(page.read_text(encoding="utf-8"))))
        seen = shop.setdefault(category, [0, 0])
        seen[0] += hits
        seen[1] += len(pages)
        makers = [m["name"] for m in data.get("makers", [])]
        by_genre.setdefault(category, []).append(entity_names(data, site.get("name", ""), makers))
    overlaps = {}
    for category, sets in sorted(by_genre.items()):
        shares = [overlap(a, b) for a, b in itertools.combinations(sets, 2)]
        if shares:
            overlaps[category] = {"mean": round(statistics.mean(shares), 3), "max": round(max(shares), 3),
                                  "sites": len(sets)}
    return {"design_systems": dict(sorted(systems.items())),
            "shop_phrase_pages": {c: f"{h}/{n}" for c, (h, n) in sorted(shop.items())},
            "within_genre_name_overlap": overlaps}


def main(argv: list[str] | None = None) -> None:
    """`python -m weblica.synth.genre_metrics [--n N] [--seed K] [--category C ...]`: write N unvalidated
    sites per category (skills sampled) into a temporary folder and print their figures, and their content
    figures (weblica.synth.content_metrics), as JSON."""
    import argparse
    import tempfile

    from weblica.synth.generate import write_unvalidated
    from weblica.synth.spec import categories, sample_spec

    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("--n", type=int, default=6, help="sites per category")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--category", action="append", help="only these categories (default: all)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        paths = [write_unvalidated(sample_spec(args.seed * 1000 + i, category=c), Path(tmp))
                 for c in (args.category or sorted(categories())) for i in range(args.n)]
        from weblica.synth.content_metrics import content_figures

        # unvalidated sites carry plans, not oracles: their oracle lengths read 0
        print(json.dumps({**bundle_figures(paths), **content_figures(paths)}, indent=1, sort_keys=True))


if __name__ == "__main__":
    main()
