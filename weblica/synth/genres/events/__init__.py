"""The events genre: its vocabulary (genre.yaml), its flows (flow.py: the pages, data and tasks every
events site has), its intents (intents.py), its page templates (templates/),
and its part of the flows script (flows.js)."""
from __future__ import annotations

from pathlib import Path

from weblica.synth.genres.events.flow import build_flows, programme_catalog
from weblica.synth.genres.genre import GenrePackage

GENRE = GenrePackage("events", Path(__file__).parent, flows=build_flows, own_catalog=programme_catalog)
