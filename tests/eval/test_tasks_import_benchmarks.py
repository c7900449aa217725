"""`weblica tasks import --format webarena|mind2web` (issue 42): records in the published formats (WebArena's
config_files/test.raw.json, Mind2Web's and Online-Mind2Web's task files) become tasks that load and score
with weblica's own checks; what maps is mapped, the rest goes to rubric criteria or is reported, never
silently dropped, and a check never passes where WebArena's evaluator fails."""
import json
import subprocess
import sys

import pytest

from weblica.env.task import TaskError, load_tasks
from weblica.scoring.checks import evaluate_checks
from weblica.tasks.importers import import_file

SITES = {"SHOPPING_ADMIN": "http://127.0.0.1:7780/admin", "GITLAB": "http://127.0.0.1:8023",
         "REDDIT": "http://127.0.0.1:9999", "MAP": "http://127.0.0.1:3000"}


def wa(task_id, intent, start, eval_, sites=("shopping_admin",), **extra):
    """A record shaped as WebArena's config_files/test.raw.json writes them."""
    return {"sites": list(sites), "task_id": task_id, "require_login": True, "storage_state": None,
            "start_url": start, "geolocation": None, "intent_template": intent, "instantiation_dict": {},
            "intent": intent, "require_reset": False, "eval": eval_, "intent_template_id": 1, **extra}


def string_eval(reference, note=""):
    return {"eval_types": ["string_match"], "reference_answers": reference, "reference_url": "",
            "program_html": [], "string_note": note, "reference_answer_raw_annotation": ""}


WEBARENA = [
    wa(0, "What is the top-1 best-selling product in 2022", "__SHOPPING_ADMIN__",
       string_eval({"exact_match": "Quest Lumaflex\u2122 Band"}), storage_state="./.auth/shopping_admin_state.json"),
    wa(3, "What are the top-2 best-selling product in 2022", "__SHOPPING_ADMIN__",
       string_eval({"must_include": ["Quest Lumaflex\u2122 Band", "Sprite Stasis Ball 65 cm"]})),
    wa(11, "Tell me the the number of reviews that mention term \"disappointed\"", "__SHOPPING_ADMIN__",
       string_eval({"must_include": ["6"]})),
    wa(8, "Tell me the full address of all international airports within 5 km of CMU", "__MAP__",
       string_eval({"fuzzy_match": ["There is no airport within 5 km of Carnegie Mellon University"]}), sites=["map"]),
    wa(21, "Show me the order of the customer who has no account", "__SHOPPING_ADMIN__",
       string_eval({"fuzzy_match": "N/A"}, "There is no such customer")),
    wa(45, "Check out the most recent open issues", "__GITLAB__",
       {"eval_types": ["url_match"], "reference_answers": None,
        "reference_url": "__GITLAB__/a11yproject/a11yproject.com/-/issues/?sort=created_asc&state=opened",
        "program_html": [], "url_note": "GOLD in PRED"}, sites=["gitlab"]),
    wa(44, "Check out my todos", "__GITLAB__",
       {"eval_types": ["url_match"], "reference_answers": None, "reference_url": "__GITLAB__/dashboard/todos",
        "program_html": [], "url_note": "GOLD in PRED"}, sites=["gitlab"]),
    wa(400, "Post in pics the photo", "__REDDIT__",
       {"eval_types": ["url_match", "program_html"], "reference_answers": None,
        "reference_url": "__REDDIT__/f/pics",
        "program_html": [{"url": "func:reddit_get_post_url('__last_url__')",
                          "locator": "document.querySelector('.submission__inner').outerText",
                          "required_contents": {"must_include": ["from /f/pics |OR| in /f/pics"]}}],
        "url_note": "GOLD in PRED"}, sites=["reddit"]),
    wa(700, "Open both the repo and the forum", "__GITLAB__ |AND| __REDDIT__",
       {"eval_types": ["url_match"], "reference_answers": None, "reference_url": "__REDDIT__/f/gaming |OR| __REDDIT__/f/games",
        "program_html": [], "url_note": "GOLD in PRED"}, sites=["gitlab", "reddit"]),
]


@pytest.fixture
def webarena_file(tmp_path):
    path = tmp_path / "test.raw.json"
    path.write_text(json.dumps(WEBARENA, indent=2))
    return path


def by_id(tasks):
    return {t.id: t for t in tasks}


def score(task, answer=None, url=""):
    return evaluate_checks(task, answer, url, None)[0]


def test_webarena_evaluations_become_checks_where_they_map(webarena_file):
    tasks, report = import_file(webarena_file, "webarena", SITES)
    t = by_id(tasks)
    assert len(tasks) == len(WEBARENA)
    assert t["webarena-0"].start_url == "http://127.0.0.1:7780/admin"
    assert [(c.type, c.mode, c.expected) for c in t["webarena-0"].checks] == \
        [("answer_match", "exact", "Quest Lumaflex\u2122 Band")]
    assert [(c.mode, c.expected) for c in t["webarena-3"].checks] == \
        [("set", ["Quest Lumaflex\u2122 Band", "Sprite Stasis Ball 65 cm"])]
    assert [(c.mode, c.expected) for c in t["webarena-11"].checks] == [("exact", "6")]
    assert [c.mode for c in t["webarena-21"].checks] == ["refusal"]
    assert [(c.type, c.mode) for c in t["webarena-44"].checks] == [("url_match", "contains")]
    assert [(c.type, c.mode) for c in t["webarena-45"].checks] == [("url_match", "regex")]
    # an LLM-judged reference, or a page program, is no check: the whole evaluation goes to the rubric
    assert not t["webarena-8"].checks and "There is no airport within 5 km" in t["webarena-8"].rubric[0]
    assert not t["webarena-400"].checks and len(t["webarena-400"].rubric) == 2
    assert "/f/pics" in t["webarena-400"].rubric[0] and "'from /f/pics' or 'in /f/pics'" in t["webarena-400"].rubric[1]
    data = report.to_dict()
    assert data["to_checks"]["string_match exact_match -> answer_match exact"] == 1
    assert data["to_checks"]["url_match -> url_match regex"] == 2      # the query one and the |OR| one
    assert data["to_rubric"]["string_match fuzzy_match (an LLM judged it)"]["tasks"] == 1
    assert "webarena-400" in data["to_rubric"]["program_html (JavaScript run on a page after the episode)"]["e.g."]
    assert data["not_imported"]["log-in state (storage_state): the agent starts logged out"]["tasks"] == len(WEBARENA)
    assert data["not_imported"]["extra start tabs (start_url |AND|): only the first opens"]["e.g."] == ["webarena-700"]
    for task in tasks:
        assert task.source.kind == "live" and task.metadata["benchmark"] == "webarena"
        assert task.metadata["webarena_eval"] == next(r["eval"] for r in WEBARENA
                                                      if f"webarena-{r['task_id']}" == task.id)


def test_imported_checks_are_no_looser_than_webarenas_evaluator(webarena_file):
    t = by_id(import_file(webarena_file, "webarena", SITES)[0])
    assert score(t["webarena-0"], "Quest Lumaflex\u2122 Band")
    assert not score(t["webarena-0"], "Sprite Stasis Ball 65 cm")
    assert score(t["webarena-3"], "Quest Lumaflex\u2122 Band and Sprite Stasis Ball 65 cm")
    assert not score(t["webarena-3"], "Quest Lumaflex\u2122 Band")                      # must_include: both
    assert score(t["webarena-11"], "6") and not score(t["webarena-11"], "16")          # token, not substring
    assert score(t["webarena-21"], "N/A: there is no such customer")
    assert not score(t["webarena-21"], "The order is #000000170")
    gitlab = SITES["GITLAB"]
    issues = f"{gitlab}/a11yproject/a11yproject.com/-/issues/"
    assert score(t["webarena-45"], url=f"{issues}?sort=created_asc&state=opened")
    assert score(t["webarena-45"], url=f"{issues}?state=opened&page=1&sort=created_asc")   # order, extras: as WebArena
    assert not score(t["webarena-45"], url=f"{issues}?sort=created_desc&state=opened")
    assert not score(t["webarena-45"], url=f"{issues}?sort=created_asc")                  # a parameter missing
    assert not score(t["webarena-45"], url=f"{gitlab}/other/-/issues/?sort=created_asc&state=opened")
    assert not score(t["webarena-45"], url=f"{issues}?sort=created_ascending&state=opened")
    assert score(t["webarena-44"], url=f"{gitlab}/dashboard/todos")
    assert not score(t["webarena-44"], url=f"{gitlab}/dashboard/issues")
    reddit = SITES["REDDIT"]
    assert score(t["webarena-700"], url=f"{reddit}/f/games") and score(t["webarena-700"], url=f"{reddit}/f/gaming")
    assert not score(t["webarena-700"], url=f"{reddit}/f/movies")


def test_a_site_without_a_url_is_an_error_naming_the_flag(webarena_file, monkeypatch):
    for name in ("GITLAB", "WA_GITLAB"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(TaskError, match=r"no URL for WebArena site\(s\) GITLAB: give --site GITLAB=http"):
        import_file(webarena_file, "webarena", {k: v for k, v in SITES.items() if k != "GITLAB"})
    monkeypatch.setenv("WA_GITLAB", "http://10.0.0.5:8023/")
    tasks, _ = import_file(webarena_file, "webarena", {k: v for k, v in SITES.items() if k != "GITLAB"})
    assert by_id(tasks)["webarena-44"].start_url == "http://10.0.0.5:8023"


def test_the_command_writes_a_file_that_loads_and_reports(webarena_file, tmp_path):
    out = tmp_path / "tasks.jsonl"
    args = [sys.executable, "-m", "weblica.cli", "tasks", "import", str(webarena_file), "--out", str(out)]
    args += [f"--site={k}={v}" for k, v in SITES.items()]
    human = subprocess.run(args, capture_output=True, text=True, timeout=120)
    assert human.returncode == 0, human.stderr
    assert human.stdout.splitlines()[0] == f"9 tasks (7 with checks, 2 with rubric criteria) -> {out}"
    assert "not imported: log-in state" in human.stdout and "{" not in human.stdout
    assert len(load_tasks(out)) == 9
    summary = json.loads(subprocess.run(args + ["--json"], capture_output=True, text=True, timeout=120).stdout)
    assert summary["with_checks"] == 7 and summary["report"]["to_checks"]
    bad = subprocess.run(args[:-len(SITES)] + ["--site", "GITLAB", "--json"], capture_output=True, text=True,
                         timeout=120)
    assert bad.returncode != 0 and "NAME=URL" in json.loads(bad.stdout)["error"]


# ---- Mind2Web ------------------------------------------------------------------------------------------

MIND2WEB = [
    {"annotation_id": "0b0aa4a3-7e4e-4a4c-a1d5-4a8a6f0d0d6b", "website": "united", "domain": "Travel",
     "subdomain": "Airlines", "confirmed_task": "Find one-way flights from New York to Toronto.",
     "action_reprs": ["[combobox]  From -> TYPE: New York", "[button]  Find flights -> CLICK"],
     "actions": [{"action_uid": "a1", "operation": {"op": "TYPE", "value": "New York", "original_op": "TYPE"}}]},
    {"annotation_id": "1c", "website": "new.mta.info", "domain": "Travel", "subdomain": "Ground",
     "confirmed_task": "Check the service status of the 7 train.", "action_reprs": [], "actions": []},
    {"annotation_id": "2d", "website": "exploretock", "domain": "Entertainment", "subdomain": "Restaurant",
     "confirmed_task": "Book a table for 2 at a sushi place.", "action_reprs": ["[link]  Sushi -> CLICK"],
     "actions": []},
]
ONLINE = [{"task_id": "fb7b4f784cfde003e2548fdf4e8d6b4f", "confirmed_task": "Open the page with the app store "
           "ratings of the Sleep Cycle app.", "website": "https://www.sleepcycle.com/", "reference_length": 3,
           "level": "easy"}]


def test_mind2web_records_import_where_a_start_page_is_known(tmp_path):
    path = tmp_path / "train_0.json"
    path.write_text(json.dumps(MIND2WEB))
    tasks, report = import_file(path, "auto", {"united": "https://www.united.com/"})
    t = by_id(tasks)
    assert set(t) == {"mind2web-0b0aa4a3-7e4e-4a4c-a1d5-4a8a6f0d0d6b", "mind2web-1c"}
    united = t["mind2web-0b0aa4a3-7e4e-4a4c-a1d5-4a8a6f0d0d6b"]
    assert united.start_url == "https://www.united.com/" and united.category == "Travel"
    assert united.metadata["reference_actions"] == MIND2WEB[0]["action_reprs"] and united.oracle is None
    assert not united.checks and united.metadata["benchmark"] == "online-mind2web"   # judged by WebJudge
    assert t["mind2web-1c"].start_url == "https://new.mta.info/"
    data = report.to_dict()
    assert data["skipped"] == {"mind2web-2d": "website 'exploretock' names no page: give --site "
                                              "exploretock=https://..."}
    assert data["not_imported"]["actions as an oracle (element-level steps on 2023 pages, no pixels): kept as "
                                "metadata.reference_actions"]["tasks"] == 1


def test_online_mind2web_records_carry_their_url(tmp_path):
    path = tmp_path / "Online_Mind2Web.json"
    path.write_text(json.dumps(ONLINE))
    (task,), report = import_file(path, "mind2web")
    assert task.start_url == "https://www.sleepcycle.com/" and task.metadata["level"] == "easy"
    assert task.metadata["reference_length"] == 3 and not report.skipped


def test_a_hostile_website_never_becomes_a_start_page(tmp_path):
    records = [{"annotation_id": str(i), "website": w, "confirmed_task": "Do it."}
               for i, w in enumerate(["javascript:alert(1)", "file:///etc/passwd", "", "../../etc", "a b.com"])]
    path = tmp_path / "m2w.json"
    path.write_text(json.dumps(records))
    tasks, report = import_file(path, "mind2web")
    assert tasks == [] and len(report.skipped) == 5


def test_a_site_url_that_is_no_web_page_is_refused_before_anything_is_written(webarena_file, tmp_path):
    with pytest.raises(TaskError, match=r"task webarena-0: 'start_url' must be an http\(s\) URL"):
        import_file(webarena_file, "webarena", {**SITES, "SHOPPING_ADMIN": "file:///etc"})
    out = tmp_path / "tasks.jsonl"
    args = [sys.executable, "-m", "weblica.cli", "tasks", "import", str(webarena_file), "--out", str(out), "--json"]
    args += [f"--site={k}={v}" for k, v in {**SITES, "MAP": "javascript:alert(1)"}.items()]
    result = subprocess.run(args, capture_output=True, text=True, timeout=120)
    assert result.returncode == 1 and "http(s) URL" in json.loads(result.stdout)["error"] and not out.exists()


def test_records_without_what_a_task_needs_name_the_record(tmp_path):
    path = tmp_path / "wa.json"
    path.write_text(json.dumps([wa(5, "", "__MAP__", string_eval({"exact_match": "x"}))]))
    with pytest.raises(TaskError, match="WebArena task 5: no intent"):
        import_file(path, "webarena", SITES)
    path.write_text(json.dumps([wa(6, "Do it", "__MAP__", {"eval_types": []})]))
    with pytest.raises(TaskError, match="WebArena task 6: no evaluation"):
        import_file(path, "webarena", SITES)
