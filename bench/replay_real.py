"""Held-out precision and recall on real multi-run loads of public sites (issue 41, point 2).

The loads are HAR files sitespeed.io's pagexray ships as test fixtures (bench/data/real_hars/SOURCE.md:
github.com/sitespeedio/pagexray at c9f2274, MIT): en.wikipedia.org (WebPageTest, 3 runs, first and repeat
view: 6 loads), www.expressen.se (WebPageTest, 3 runs), www.walmart.com (chrome-har, 9 runs), www.assa.se
(chrome-har, 3 runs). Each is imported as a recording as `weblica import` does (one run per HAR page).
For k = 3..n, rules are learned from loads 1..k-1 (never-hurt checked, as `rules infer` does) and every
request of load k is asked of the matcher over loads 1..k-1, with its own validators.

- recall: load k's requests served (any tier but miss);
- precision, strict: served requests whose answer is load k's own. These HARs hold no bodies, so identity
  is status, content type, redirect target, validators and size (`weblica.cache.identity`);
- precision: a served answer that differs from load k's only in what the site's own answers to that very
  request already differed in between the training loads (a tracker's redirect with fresh ids, a rotating
  creative's size) is "site-random" and counted right: no replay can know the live pick. Any other
  difference is wrong.

Run: `.venv/bin/python bench/replay_real.py` (or through `bench/replay.py --real-only`). Prints figures;
nothing is asserted.
"""
from __future__ import annotations

import gzip
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT))

from replay_figures import _Runs  # noqa: E402

from weblica.cache.exchange import Exchange, header  # noqa: E402
from weblica.cache.identity import ResponseComparer, same_size_band, same_target  # noqa: E402
from weblica.cache.interop import import_har  # noqa: E402
from weblica.cache.matcher import ReplayIndex, Validators  # noqa: E402
from weblica.cache.rulecheck import infer_checked_rules  # noqa: E402
from weblica.cache.rules import RuleBook  # noqa: E402
from weblica.cache.store import Store  # noqa: E402

DATA = ROOT / "bench" / "data" / "real_hars"
SOURCE = "github.com/sitespeedio/pagexray@c9f22741 test/files (MIT); copies in bench/data/real_hars/"
SITES = {"en.wikipedia.org": "en.wikipedia.org.spdy-wpt.har.gz", "www.expressen.se": "expressen.har.gz",
         "www.walmart.com": "walmart-304.har.gz", "www.assa.se": "assa.har.gz"}


def differences(a: Exchange, b: Exchange) -> set[str]:
    """Which parts of two bodiless answers differ (status, type, redirect target, validators, size)."""
    out = set()
    if a.status != b.status:
        out.add("status")
    if a.content_type != b.content_type:
        out.add("type")
    if not same_target(header(a.response_headers, "location"), header(b.response_headers, "location")):
        out.add("location")
    for name in ("etag", "last-modified"):
        if header(a.response_headers, name) != header(b.response_headers, name):
            out.add(name)
    if not same_size_band(a.response_body_size, b.response_body_size):
        out.add("size")
    return out


def site_random(served: Exchange, live: Exchange, variants: list[Exchange]) -> bool:
    """Whether `served` differs from `live` only where the training loads' answers already differed."""
    if served.status != live.status or len(variants) < 2:
        return False
    seen = set().union(*(differences(a, b) for i, a in enumerate(variants) for b in variants[i + 1:]))
    return bool(seen) and differences(served, live) <= seen


def heldout_site(har: Path, work: Path) -> dict[str, Any]:
    """Every held-out load of one site (k = 3..n)."""
    rec = work / har.name.split(".har")[0]
    plain = work / har.name.removesuffix(".gz")
    plain.write_bytes(gzip.decompress(har.read_bytes()))
    imported = import_har(plain, rec)
    out: dict[str, Any] = {"loads": imported["runs"], "held_out": {}}
    with Store.open_dir(rec, readonly=True) as store:
        runs = [r.id for r in store.runs(("import",))]
        comparer = ResponseComparer(store)
        for k in range(3, len(runs) + 1):
            train, held = runs[:k - 1], runs[k - 1]
            rulesets, _ = infer_checked_rules(_Runs(store, train))
            book = RuleBook(list(rulesets.values()))
            index = ReplayIndex(store.exchanges(run_ids=train), book)
            per_load = [ReplayIndex(store.exchanges(run_ids=[r]), book) for r in train]
            row = {"requests": 0, "served": 0, "right": 0, "site_random": 0, "wrong": [], "tiers": {}}
            for ex in store.exchanges(run_ids=[held]):
                validators = Validators.of(ex.request_headers)
                m = index.match(ex.view, f"load-{k}", validators=validators)
                row["requests"] += 1
                row["tiers"][m.tier] = row["tiers"].get(m.tier, 0) + 1
                if m.tier == "miss":
                    continue
                row["served"] += 1
                if m.tier == "stub":   # a beacon answered locally: right when the live answer had no content
                    ok = ex.status == 204 or (ex.status == 200 and ex.response_body_size == 0)
                    served_status = 204
                else:
                    assert m.exchange is not None
                    served_status = 304 if m.not_modified else m.exchange.status
                    ok = m.byte_range is None and (ex.status == 304 if m.not_modified else comparer.same(m.exchange, ex))
                if ok:
                    row["right"] += 1
                    continue
                if m.exchange is not None and not m.not_modified:
                    variants = [v for v in (i.match(ex.view, "variants", validators=validators).exchange
                                            for i in per_load) if v is not None]
                    if site_random(m.exchange, ex, variants):
                        row["site_random"] += 1
                        continue
                row["wrong"].append(f"{m.tier} {ex.method} {ex.url[:100]} (live {ex.status}, "
                                    f"{ex.response_body_size} B; served {served_status}, "
                                    f"{m.exchange.response_body_size if m.exchange else 0} B)")
            out["held_out"][f"load_{k}"] = row
    return out


def real_heldout() -> dict[str, Any]:
    work = Path(tempfile.mkdtemp(prefix="weblica-bench-real-"))
    out: dict[str, Any] = {"source": SOURCE, "sites": {}}
    total = {"requests": 0, "served": 0, "right": 0, "site_random": 0, "wrong": 0}
    for site, name in SITES.items():
        result = heldout_site(DATA / name, work)
        out["sites"][site] = result
        for row in result["held_out"].values():
            for key in ("requests", "served", "right", "site_random"):
                total[key] += row[key]
            total["wrong"] += len(row["wrong"])
    out["total"] = total
    out["recall_pct"] = round(100 * total["served"] / max(total["requests"], 1), 2)
    out["precision_pct"] = round(100 * (total["served"] - total["wrong"]) / max(total["served"], 1), 2)
    out["strict_precision_pct"] = round(100 * total["right"] / max(total["served"], 1), 2)
    return out


def print_real(fig: dict[str, Any]) -> None:
    print(f"\nheld-out loads of PUBLIC sites (real browsers' HARs; source: {fig['source']}); rules from loads "
          "1..k-1, load k asked: goal >= 95% recall at >= 99.5% precision")
    for site, result in fig["sites"].items():
        for k, r in result["held_out"].items():
            recall = 100 * r["served"] / max(r["requests"], 1)
            print(f"{site:18} {k:7} served {r['served']:>3}/{r['requests']:<3} recall {recall:5.1f}%  "
                  f"right {r['right']:>3}, site-random {r['site_random']}, wrong {len(r['wrong'])}  tiers {r['tiers']}")
            for w in r["wrong"]:
                print(f"{'':27} wrong: {w}")
    t = fig["total"]
    print(f"{'all':26} served {t['served']}/{t['requests']} recall {fig['recall_pct']}%  precision "
          f"{fig['precision_pct']}% ({t['wrong']} wrong of {t['served']} served); strict {fig['strict_precision_pct']}% "
          f"({t['right']} exactly load k's answer, {t['site_random']} site-random)")


if __name__ == "__main__":
    figures = real_heldout()
    print(json.dumps(figures, indent=1, default=str))
    print_real(figures)
