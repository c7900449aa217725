"""The determinism layer: the same task, seed and actions give the same screenshot bytes.

Installed on every browser context before any page exists, so it runs at document start in every frame:
- Playwright's fake clock, paused at a fixed epoch: `Date`, `performance.now`, timers and
  animation frames move only when the env advances virtual time (a fixed amount per step);
- seeded `Math.random`, `crypto.getRandomValues` and `crypto.randomUUID` (determinism.js);
- one machine for every page: `navigator.hardwareConcurrency` 4 and `deviceMemory` 8, one network
  (`navigator.connection`, whose downlink Chromium adds noise to) and one storage quota (determinism.js);
  workers are not covered (an init script runs in frames only);
- animations and transitions off, caret hidden (determinism.js; screenshots also pass
  `animations="disabled"`, `caret="hide"`);
- timezone, locale and fonts fixed by the launcher and context options.
"""
from __future__ import annotations

from datetime import datetime, timedelta, timezone
from functools import lru_cache
from pathlib import Path
from typing import Any

# 2025-01-15 10:00:00 UTC: a weekday morning, far from DST edges and month ends
DEFAULT_EPOCH = datetime(2025, 1, 15, 10, 0, 0, tzinfo=timezone.utc)
DEFAULT_EPOCH_MS = int(DEFAULT_EPOCH.timestamp() * 1000)
# The DOM-mutation counter lets the settle loop see when the page has gone quiet.
_MUTATION_COUNTER = """
(() => {
  if (window.__weblicaMutations !== undefined) return;
  window.__weblicaMutations = 0;
  const start = () => new MutationObserver((records) => { window.__weblicaMutations += records.length; })
    .observe(document, { subtree: true, childList: true, attributes: true, characterData: true });
  if (document) start();
})();
"""


@lru_cache(maxsize=1)
def _script_template() -> str:
    return (Path(__file__).parent / "determinism.js").read_text(encoding="utf-8")


def determinism_script(seed: int) -> str:
    """The init script for one episode seed."""
    return _script_template().replace("__WEBLICA_SEED__", str(int(seed) & 0xFFFFFFFF)) + _MUTATION_COUNTER


async def make_deterministic(context: Any, seed: int, epoch_ms: int = DEFAULT_EPOCH_MS) -> None:
    """Install the determinism layer on a fresh browser context (before its first page)."""
    await install_paused_clock(context, epoch_ms)
    # after the clock, so that the script's performance.now is built on the fake Date
    await context.add_init_script(script=determinism_script(seed))


async def install_paused_clock(context: Any, epoch_ms: int = DEFAULT_EPOCH_MS) -> None:
    """The layer's fake clock alone, paused at the epoch: a context whose pages take the seeded rest
    (`determinism_script`) as page init scripts, one seed a page at a time (validation's pages, reused
    across episode seeds: weblica.synth.validation_tabs). Page scripts run after the context's, so the
    order in every document is the same as `make_deterministic`'s."""
    epoch = datetime.fromtimestamp(epoch_ms / 1000, tz=timezone.utc)
    # install a moment early, then pause exactly at the epoch: the real time that passes between the
    # two calls is absorbed by the jump, so every episode starts at the same virtual instant
    await context.clock.install(time=epoch - timedelta(seconds=1))
    await context.clock.pause_at(epoch)
