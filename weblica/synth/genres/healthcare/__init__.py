"""The healthcare genre: its vocabulary (genre.yaml), its flows (flow.py: the pages, data and tasks every
healthcare site has), its intents (intents.py), its page templates (templates/)."""
from __future__ import annotations

from pathlib import Path

from weblica.synth.genres.genre import GenrePackage
from weblica.synth.genres.healthcare.flow import build_flows

GENRE = GenrePackage("healthcare", Path(__file__).parent, flows=build_flows)
