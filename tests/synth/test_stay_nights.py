"""The nights of a stay have one definition (weblica/stay_nights.py), read by the hotel genre that draws
sold-out nights and by the server rule that counts booked rooms: the two cannot drift apart, and the
serving layer still imports nothing of synth."""
from __future__ import annotations

import datetime as dt
import subprocess
import sys

import pytest

from weblica.serve import rules
from weblica.serve.rules import refusal
from weblica.stay_nights import MAX_NIGHTS, stay_nights
from weblica.synth.genres.travel import nights as hotel_nights


def test_one_definition_serves_both_layers():
    assert hotel_nights.nights is stay_nights
    assert not hasattr(rules, "_stay_nights")  # the serving layer's twin is gone
    assert stay_nights("2026-03-30", "2026-04-02") == ["2026-03-30", "2026-03-31", "2026-04-01"]
    assert stay_nights(dt.date(2026, 3, 30), dt.date(2026, 4, 2)) == stay_nights("2026-03-30", "2026-04-02")
    assert stay_nights("2026-03-12", "2026-03-12") == [] == stay_nights("2026-03-13", "2026-03-12")
    assert len(stay_nights("0001-01-01", "9999-12-31")) == MAX_NIGHTS  # a hostile stay stays small
    with pytest.raises(ValueError):
        stay_nights("2026-02-30", "2026-03-02")


def test_the_server_counts_booked_rooms_on_those_nights():
    rule = [{"kind": "open_dates", "by": "rate", "from": "checkin", "to": "checkout",
             "room_of": {"h1:0:flex": "h1:0", "h1:0:saver": "h1:0"}, "rooms": {"h1:0": 1}}]
    state = {"bookings": [{"rate": "h1:0:flex", "checkin": "2026-03-30", "checkout": "2026-04-01"},
                          {"rate": "h1:0:saver", "checkin": "junk", "checkout": "2026-04-01"}]}
    asked = {"rate": "h1:0:saver", "checkin": "2026-03-31", "checkout": "2026-04-03"}
    assert refusal(rule, "bookings", asked, state) == "Sold out on 2026-03-31."
    assert refusal(rule, "bookings", {**asked, "checkin": "2026-04-01"}, state) is None  # check-out day is free


def test_the_serving_layer_imports_no_synth_module():
    code = ("import sys, weblica.serve.rules, weblica.serve.app; "
            "print([m for m in sys.modules if m.startswith('weblica.synth')])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]", out
