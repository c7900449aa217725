"""Local sites that behave like the live web, for the cache (record/replay) tests."""
