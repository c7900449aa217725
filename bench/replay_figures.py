"""Issue 20's figures beside `replay.py`'s: the probes side by side with Playwright routeFromHAR and
mitmproxy server replay, and held-out-load recall and precision on the local live-like sites.

Run through `bench/replay.py` (`--probes-only`, `--heldout-only`, or everything).
"""
from __future__ import annotations

import asyncio
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT))

from cache_sites.shop import SEARCH_ACTIONS, ShopSite  # noqa: E402
from listener import Listener  # noqa: E402

from weblica.cache.addons import HostMapper, parse_resolve  # noqa: E402
from weblica.cache.demo_site import NEWS_ACTIONS, NewsSite  # noqa: E402
from weblica.cache.interop import export_har  # noqa: E402
from weblica.cache.proxy import ProxyServer  # noqa: E402
from weblica.cache.record import record  # noqa: E402
from weblica.cache.store import Store  # noqa: E402


def _mitm_flows(store: Store, path: Path) -> None:
    """The recording as a mitmproxy flow file, for mitmproxy's own server replay."""
    from mitmproxy import http, io
    from mitmproxy.test import tflow

    with path.open("wb") as f:
        writer = io.FlowWriter(f)
        for ex in store.exchanges():
            req = http.Request.make(ex.method, ex.url, ex.request_body or b"",
                                    [(k.encode(), v.encode()) for k, v in ex.request_headers])
            resp = http.Response.make(ex.status, store.bodies.get(ex.response_body_digest),
                                      [(k.encode(), v.encode()) for k, v in ex.response_headers])
            writer.add(tflow.tflow(req=req, resp=resp))



def probe_figures() -> dict[str, Any]:
    """Issue 20's probes side by side (tests/cache_sites/probes.py: Vary on Accept-Language, the login
    cookie, slugs, an unrecorded search, Range), recorded twice by real Chromium through our recorder and
    replayed with the site gone by ours (inferred rules; no rules), Playwright routeFromHAR (the
    recording exported as HAR, unmatched requests aborted) and mitmproxy server replay (default options:
    unmatched requests forwarded, to a listener where the site was). Each probe: correct, miss or wrong."""
    from cache_sites.probes import PROBES, ProbeSite, browse_probes, record_probe_site, with_browser

    from weblica.cache.addons import EpisodeHeader, Replayer
    from weblica.cache.backend import load_source
    from weblica.cache.build import infer_into

    work = Path(tempfile.mkdtemp(prefix="weblica-bench-probes-"))
    rec = work / "rec"
    with ProbeSite() as site:
        origin, port, resolve = site.url("").rstrip("/"), site.port, list(site.resolve)
        live = record_probe_site(site, rec)
    rules = infer_into(rec)
    export_har(rec, work / "rec.har", keep_secrets=True)
    with Store.open_dir(rec, readonly=True) as store:
        _mitm_flows(store, work / "rec.flows")
    browse = lambda proxy=None, har=None: asyncio.run(with_browser(  # noqa: E731
        lambda new_context: browse_probes(new_context, origin), proxy, har))
    results: dict[str, dict[str, str]] = {}
    listener = Listener(port)
    try:
        for name, rules_dirs in (("ours_inferred_rules", None), ("ours_no_rules", [])):
            if rules_dirs is not None:   # REC/rules is always read: move it aside for the no-rules replay
                (rec / "rules").rename(work / "rules-aside")
            source = load_source(rec, [], log_misses=False)
            try:
                with ProxyServer([EpisodeHeader(), Replayer(lambda episode: source)]) as proxy:
                    results[name] = browse(proxy.url)
            finally:
                source.store.close()
                if rules_dirs is not None:
                    (work / "rules-aside").rename(rec / "rules")
        ours_outbound = listener.accepted
        results["playwright_routeFromHAR"] = browse(har=str(work / "rec.har"))
        har_outbound = listener.accepted - ours_outbound
        with ProxyServer([HostMapper(parse_resolve(resolve))],
                         options={"server_replay": [str(work / "rec.flows")]}) as proxy:
            results["mitmproxy_server_replay"] = browse(proxy.url)
        mitm_outbound = listener.accepted - ours_outbound - har_outbound
    finally:
        listener.close()
    out: dict[str, Any] = {"live": live, "rules": {k: v for k, v in rules.items() if k != "never_hurt"},
                           "probes": [p.name for p in PROBES], "results": results,
                           "outbound": {"ours": ours_outbound, "playwright_routeFromHAR": har_outbound,
                                        "mitmproxy_server_replay": mitm_outbound}}
    out["summary"] = {name: {kind: sum(v == kind for v in r.values()) for kind in ("correct", "miss", "wrong")}
                      for name, r in results.items()}
    return out


def print_probe_figures(fig: dict[str, Any]) -> None:
    names = list(fig["results"])
    short = {"ours_inferred_rules": "ours", "ours_no_rules": "ours,no rules", "playwright_routeFromHAR": "routeFromHAR",
             "mitmproxy_server_replay": "mitmproxy"}
    print("\nprobes (tests/cache_sites/probes.py, real Chromium, site gone): correct / miss / WRONG (goal: no WRONG)")
    print(f"{'probe':38} " + " ".join(f"{short[n]:>14}" for n in names))
    for probe in fig["probes"]:
        print(f"{probe:38} " + " ".join(f"{fig['results'][n][probe].upper() if fig['results'][n][probe] == 'wrong' else fig['results'][n][probe]:>14}"
                                        for n in names))
    print(f"{'wrong-content serves':38} " + " ".join(f"{fig['summary'][n]['wrong']:>14}" for n in names))
    print(f"{'correct':38} " + " ".join(f"{fig['summary'][n]['correct']:>14}" for n in names))


class _Runs:
    """A recording seen through some of its runs only (what inference learns from)."""

    def __init__(self, store: Store, run_ids: list[int]):
        self._store, self._ids = store, set(run_ids)
        self.bodies = store.bodies

    def runs(self, kinds: Any = ("record", "import")) -> list[Any]:
        return [r for r in self._store.runs(kinds) if r.id in self._ids]

    def finished_runs(self, kinds: Any = ("record", "import")) -> tuple[list[Any], list[Any]]:
        finished, cut = self._store.finished_runs(kinds)
        return [r for r in finished if r.id in self._ids], [r for r in cut if r.id in self._ids]

    def exchanges(self, run_ids: Any = None, with_request_bodies: bool = True) -> list[Any]:
        ids = self._ids if run_ids is None else self._ids & set(run_ids)
        return self._store.exchanges(run_ids=sorted(ids), with_request_bodies=with_request_bodies)

    def misses(self) -> list[Any]:
        return []


def _words(store: Store, ex: Any) -> list[str]:
    import re

    return re.findall(r"\w+", store.bodies.get(ex.response_body_digest).decode("utf-8", "replace"))


def _changed_spots(a: list[str], b: list[str]) -> set[tuple[str | None, str | None]]:
    """Where two word lists differ: each differing span named by the words around it (before, after)."""
    import difflib

    spots = set()
    for op, i1, i2, _j1, _j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if op != "equal":
            spots.add((a[i1 - 1] if i1 > 0 else None, a[i2] if i2 < len(a) else None))
    return spots


def _explained_by_site_randomness(store: Store, served: Any, live: Any, variants: list[Any]) -> bool:
    """Whether the served response differs from the live one only where the site's own answers to the
    same request (one per training load) already differed from each other: a random visitor count
    between the same two words, a creative seen rotating. Another query's results differ elsewhere."""
    if served.status != live.status or len(variants) < 2:
        return False
    texts = [_words(store, v) for v in variants]
    random_spots = set().union(*(_changed_spots(a, b) for i, a in enumerate(texts) for b in texts[i + 1:]))
    return bool(random_spots) and _changed_spots(_words(store, served), _words(store, live)) <= random_spots


async def heldout_recall(loads: int = 4) -> dict[str, Any]:
    """Held-out-load recall and precision: each local live-like site loaded `loads` times (one recorded
    run each, its own seed: fresh cache-busters, nonces, session tokens, rotating creatives); for k =
    3..loads, rules learned (and checked) from loads 1..k-1, then every request of load k asked of the
    matcher over loads 1..k-1. Recall: load k's requests served. Precision, strict: served requests whose
    response is load k's own (same status and body, random tokens masked). A served response that differs
    from load k's is "site-random" when it differs only where the site's own answers to that request
    differed between the training loads (a random visitor count in the page, a creative already seen
    rotating: no replay can know the live pick), else wrong; precision counts site-random
    as right, strict does not. Local live-like sites, not the real web."""
    from cache_sites.loader import LOADER_ACTIONS, LoaderSite

    from weblica.cache.canonical import request_view
    from weblica.cache.identity import ResponseComparer
    from weblica.cache.matcher import ReplayIndex
    from weblica.cache.rulecheck import infer_checked_rules
    from weblica.cache.rules import RuleBook

    work = Path(tempfile.mkdtemp(prefix="weblica-bench-heldout-"))
    sites = {"news": (NewsSite, lambda s: s.url("/"), NEWS_ACTIONS),
             "shop": (ShopSite, lambda s: s.start_url, SEARCH_ACTIONS),
             "loader": (LoaderSite, lambda s: s.url("/"), LOADER_ACTIONS)}
    out: dict[str, Any] = {"loads": loads, "sites": {}}
    total = {"requests": 0, "served": 0, "right": 0, "site_random": 0, "wrong": 0}
    for name, (site_cls, start, actions) in sites.items():
        rec = work / name
        with site_cls() as site:
            await record(start(site), actions, rec, runs=loads, resolve=site.resolve)
        row: dict[str, Any] = {}
        with Store.open_dir(rec, readonly=True) as store:
            runs = [r.id for r in store.runs(("record",))]
            comparer = ResponseComparer(store)
            for k in range(3, len(runs) + 1):
                train, held = runs[:k - 1], runs[k - 1]
                rulesets, _ = infer_checked_rules(_Runs(store, train))
                book = RuleBook(list(rulesets.values()))
                index = ReplayIndex(store.exchanges(run_ids=train), book)
                per_load = [ReplayIndex(store.exchanges(run_ids=[r]), book) for r in train]
                served = right = site_random = 0
                wrong: list[str] = []
                tiers: dict[str, int] = {}
                asked = store.exchanges(run_ids=[held])
                for ex in asked:
                    m = index.match(request_view(ex.method, ex.url, ex.request_headers, ex.request_body or b""),
                                    f"load-{k}")
                    tiers[m.tier] = tiers.get(m.tier, 0) + 1
                    view = request_view(ex.method, ex.url, ex.request_headers, ex.request_body or b"")
                    if m.tier == "miss":
                        continue
                    served += 1
                    if m.tier == "stub":   # a beacon answered locally: right when the live answer had no content
                        ok = ex.status in (200, 204) and ex.response_body_size == 0 or ex.status == 204
                    else:
                        ok = m.byte_range is None and comparer.same(m.exchange, ex)
                    right += ok
                    if not ok and m.exchange is not None:
                        variants = [v for v in (i.match(view, "variants").exchange for i in per_load) if v is not None]
                        if _explained_by_site_randomness(store, m.exchange, ex, variants):
                            site_random += 1
                            continue
                    if not ok:
                        wrong.append(f"{ex.method} {ex.url[:90]}")
                row[f"load_{k}"] = {"requests": len(asked), "served": served, "right": right,
                                    "site_random": site_random, "wrong_count": len(wrong), "tiers": tiers,
                                    "recall_pct": round(100 * served / max(len(asked), 1), 1),
                                    "precision_pct": round(100 * (served - len(wrong)) / max(served, 1), 2),
                                    "strict_precision_pct": round(100 * right / max(served, 1), 2),
                                    "wrong": wrong[:5]}
                total["requests"] += len(asked)
                total["served"] += served
                total["right"] += right
                total["site_random"] += site_random
                total["wrong"] += len(wrong)
        out["sites"][name] = row
    out["recall_pct"] = round(100 * total["served"] / max(total["requests"], 1), 1)
    out["precision_pct"] = round(100 * (total["served"] - total["wrong"]) / max(total["served"], 1), 2)
    out["strict_precision_pct"] = round(100 * total["right"] / max(total["served"], 1), 2)
    out["total"] = total
    return out


def print_heldout(fig: dict[str, Any]) -> None:
    print(f"\nheld-out-load recall (LOCAL live-like sites, not the real web; {fig['loads']} loads each; rules "
          "from loads 1..k-1, load k asked): goal >= 95% recall at >= 99.5% precision")
    for site, row in fig["sites"].items():
        for k, r in row.items():
            print(f"{site:8} {k:7} served {r['served']:>3}/{r['requests']:<3} recall {r['recall_pct']:>5}%  "
                  f"precision {r['precision_pct']:>6}% (strict {r['strict_precision_pct']:>6}%, site-random "
                  f"{r['site_random']}, wrong {r['wrong_count']})  tiers {r['tiers']}")
            for w in r["wrong"]:
                print(f"{'':17} wrong: {w}")
    t = fig["total"]
    print(f"{'all':16} served {t['served']}/{t['requests']} recall {fig['recall_pct']}%  precision "
          f"{fig['precision_pct']}% ({t['wrong']} wrong of {t['served']} served); strict {fig['strict_precision_pct']}% "
          f"({t['right']} exactly load k's response, {t['site_random']} site-random)")
