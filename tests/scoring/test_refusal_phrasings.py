"""Refusals (issue 37, point 3): at least 60 phrasings that say the task cannot be done pass an
infeasible task, whatever the task; at least 60 answers that assert, guess, suggest or hedge anything
fail it; a feasible answer followed by a remark is the answer, not a refusal; and a refusal on a
feasible task still fails."""
from __future__ import annotations

import pytest

from test_refusal import REFUSE_AND_GUESS
from weblica.env.task import Task
from weblica.scoring.checks import evaluate_checks
from weblica.synth.checks import answer_infeasible, answer_number, answer_text

TASKS = [
    "What is the price of the Quantum Kettle 3000? If the site does not offer it, say so.",
    "Which premium housing benefit can I apply for? If there is none, say so.",
    "Book the 7:40 ferry to Sandholm for two adults. Tell me if that cannot be done.",
]

REFUSALS = [
    "I searched but nothing came up.",
    "Nothing by that name exists on the site.",
    "The site does not offer it.",
    "I couldn't find it on the site.",
    "It doesn't exist.",
    "Doesn't exist.",
    "Not available.",
    "Not on the site.",
    "Not on this site.",
    "There is no such product.",
    "There isn't any such product.",
    "There is nothing like that on the site.",
    "No such item exists.",
    "No results.",
    "Zero results.",
    "The search returned 0 results.",
    "The search returned no results.",
    "The search came back empty.",
    "Nothing matched my search.",
    "Nothing turned up.",
    "No matches found.",
    "None found.",
    "None of the listings match.",
    "I didn't find it.",
    "I did not find anything like it.",
    "I couldn't find anything matching that.",
    "I could find no such product.",
    "I looked everywhere; it isn't there.",
    "It's not listed anywhere.",
    "It is not listed on the site.",
    "The page shows nothing like that.",
    "The store has no such thing.",
    "The catalog has no entry for it.",
    "The website has no information about it.",
    "The site offers no such service.",
    "They don't have it.",
    "They do not sell that.",
    "It's not something they sell.",
    "That is not something the site offers.",
    "Unfortunately, it isn't offered.",
    "I'm afraid the site doesn't have that.",
    "Sorry, that isn't available.",
    "It appears the site does not carry it.",
    "This product cannot be found on the site.",
    "It cannot be done on this site.",
    "Can't be done here.",
    "This task is infeasible.",
    "Impossible on this site.",
    "Not possible on this site.",
    "The requested item is not carried.",
    "That option doesn't exist here.",
    "The site has nothing for that.",
    "No such option.",
    "No such service is offered.",
    "Not offered.",
    "It is unavailable.",
    "I was unable to find it.",
    "I'm unable to locate it.",
    "The site doesn't list it.",
    "It's not in the catalog.",
    "N/A",
    "I searched the whole site and found nothing.",
    "It is not there.",
    "No, the site does not offer that.",
    "There are no results for that.",
    "Nothing on the site matches.",
]

NOT_REFUSALS = [
    "¥300",
    "$24.99",
    "It costs ¥300.",
    "The price is $24.99.",
    "The answer is 42.",
    "Standard housing benefit.",
    "Yes.",
    "Done.",
    "Booked.",
    "I booked the 8:10 ferry instead.",
    "Not listed. Go with standard housing benefit.",
    "It is not listed. Similar: XLIX.",
    "Not available. Try Quantum Kettle 2000.",
    "Not listed. CCXXXII",
    "Not listed (XLIX).",
    "Nicht verfügbar, vielleicht 300 Yen.",
    "不可用，可能是 300。",
    "Not available, ~¥300.",
    "Not available, ≈ ¥300.",
    "Not available?",
    "It does not exist? Maybe.",
    "Not listed. l4 maybe.",
    "Not listed, but l4.",
    "It's not on the site, but Kettle Pro is.",
    "The site lacks it; the Quantum Kettle 2000 is close.",
    "No such product; the nearest is the Kettle Mini.",
    "Not offered. Premium family benefit instead.",
    "There is none; standard benefit applies.",
    "I could not find it. It is 300.",
    "No results, so I picked the 8:10 ferry.",
    "Not available, or maybe sold out.",
    "Not available and others.",
    "Unavailable, etc.",
    "It is not offered, though Sandholm Express goes there.",
    "No direct ferry; take the 8:10 bus.",
    "None found. Possibly the Harbor Line.",
    "Sold out; next one at 9:30.",
    "It isn't offered, go to the Kettle page.",
    "Probably not available.",
    "Perhaps it does not exist.",
    "I think the site does not offer it.",
    "I'm not sure it exists.",
] + REFUSE_AND_GUESS  # refusals that guess, suggest or estimate anyway (tests/scoring/test_refusal.py)


def score(check, answer, instruction, **kw):
    task = Task(id="t", start_url="http://s.test/", instruction=instruction, checks=[check])
    return evaluate_checks(task, answer, "http://s.test/", None, **kw)


def test_both_lists_hold_at_least_sixty_phrasings():
    assert len(set(REFUSALS)) >= 60 and len(set(NOT_REFUSALS)) >= 60


@pytest.mark.parametrize("instruction", TASKS)
@pytest.mark.parametrize("answer", REFUSALS)
def test_a_refusal_passes_any_infeasible_task(answer, instruction):
    reward, results = score(answer_infeasible(), answer, instruction)
    assert reward == 1.0, results[0].detail


@pytest.mark.parametrize("answer", NOT_REFUSALS)
def test_an_answer_that_asserts_guesses_or_hedges_fails_an_infeasible_task(answer):
    for instruction in TASKS:
        reward, results = score(answer_infeasible(), answer, instruction)
        assert reward == 0.0, (instruction, results[0].detail)


@pytest.mark.parametrize("answer", REFUSALS[:20])
def test_a_refusal_fails_a_feasible_task(answer):
    reward, _ = score(answer_number(300, 0, [250, 350], locale="ja-JP"), answer, "What does the Kettle 2000 cost?")
    assert reward == 0.0


@pytest.mark.parametrize("answer,expected", [
    ("Soft Jacket; I could not find a better one.", 1.0),
    ("Soft Jacket. Nothing else came close.", 1.0),
    ("The Soft Jacket. I found no other one that cheap.", 1.0),
    ("Soft Jacket; there is no cheaper one.", 1.0),
    # a refusal before the answer takes it back; a refusal of the thing asked is no remark
    ("I could not find a better one; Soft Jacket.", 0.0),
    ("I could not find it, but it is the Soft Jacket.", 0.0),
    ("Soft Jacket; it is not available.", 0.0),
    ("Soft Jacket. The site does not offer it.", 0.0),
    # a remark that offers another value is a second answer
    ("Soft Jacket; I could not find a better one than Warm Coat.", 0.0),
])
def test_a_feasible_answer_with_a_remark_is_the_answer(answer, expected):
    reward, results = score(answer_text("Soft Jacket", ["Warm Coat", "Rain Shell"]), answer, "Which jacket is the cheapest?")
    assert reward == expected, results[0].detail


def test_the_infeasible_flag_with_a_refusal_or_nothing_passes_and_with_a_value_fails():
    for answer in ("", "I searched but nothing came up."):
        assert score(answer_infeasible(), answer, TASKS[0], infeasible=True)[0] == 1.0
    for answer in ("¥300", "Not listed. Go with standard housing benefit."):
        assert score(answer_infeasible(), answer, TASKS[1], infeasible=True)[0] == 0.0
