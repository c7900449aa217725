"""The travel genre: its vocabulary (genre.yaml), its flows (flow.py: the pages, data and tasks every
travel site has), its intents (intents.py), its page templates (templates/),
and its part of the flows script (flows.js)."""
from __future__ import annotations

from pathlib import Path

from weblica.synth.genres.genre import GenrePackage
from weblica.synth.genres.travel.flow import build_flows

GENRE = GenrePackage("travel", Path(__file__).parent, flows=build_flows)
