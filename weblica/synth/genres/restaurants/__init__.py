"""The restaurants genre: its vocabulary (genre.yaml), its flows (flow.py: the pages, data and tasks every
restaurants site has), its intents (intents.py), its page templates (templates/)."""
from __future__ import annotations

from pathlib import Path

from weblica.synth.genres.genre import GenrePackage
from weblica.synth.genres.restaurants.flow import build_flows

GENRE = GenrePackage("restaurants", Path(__file__).parent, flows=build_flows)
