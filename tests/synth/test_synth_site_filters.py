"""Site filters (money, date, kinds) are evaluated per site, never folded into a compiled template.

Templates are compiled once per process (weblica/synth/site.py _COMPILED). A constant through a site
filter (`{{ 0|money }}` on the seat map) was folded at compile time, so the second events site written in
one process showed the first one's currency: `weblica synth --n 12` wrote "$0.00" on a pound site, and
test_synth_flows_gaps' same-bytes test failed whenever its worker had written another events site first.
"""
from __future__ import annotations

import re
from pathlib import Path

from weblica.synth.generate import write_unvalidated
from weblica.synth.spec import sample_spec


def _seat_totals(bundle: Path) -> set[str]:
    pages = sorted((bundle / "public" / "events").glob("*/seats.html"))
    assert pages, "the events site has seat maps"
    return {m for p in pages for m in re.findall(r"data-seats-total>([^<]*)<", p.read_text())}


def _zone_prices(bundle: Path) -> set[str]:
    text = " ".join(p.read_text() for p in sorted((bundle / "public" / "events").glob("*/seats.html")))
    return set(re.findall(r": ([^\d\s<]*)[\d.,]+ per seat", text))


def test_a_second_site_in_one_process_shows_its_own_currency(tmp_path: Path) -> None:
    dollars = write_unvalidated(sample_spec(13, "account", "events"), tmp_path / "a")
    pounds = write_unvalidated(sample_spec(51, "search", "events"), tmp_path / "b")
    assert _seat_totals(dollars) == {"$0.00"} and _zone_prices(dollars) == {"$"}
    assert _zone_prices(pounds) == {"£"}
    assert _seat_totals(pounds) == {"£0.00"}  # "$0.00" before: the first site's currency, folded in
