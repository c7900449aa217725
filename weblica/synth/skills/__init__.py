"""Procedural skill builders. Each module registers builders with @skill; SKILLS maps id -> builder."""
from weblica.synth.skills.common import SKILLS
from weblica.synth.skills import browse, catalog, forms, mechanics, stateful, walls  # noqa: F401  (registration)

__all__ = ["SKILLS"]
