"""Productivity SaaS: a workspace's projects, each with a board of columns and cards (moving a card
is stored server-side), project settings (toggles saved as one document) and members (inviting one
with a role)."""
from __future__ import annotations

import datetime as dt
from typing import Any

from weblica.synth.checks import answer_count, answer_date, state_count, state_is
from weblica.synth.data import BASE_DATE, slugify
from weblica.synth.fake import names as name_source
from weblica.synth.fake import people as fake_people
from weblica.synth.genres.kit import MAXIMAL_EXTRAS, Plan, act, ask, fill_plan, record_checks
from weblica.synth.genres.saas.intents import (ASSIGNEE, COLUMN_COUNT, DUE, INVITE, MEMBER_ROLE, MOVE_CARD,
                                               MOVE_EARLIEST, SETTINGS)
from weblica.synth.site import SiteBuilder
from weblica.synth.skills.common import count_confusers, distinct, name_check, unique_extreme

COLUMNS = ["Backlog", "To do", "In progress", "Review", "Done"]
ROLES = ["Viewer", "Editor", "Admin"]
TOGGLES = {"email_digest": "Daily email digest", "public_board": "Anyone with the link can view the board",
           "guests": "Allow guest comments", "auto_archive": "Archive cards 14 days after they are done",
           "wip_limits": "Warn when a column holds more than 5 cards"}
TASK_WORDS = ["Draft", "Review", "Fix", "Update", "Plan", "Test", "Write", "Design", "Migrate", "Clean up"]
# what teams call their projects: a grammar over the fake-data library, so no two workspaces share them
PROJECT_NAMES = ["{city} office move", "{last_name} account rollout", "Website relaunch", "Mobile app {n}.0",
                 "Customer portal", "{color_name} design system", "Q{q} planning", "Onboarding revamp",
                 "{last_name} integration", "Data warehouse migration", "Support playbook", "{city} expansion",
                 "Brand refresh", "Billing v{n}", "Hiring pipeline", "Security audit {year}"]
TASK_OBJECTS = ["pricing page", "login flow", "release notes", "onboarding email", "API docs", "search index",
                "invoice export", "dashboard charts", "signup form", "status page", "backup job", "help articles"]


MOVE_FIELDS = [{"name": "column", "label": "Move to column", "type": "select", "options": COLUMNS, "required": True}]
INVITE_FIELDS = [{"name": "email", "label": "Email address", "type": "email", "required": True},
                 {"name": "role", "label": "Role", "type": "select", "options": ROLES, "required": True},
                 {"name": "note", "label": "Personal note (optional)", "type": "textarea"}]


def _workspace(site: SiteBuilder) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    rng = site.rng
    people = fake_people(site, "members", 14)  # a workspace's people: each project's crew is five of them
    source = name_source(site, "projects")
    names = [source.unique(p.replace("{n}", str(rng.randint(2, 4))).replace("{q}", str(rng.randint(1, 4)))
                           .replace("{year}", str(BASE_DATE.year))) for p in rng.sample(PROJECT_NAMES, 4)]
    projects, cards = [], []
    for index, name in enumerate(names):
        crew = rng.sample(people, 5)
        members = [{"name": p["name"], "first": p["first"], "email": p["email"],
                    "role": ROLES[min(k, 2)] if k < 3 else rng.choice(ROLES)}
                   for k, p in enumerate(crew)]
        project = {"id": f"p{index + 1}", "name": name, "slug": slugify(name), "team": rng.choice(site.cat["makers"]),
                   "members": members, "settings": {key: rng.random() < 0.5 for key in TOGGLES}, "cards": []}
        titles = rng.sample([f"{w} {o}" for w in TASK_WORDS for o in TASK_OBJECTS], rng.randint(9, 13))
        for title in titles:
            card = {"id": f"k{len(cards) + 1}", "title": title, "project": project["id"], "column": rng.choice(COLUMNS),
                    "assignee": rng.choice(members)["name"],
                    "due": (BASE_DATE + dt.timedelta(days=rng.randint(-5, 40))).isoformat()}
            due = dt.date.fromisoformat(card["due"])  # the card page's other dates: an answer must pick the due one
            card["created"] = (due - dt.timedelta(days=rng.randint(20, 40))).isoformat()
            card["reporter"] = rng.choice([m["name"] for m in members if m["name"] != card["assignee"]])
            card["updated"] = (due - dt.timedelta(days=rng.randint(1, 19))).isoformat()
            cards.append(card)
            project["cards"].append(card)
        project["columns"] = [{"name": c, "cards": [k for k in project["cards"] if k["column"] == c]} for c in COLUMNS]
        projects.append(project)
    return projects, cards


def _home(site: SiteBuilder, projects: list[dict[str, Any]], cards: list[dict[str, Any]]) -> None:
    """The signed-in start page of a work app: a workspace sidebar, the user's own open cards by due date,
    each project's progress, and the team's recent activity (no prices, no ratings: nothing is sold)."""
    rng = site.rng
    # the signed-in user: the first project's member with the most open cards (a home with work on it)
    def open_cards(member: dict[str, Any]) -> list[dict[str, Any]]:
        return sorted((k for k in cards if k["assignee"] == member["name"] and k["column"] != "Done"),
                      key=lambda k: (k["due"], k["id"]))
    me = max(projects[0]["members"], key=lambda m: (len(open_cards(m)), m["name"]))
    mine = open_cards(me)
    slugs = {p["id"]: p["slug"] for p in projects}
    names = {p["id"]: p["name"] for p in projects}
    updated = sorted(cards, key=lambda k: (k["updated"], k["id"]), reverse=True)[:6]
    verbs = ["moved", "commented on", "updated", "attached a file to"]
    activity = [{"who": k["reporter"], "verb": rng.choice(verbs), "card": k, "project": names[k["project"]],
                 "slug": slugs[k["project"]], "day": k["updated"]} for k in updated]
    progress = [{"project": p, "done": sum(k["column"] == "Done" for k in p["cards"]), "total": len(p["cards"])}
                for p in projects]
    site.page("/", "saas/home.html.j2", title="Home", me=me, mine=mine[:6], projects=projects, slugs=slugs,
              project_names=names, progress=progress, activity=activity, page_kind="home")


def build_flows(site: SiteBuilder) -> None:
    projects, cards = _workspace(site)
    site.add_data(projects=projects)
    site.add_state(card_moves=[], invites=[])
    site.add_nav(("Projects", "/projects"))
    _home(site, projects, cards)
    site.page("/projects", "saas/projects.html.j2", title="Projects", heading="Your projects", projects=projects,
              page_kind="projects")
    for p in projects:
        base = f"/projects/{p['slug']}"
        site.page(base, "saas/board.html.j2", title=f"{p['name']} board", project=p, page_kind="board")
        site.page(f"{base}/settings", "saas/settings.html.j2", title=f"{p['name']} settings", project=p,
                  toggles=TOGGLES, page_kind="project-settings")
        site.page(f"{base}/members", "saas/members.html.j2", title=f"{p['name']} members", project=p,
                  fields=INVITE_FIELDS, page_kind="members")
        site.page(f"{base}/invited", "message.html.j2", title="Invitation sent", heading="Invitation sent",
                  text="They will get an email with a link to join.", back=f"{base}/members", page_kind="done")
        for card in p["cards"]:
            site.page(f"{base}/cards/{card['id']}", "saas/card.html.j2", title=card["title"], project=p,
                      card=card, fields=MOVE_FIELDS, page_kind="card")
    _tasks(site, projects, cards)


def _open_card(project: dict[str, Any], card: dict[str, Any]) -> Plan:
    return [{"op": "click", "sel": f"[data-project={project['id']}] a[data-project-link]"},
            {"op": "click", "sel": f"[data-card-link={card['id']}]"}]


def _move(site: SiteBuilder, project: dict[str, Any], card: dict[str, Any], column: str) -> Plan:
    return _open_card(project, card) + fill_plan(site, MOVE_FIELDS, {"column": column}) + \
        [{"op": "click", "sel": "#move-card"}]


def _move_checks(card: dict[str, Any], column: str) -> list:
    return [state_count("card_moves", 1), state_is("card_moves.0.card", card["id"]),
            state_is("card_moves.0.column", column)]


def _tasks(site: SiteBuilder, projects: list[dict[str, Any]], cards: list[dict[str, Any]]) -> None:
    rng = site.rng
    start = "/projects"

    def others_moved(plan: Plan, project: dict[str, Any], skip: dict[str, Any]) -> Plan:
        extra = [k for k in project["cards"] if k is not skip][:MAXIMAL_EXTRAS]
        return plan + [s for k in extra for s in
                       [{"op": "goto", "url": site.url(f"/projects/{project['slug']}/cards/{k['id']}")}]
                       + fill_plan(site, MOVE_FIELDS, {"column": "Done" if k["column"] != "Done" else "Backlog"})
                       + [{"op": "click", "sel": "#move-card"}]]

    for project in rng.sample(projects, len(projects)):  # composed: read due dates, then move
        columns = [c for c in project["columns"] if len(c["cards"]) >= 2]
        rng.shuffle(columns)
        for column in columns:
            first = unique_extreme(column["cards"], "due")
            if first is None:
                continue
            target = rng.choice([c for c in COLUMNS if c != column["name"]])
            plan = _move(site, project, first, target)
            act(site, MOVE_EARLIEST, {"project": project["name"], "column": column["name"], "target": target}, start,
                plan, _move_checks(first, target), "Only the soonest-due card of that column moved, to the target",
                maximal=others_moved(plan, project, first))
            break
        else:
            continue
        break

    project = rng.choice(projects)
    card = rng.choice(project["cards"])
    target = rng.choice([c for c in COLUMNS if c != card["column"]])
    act(site, MOVE_CARD, {"card": card["title"], "project": project["name"], "column": target}, start,
        _move(site, project, card, target), _move_checks(card, target), "That card moved to that column")

    project = rng.choice(projects)
    offs = [k for k, v in project["settings"].items() if not v]
    ons = [k for k, v in project["settings"].items() if v]
    if offs and ons:
        turn_on, turn_off = rng.choice(offs), rng.choice(ons)
        plan = [{"op": "click", "sel": f"[data-project={project['id']}] a[data-settings-link]"},
                {"op": "click", "sel": f"#f-{turn_on}"}, {"op": "click", "sel": f"#f-{turn_off}"},
                {"op": "click", "sel": "#save-settings"}]
        wanted = {**project["settings"], turn_on: True, turn_off: False}
        rest = [k for k in TOGGLES if k not in (turn_on, turn_off)]
        act(site, SETTINGS, {"project": project["name"], "on": TOGGLES[turn_on], "off": TOGGLES[turn_off]}, start, plan,
            [state_is("settings.project", project["id"])] + [state_is(f"settings.{k}", v) for k, v in wanted.items()],
            "Those two toggles changed, the others as they were",
            maximal=plan[:-1] + [{"op": "click", "sel": f"#f-{k}"} for k in rest] + plan[-1:])

    project = rng.choice(projects)
    person = fake_people(site, "invitees", 1)[0]
    role = rng.choice(ROLES)
    values = {"email": person["email"].replace("@", ".team@"), "role": role}
    plan = [{"op": "click", "sel": f"[data-project={project['id']}] a[data-members-link]"}] + \
        fill_plan(site, INVITE_FIELDS, values) + [{"op": "click", "sel": "#invite"}]
    act(site, INVITE, {"email": values["email"], "project": project["name"], "role": role.lower(),
                       }, start, plan,
        record_checks("invites", INVITE_FIELDS, values, {"project": project["id"]}), "One invitation, to that project, with that role")

    def column_count() -> None:
        for project in rng.sample(projects, len(projects)):
            for column in rng.sample(project["columns"], len(COLUMNS)):
                gold = len(column["cards"])
                competing = [len(c["cards"]) for c in project["columns"] if c is not column] + [len(project["cards"])]
                confusers = count_confusers(gold, competing)
                if gold >= 2 and confusers:
                    ask(site, COLUMN_COUNT, {"column": column["name"], "project": project["name"]}, start,
                        [{"op": "click", "sel": f"[data-project={project['id']}] a[data-project-link]"},
                         {"op": "reach", "sel": f"[data-column='{column['name']}'] [data-column-count]"}], str(gold),
                        answer_count(gold, confusers, unit="cards"), [str(c) for c in confusers], "The number of cards in that column")
                    return

    def assignee() -> None:
        project = rng.choice(projects)
        card = rng.choice(project["cards"])
        names = [card["reporter"]] + [m["name"] for m in project["members"]]
        if len(set(k["assignee"] for k in project["cards"])) >= 2:
            ask(site, ASSIGNEE, {"card": card["title"], "project": project["name"]}, start,
                _open_card(project, card) + [{"op": "reach", "sel": "[data-assignee]"}], card["assignee"],
                name_check(card["assignee"], names), distinct(names, card["assignee"]), "The card's assignee")

    def due() -> None:
        project = rng.choice(projects)
        card = rng.choice(project["cards"])
        dates = [card["created"], card["updated"]] + [k["due"] for k in project["cards"]]
        if len(set(dates)) >= 2:
            ask(site, DUE, {"card": card["title"], "project": project["name"]}, start,
                _open_card(project, card) + [{"op": "reach", "sel": "[data-due]"}], site.date(card["due"]),
                answer_date(card["due"], distinct(dates, card["due"]), site.locale),
                [site.date(d) for d in distinct(dates, card["due"])], "The card's due date")

    def member_role() -> None:
        project = rng.choice(projects)
        member = rng.choice(project["members"])
        ask(site, MEMBER_ROLE, {"member": member["name"], "project": project["name"]}, start,
            [{"op": "click", "sel": f"[data-project={project['id']}] a[data-members-link]"},
             {"op": "reach", "sel": f"[data-member='{member['email']}']"}], member["role"],
            name_check(member["role"], ROLES), distinct(ROLES, member["role"]), "The member's role")

    rng.choice([column_count, assignee, due, member_role])()
