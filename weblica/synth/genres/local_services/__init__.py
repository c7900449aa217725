"""The local-services genre: its vocabulary (genre.yaml), its flows (flow.py: the pages, data and tasks every
local-services site has), its intents (intents.py), its page templates (templates/)."""
from __future__ import annotations

from pathlib import Path

from weblica.synth.genres.genre import GenrePackage
from weblica.synth.genres.local_services.flow import build_flows

GENRE = GenrePackage("local-services", Path(__file__).parent, flows=build_flows)
