"""Attacks on the page confusers a cache build puts on its kept tasks (weblica/cache/confusers.py,
weblica/scoring/page_confusers.py), over a real recording store: a cheating answer (every byline, price or
date the recorded pages show; a hedge; a denial; another entity's value) scores 0, the gold in the
phrasings a person writes scores 1, and a page that shows the gold twice (byline and bio, price and
total, in other formats) never turns the gold into its own confuser."""
from __future__ import annotations

import pytest

from weblica.cache.confusers import with_page_confusers
from weblica.cache.exchange import Exchange
from weblica.cache.store import Store
from weblica.env.task import Check, Task
from weblica.scoring.checks import evaluate_checks

ARTICLE = """<html><head><title>Pasta</title></head><body><header><b>Nyheter</b></header>
<h1>How to cook pasta</h1><p class=byline>By Anna Berg</p><p>Published 10 March 2026</p>
<p>Boil water, add salt.</p><aside><h3>About the author</h3><p>Anna Berg writes about food.</p></aside>
<footer>Contact Anna Berg at the desk</footer></body></html>"""
OTHERS = ["""<html><body><h1>Election results</h1><p>By Olle Lind</p><p>Published 2 April 2026</p></body></html>""",
          """<html><body><h1>New lamps</h1><p>By Sara Ek</p><p>Published 14 March 2026</p></body></html>"""]
PRODUCT = """<html><body><h1>Desk Lamp Nova</h1><table><tr><td>Price:</td><td>¥316</td></tr></table>
<p>Price: ¥316</p><p>Total: ¥316</p><p>316 yen incl. tax</p><button>Add to cart</button></body></html>"""
PRODUCTS = ["""<html><body><h1>Desk Lamp Orb</h1><p>Price: ¥420</p></body></html>""",
            """<html><body><h1>Floor Lamp Arc</h1><p>Price: ¥515</p></body></html>"""]


def _exchange(run_id: int, url: str) -> Exchange:
    return Exchange(method="GET", url=url, request_headers=[("Accept", "text/html")], status=200, reason="OK",
                    response_headers=[("Content-Type", "text/html; charset=utf-8")], started=1.0, ended=1.5,
                    seq=0, run_id=run_id)


@pytest.fixture(scope="module")
def recording(tmp_path_factory):
    """A recording: the solving run fetched the gold's pages; a crawl run fetched the other pages."""
    rec = tmp_path_factory.mktemp("rec") / "rec"
    with Store.open_dir(rec, create=True) as store:
        solving = store.new_run("record", start_url="https://news.test/")
        store.add_exchange(_exchange(solving, "https://news.test/pasta/"), None, ARTICLE.encode())
        store.add_exchange(_exchange(solving, "https://shop.test/nova/"), None, PRODUCT.encode())
        crawl = store.new_run("crawl", start_url="https://news.test/")
        for n, page in enumerate(OTHERS + PRODUCTS):
            store.add_exchange(_exchange(crawl, f"https://news.test/other/{n}/"), None, page.encode())
    return rec, solving


def _task(recording, instruction: str, check: Check, solved: list[str]):
    rec, solving = recording
    task = Task(id="t", start_url="https://news.test/", instruction=instruction, checks=[check])
    kept, added = with_page_confusers(task, rec, solving, solved)
    return kept, added


@pytest.fixture(scope="module")
def author(recording):
    return _task(recording, "Who wrote the pasta article?", Check("answer_match", "Anna Berg"), ["Anna Berg"])


@pytest.fixture(scope="module")
def price(recording):
    return _task(recording, "How much does the Desk Lamp Nova cost?", Check("answer_match", "¥316"), ["¥316"])


@pytest.fixture(scope="module")
def published(recording):
    return _task(recording, "On what date was the pasta article published?",
                 Check("answer_match", "2026-03-10", "date"), ["10 March 2026"])


def _score(kept, answer: str) -> float:
    return evaluate_checks(kept[0], answer, "https://news.test/", None)[0]


def test_the_harvest_holds_the_other_values_and_never_the_gold(author, price, published):
    (task, added), (ptask, padded), (dtask, dadded) = author, price, published
    confusers = task.checks[0].confusers
    assert {"Olle Lind", "Sara Ek"} <= set(confusers) and added == len(confusers)
    assert not any("anna berg" in str(c).lower() for c in confusers), confusers  # byline, bio, footer: the gold
    assert {420.0, 515.0} <= {float(c) for c in ptask.checks[0].confusers}
    assert not any(float(c) == 316.0 for c in ptask.checks[0].confusers)  # ¥316, 'Total: ¥316', '316 yen'
    # the date's frame ('Published ...') finds the other articles' dates; never the gold's own
    assert dtask.checks[0].confusers_from == "page" and "2026-03-10" not in dtask.checks[0].confusers


@pytest.mark.parametrize("answer", ["Anna Berg, Olle Lind, Sara Ek", "Anna Berg and Olle Lind", "Olle Lind",
                                    "Either Anna Berg or Olle Lind", "Anna Berg or Sara Ek, I am not sure",
                                    "It was not Anna Berg", "Not Anna Berg; Olle Lind", "Sara Ek (Anna Berg edited)",
                                    "By Olle Lind", "Anna Berg\nOlle Lind", "Anna Berg / Olle Lind", "Anna Berg & Sara Ek",
                                    "Anna Berg, O. Lind", "Anna Berg; Ek", "anna berg olle lind", "Anna Berg vs Olle Lind",
                                    # a label slot must not hide a candidate, and "I think" hedges as "probably" does
                                    "Olle Lind: Anna Berg", "Author: Olle Lind, Anna Berg", "Anna Berg, I think",
                                    "Probably Anna Berg", "I believe it is Anna Berg"])
def test_a_cheating_author_answer_scores_0(author, answer):
    assert _score(author, answer) == 0.0, answer


@pytest.mark.parametrize("answer", ["Anna Berg", "anna berg", "ANNA BERG", "By Anna Berg", "The author is Anna Berg.",
                                    "It was written by Anna Berg.", "Anna Berg wrote it"])
def test_the_author_in_several_phrasings_scores_1(author, answer):
    assert _score(author, answer) == 1.0, answer


@pytest.mark.parametrize("answer", ["Written by: Anna Berg", "Author: Anna Berg", "Answer: Anna Berg"])
def test_a_labelled_author_answer_scores_1(author, answer):
    assert _score(author, answer) == 1.0, answer


@pytest.mark.parametrize("answer", ["¥316, ¥420, ¥515", "¥316 or ¥420", "¥420", "Between ¥316 and ¥515",
                                    "Not ¥316", "It costs ¥515 (¥316 on sale?)", "¥316/¥420", "316 or 420 yen",
                                    "¥316–¥420", "¥ 316, ¥ 420", "¥300-¥400"])
def test_a_cheating_price_answer_scores_0(price, answer):
    assert _score(price, answer) == 0.0, answer


@pytest.mark.parametrize("answer", ["¥316", "316 yen", "It costs ¥316.", "The price is ¥316", "JPY 316", "¥316.00",
                                    "316"])
def test_the_price_in_several_phrasings_scores_1(price, answer):
    assert _score(price, answer) == 1.0, answer


@pytest.mark.parametrize("answer", ["10 March 2026 or 2 April 2026", "2 April 2026", "14 March 2026",
                                    "It was not published on 10 March 2026"])
def test_a_cheating_date_answer_scores_0(published, answer):
    assert _score(published, answer) == 0.0, answer


@pytest.mark.parametrize("answer", ["10 March 2026", "March 10, 2026", "2026-03-10", "It was published on 10 March 2026."])
def test_the_date_in_several_phrasings_scores_1(published, answer):
    assert _score(published, answer) == 1.0, answer


def test_a_recording_without_other_values_adds_nothing_and_keeps_the_task(tmp_path):
    rec = tmp_path / "rec"
    with Store.open_dir(rec, create=True) as store:
        run = store.new_run("record", start_url="https://news.test/")
        store.add_exchange(_exchange(run, "https://news.test/only/"), None,
                           b"<html><body><p>By Anna Berg</p><p>Anna Berg</p></body></html>")
    task = Task(id="t", start_url="https://news.test/", instruction="Who wrote it?",
                checks=[Check("answer_match", "Anna Berg")])
    kept, added = with_page_confusers(task, rec, run, ["Anna Berg"])
    assert added == 0 and kept.checks[0].confusers_from is None
    assert evaluate_checks(kept, "Anna Berg", "", None)[0] == 1.0


def test_a_page_dump_scores_0(author, price, published):
    """The text of the recorded pages pasted as the answer: the gold's page beside the site's name, or
    every page, names other candidates."""
    from weblica.cache.confusers import html_text

    assert _score(author, html_text(ARTICLE)) == 0.0
    assert _score(author, "\n".join(html_text(p) for p in [ARTICLE, *OTHERS])) == 0.0
    assert _score(price, "\n".join(html_text(p) for p in [PRODUCT, *PRODUCTS])) == 0.0
    assert _score(published, "\n".join(html_text(p) for p in [ARTICLE, *OTHERS])) == 0.0
