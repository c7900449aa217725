"""The refusal detector and the infeasible check: refusals that assert nothing pass; values, guesses and
refuse-and-guess answers fail; a refusal on a feasible task scores 0."""
from __future__ import annotations

import pytest

from weblica.scoring.refusal import guess_phrase, is_refusal
from weblica.env.task import Task
from weblica.scoring.checks import evaluate_checks
from weblica.synth.checks import answer_infeasible, answer_number, answer_text

PRICE = "What is the price of the Quantum Kettle 3000? If the site does not offer it, say so."
FOOTPRINT = "What is the carbon footprint stated for the Bold Poncho? Say so if it is not given."
CHEAPEST = "Open the page of the cheapest wedding gown on the site, or say if there is none."

REFUSALS = [
    "The site does not offer it.",
    "I couldn't find it on the site",
    "This item doesn't exist",
    "This item does not exist on the site.",
    "Not available",
    "It is not available.",
    "There is no such product",
    "There's no such product on this site.",
    "cannot be done",
    "This cannot be done: the site does not have it.",
    "The task can't be completed.",
    "I could not find the Quantum Kettle 3000 anywhere on the site.",
    "No results for Quantum Kettle 3000.",
    "The search returned no matching products.",
    "The site doesn't sell a Quantum Kettle 3000.",
    "The store does not carry that item.",
    "Sorry, the Quantum Kettle 3000 is not listed.",
    "It isn't offered here.",
    "The carbon footprint is not stated on the product page.",
    "The page does not mention a carbon footprint.",
    "No carbon footprint is given for this item.",  # "no ... is given"
    "The carbon footprint isn't given.",
    "There is none.",
    "There are no wedding gowns on the site.",
    "The site has no wedding gowns.",
    "I was unable to find it.",
    "I'm unable to locate this product.",
    "It's impossible: the product does not exist.",
    "N/A",
    "Infeasible: the item is not in the catalog.",
    "Nothing matches 'Quantum Kettle 3000'.",
    "None found.",
    "The item is not on the site.",
    "That product is unavailable on this site.",
    "I searched but found nothing.",
    "It does not seem to exist.",
    "THE SITE DOES NOT OFFER IT",
    "The site doesn\u2019t offer it.",  # a typographic apostrophe
]

NOT_REFUSALS = [
    "¥316",
    "The price is $24.99.",
    "It costs ¥300.",
    "Yes",
    "Done",
    "I found it: Bold Poncho",
    "I found it: ¥316",
    "Bold Poncho",
    "It is available for ¥300.",
    "The Bold Poncho is in stock.",
    "12 kg CO2",
    "The carbon footprint is 12 kg.",
    "Opened the page of the cheapest wedding gown.",
    "The cheapest is the Ivory Gown at $899.",
    "No problem, it costs $5.",
    "Here it is: $19.99",
    "Added to the cart.",
    "The answer is 42.",
    "Submitted the form.",
    "It is the Cropped Cardigan.",
]

REFUSE_AND_GUESS = [
    "It is not available, but probably ¥300",
    "Not listed; my best guess is ¥300.",
    "This item does not exist. The closest match is the Bold Poncho.",
    "I couldn't find it; it's probably around 12 kg.",
    "There is no such product, but the Soft Oxford costs ¥17.",
    "The site does not offer it. Maybe try the Bold Poncho instead.",
    "It is not available; I'd say about $25.",
    "Not stated, but it is likely 12 kg CO2.",
    "I could not find it, the answer is ¥300",
    "Cannot be done... ¥300",
    "N/A (¥300)",
    "Either it does not exist or it costs ¥300.",
    "It might not be offered; perhaps ¥250.",
    "Not available, estimated price ¥300.",
    "The site has no wedding gowns; I recommend the Ivory Dress.",
    "There is no Quantum Kettle 3000, though a similar kettle costs 2,999 yen.",
    "No results. It was released on 7 June 2026.",
    "Not found, alternatively the Bold Poncho.",
    "I couldn't find it, but I found the Bold Poncho for $19.",
    "Unavailable; it should be ¥300.",
    "The site does not offer it. Bold Poncho.",
    "Not available, see the Soft Oxford",
]


@pytest.mark.parametrize("answer", REFUSALS)
def test_refusals_are_recognized(answer):
    assert is_refusal(answer), answer


@pytest.mark.parametrize("answer", NOT_REFUSALS)
def test_answers_that_assert_a_value_are_not_refusals(answer):
    assert not is_refusal(answer), answer


def score(check, answer, instruction, **kw):
    task = Task(id="t", start_url="http://s.test/", instruction=instruction, checks=[check])
    return evaluate_checks(task, answer, "http://s.test/", None, **kw)[0]


@pytest.mark.parametrize("answer", REFUSALS)
def test_a_refusal_that_asserts_nothing_passes_an_infeasible_task(answer):
    assert score(answer_infeasible(), answer, PRICE) == 1.0, answer


@pytest.mark.parametrize("answer", [r for r in REFUSALS if "3000" not in r])
@pytest.mark.parametrize("instruction", [FOOTPRINT, CHEAPEST])
def test_the_same_refusals_pass_other_infeasible_tasks(answer, instruction):
    assert score(answer_infeasible(), answer, instruction) == 1.0, answer


@pytest.mark.parametrize("answer", NOT_REFUSALS + REFUSE_AND_GUESS + [""])
def test_values_and_refuse_and_guess_fail_an_infeasible_task(answer):
    assert score(answer_infeasible(), answer, PRICE) == 0.0, answer


@pytest.mark.parametrize("answer", REFUSE_AND_GUESS)
def test_refuse_and_guess_is_seen_as_a_guess_or_a_value(answer):
    assert is_refusal(answer) or guess_phrase(answer), answer


@pytest.mark.parametrize("answer", REFUSALS[:12])
def test_a_refusal_on_a_feasible_task_scores_zero(answer):
    assert score(answer_number(316, 0, [17, 62], locale="ja-JP"), answer, "What does the Bold Poncho cost?") == 0.0
    assert score(answer_text("Bold Poncho", ["Soft Oxford"]), answer, "Which Jeans is the cheapest?") == 0.0


def test_an_echo_of_a_conditional_instruction_is_no_refusal():
    assert score(answer_infeasible(), PRICE, PRICE) == 0.0
    assert score(answer_infeasible(), "If the site does not offer it, say so.", PRICE) == 0.0
    assert score(answer_infeasible(), "The site does not offer it, so I say so.", PRICE) == 1.0


def test_the_names_of_the_question_may_be_repeated_in_a_refusal():
    # the item's own number (3000) is the question's, not a value the agent asserts
    assert score(answer_infeasible(), "There is no Quantum Kettle 3000 on the site.", PRICE) == 1.0
    assert score(answer_infeasible(), "There is no Quantum Kettle 4000 on the site.", PRICE) == 0.0


def test_the_structured_flag_is_a_refusal_only_without_a_value():
    assert score(answer_infeasible(), "", PRICE, infeasible=True) == 1.0
    assert score(answer_infeasible(), "The search found nothing.", PRICE, infeasible=True) == 1.0
    for guess in ["¥300", "probably the Bold Poncho", "I found it: ¥316"]:
        assert score(answer_infeasible(), guess, PRICE, infeasible=True) == 0.0, guess


def test_sizes_of_the_sets():
    assert len(REFUSALS) >= 30 and len(NOT_REFUSALS) + len(REFUSE_AND_GUESS) >= 30
