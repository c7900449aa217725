"""The fitness genre: a shop of its vocabulary (genre.yaml, the entity model its catalog is drawn from);
its sites are their skill's pages, with no flows of their own."""
from __future__ import annotations

from pathlib import Path

from weblica.synth.genres.genre import GenrePackage

GENRE = GenrePackage("fitness", Path(__file__).parent)
