"""Education: a course catalog by department with credits and prerequisites, course pages with their
instructor and meeting time, a weekly timetable, the student's record of completed courses, and
enrollment (stored server-side; refused by the page and by the server, storing nothing, while a
prerequisite is missing)."""
from __future__ import annotations

import datetime as dt
from typing import Any

from weblica.synth.checks import answer_text, state_count, state_is
from weblica.synth.data import BASE_DATE, slugify
from weblica.synth.fake import people as fake_people
from weblica.synth.entities import kind_adjectives
from weblica.synth.genres.education.intents import ENROLL, ENROLL_SLOT, INSTRUCTOR, MEETS, PREREQ
from weblica.synth.genres.kit import MAXIMAL_EXTRAS, Plan, act, ask
from weblica.synth.site import SiteBuilder
from weblica.synth.skills.common import distinct, name_check

COURSES_PER_DEPT = 4
DEPTS = 4
DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"]
TIMES = ["09:00", "11:00", "14:00", "16:00"]
GRADES = ["A", "A-", "B+", "B", "B-", "C+"]


def _dept_word(site: SiteBuilder, dept: str) -> str:
    """A department as said before "course" ("the data course", "the language course")."""
    word = str((site.cat.get("kind_words") or {}).get(dept, [dept])[0]).removesuffix(" course")
    return word if word.isupper() else word.lower()


def _code_prefix(dept: str) -> str:
    """A course code's prefix: "Data" -> DATA, "Programming" -> PROG, "Graphic design" -> GD."""
    words = dept.split()
    return "".join(w[0] for w in words).upper() if len(words) > 1 else dept[:4].upper()


def _titles(site: SiteBuilder, dept: str) -> list[str]:
    """Course titles of a department in the site's own catalog vocabulary (the genre's kinds are the
    departments, titles "<adjective> <noun>" of the kind's nouns): the catalog's own courses of that kind
    first, so a course the catalog lists is the same course here, then more named the same way."""
    listed = [i["name"] for i in site.data.get("items") or [] if i["kind"] == dept
              and not any(i["name"].endswith(" " + str(v)) for v in site.cat.get("variants") or [])]
    more = [f"{a} {n}" for n in site.cat["kinds"][dept] for a in kind_adjectives(site.cat, dept) if a != n]
    site.rng.shuffle(more)
    return list(dict.fromkeys(site.rng.sample(listed, len(listed)) + more))


def _courses(site: SiteBuilder) -> list[dict[str, Any]]:
    rng = site.rng
    courses: list[dict[str, Any]] = []
    teachers = [p["name"] for p in fake_people(site, "instructors", 12)]
    rooms = [f"Room {b}{n}" for b in "ABC" for n in range(101, 106)]
    for dept in rng.sample(sorted(site.cat["kinds"]), DEPTS):
        prefix = _code_prefix(dept)
        levels = [101, 102, 201, 301]
        dept_courses: list[dict[str, Any]] = []
        for level, title in zip(levels, _titles(site, dept)[:COURSES_PER_DEPT]):
            course = {"id": f"c{len(courses) + 1}", "code": f"{prefix} {level}", "title": title, "dept": dept,
                      "dept_word": _dept_word(site, dept),
                      "slug": slugify(f"{prefix} {level} {title}"), "credits": rng.choice([2, 3, 4, 5]),
                      "instructor": rng.choice(teachers), "day": rng.choice(DAYS), "time": rng.choice(TIMES),
                      "room": rng.choice(rooms), "prereq": None}
            if level >= 200:  # upper-level courses need one course of the department below them
                needed = rng.choice(dept_courses)
                course.update(prereq=needed["id"], prereq_code=needed["code"], prereq_title=needed["title"],
                              prereq_slug=needed["slug"])
            dept_courses.append(course)
            courses.append(course)
    return courses


def build_flows(site: SiteBuilder) -> None:
    rng = site.rng
    courses = _courses(site)
    by_id = {c["id"]: c for c in courses}
    done = [c for c in courses if c["code"].endswith(("101", "102")) and rng.random() < 0.5]
    done_ids = [c["id"] for c in done]
    record = [{"code": c["code"], "title": c["title"], "grade": rng.choice(GRADES)} for c in done]
    site.add_data(courses=courses, completed=done_ids)
    site.add_state(enrollments=[])
    # the registrar refuses on its side too: a request posted around the page's check stores nothing
    site.add_record_rules("enrollments", {
        "kind": "requires", "field": "course", "noun": "course", "have": [by_id[i]["code"] for i in done_ids],
        "needs": {c["id"]: [by_id[c["prereq"]]["code"]] if c["prereq"] else [] for c in courses},
        "error": "You cannot enroll yet: complete {missing} first."})
    site.add_nav(("Courses", "/courses"), ("Timetable", "/timetable"), ("My record", "/my/record"))
    departments = [(d, [c for c in courses if c["dept"] == d]) for d in dict.fromkeys(c["dept"] for c in courses)]
    site.page("/courses", "education/catalog.html.j2", title="Course catalog", heading="Course catalog",
              departments=departments, courses=courses, page_kind="course-catalog")
    _home(site, departments, courses)
    for c in courses:
        rule = {"needs": [by_id[c["prereq"]]["code"]] if c["prereq"] else [], "done": [by_id[i]["code"] for i in done_ids]}
        site.page(f"/courses/{c['slug']}", "education/course.html.j2", title=c["title"], course=c, rule=rule,
                  page_kind="course")
    grid = {f"{d} {t}": [c for c in courses if (c["day"], c["time"]) == (d, t)] for d in DAYS for t in TIMES}
    site.page("/timetable", "education/timetable.html.j2", title="Timetable", heading="Weekly timetable",
              days=DAYS, times=TIMES, grid=grid, page_kind="timetable")
    site.page("/my/record", "education/record.html.j2", title="My record", heading="Completed courses",
              done=record, page_kind="record")
    site.page("/my/enrollments", "education/enrollments.html.j2", title="My enrollments",
              heading="Your enrollments", page_kind="enrollments")
    _tasks(site, courses, set(done_ids))


HERO = ["Find your course", "Learn something new this term", "Study with us this term", "Courses for the term ahead"]
# the term's calendar, in days from the site's date: what a school's start page lists as key dates
TERM = [("Enrollment opens", -14), ("Term starts", 7), ("Last day to enroll", 21), ("Reading week", 49),
        ("Exams begin", 91), ("Term ends", 105)]


def _home(site: SiteBuilder, departments: list[tuple[str, list[dict[str, Any]]]], courses: list[dict[str, Any]]) -> None:
    """A school's start page: a course search (subject or code, department), its study areas, how to
    apply and the term's key dates; no prices or ratings on it."""
    fields = [{"name": "q", "label": "Subject, title or course code", "type": "text"},
              {"name": "dept", "label": "Department", "type": "select", "options": [d for d, _ in departments]}]
    dates = [(what, (BASE_DATE + dt.timedelta(days=days)).isoformat()) for what, days in TERM]
    site.page("/", "education/home.html.j2", title="Courses and admissions", hero=site.rng.choice(HERO),
              fields=fields, departments=departments, courses=courses, dates=dates, page_kind="home")


def _eligible(course: dict[str, Any], done: set[str]) -> bool:
    return course["id"] not in done and (course["prereq"] is None or course["prereq"] in done)


def _open(course: dict[str, Any]) -> Plan:
    return [{"op": "click", "sel": f"[data-course={course['id']}] a"}]


def _enrolled(course: dict[str, Any]) -> list:
    return [state_count("enrollments", 1), state_is("enrollments.0.course", course["id"])]


def _tasks(site: SiteBuilder, courses: list[dict[str, Any]], done: set[str]) -> None:
    rng = site.rng
    start = "/courses"  # the flow's own page: a site's nav may be folded into a menu
    eligible = [c for c in courses if _eligible(c, done)]
    extras = lambda course: [s for c in [c for c in eligible if c is not course][:MAXIMAL_EXTRAS]  # noqa: E731
                             for s in [{"op": "goto", "url": site.url(f"/courses/{c['slug']}")},
                                       {"op": "click", "sel": "#enroll"}]]
    for course in rng.sample(eligible, len(eligible)):
        same = [c for c in courses if (c["dept"], c["day"], c["time"]) == (course["dept"], course["day"], course["time"])]
        if len(same) == 1:
            plan = [{"op": "click", "sel": "a[href='/timetable']"},
                    {"op": "click", "sel": f"[data-timetable] a[href='/courses/{course['slug']}']"},
                    {"op": "click", "sel": "#enroll"}]
            act(site, ENROLL_SLOT, {"dept": course["dept_word"], "day": course["day"], "time": course["time"]}, start, plan,
                _enrolled(course), "Enrolled in exactly that course", maximal=plan + extras(course))
            break

    course = rng.choice([c for c in eligible if c["prereq"]] or eligible)
    plan = _open(course) + [{"op": "click", "sel": "#enroll"}]
    act(site, ENROLL, {"title": course["title"]}, start, plan, _enrolled(course), "Enrolled in exactly that course", maximal=plan + extras(course))

    titles = [c["title"] for c in courses]
    course = rng.choice([c for c in courses if c["prereq"]])
    ask(site, PREREQ, {"title": course["title"]}, start, _open(course) + [{"op": "reach", "sel": "[data-prereq-of]"}],
        course["prereq_title"], name_check(course["prereq_title"], titles),
        distinct([c["title"] for c in courses if c["dept"] == course["dept"]], course["prereq_title"]), "The prerequisite on the course's page")

    def instructor() -> None:
        course = rng.choice(courses)
        teachers = [c["instructor"] for c in courses]
        ask(site, INSTRUCTOR, {"title": course["title"]}, start, _open(course) + [{"op": "reach", "sel": "[data-instructor]"}],
            course["instructor"], name_check(course["instructor"], teachers), distinct(teachers, course["instructor"]),
            "The instructor on the course's page")

    def meets() -> None:
        course = rng.choice(courses)
        ask(site, MEETS, {"title": course["title"]}, start, _open(course) + [{"op": "reach", "sel": "[data-meets]"}],
            course["day"], answer_text(course["day"], [d for d in DAYS if d != course["day"]]),
            [d for d in DAYS if d != course["day"]], "The weekday the course meets")

    rng.choice([instructor, meets])()
