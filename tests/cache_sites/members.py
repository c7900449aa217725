"""A members' site with a login, served for real on loopback (issue 41: logged-in crawl and fresh dates).

Host `www.members.test` (HTTPS, mapped with --resolve). A POST login sets a random session cookie (an
hour's `Expires`) kept server-side; the member pages answer a logged-out browser with a 302 to the login
page. The dashboard's first link logs out (a crawler that follows it loses the session for every page
after it), and it offers every kind of action a crawl must not take, each counted server-side:

  GET  /logout                       ends the session
  GET  /admin/posts/1/delete         deletes a post (a plain link)
  GET  /admin/posts.php?post=2&action=trash   trashes a post (WordPress's shape)
  GET  /admin/posts/3 (data-method="delete")  an action link (Rails' shape)
  GET  /admin/drafts/purge?_token=T  carries a CSRF token
  POST /account/delete               a form

Login also sets a script-readable cookie `member=alice` (an hour's `Expires`), which the dashboard shows:
a replay whose shifted cookie expiry the browser took as past would show "none". The dashboard stores
`region=north` in localStorage; /admin/reports asks the API for the report of the
region localStorage names (`none` without it): storage carried to a crawl shows in what it records.
Every member page shows a date banner at the top (the page's clock, `document.lastModified`, and the
`Date` header of an API call), so two replays a virtual year apart differ there and nowhere else.
"""
from __future__ import annotations

import secrets
import threading
import time
from collections import Counter
from email.utils import formatdate
from typing import Any

from flask import Flask, Response, jsonify, redirect, request

from weblica.cache.demo_site import LocalHttpsSite

USER, PASSWORD = "alice", "wonderland"
DRAFTS = 3
CSS = ("body{margin:0;font-family:sans-serif} #when{height:40px;line-height:40px;padding:0 24px;background:#eee;"
       "font-size:14px;white-space:nowrap;overflow:hidden} main{padding:16px 24px} nav a{margin-right:14px}"
       " input{position:absolute;left:24px;width:300px;height:28px} #user{top:100px} #password{top:150px}"
       " form#login button{position:absolute;left:24px;top:200px}")
BANNER = """<div id="when">…</div><script>
fetch('/api/stamp').then(r => {
  const d = new Date();
  document.getElementById('when').textContent = 'Today ' + d.toISOString().slice(0, 10) + ' | updated ' +
    document.lastModified + ' | server ' + r.headers.get('date');
});
</script>"""


class MembersState:
    """Server-side truth: sessions and every action request that reached the server."""

    def __init__(self) -> None:
        self.sessions: dict[str, str] = {}
        self.actions: Counter = Counter()
        self.lock = threading.Lock()


def create_app(state: MembersState) -> Flask:
    app = Flask(__name__)

    def member() -> str | None:
        return state.sessions.get(request.cookies.get("session", ""))

    def page(title: str, body: str, banner: bool = False) -> Response:
        html = (f"<!doctype html><html><head><meta charset='utf-8'><title>{title}</title><style>{CSS}</style></head>"
                f"<body>{BANNER if banner else ''}<main>{body}</main></body></html>")
        return Response(html, content_type="text/html; charset=utf-8",
                        headers={"Cache-Control": "no-store", "Last-Modified": formatdate(usegmt=True)})

    def login_first() -> Response:
        return redirect(f"/login?next={request.path}", 302)

    def act(name: str) -> None:
        with state.lock:
            state.actions[name] += 1

    @app.get("/")
    def home() -> Any:
        return page("Members club", "<h1>Members club</h1><nav><a href='/login'>Log in</a><a href='/about'>About</a></nav>")

    @app.get("/about")
    def about() -> Any:
        return page("About", "<h1>About the club</h1><p>Founded 1999.</p>")

    @app.get("/login")
    def login_form() -> Any:
        return page("Log in", "<h1>Log in</h1><form id='login' method='post' action='/login'>"
                              "<input id='user' name='username' aria-label='User'>"
                              "<input id='password' name='password' type='password' aria-label='Password'>"
                              "<button>Log in</button></form>")

    @app.post("/login")
    def login() -> Any:
        if request.form.get("username") != USER or request.form.get("password") != PASSWORD:
            return page("Log in", "<h1>Wrong user or password</h1>"), 401
        token = secrets.token_hex(16)
        with state.lock:
            state.sessions[token] = USER
        response = redirect("/dashboard", 302)
        expires = formatdate(time.time() + 3600, usegmt=True)
        response.headers.add("Set-Cookie", f"session={token}; Expires={expires}; Path=/; HttpOnly; Secure")
        response.headers.add("Set-Cookie", f"member={USER}; Expires={expires}; Path=/; Secure")
        return response

    @app.get("/dashboard")
    def dashboard() -> Any:
        who = member()
        if who is None:
            return login_first()
        nav = ("<nav><a href='/logout'>Log out</a><a href='/admin/posts'>Posts</a><a href='/admin/settings'>Settings</a>"
               "<a href='/admin/reports'>Reports</a></nav>"
               "<p><a href='/admin/posts/1/delete'>Delete post 1</a> "
               "<a href='/admin/posts.php?post=2&amp;action=trash'>Trash post 2</a> "
               "<a href='/admin/posts/3' data-method='delete'>Remove post 3</a> "
               f"<a href='/admin/drafts/purge?_token={secrets.token_hex(8)}'>Purge drafts</a></p>"
               "<form method='post' action='/account/delete'><button>Delete my account</button></form>"
               "<form method='get' action='/admin/search'><input name='q' value='lamp' aria-label='Search'></form>")
        script = ("<script>localStorage.setItem('region', 'north'); document.getElementById('cookie').textContent = "
                  "'Member cookie: ' + ((document.cookie.match(/member=(\\w+)/) || [0, 'none'])[1]);</script>")
        return page("Dashboard", f"<h1>Hello {who}</h1><p id='drafts'>You have {DRAFTS} drafts.</p>"
                                 f"<p id='cookie'></p>{nav}{script}", banner=True)

    @app.get("/admin/posts")
    def posts() -> Any:
        who = member()
        if who is None:
            return login_first()
        rows = "".join(f"<li><a href='/admin/posts/{i}/edit'>Post {i}</a></li>" for i in (1, 2))
        return page("Posts", f"<h1>Posts of {who}</h1><ul>{rows}</ul><a href='/logout'>Log out</a>", banner=True)

    @app.get("/admin/posts/<int:post>/edit")
    def edit(post: int) -> Any:
        who = member()
        return login_first() if who is None else page(f"Edit {post}", f"<h1>{who} edits post {post}</h1>", banner=True)

    @app.get("/admin/settings")
    def settings() -> Any:
        who = member()
        return login_first() if who is None else page("Settings", f"<h1>Settings of {who}</h1>", banner=True)

    @app.get("/admin/search")
    def search() -> Any:
        who = member()
        q = request.args.get("q", "")
        return login_first() if who is None else page("Search", f"<h1>{who} searched {q}</h1>", banner=True)

    @app.get("/admin/reports")
    def reports() -> Any:
        who = member()
        if who is None:
            return login_first()
        script = ("<script>fetch('/api/report?region=' + (localStorage.getItem('region') || 'none'))"
                  ".then(r => r.json()).then(d => { document.getElementById('report').textContent = "
                  "'Report for ' + d.region + ': ' + d.total; document.title = 'Report ' + d.region; });</script>")
        return page("Reports", f"<h1>Reports of {who}</h1><p id='report'>loading</p>{script}", banner=True)

    @app.get("/api/report")
    def report() -> Any:
        if member() is None:
            return jsonify(error="log in"), 401
        region = request.args.get("region", "none")
        return jsonify(region=region, total={"north": 42}.get(region, 0))

    @app.get("/api/stamp")
    def stamp() -> Any:
        return jsonify(ok=True)

    @app.get("/logout")
    def logout() -> Any:
        act("logout")
        with state.lock:
            state.sessions.pop(request.cookies.get("session", ""), None)
        return redirect("/", 302)

    @app.get("/admin/posts/<int:post>/delete")
    def delete_post(post: int) -> Any:
        act(f"delete {post}")
        return redirect("/admin/posts", 302)

    @app.get("/admin/posts.php")
    def posts_php() -> Any:
        act(f"{request.args.get('action')} {request.args.get('post')}")
        return redirect("/admin/posts", 302)

    @app.get("/admin/posts/<int:post>")
    def post_action(post: int) -> Any:
        act(f"action link {post}")
        return redirect("/admin/posts", 302)

    @app.get("/admin/drafts/purge")
    def purge() -> Any:
        act("purge")
        return redirect("/dashboard", 302)

    @app.post("/account/delete")
    def delete_account() -> Any:
        act("delete account")
        return redirect("/", 302)

    return app


class MembersSite(LocalHttpsSite):
    HOSTS = ("www.members.test",)

    def __init__(self) -> None:
        super().__init__()
        self.state = MembersState()

    def app(self, port: int) -> Flask:
        return create_app(self.state)


# log in from the login page (the oracle's actions and the recorded browse)
LOGIN_ACTIONS = [
    {"name": "click", "arguments": {"x": 150, "y": 114}},
    {"name": "write", "arguments": {"text": USER}},
    {"name": "click", "arguments": {"x": 150, "y": 164}},
    {"name": "write", "arguments": {"text": PASSWORD}},
    {"name": "press_keys", "arguments": {"keys": ["Enter"]}},
]


def members_task(site: MembersSite) -> dict[str, Any]:
    """A live task behind the login: read the number of drafts on the dashboard."""
    return {"id": "members-drafts", "start_url": site.url("/login"), "max_steps": 8,
            "instruction": f"Log in as {USER} (password {PASSWORD}) and say how many drafts you have.",
            "source": {"kind": "live", "site": "members"},
            "checks": [{"type": "answer_match", "expected": str(DRAFTS), "mode": "numeric"}],
            "oracle": [*LOGIN_ACTIONS, {"name": "done", "arguments": {"answer": str(DRAFTS)}}]}
