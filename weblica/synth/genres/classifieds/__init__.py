"""The classifieds genre: its vocabulary (genre.yaml), its flows (flow.py: the pages, data and tasks every
classifieds site has), its intents (intents.py), its page templates (templates/)."""
from __future__ import annotations

from pathlib import Path

from weblica.synth.genres.classifieds.flow import build_flows
from weblica.synth.genres.genre import GenrePackage

GENRE = GenrePackage("classifieds", Path(__file__).parent, flows=build_flows)
