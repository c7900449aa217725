"""The episode clock: how much virtual time passes after each action, and how it is run in a page.

A page's clock is Playwright's fake one (weblica.browser.determinism.install_paused_clock): nothing moves
it but a step. After each action the env runs it by the action's virtual time (the action table's `clock`,
read by weblica.env.actions.virtual_ms: a step's, a `wait`'s own seconds, none after `done`), in two chunks
with a quiet wait after each. Every
advance is also registered as an init script (the clock log), so a document loaded later in the episode
starts at the current virtual time. One definition for the env (weblica.env.tabs) and for synth
validation's playback (weblica.synth.playback, page_session), so both let the same time pass.
"""
from __future__ import annotations

# virtual milliseconds one env step advances the page clock
STEP_VIRTUAL_MS = 600
# real seconds between two looks at a page that is settling (the env's quiet poll, validation's idle poll)
QUIET_POLL_S = 0.005

# Playwright's in-page clock (installed by `context.clock.install`): the log line a new document
# replays, and running one frame's timers. Both are what `clock.run_for` itself sends.
CLOCK_LOG = "globalThis.__pwClock && globalThis.__pwClock.controller.log('runFor', 0, {ms})"
_RUN_FOR = "globalThis.__pwClock.controller.runFor(ms)"
CLOCK_RUN = f"ms => globalThis.__pwClock ? {_RUN_FOR} : undefined"
# the same, a timer's throw left to the page (validation's playback runs on past it)
CLOCK_RUN_CAUGHT = f"ms => globalThis.__pwClock ? {_RUN_FOR}.catch(() => {{}}) : undefined"


def clock_log_script(ms: int) -> str:
    """The init script that logs an advance of `ms` virtual milliseconds."""
    return CLOCK_LOG.format(ms=int(ms))


def step_chunks(total_ms: int) -> tuple[int, int]:
    """A step's virtual time in its two chunks: the first fires the timers an action scheduled
    (debounces), the second those their results scheduled."""
    first = total_ms // 2
    return first, total_ms - first


def wait_ms(seconds: float) -> int:
    """The virtual time a `wait` of `seconds` lets pass."""
    return int(seconds * 1000)
