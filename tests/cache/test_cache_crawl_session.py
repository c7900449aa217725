"""Issue 41, point 1: crawl expansion carries the episode's session. A members' site behind a POST login
(tests/cache_sites/members.py) is built into a cache by `weblica cache build --crawl-depth 2` with the
oracle: with the session each recorded episode left, the member pages around the dashboard are recorded
as the logged-in member sees them (and localStorage set by the dashboard is carried); without it they are
the login page's redirects. Neither crawl follows a link or form that would log out, delete or act (the
server counts every such request), and the sessions are still alive afterwards. Then an agent that logs
in under the cache and opens the member pages is served every request, with the site gone."""
import json
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

sys.path.insert(0, str(Path(__file__).parents[1]))

from cache_sites.members import LOGIN_ACTIONS, MembersSite, members_task  # noqa: E402
from listener import Listener  # noqa: E402

from weblica.cache.backend import CacheBackend  # noqa: E402
from weblica.cache.crawl import ending_reason, page_links  # noqa: E402
from weblica.cache.play import make_env, play  # noqa: E402
from weblica.cache.store import Store  # noqa: E402
from weblica.cli import get_cli  # noqa: E402
from weblica.env.task import TaskSource  # noqa: E402

MEMBER_PAGES = ("/admin/posts", "/admin/settings", "/admin/reports", "/admin/search?q=lamp")


def invoke(*args):
    result = CliRunner().invoke(get_cli(), [*args, "--json"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return json.loads(result.output.strip().splitlines()[-1])


def build(base, session: bool):
    with MembersSite() as site:
        tasks = base / "live.jsonl"
        tasks.write_text(json.dumps(members_task(site)) + "\n")
        args = ["cache", "build", "--tasks", str(tasks), "--policy", "oracle", "--runs", "2", "--crawl-depth", "2",
                "--out", str(base / "cache")]
        args += [] if session else ["--no-crawl-session"]
        for spec in site.resolve:
            args += ["--resolve", spec]
        report = invoke(*args)
        return {"report": report, "port": site.port, "url": site.url, "actions": dict(site.state.actions),
                "sessions": dict(site.state.sessions)}


@pytest.fixture(scope="module")
def builds(tmp_path_factory):
    return {mode: build(tmp_path_factory.mktemp(mode), mode == "session") for mode in ("session", "no-session")}


def _recorded(report, crawl_only=True):
    """url path -> (status, body) of the crawl's recorded documents."""
    row = report["kept"][0]
    out = {}
    with Store.open_dir(row["recording"], readonly=True) as store:
        runs = [r.id for r in store.runs(("record",)) if not crawl_only or "crawl_level" in r.info]
        for ex in store.exchanges(run_ids=runs):
            path = ex.url.split(":", 2)[-1].split("/", 1)[-1]
            out.setdefault("/" + path, (ex.status, store.bodies.get(ex.response_body_digest)))
    return out


def test_the_crawl_records_member_pages_as_the_logged_in_member(builds):
    report = builds["session"]["report"]
    assert [r["id"] for r in report["kept"]] == ["members-drafts"], report["dropped"]
    crawl = report["kept"][0]["crawl"]
    recorded = _recorded(report)
    for page in MEMBER_PAGES:
        status, body = recorded[page]
        assert status == 200 and b"alice" in body, (page, status)
    assert recorded["/admin/posts/1/edit"][0] == 200      # level 2: a member page's own links, still logged in
    # the dashboard's localStorage reached the crawled reports page: it asked for the north report
    assert "/api/report?region=north" in recorded and "/api/report?region=none" not in recorded
    assert crawl["with_session"] == crawl["opened"] and crawl["answered"].get("302", 0) == 0, crawl


def test_without_the_session_the_same_crawl_gets_the_login_redirects(builds):
    report = builds["no-session"]["report"]
    recorded = _recorded(report)
    for page in MEMBER_PAGES:
        status, _ = recorded[page]
        assert status == 302, (page, status)
    crawl = report["kept"][0]["crawl"]
    assert crawl["with_session"] == 0 and crawl["answered"].get("302", 0) >= len(MEMBER_PAGES), crawl
    with_session = builds["session"]["report"]["kept"][0]["crawl"]
    print(f"\ncrawled with the session: {with_session}\ncrawled without: {crawl}")


@pytest.mark.parametrize("mode", ["session", "no-session"])
def test_no_crawl_logs_out_deletes_or_acts(builds, mode):
    build = builds[mode]
    assert build["actions"] == {}, build["actions"]          # not one logout, delete, trash, purge or POST
    assert len(build["sessions"]) == 2                        # both episodes' logins are still alive
    crawl = build["report"]["kept"][0]["crawl"]
    assert crawl["not_followed"] >= 6, crawl                   # logout, 3 deletes, the purge, the POST form


def test_an_agent_logged_in_under_the_cache_is_served_the_member_pages(builds):
    build = builds["session"]
    recording = build["report"]["kept"][0]["recording"]
    origin = build["url"]("").rstrip("/")
    actions = [*LOGIN_ACTIONS] + [{"name": "goto_url", "arguments": {"url": origin + p}} for p in MEMBER_PAGES]

    async def explore():
        backend = CacheBackend([recording], [], log_misses=False)
        env = make_env({"cache": backend})
        try:
            result = await play(env, origin + "/login", actions, 7, source=TaskSource(kind="cache", recording=recording))
        finally:
            await env.close()
            await backend.stop()
        return result, backend.stats

    import asyncio

    listener = Listener(build["port"])
    try:
        result, stats = asyncio.run(explore())
    finally:
        listener.close()
    assert listener.accepted == 0
    assert stats.tiers["miss"] == 0, stats.misses
    assert result.urls[-1].endswith("/admin/search?q=lamp") and result.urls[len(LOGIN_ACTIONS)].endswith("/dashboard")


@pytest.mark.parametrize("url,attrs", [
    ("https://a.test/logout", {}), ("https://a.test/wp-login.php?action=logout&_wpnonce=9f", {}),
    ("https://a.test/user/sign-out", {}), ("https://a.test/posts/3/delete", {}),
    ("https://a.test/wp-admin/post.php?post=1&action=trash", {}), ("https://a.test/wp-admin/plugins.php?action=deactivate&plugin=x", {}),
    ("https://a.test/comment.php?action=approvecomment&c=1", {}), ("https://a.test/drafts?_token=abc", {}),
    ("https://a.test/posts/3", {"data-method": "delete"}), ("https://a.test/posts/3", {"data-confirm": "Sure?"}),
    ("https://a.test/cart/remove/3", {}), ("https://a.test/?logout=1", {}),
])
def test_links_that_would_end_the_session_or_act_are_refused(url, attrs):
    assert ending_reason(url, attrs) is not None


@pytest.mark.parametrize("url", [
    "https://a.test/nyheter/how-to-remove-stains/", "https://a.test/wp-admin/post.php?post=1&action=edit",
    "https://a.test/search?q=delete", "https://a.test/archive/2024/", "https://a.test/login",
    "https://a.test/wp-admin/edit-comments.php?comment_status=spam", "https://a.test/account?tab=settings",
])
def test_pages_that_merely_mention_an_action_are_followed(url):
    assert ending_reason(url) is None


def test_post_forms_are_never_followed_and_get_forms_are():
    html = ("<form method=post action=/account/delete><input name=x value=1></form>"
            "<form action=/search><input name=q value=lamp><button name=go>Go</button></form>"
            "<form method=GET action=/list/remove-all></form>")
    links = {t.url: t.ending for t in page_links("https://www.a.test/", html, "a.test")}
    assert links["https://www.a.test/search?q=lamp"] is None
    assert "POST form" in links["https://www.a.test/account/delete"]
    assert links["https://www.a.test/list/remove-all"] is not None
