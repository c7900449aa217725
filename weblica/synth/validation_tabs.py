"""The browser and server plumbing of validation episodes: the slots episodes run in (a browser context
each, with the page it keeps), a reusable validation page with its listeners, and the synth backend of
the site server in this process."""
from __future__ import annotations

import asyncio
import json
from typing import Any
from urllib.parse import urlsplit

from weblica.browser.determinism import determinism_script, install_paused_clock
from weblica.browser.launcher import context_kwargs
from weblica.env.backend import NetworkConfig
from weblica.env.task import Task
from weblica.serve.app import SiteEntry
from weblica.serve.backend import SynthBackend
from weblica.serve.server import SiteServer
from weblica.serve.store import with_views
from weblica.synth.page_session import PageSession
from weblica.synth.playback import RequestTracker
from weblica.synth.quick_typing import QuickTyping


class ValidationTab:
    """A validation page, reused from episode to episode of its slot (weblica.synth.validate): a new
    page costs the browser a renderer and ~0.3 s of CPU, a navigation in an open one about half of
    that. Listeners are set once; `errors` is swapped per episode, `origins` records where its main
    frame has been and `frame_origins` where any of its documents came from (whose storage the slot
    clears). Its one CDP session (`session`, weblica.synth.page_session) serves settle's questions,
    quick typing and the clock log, kept for the page's life: a session per caller or per compiled
    run cost round trips more. Its requests in flight are counted by the site server, per episode
    (the tracker's `counted_by`, set by the validator for each episode: weblica/serve/inflight.py)."""

    def __init__(self, page: Any) -> None:
        self.page = page
        self.session = PageSession(page)
        # the requests in flight: the site server's count for the tab's episode, set per episode
        self.tracker = RequestTracker(page, self.session, counted_by=lambda: 0)
        self.typist = QuickTyping(page, self.session)
        self.errors: list[str] = []
        self.origins: set[str] = set()
        self.frame_origins: set[str] = set()
        self.documents: list[str] = []  # the URL of each document loaded this episode, in order: its page loads
        self.seed: int | None = None  # the episode seed its documents are seeded with (`seed_with`)
        self._seeded: Any = None  # that seed's init script, to take back for another seed
        page.on("load", self._loaded)
        page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: self.errors.append(str(e)))
        page.on("framenavigated", self._navigated)
        # a random click's new window is closed at once; an oracle's (a link that opens a tab) is kept for
        # the episode and closed when it ends (`close_popups`)
        self.keep_popups = False
        page.on("popup", lambda p: None if self.keep_popups else asyncio.ensure_future(p.close()))

    async def seed_with(self, seed: int) -> None:
        """Seed the page's next documents for an episode seed: the determinism layer's seeded part
        (weblica.browser.determinism.determinism_script) as the page's init script, after its context's
        fake clock, as an env context has them; another seed's taken back first."""
        if self.seed == seed:
            return
        if self._seeded is not None:
            await self._seeded.close()
        self.seed, self._seeded = None, None
        self._seeded = await self.page.add_init_script(script=determinism_script(seed))
        self.seed = seed

    def _loaded(self, _page: Any) -> None:
        self.documents.append(self.page.url)

    def _navigated(self, frame: Any) -> None:
        origin = origin_of(frame.url)
        self.frame_origins.add(origin)
        if frame == self.page.main_frame:
            self.origins.add(origin)

    async def close_popups(self) -> None:
        """Close the tabs this episode opened besides the page itself."""
        for other in list(self.page.context.pages):
            if other is not self.page:
                await close_page(other)

    async def close(self) -> None:
        await self.session.close()
        await close_page(self.page)


# what a site can keep in the browser besides cookies and sessionStorage (CDP Storage.clearDataForOrigin)
_STORED = "local_storage,indexeddb,cache_storage,service_workers,file_systems,websql"
_FRESH_JS = "() => { sessionStorage.clear(); window.scrollTo(0, 0); return location.href; }"


class _Slot:
    """One episode at a time: a browser context of its own (so no cookie or stored value of one episode
    reaches another running beside it) and the page it keeps for its next episode."""

    def __init__(self) -> None:
        self.context: Any = None
        self.tab: ValidationTab | None = None
        self.stored: set[str] = set()  # origins the last episode's documents came from, to clear


class SlotPool:
    """The slots validation episodes run in, one per episode at once, shared by the validators of every
    episode seed of a run (weblica.synth.validate_seeds). A context costs a renderer, a page and loads
    with a cold HTTP cache (~0.7 s of CPU), where clearing one costs a few round trips, so each is kept
    and reused, cleared as a fresh env context is empty (`prepare`): cookies, what the last episode's
    documents stored for their origins, the page's sessionStorage and its clock log. Its context has
    the env's fake clock; its page is seeded per episode (ValidationTab.seed_with), so one context
    serves every seed."""

    def __init__(self, browser: Any, proxy: str, size: int) -> None:
        self.browser, self.proxy = browser, proxy
        self._slots = [_Slot() for _ in range(max(1, size))]
        self._free: asyncio.Queue[_Slot] = asyncio.Queue()
        for slot in self._slots:
            self._free.put_nowait(slot)
        self.tabs: dict[Any, ValidationTab] = {}  # page -> its tab, while the page is open
        self.pages_opened = 0  # new pages (a slot's first, or after an episode that left the site or failed)

    async def wait_free(self) -> _Slot:
        """A free slot, once there is one; `free` gives it back."""
        return await self._free.get()

    def free(self, slot: _Slot) -> None:
        self._free.put_nowait(slot)

    async def prepare(self, slot: _Slot, seed: int) -> ValidationTab:
        """The slot's page for a new episode at `seed`, the slot cleared of what its last episode left:
        the page's clock log (its session ends), cookies, and what that episode's documents stored for
        their origins (localStorage, IndexedDB, caches, service workers: CDP Storage.clearDataForOrigin).
        sessionStorage, the tab's own, was cleared in its document (`release`), or the page is new."""
        if slot.context is None:
            slot.context = await self.browser.new_context(**context_kwargs(proxy=self.proxy))
            await install_paused_clock(slot.context)
        tab, slot.tab = slot.tab, None
        if tab is None:
            tab = ValidationTab(await slot.context.new_page())
            self.pages_opened += 1
        else:
            await tab.session.forget()
        self.tabs[tab.page] = tab
        stored, slot.stored = slot.stored, set()
        if stored:
            await asyncio.gather(slot.context.clear_cookies(), *(
                tab.session.send("Storage.clearDataForOrigin", {"origin": origin, "storageTypes": _STORED})
                for origin in sorted(stored) if origin.startswith(("http://", "https://"))))
        tab.frame_origins = set()
        await tab.seed_with(seed)
        return tab

    async def release(self, slot: _Slot, tab: ValidationTab, origin: str, ok: bool) -> None:
        """Keep the page for the slot's next episode when the episode ended well and never left the
        site (so clearing sessionStorage in its document clears all the tab holds); otherwise close
        it. A navigation to the start URL is then a plain new document: no scroll or form state is
        restored. Either way the slot is cleared when prepared again."""
        slot.stored = set(tab.frame_origins) | {origin}
        if tab.keep_popups:
            tab.keep_popups = False
            await tab.close_popups()
        try:
            if ok and tab.origins <= {origin} and origin_of(await tab.session.evaluate(_FRESH_JS, None)) == origin:
                slot.tab = tab
                return
        except Exception:  # the page is mid-navigation or gone: do not reuse it
            pass
        self.tabs.pop(tab.page, None)
        await tab.close()

    async def close(self) -> None:
        for tab in list(self.tabs.values()):
            await tab.session.close()
        self.tabs.clear()
        for slot in self._slots:
            slot.tab = None
            if slot.context is not None:
                await slot.context.close()
                slot.context = None


def origin_of(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


async def close_page(page: Any) -> None:
    try:
        await page.close()
    except Exception:  # a crashed or already closed page: the episode's own error says what happened
        pass


class InProcessBackend(SynthBackend):
    """The synth backend of a SiteServer running in this process (validation's): an episode's reset and
    state go straight to the server's store, answered as its admin endpoints answer them (the state with
    its lookup views, through a JSON round trip, keys sorted as Flask writes them), without an HTTP
    request, a server thread and a client each: validation makes a few hundred a site."""

    def __init__(self, server: SiteServer) -> None:
        super().__init__(server)
        self._app = server.app

    def _site(self, task: Task) -> SiteEntry:
        host, instance = self.host(task).lower(), self.instance(task)
        entry = self._app.extensions["weblica_sites"].get(host, {}).get(instance)
        if entry is None:
            raise LookupError(f"the site server does not serve {host} (instance {instance}) for task {task.id}; "
                              "validate the bundle it was generated into")
        return entry

    async def begin(self, task: Task, episode_id: str, seed: int) -> NetworkConfig:
        self._app.extensions["weblica_store"].reset(self._site(task).site_id, episode_id)
        return self.network(task, episode_id, seed)

    def initial_state(self, task: Task) -> dict[str, Any]:
        """The state every episode of the task's site starts from (what the oracle's run changed is the rest)."""
        return json.loads(json.dumps(with_views(self._site(task).initial_state), sort_keys=True))

    async def state(self, task: Task, episode_id: str) -> dict[str, Any] | None:
        entry = self._site(task)
        state = self._app.extensions["weblica_store"].get(entry.site_id, episode_id, entry.initial_state)
        return json.loads(json.dumps(with_views(state), sort_keys=True))
