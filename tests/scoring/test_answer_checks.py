"""Answer checks a reward-maximizing learner cannot game, and that accept what a person would accept
(issue 16): every row of its table, the normalizations, set/regex modes, refusals, and the limits that
keep a hostile answer or task file from hanging a check (issue 17)."""
from __future__ import annotations

import json
import time

import pytest

from weblica.env.actions import ActionError, make_action
from weblica.scoring.answer import MAX_ANSWER_CHARS
from weblica.env.task import Check, Task
from weblica.scoring.checks import evaluate_checks, run_check
from weblica.synth.checks import answer_count, answer_date, answer_infeasible, answer_number, answer_text

JEANS = "Which Jeans is the cheapest?"


def score(check: Check, answer: str | None, instruction: str = "Answer the question.", **kw) -> float:
    task = Task(id="t", start_url="http://shop.test/", instruction=instruction, checks=[check])
    return evaluate_checks(task, answer, "http://shop.test/", None, **kw)[0]


def detail(check: Check, answer: str, instruction: str = "Answer the question.", **kw) -> str:
    return run_check(check, answer, "http://shop.test/", None, instruction=instruction, **kw).detail


# ---- issue 16's table, row by row ------------------------------------------------------------------

CARDIGAN = answer_text("Cropped Cardigan", ["Soft Oxford", "Bold Poncho", "Cropped Cardigan"])
YEN = answer_number(316, 0, [17, 62, 342], locale="ja-JP")
UNDER_317 = answer_count(2, [1, 3])
GEARBOX = answer_text("Manual", ["Automatic"])
OWNERS = answer_text("Three owners", ["One owner", "Two owners"])


@pytest.mark.parametrize("check,instruction,answer", [
    (CARDIGAN, JEANS, "Soft Oxford, Cropped Cardigan, Bold Poncho"),
    (CARDIGAN, JEANS, "It is not the Cropped Cardigan; it is the Bold Poncho"),
    (YEN, "What does the most expensive Jeans cost?", "¥17, ¥62, ¥316, ¥342"),
    (UNDER_317, "How many Jeans cost at most ¥317?", "Between 1 and 3: 1, 2 or 3"),
    (GEARBOX, "What is the gearbox of the Alpine Coupe?", "Manual or Automatic"),
])
def test_enumerations_negations_and_hedges_score_zero(check, instruction, answer):
    assert score(check, answer, instruction) == 0.0


@pytest.mark.parametrize("check,instruction,answer", [
    (CARDIGAN, JEANS, "Cropped Cardigan"),
    (YEN, "What does the most expensive Jeans cost?", "¥316"),
    (UNDER_317, "How many Jeans cost at most ¥317?", "2"),
    (GEARBOX, "What is the gearbox of the Alpine Coupe?", "Manual"),
])
def test_the_gold_alone_scores_one(check, instruction, answer):
    assert score(check, answer, instruction) == 1.0


@pytest.mark.parametrize("answer", ["two", "2", "Two.", "There are two.", "2 items cost at most ¥317"])
def test_a_count_in_words_or_digits_passes(answer):
    assert score(answer_count(2), answer, "How many Jeans cost at most ¥317?") == 1.0


@pytest.mark.parametrize("answer", ["3", "three", "3 owners", "Three owners", "It had three previous owners."])
def test_units_of_the_question_may_be_omitted(answer):
    assert score(OWNERS, answer, "How many owners has the Alpine Coupe had?") == 1.0


@pytest.mark.parametrize("answer", ["Two owners", "2 or 3 owners", "3 days", "not three", "one owner, three owners"])
def test_owners_wrong_or_hedged_fail(answer):
    assert score(OWNERS, answer, "How many owners has the Alpine Coupe had?") == 0.0


@pytest.mark.parametrize("answer", ["The site does not offer it.", "I couldn't find it on the site"])
def test_refusals_pass_on_infeasible_tasks(answer):
    assert score(answer_infeasible(), answer, "What is the price of the Quantum Kettle? If the site does not "
                                              "offer it, say so.") == 1.0


def _leaves(node):
    if isinstance(node, dict):
        for v in node.values():
            yield from _leaves(v)
    elif isinstance(node, list):
        for v in node:
            yield from _leaves(v)
    elif node is not None and not isinstance(node, bool):
        yield str(node)


@pytest.mark.parametrize("skill,category", [("table-reasoning", "fashion"), ("hidden-content", "automotive"),
                                            ("multi-page", "books"), ("search", "groceries")])
def test_a_dump_of_the_sites_data_fails_every_answer_task(skill, category):
    """Every value of data.json joined by commas, and (under the length cap) every value of the field the
    gold comes from: neither passes any answer task of a freshly built site."""
    from weblica.synth.generate import build_site
    from weblica.synth.spec import sample_spec

    site = build_site(sample_spec(7, skill, category))
    values = list(dict.fromkeys(_leaves(site.data)))
    dump = ", ".join(values)
    items = site.data.get("items") or []
    fields = {key: [str(i[key]) for i in items if isinstance(i, dict) and key in i] for key in ("name", "price")}
    for item in items:  # hidden details: every value of each fact ("Manual, Automatic")
        for label, value in (item.get("facts") or {}).items():
            fields.setdefault(label, [])
            if str(value) not in fields[label]:
                fields[label].append(str(value))
    tried = with_gold = 0
    for draft in site.tasks:
        for check in draft.checks:
            if check.type != "answer_match" or check.mode == "refusal":
                continue
            assert score(check, dump, draft.instruction) == 0.0, draft.instruction
            bare = Check(check.type, check.expected, check.mode, tol=check.tol, locale=check.locale, unit=check.unit)
            for field_values in fields.values():
                answer = ", ".join(field_values)
                if field_values and len(answer) <= MAX_ANSWER_CHARS:
                    assert score(check, answer, draft.instruction) == 0.0, (draft.instruction, field_values[:3])
                    # the gold is among the values: even without confusers, a list is not an answer
                    if any(score(bare, v, draft.instruction) for v in field_values):
                        assert score(bare, answer, draft.instruction) == 0.0, (draft.instruction, field_values[:3])
                        with_gold += 1
                    tried += 1
    assert tried >= 5 and with_gold >= 3


# ---- what a person would accept: normalization -------------------------------------------------------

@pytest.mark.parametrize("value,decimals,locale,answers", [
    (316, 0, "ja-JP", ["¥316", "316 yen", "JPY 316", "316円", "It costs ¥316.", "three hundred and sixteen yen", "316"]),
    (1234.5, 2, "en-US", ["$1,234.50", "1234.5", "USD 1,234.50", "1,234.50 dollars", "It's $1,234.50."]),
    (1234.5, 2, "de-DE", ["1.234,50 €", "1234,50 €", "EUR 1.234,50", "1.234,50 EUR", "€1,234.50"]),
    (1234.5, 2, "fr-FR", ["1 234,50 €", "1\u202f234,50 €", "1234,50 €", "1 234,50 EUR"]),
    (1234.5, 2, "en-GB", ["£1,234.50", "GBP 1,234.50", "1,234.50 pounds"]),
    (12.0, 2, "en-US", ["$12", "$12.00", "12 dollars", "twelve dollars"]),
    (1234.0, 0, None, ["1,234", "1234", "1.234", "one thousand two hundred and thirty-four"]),
])
def test_numbers_in_every_notation_of_the_locale(value, decimals, locale, answers):
    check = answer_number(value, decimals, locale=locale)
    for answer in answers:
        assert score(check, answer) == 1.0, (answer, detail(check, answer))


@pytest.mark.parametrize("value,decimals,locale,answer", [
    (316, 0, "ja-JP", "$316"),            # another currency
    (316, 0, "ja-JP", "¥3160"),
    (1234.5, 2, "de-DE", "1,234"),        # 1.234 in German notation
    (1234.5, 2, "en-US", "1,234.55"),
    (1234.5, 2, "en-US", "11234.50"),
    (1234.5, 2, "en-US", "about $1,234.50 or $1,300"),
    (12.0, 2, "en-US", "at least $12"),
    (12.0, 2, "en-US", "$12? No."),
    (12.0, 2, "en-US", ""),
])
def test_numbers_that_are_not_the_gold_fail(value, decimals, locale, answer):
    assert score(answer_number(value, decimals, locale=locale), answer) == 0.0


@pytest.mark.parametrize("n,answer", [
    (0, "zero"), (0, "none... 0"), (21, "twenty-one"), (21, "twenty one"), (105, "a hundred and five"),
    (105, "one hundred five"), (1000, "a thousand"), (1000, "1,000"), (3, "3rd"), (3, "third"), (21, "21st"),
    (2, "2nd"), (1987, "It was founded in 1987."), (7, "7 results"), (7, "Seven results were found."),
])
def test_number_words_and_ordinals(n, answer):
    check = answer_count(n)
    assert score(check, answer) == 1.0, detail(check, answer)


def test_an_echo_of_a_question_that_states_the_gold_is_no_answer():
    instruction = "How many Jeans have a rating of 4.0 or higher?"
    assert score(answer_count(4), instruction, instruction) == 0.0
    assert score(answer_count(4), "Jeans with a rating of 4.0 or higher", instruction) == 0.0
    for ok in ["4", "four", "4 Jeans have a rating of 4.0 or higher.", "There are 4."]:
        assert score(answer_count(4), ok, instruction) == 1.0, ok


def test_the_pronoun_one_is_not_a_count():
    assert score(answer_count(2), "Two; the cheapest one is the Bold Poncho") == 1.0
    assert score(answer_count(2), "Two, or maybe one") == 0.0


@pytest.mark.parametrize("gold,answer", [
    ("12 kg", "12kg"), ("12 kg", "12 kg"), ("12 kg", "12 kilograms"), ("90 minutes", "90 min"),
    ("2 hours", "2 hrs"), ("2 hours", "two hours"), ("1 year", "one year"), ("16+", "16+"), ("16+", "16"),
])
def test_units_with_or_without_a_space(gold, answer):
    check = answer_text(gold)
    assert score(check, answer) == 1.0, detail(check, answer)


@pytest.mark.parametrize("gold,answer", [("12 kg", "12 g"), ("2 hours", "2 days"), ("90 minutes", "90 hours")])
def test_another_unit_is_another_value(gold, answer):
    assert score(answer_text(gold), answer) == 0.0


@pytest.mark.parametrize("locale,answers,wrong", [
    ("en-US", ["2026-06-07", "06/07/2026", "June 7, 2026", "7 June 2026", "Jun 7th, 2026", "Sunday, June 7"],
     ["07/06/2026", "June 8, 2026", "2026-07-06"]),
    ("en-GB", ["07/06/2026", "7 June 2026", "7th of June 2026", "2026-06-07"], ["06/07/2026", "7 July 2026"]),
    ("de-DE", ["07.06.2026", "7. Juni 2026", "7.6.2026", "2026-06-07"], ["06.07.2026"]),
    ("fr-FR", ["07/06/2026", "7 juin 2026"], ["06/07/2026"]),
    ("ja-JP", ["2026/06/07", "2026年6月7日"], ["2026/07/06"]),
    # no locale: 06/07 could be either, and an unsure check fails; 13/06 can only be day first
    (None, ["7 June 2026", "2026-06-07", "June 7, 2026"], ["06/07/2026", "07/06/2026", "6 July 2026"]),
])
def test_dates_in_common_formats_read_per_locale(locale, answers, wrong):
    check = answer_date("2026-06-07", locale=locale)
    for answer in answers:
        assert score(check, answer) == 1.0, (answer, detail(check, answer))
    for answer in wrong + ["June 7, 2026 or June 8, 2026", "not June 7, 2026", "June 7 or 8, 2026"]:
        assert score(check, answer) == 0.0, answer


def test_a_date_only_one_reading_allows_passes_without_a_locale():
    assert score(answer_date("2026-06-13"), "13/06/2026") == 1.0
    assert score(answer_date("2026-06-13"), "06/13/2026") == 1.0


@pytest.mark.parametrize("gold,answer,ok", [
    ("18:00", "18:00", True), ("18:00", "6 pm", True), ("18:00", "6:00 p.m.", True), ("18:00", "It closes at 6pm.", True),
    ("18:00", "18h00", True), ("from 14:00", "14:00", True), ("from 14:00", "Check-in is from 2 pm.", True),
    ("18:00", "19:00", False), ("18:00", "18:00 or 19:00", False), ("18:00", "not 18:00", False), ("18:00", "6 am", False),
    ("from 14:00", "from 15:00", False),
])
def test_clock_times_in_either_notation(gold, answer, ok):
    check = answer_text(gold, ["19:00", "20:00", "from 15:00", "from 16:00"])
    assert (score(check, answer, "When does it close?") == 1.0) is ok, detail(check, answer)


def test_a_date_the_question_names_is_context():
    check = answer_date("2026-06-09", ["2026-06-07", "2026-06-08"], locale="en-US")
    instruction = "The slot on 06/07/2026 is full. On which date is the next free slot?"
    assert score(check, "The next free slot after 06/07/2026 is 06/09/2026.", instruction) == 1.0
    assert score(check, "06/08/2026 or 06/09/2026", instruction) == 0.0


@pytest.mark.parametrize("answer", [
    "cropped cardigan", "  CROPPED   CARDIGAN. ", "Cropped-Cardigan", "the Cropped Cardigan", "The Cropped Cardigan!",
    "It's the Cropped Cardigan (¥316).", "Cropped Cardigan, not the Soft Oxford", "«Cropped Cardigan»",
])
def test_case_space_punctuation_hyphens_and_articles_do_not_matter(answer):
    assert score(CARDIGAN, answer, JEANS) == 1.0, detail(CARDIGAN, answer, JEANS)


@pytest.mark.parametrize("gold,confusers,answer,ok", [
    ("Zürich", [], "Zurich", True),
    ("Included", ["Not included", "Extra charge"], "Included", True),
    ("Included", ["Not included", "Extra charge"], "Not included", False),
    ("Included", ["Not included", "Extra charge"], "Breakfast is not included", False),
    ("Not included", ["Included", "Extra charge"], "Not included", True),
    ("Not included", ["Included", "Extra charge"], "It is not included.", True),
    ("Not available", ["Available", "On approval"], "Not available", True),
    ("None", ["100", "1000"], "None", True),
    ("None", ["100", "1000"], "None (not 100)", True),
    ("None", ["100", "1000"], "None, 100", False),
    ("from 14:00", ["from 15:00", "from 16:00"], "14:00", True),
    ("from 14:00", ["from 15:00", "from 16:00"], "From 14:00 or 15:00", False),
    ("English and Spanish", ["English only", "English and French"], "English and Spanish", True),
    ("English only", ["English and Spanish", "English and French"], "English and Spanish", False),
    ("Alpine", ["Alpine Ridge"], "Alpine Ridge", False),
    ("Alpine Ridge", ["Alpine"], "the Alpine Ridge", True),
    ("Alpine", [], "Alpine Ridge", False),                 # a longer name, even without confusers
    ("Cropped Cardigan", [], "Soft Oxford Cropped Cardigan Bold Poncho", False),  # names run together
    ("Cropped Cardigan", [], "CROPPED CARDIGAN BOLD PONCHO", False),
    ("Cropped Cardigan", [], "Definitely Cropped Cardigan", True),
    ("Cropped Cardigan", [], "IT IS THE CROPPED CARDIGAN", True),
    ("Yes", ["No", "Cover only"], "Yes", True),
    ("No", ["Yes", "Cover only"], "No, it is not washable", True),
    ("No", ["Yes", "Cover only"], "Yes", False),
])
def test_text_facts_with_tricky_neighbours(gold, confusers, answer, ok):
    check = answer_text(gold, confusers)
    assert (score(check, answer) == 1.0) is ok, detail(check, answer)


def test_a_negative_question_is_answered_with_its_own_words():
    check = answer_text("Bold Poncho", ["Soft Oxford"])
    assert score(check, "The Bold Poncho is not available.", "Which Jeans is not available?") == 1.0
    assert score(check, "The Bold Poncho is not available.", "Which Jeans is available?") == 0.0
    assert score(answer_count(1), "Only one.", "How many Jeans are in stock?") == 1.0


def test_a_name_the_question_states_is_context_but_a_list_is_not_an_answer():
    check = answer_text("Soft Oxford", ["Bold Poncho"])
    instruction = "Which is cheaper: the Soft Oxford or the Bold Poncho? Answer with its name."
    assert score(check, "The Soft Oxford is cheaper than the Bold Poncho.", instruction) == 1.0
    for bad in ["Soft Oxford or Bold Poncho", "Soft Oxford, Bold Poncho", instruction, "Bold Poncho"]:
        assert score(check, bad, instruction) == 0.0, bad


# "Which is cheaper: A or B?": the question names the gold beside the other option, so naming that
# option asserts it unless the answer denies it or ranks the gold above it in the question's words.
# Strict but fair: an answer that names the loser only to reject it passes when the rejection is one the
# check reads ("not B", "B is not", "cheaper than B"), and fails when it is a claim the check would have
# to understand ("B is dearer", "B costs more"): read the other way, the same words reward a wrong answer.
CHOICES = ["Which is cheaper: the Soft Oxford or the Bold Poncho?", "Bold Poncho or Soft Oxford: which one costs less?",
           "Between the Bold Poncho and the Soft Oxford, which has the lower price?",
           "I can't decide between the Bold Poncho and the Soft Oxford. Which is less expensive?"]


@pytest.mark.parametrize("instruction", CHOICES)
@pytest.mark.parametrize("answer,ok", [
    ("Soft Oxford", True), ("The Soft Oxford.", True), ("Soft Oxford, not Bold Poncho", True),
    ("Soft Oxford rather than Bold Poncho", True), ("The Soft Oxford, rather than the Bold Poncho.", True),
    ("The Soft Oxford instead of the Bold Poncho", True), ("Bold Poncho rather than Soft Oxford", False),
    ("The Bold Poncho instead of the Soft Oxford", False), ("Soft Oxford rather Bold Poncho", False),
    ("Not the Bold Poncho: the Soft Oxford.", True), ("The Soft Oxford. The Bold Poncho is not cheaper.", True),
    ("The Soft Oxford is cheaper than the Bold Poncho.", True), ("The Soft Oxford costs less than the Bold Poncho.", True),
    ("Soft Oxford or Bold Poncho", False), ("Bold Poncho or Soft Oxford", False), ("either Soft Oxford or Bold Poncho", False),
    ("Soft Oxford, Bold Poncho", False), ("Soft Oxford and Bold Poncho", False), ("Bold Poncho", False),
    ("The Bold Poncho is cheaper than the Soft Oxford.", False),  # wrong, though it names the gold
    ("The Soft Oxford is more expensive than the Bold Poncho.", False),  # wrong, in the gold-first order
    ("The Soft Oxford is not cheaper than the Bold Poncho.", False), ("The Soft Oxford is dearer than the Bold Poncho.", False),
    ("Soft Oxford (the Bold Poncho is dearer)", False), ("Soft Oxford; Bold Poncho costs more", False),
])
def test_a_choice_question_names_its_options_and_the_answer_must_pick_one(instruction, answer, ok):
    check = answer_text("Soft Oxford", ["Bold Poncho", "Calm Parka"])
    assert (score(check, answer, instruction) == 1.0) is ok, detail(check, answer, instruction)


@pytest.mark.parametrize("instruction", CHOICES)
def test_the_choice_question_echoed_is_no_answer(instruction):
    check = answer_text("Soft Oxford", ["Bold Poncho"])
    assert score(check, instruction, instruction) == 0.0, detail(check, instruction, instruction)
    assert score(check, f"{instruction} Soft Oxford", instruction) == 0.0  # the question, then the answer: it names both


def test_a_name_the_question_states_without_the_gold_is_still_context():
    """Only a question that names the gold beside a confuser offers a choice: "Which item is like the
    Bold Poncho?" answered "The Soft Oxford is like the Bold Poncho." asserts the Soft Oxford alone."""
    check = answer_text("Soft Oxford", ["Bold Poncho"])
    assert score(check, "The Soft Oxford is like the Bold Poncho.", "Which item is like the Bold Poncho?") == 1.0


# ---- set and regex modes ----------------------------------------------------------------------------

@pytest.mark.parametrize("answer,ok", [
    ("red, blue and green", True), ("Green; Blue; Red", True), ("The colours are red, blue and green.", True),
    ("red, blue", False), ("red, blue, green, yellow", False), ("red, blue, green and not purple", True),
    ("red, blue or green", True), ("red, blue, maybe green", False), ("not red, blue, green", False),
])
def test_a_set_answer_is_exactly_the_set(answer, ok):
    check = Check("answer_match", ["red", "blue", "green"], "set", confusers=["yellow", "purple"], confusers_from="data")
    assert (score(check, answer) == 1.0) is ok, detail(check, answer)


def test_a_set_without_confusers_still_rejects_extra_items():
    check = Check("answer_match", ["Soft Oxford", "Bold Poncho"], "set")
    assert score(check, "Soft Oxford and Bold Poncho") == 1.0
    assert score(check, "Soft Oxford, Bold Poncho, Cropped Cardigan") == 0.0


@pytest.mark.parametrize("answer,ok", [
    ("Order #A-1234 placed", True), ("Your order number is #A-1234.", True), ("Order placed", False),
    ("It is not #A-1234", False), ("#A-1234 or #A-9999", False), ("#A-1234, maybe", False),
    ("#A-1234 #A-5555", False), ("#A-1234 (confirmation #A-1234)", True),
])
def test_regex_must_match_with_no_confuser_or_negation(answer, ok):
    check = Check("answer_match", r"#A-\d{4}", "regex", confusers=["#A-9999"], confusers_from="page")
    assert (score(check, answer) == 1.0) is ok, detail(check, answer)


@pytest.mark.parametrize("answer,ok", [
    ("$12.50", True), ("It costs 12.50 dollars.", True), ("$12.50, $13.00, 12.05", False),
    ("$13.00 or $12.50", False), ("12.50 (was 14.00)", False),
])
def test_a_regex_without_confusers_reads_its_match_as_the_value(answer, ok):
    """An LLM-written or imported task often checks a price with a bare pattern and no confusers: a list of
    prices around the matching one is still a list, not an answer."""
    check = Check("answer_match", r"(?<![\d.,])12\.50(?!\d)", "regex")
    assert (score(check, answer) == 1.0) is ok, detail(check, answer)


@pytest.mark.parametrize("answer,ok", [
    ("Cropped Cardigan", True), ("The cheapest is the Cropped Cardigan.", True),
    ("Soft Oxford, Cropped Cardigan, Bold Poncho", False),
])
def test_a_name_regex_without_confusers_rejects_a_list_of_names(answer, ok):
    check = Check("answer_match", r"(?<![\w])Cropped Cardigan(?![\w])", "regex")
    assert (score(check, answer) == 1.0) is ok, detail(check, answer)


@pytest.mark.parametrize("answer", ["x", "7, 8 and 9", "Soft Oxford, Bold Poncho"])
def test_a_wildcard_regex_is_not_read_as_a_value(answer):
    """`.` (any answer, as test recipes use) matches one character, which is no gold of its own."""
    assert score(Check("answer_match", ".", "regex"), answer) == 1.0


def test_the_detail_says_where_the_confusers_came_from():
    assert "confusers: data" in detail(CARDIGAN, "Cropped Cardigan", JEANS)
    assert "confusers: none" in detail(answer_text("Cropped Cardigan"), "Cropped Cardigan", JEANS)
    page = Check("answer_match", "Cropped Cardigan", confusers=["Soft Oxford"], confusers_from="page")
    assert "confusers: page" in detail(page, "Soft Oxford, Cropped Cardigan", JEANS)


PAGE = "Jeans\nSoft Oxford\n¥17\nCropped Cardigan\n¥316\nBold Poncho\n¥342\nFree shipping over ¥5,000\nAdd to cart"


def test_confusers_harvested_from_a_recorded_page():
    from weblica.scoring.page_confusers import page_confusers

    names = page_confusers(PAGE, "Cropped Cardigan", "ja-JP")
    assert {"Soft Oxford", "Bold Poncho"} <= set(names) and "Add to cart" not in names
    assert page_confusers(PAGE, 316, "ja-JP")[:2] == [342.0, 17.0]  # nearest to the gold first
    assert page_confusers(PAGE, "Velvet Gown") == []                # the page does not show the gold
    check = Check("answer_match", "Cropped Cardigan", confusers=names, confusers_from="page")
    assert score(check, "The Cropped Cardigan jeans", JEANS) == 1.0  # 'Jeans' is the question's word
    assert score(check, "Cropped Cardigan (the Soft Oxford is dearer)", JEANS) == 0.0
    price = Check("answer_match", 316, "numeric", confusers=page_confusers(PAGE, 316, "ja-JP"), confusers_from="page",
                  locale="ja-JP")
    assert score(price, "¥316", "What does the Cropped Cardigan cost?") == 1.0
    assert "342 (a confuser)" in detail(price, "¥316 or ¥342", "What does the Cropped Cardigan cost?")


def test_check_fields_round_trip_and_are_written_only_when_set():
    task = Task(id="t", start_url="http://s.test/", instruction="q", checks=[YEN, answer_infeasible(), answer_text("x")])
    data = json.loads(json.dumps(task.to_dict()))
    assert data["checks"][0] == {"type": "answer_match", "expected": 316.0, "mode": "numeric", "confusers": [17.0, 62.0, 342.0],
                                 "confusers_from": "data", "locale": "ja-JP"}
    assert data["checks"][2] == {"type": "answer_match", "expected": "x"}
    assert Task.from_dict(data).checks == task.checks


# ---- refusals and the structured flag ---------------------------------------------------------------

KETTLE = "What is the price of the Quantum Kettle 3000? If the site does not offer it, say so."


def test_a_refusal_on_a_feasible_task_scores_zero():
    for answer in ["The site does not offer it.", "I couldn't find the price, but it is ¥316", "Not available"]:
        assert score(YEN, answer, "What does the most expensive Jeans cost?") == 0.0, answer


def test_the_infeasible_flag():
    assert score(answer_infeasible(), "", KETTLE, infeasible=True) == 1.0
    assert score(answer_infeasible(), "No Quantum Kettle 3000 on this site.", KETTLE, infeasible=True) == 1.0
    assert score(answer_infeasible(), "¥300", KETTLE, infeasible=True) == 0.0
    assert score(answer_infeasible(), "Probably the Bold Poncho", KETTLE, infeasible=True) == 0.0
    assert score(YEN, "¥316", "What does it cost?", infeasible=True) == 0.0
    assert "infeasible: true" in detail(YEN, "¥316", "What does it cost?", infeasible=True)


def test_the_done_tool_carries_the_flag():
    assert make_action({"name": "done", "arguments": {"answer": "no", "infeasible": True}}).args == \
        {"answer": "no", "infeasible": True}
    assert make_action({"name": "done", "arguments": {"answer": "x", "infeasible": "false"}}).args == {"answer": "x"}
    assert make_action({"name": "done", "arguments": {"answer": "x"}}).args == {"answer": "x"}
    with pytest.raises(ActionError, match="infeasible"):
        make_action({"name": "done", "arguments": {"answer": "x", "infeasible": [1]}})


def test_the_tool_schema_documents_the_flag():
    from weblica.policy.context import system_prompt
    from weblica.policy.coords import CoordinateFrame

    prompt = system_prompt(CoordinateFrame.for_convention("viewport"))
    assert '"infeasible": "boolean"' in prompt and "infeasible: true only when the task cannot be done" in prompt
    assert "not a list of candidates" in prompt


# ---- limits: nothing a task file or an answer holds can hang a check ----------------------------------

@pytest.mark.parametrize("pattern", [r"(a+)+$", r"(a|aa)+$", r"^(a|a?)+$", r"^(\w+\s?)*$"])
def test_catastrophic_patterns_fail_fast_with_a_reason(pattern):
    task = Task(id="t", start_url="http://s.test/", instruction="q",
                checks=[Check("answer_match", pattern, "regex"), Check("url_match", pattern, "regex"),
                        Check("state_match", pattern, "regex", path="name")])
    evil = "a" * 40 + "!"
    started = time.process_time()   # CPU time: a loaded machine stretches the wall clock, not the work
    reward, results = evaluate_checks(task, evil, evil, {"name": evil})
    assert time.process_time() - started < 1.0 * len(results)
    assert reward == 0.0 and not any(r.passed for r in results)
    for r in results:
        assert "limit" in r.detail or "does not match" in r.detail or "does not" in r.detail, r.detail


def test_a_pattern_that_runs_past_its_limit_says_so():
    task = Task(id="t", start_url="http://s.test/", instruction="q", checks=[Check("answer_match", r"(a|aa)+$", "regex")])
    # CPU seconds of this thread (the search runs in it), not wall time: a loaded machine or a second
    # xdist worker stretches the wall clock, while an uncut search costs far more (a 3 s limit still runs out)
    started = time.thread_time()
    _, results = evaluate_checks(task, "a" * 40 + "!", "", None)
    assert time.thread_time() - started < 1.0
    assert "ran past its 0.1 s limit" in results[0].detail


def test_a_bad_pattern_fails_with_a_reason():
    _, results = evaluate_checks(Task(id="t", start_url="u", instruction="q", checks=[Check("answer_match", "(", "regex")]),
                                 "x", "", None)
    assert not results[0].passed and "does not compile" in results[0].detail


@pytest.mark.parametrize("field,value", [("confusers", "Bold Poncho"), ("locale", 5), ("unit", ["x"]), ("tol", "x"),
                                         ("tol", float("nan")), ("mode", 3)])
def test_a_malformed_check_fails_with_a_reason(field, value):
    check = answer_text("Cropped Cardigan")
    setattr(check, field, value)
    result = run_check(check, "Cropped Cardigan", "", None)
    assert not result.passed and "malformed" in result.detail and field in result.detail


def test_many_confusers_stay_quick():
    check = answer_text("Cropped Cardigan", [f"Item {i} Model" for i in range(20000)])
    started = time.thread_time()   # CPU time of this thread: load stretches the wall clock, not the work
    assert score(check, "It is the Cropped Cardigan, not Item 17 Model.", JEANS) == 1.0
    assert time.thread_time() - started < 5.0


def test_answers_are_capped():
    started = time.thread_time()   # CPU time, as above
    long = "Cropped Cardigan " * 200
    assert score(CARDIGAN, long, JEANS) == 0.0
    assert "over the 2000 limit" in detail(CARDIGAN, long, JEANS)
    assert time.thread_time() - started < 1.0
    worst = ("1, 2, " * 400)[:MAX_ANSWER_CHARS]  # the longest answer that is read: still quick
    started = time.thread_time()
    assert score(answer_count(1), worst) == 0.0
    assert time.thread_time() - started < 1.0


def test_weblica_run_finishes_a_catastrophic_pattern_task_and_says_why(site, tmp_path):
    """Issue 17: a task file whose check is `(a|aa)+$`, played by the oracle answering 40 a's and '!', is
    scored (0, with the reason) instead of hanging the run; an infeasible task gets the structured flag."""
    import subprocess
    import sys

    from weblica.env.task import save_tasks

    evil = "a" * 40 + "!"
    tasks = [Task.from_dict({"id": "redos", "start_url": site.url + "/", "instruction": "Say it.", "max_steps": 2,
                             "checks": [{"type": "answer_match", "expected": r"(a|aa)+$", "mode": "regex"}],
                             "oracle": [{"name": "done", "arguments": {"answer": evil}}]}),
             Task.from_dict({"id": "no-such", "start_url": site.url + "/", "instruction": "Buy the Quantum Kettle.",
                             "max_steps": 2, "checks": [answer_infeasible().to_dict()],
                             "oracle": [{"name": "done", "arguments": {"answer": "", "infeasible": True}}]})]
    save_tasks(tasks, tmp_path / "tasks.jsonl")
    out = tmp_path / "run"
    started = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "weblica.cli", "run", "--tasks", str(tmp_path / "tasks.jsonl"),
                           "--policy", "oracle", "--out", str(out), "--json"], capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stderr
    episodes = {e["task_id"]: e for e in map(json.loads, (out / "episodes.jsonl").read_text().splitlines())}
    redos, flagged = episodes["redos"], episodes["no-such"]
    assert redos["termination_reason"] == "done" and redos["reward"] == 0.0
    assert "ran past its 0.1 s limit" in redos["check_results"][0]["detail"]
    assert flagged["reward"] == 1.0 and "infeasible: true" in flagged["check_results"][0]["detail"]
    assert time.monotonic() - started < 120


def test_every_format_a_synth_site_renders_is_accepted_for_its_locale():
    """What `site.money` and `site.date` print for each locale of synth/styles.yaml passes that locale's
    checks, a neighbouring value does not, and the day-month names of its calendar read as dates."""
    from weblica.synth.site import format_date, format_money
    from weblica.synth.spec import style_space

    locales = style_space()["locales"]
    assert set(locales) >= {"en-US", "en-GB", "de-DE", "fr-FR", "ja-JP"}
    for locale, fmt in locales.items():
        decimals = int(fmt["decimals"])
        for value in (7, 316, 1234.5, 98765.25, 1000000):
            value = round(value, decimals)
            shown = format_money(value, fmt)
            check = answer_number(value, decimals, locale=locale)
            assert score(check, shown) == 1.0, (locale, shown, detail(check, shown))
            assert score(check, f"It costs {shown}.") == 1.0, (locale, shown)
            other = format_money(round(value + 10 ** -decimals * 3, decimals), fmt)
            assert score(check, other) == 0.0, (locale, other)
        for iso in ("2026-06-07", "2026-12-31", "2026-01-02"):
            shown = format_date(iso, fmt)
            assert score(answer_date(iso, locale=locale), shown) == 1.0, (locale, shown)
            y, m, d = map(int, iso.split("-"))
            month = fmt["month_names"][m - 1]
            if not month[0].isdigit():  # ja-JP names months "6月": its dates are numeric
                assert score(answer_date(iso, locale=locale), f"{d} {month} {y}") == 1.0, (locale, month)


def test_a_gold_that_starts_with_a_negation_word_does_not_deny_the_confuser_after_it():
    # "Non-refundable" is the gold; its "non" must not read as denying the confuser the answer adds
    check = Check(type="answer_match", expected="Non-refundable",
                  confusers=["Free cancellation up to 2 days before check-in"])
    asked = "What is the cancellation policy of the Deluxe room?"
    assert score(check, "Non-refundable", asked) == 1.0
    assert score(check, "Non-refundable or free cancellation up to 2 days before check-in", asked) == 0.0
    assert score(check, "Free cancellation up to 2 days before check-in, Non-refundable", asked) == 0.0
    assert score(check, "Non-refundable, not free cancellation up to 2 days before check-in", asked) == 1.0


# ---- a label before the gold ("Author: ...") is no candidate, and cannot hide one -----------------------

AUTHOR = answer_text("Anna Berg", [])  # no confusers: only the shape check stands between a list and 1.0


@pytest.mark.parametrize("answer,expected", [
    ("Author: Anna Berg", 1.0), ("Answer: Anna Berg", 1.0), ("Written by: Anna Berg", 1.0),
    ("Writer: Anna Berg", 1.0),                    # "writer" is a question word here
    ("Sara Ek: Anna Berg", 0.0), ("Author: Sara Ek, Anna Berg", 0.0), ("Anna Berg: Sara Ek", 0.0),
    ("Anna Berg, I think", 0.0), ("I believe it is Anna Berg", 0.0),
])
def test_a_label_before_the_gold_is_not_a_candidate(answer, expected):
    assert score(AUTHOR, answer, "Which writer wrote the article?") == expected, answer
