"""Page confusers on the cache tasks `weblica cache build` keeps: the news-author task's answer check gets
the other bylines the recorded site shows (the crawl records the other articles), so an answer naming the
gold beside another author scores 0 under the cache task, as it would on a synth task with a data model,
while the gold alone scores 1. The harvest never keeps the gold or a value the instruction states."""
import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[1]))

from test_cache_build import invoke, write_tasks  # noqa: E402

from weblica.cache.confusers import html_text  # noqa: E402
from weblica.cache.demo_site import NewsSite, news_tasks  # noqa: E402
from weblica.scoring.page_confusers import check_confusers, same_frame_confusers  # noqa: E402
from weblica.env.task import Check, Task  # noqa: E402
from weblica.scoring.checks import evaluate_checks, run_check


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    base = tmp_path_factory.mktemp("confusers")
    with NewsSite() as site:
        tasks = [t for t in news_tasks(site) if t["id"] == "news-author"]
        path = write_tasks(base / "live.jsonl", tasks)
        args = ["cache", "build", "--tasks", str(path), "--policy", "oracle", "--runs", "1", "--crawl-depth", "1",
                "--out", str(base / "cache")]
        for spec in site.resolve:
            args += ["--resolve", spec]
        report = invoke(*args)
    tasks = [Task.from_dict(json.loads(line)) for line in Path(report["tasks_file"]).read_text().splitlines()]
    return report, {t.id: t for t in tasks}


def test_the_kept_author_task_gets_the_other_bylines_as_page_confusers(built):
    report, tasks = built
    assert [r["id"] for r in report["kept"]] == ["news-author"], report["dropped"]
    check = tasks["news-author"].checks[0]
    assert check.confusers_from == "page"
    assert {"Olle Lind", "Sara Ek"} <= set(check.confusers), check.confusers
    assert "Anna Berg" not in check.confusers and "Search" not in check.confusers   # a button's label is no value
    assert report["kept"][0]["confusers"] == len(check.confusers)
    written = json.loads(Path(report["tasks_file"]).read_text().splitlines()[0])
    assert written["checks"][0]["confusers_from"] == "page"   # what `weblica run` reads back


@pytest.mark.parametrize("answer", ["Anna Berg, Sara Ek", "Anna Berg (Olle Lind edited it)",
                                    "It was written by Anna Berg and Sara Ek", "Olle Lind"])
def test_a_cheating_answer_scores_0_under_the_cache_task(built, answer):
    task = built[1]["news-author"]
    reward, results = evaluate_checks(task, answer, task.start_url, None)
    assert reward == 0.0, results


@pytest.mark.parametrize("answer", ["Anna Berg", "It was written by Anna Berg.", "anna berg"])
def test_the_gold_alone_scores_1_under_the_cache_task(built, answer):
    task = built[1]["news-author"]
    assert evaluate_checks(task, answer, task.start_url, None)[0] == 1.0
    assert run_check(task.checks[0], answer, task.start_url, None, instruction=task.instruction).passed


@pytest.mark.parametrize("answer", ["Anna Berg. Sara Ek wrote the lamp article.", "Anna Berg; see also Sara Ek",
                                    "Anna Berg (with Olle Lind)"])
def test_the_confusers_catch_what_the_shape_check_alone_lets_through(built, answer):
    """The gold, then another author in a clause of its own: the answer grammar rejects it without any list
    (a second name beside a name; these passed a bare check before it), and the harvested list names the
    author in the detail."""
    task = built[1]["news-author"]
    bare = run_check(Check("answer_match", "Anna Berg"), answer, task.start_url, None, instruction=task.instruction)
    assert not bare.passed and "which is not the gold" in bare.detail
    listed = run_check(task.checks[0], answer, task.start_url, None, instruction=task.instruction)
    assert not listed.passed and "confusers: page" in listed.detail


ARTICLE = """<!doctype html><html><head><title>How to cook pasta</title><style>p{color:red}</style></head><body>
<header><b>Nyheter</b></header><main><h1>How to cook pasta</h1><p class=byline>By Anna Berg</p>
<p>Boil water.</p><button>Share Now</button><table><tr><td>Price</td><td>¥316</td></tr></table></main>
<script>document.title = "By Eve Hacker"</script></body></html>"""
OTHER = "<html><body><h1>Election results</h1><p>By Olle Lind</p><p>By Bo</p><p>By the way</p></body></html>"


def test_html_text_reads_the_shown_text_one_block_a_line():
    text = html_text(ARTICLE)
    assert "By Anna Berg" in text.splitlines() and "¥316" in text.splitlines()
    assert "Eve Hacker" not in text and "color" not in text and "Share" not in text
    assert text.count("How to cook pasta") == 1   # the <h1>, not the <title>


def test_the_harvest_keeps_neither_the_gold_nor_a_value_the_instruction_states():
    pages = [html_text(ARTICLE), html_text(OTHER)]
    check = Check("answer_match", "Anna Berg")
    assert "Olle Lind" in check_confusers(check, "Who wrote it?", pages[:1], pages)
    assert "Bo" in same_frame_confusers(pages[:1], pages, "Anna Berg")        # one word fewer: still a name
    assert "the way" not in same_frame_confusers(pages[:1], pages, "Anna Berg")  # not written as a name
    found = check_confusers(check, "Who wrote it, Olle Lind or someone else?", pages[:1], pages)
    assert "Olle Lind" not in found and "Anna Berg" not in found
    alias = Check("answer_match", ["Anna Berg", "A. Berg"])
    assert not {"Anna Berg", "A. Berg"} & set(check_confusers(alias, "Who wrote it?", pages[:1], pages))


def test_pages_without_the_gold_and_value_free_modes_give_nothing():
    other = [html_text(OTHER)]
    assert check_confusers(Check("answer_match", "Anna Berg"), "Who wrote it?", other, other) == []
    page = [html_text(ARTICLE)]
    assert check_confusers(Check("answer_match", r"Anna \w+", "regex"), "", page, page) == []
    assert check_confusers(Check("answer_match", None, "refusal"), "", page, page) == []
    assert check_confusers(Check("url_match", "/nyheter/"), "", page, page) == []


def test_a_confuser_the_recorded_solution_names_is_left_out(tmp_path):
    # a confuser that would fail the answer a recorded solution gave is left out ("By Anna Berg" passes
    # with every harvested byline); a solution the answer grammar rejects anyway ("Anna Berg of Nyheter":
    # a second name beside the gold) protects nothing, so the site's name stays a confuser
    from weblica.cache.confusers import with_page_confusers
    from weblica.cache.store import Store
    from weblica.env.task import Check, Task

    rec = tmp_path / "rec"
    page = b"<html><body><h1>Nyheter</h1><p>By Anna Berg</p><p>By Sara Ek</p><p>By Olle Lind</p></body></html>"
    with Store.open_dir(rec, create=True) as store:
        run = store.new_run("record", start_url="https://news.test/")
        store.add_exchange(_html_exchange(run, "https://news.test/a/"), None, page)
    task = Task(id="t", start_url="https://news.test/", instruction="Who wrote it?",
                checks=[Check("answer_match", "Anna Berg")])
    strict, added = with_page_confusers(task, rec, run)
    kept, _ = with_page_confusers(task, rec, run, ["By Anna Berg"])
    ungrammatical, _ = with_page_confusers(task, rec, run, ["Anna Berg of Nyheter"])
    assert added >= 1 and {"Sara Ek", "Olle Lind"} <= set(kept.checks[0].confusers)
    assert "Nyheter" in strict.checks[0].confusers and "Nyheter" in ungrammatical.checks[0].confusers
    for check in (kept.checks[0], strict.checks[0]):
        assert run_check(check, "By Anna Berg", "", None, instruction=task.instruction).passed
        assert not run_check(check, "Anna Berg, Sara Ek", "", None, instruction=task.instruction).passed
    said = run_check(ungrammatical.checks[0], "Anna Berg of Nyheter", "", None, instruction=task.instruction)
    assert not said.passed and "'Nyheter'" in said.detail


def _html_exchange(run_id: int, url: str):
    from weblica.cache.exchange import Exchange

    return Exchange(method="GET", url=url, request_headers=[("Accept", "text/html")], status=200, reason="OK",
                    response_headers=[("Content-Type", "text/html; charset=utf-8")], started=1.0, ended=1.5,
                    seq=0, run_id=run_id)
