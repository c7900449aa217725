"""Contracts of RL frameworks that cannot be installed here, written from their sources (see each module)."""
