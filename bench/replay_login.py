"""The logged-in crawl (issue 41, point 1): a cache built behind a login, with and without the session.

The members' site (tests/cache_sites/members.py: a POST login, member pages that redirect a logged-out
browser to the login page, a dashboard whose first link logs out and which offers deletes and other
actions) is built into a cache by `weblica cache build --policy oracle --runs 2 --crawl-depth 2`, once with
the session each episode left (the default) and once with `--no-crawl-session`. For each: the crawled
pages by the status their document answered, the links not followed, the actions that reached the server
(goal 0), and what an agent is served that logs in under the cache with the site gone and opens every
member page the dashboard links (requests served of asked, and member pages shown as the member).

Run: `.venv/bin/python bench/replay_login.py` (or `bench/replay.py --login-only`). Prints figures.
"""
from __future__ import annotations

import asyncio
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT))

from cache_sites.members import LOGIN_ACTIONS, MembersSite, members_task  # noqa: E402
from listener import Listener  # noqa: E402

from weblica.cache.backend import CacheBackend  # noqa: E402
from weblica.cache.build import BuildOptions  # noqa: E402
from weblica.pipelines.cache_build import build_cache  # noqa: E402
from weblica.cache.play import make_env  # noqa: E402
from weblica.env.task import Task, TaskSource  # noqa: E402

MEMBER_PAGES = ("/admin/posts", "/admin/settings", "/admin/reports", "/admin/search?q=lamp", "/admin/posts/1/edit",
                "/admin/posts/2/edit")


async def _explore(recording: str, origin: str) -> dict[str, Any]:
    """Log in under the cache, then open each member page: requests served, pages shown as the member."""
    backend = CacheBackend([recording], [], log_misses=False)
    env = make_env({"cache": backend})
    task = Task(id="explore", start_url=origin + "/login", instruction="explore", max_steps=40,
                source=TaskSource(kind="cache", recording=recording))
    as_member = 0
    try:
        await env.reset(task, seed=11)
        for action in LOGIN_ACTIONS:
            await env.step([action])
        for page in MEMBER_PAGES:
            await env.step([{"name": "goto_url", "arguments": {"url": origin + page}}])
            as_member += "alice" in ((await env.page_snapshot()) or {}).get("text", "")
    finally:
        await env.close()
        await backend.stop()
    requests = backend.stats.requests
    return {"requests": requests, "served": requests - backend.stats.tiers["miss"],
            "member_pages_shown": f"{as_member}/{len(MEMBER_PAGES)}"}


def login_crawl() -> dict[str, Any]:
    work = Path(tempfile.mkdtemp(prefix="weblica-bench-login-"))
    out: dict[str, Any] = {}
    for mode, with_session in (("with_session", True), ("without_session", False)):
        with MembersSite() as site:
            task = Task.from_dict(members_task(site))
            report = build_cache([task], BuildOptions(policy="oracle", runs=2, crawl_depth=2, resolve=tuple(site.resolve),
                                                      crawl_session=with_session), work / mode)
            origin, port, actions = site.url("").rstrip("/"), site.port, dict(site.state.actions)
        row: dict[str, Any] = {"kept": len(report["kept"]), "actions_reaching_the_server": sum(actions.values())}
        if report["kept"]:
            row["crawl"] = report["kept"][0]["crawl"]
            listener = Listener(port)
            try:
                row["agent"] = asyncio.run(_explore(report["kept"][0]["recording"], origin))
            finally:
                listener.close()
            row["outbound"] = listener.accepted
        out[mode] = row
    return out


def print_login(fig: dict[str, Any]) -> None:
    print("\nlogged-in crawl (tests/cache_sites/members.py; oracle, 2 runs, --crawl-depth 2): crawled pages by "
          "status, links not followed, actions that reached the server (goal 0), and an agent logged in under "
          "the cache opening the member pages")
    for mode, row in fig.items():
        crawl, agent = row.get("crawl", {}), row.get("agent", {})
        print(f"{mode:16} crawled {crawl.get('opened')} (with a session {crawl.get('with_session')}, answered "
              f"{crawl.get('answered')}), not followed {crawl.get('not_followed')}, actions "
              f"{row['actions_reaching_the_server']}; agent served {agent.get('served')}/{agent.get('requests')}, "
              f"member pages shown {agent.get('member_pages_shown')}, outbound {row.get('outbound')}")


if __name__ == "__main__":
    figures = login_crawl()
    print(json.dumps(figures, indent=1, default=str))
    print_login(figures)
