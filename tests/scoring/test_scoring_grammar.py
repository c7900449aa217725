"""Answer checks that accept only "the gold, said plainly" (issue 37): every row of the issue's two
tables, a property test over random golds, second values, carriers and languages, and the paraphrases
a person writes. The attacks here name values no confuser list holds: the grammar (an allow-list,
weblica.scoring.grammar) must reject them on its own."""
from __future__ import annotations

import random

import pytest

from weblica.env.task import Check, Task
from weblica.scoring.checks import evaluate_checks
from weblica.scoring.attacks import (APPROXIMATIONS, DOUBTS, FOREIGN_HEDGES, OPEN_LISTS, QUESTIONS, attack_answers, cjk,
                                     paraphrases, roman, with_homoglyphs, with_joiners)
from weblica.scoring.vocabulary import PLAIN_WORDS
from weblica.synth.checks import answer_count, answer_date, answer_infeasible, answer_number, answer_text


def score(check: Check, answer: str, instruction: str, **kw) -> float:
    task = Task(id="t", start_url="http://s.test/", instruction=instruction, checks=[check])
    return evaluate_checks(task, answer, "http://s.test/", None, **kw)[0]


def detail(check: Check, answer: str, instruction: str) -> str:
    task = Task(id="t", start_url="http://s.test/", instruction=instruction, checks=[check])
    return evaluate_checks(task, answer, "http://s.test/", None)[1][0].detail


WHO = "Who is the assignee of the ticket 'Broken login'?"
JACKET = "Which jacket is the cheapest?"
PRICE = "What does the cheapest jacket cost?"
ROUTES = "How many night bus routes are there?"
FOUNDED = "In which year was the museum founded?"
CONCERT = "On which date is the harbour concert?"
HOUSING = "Which premium housing benefit can I apply for? If the site does not offer it, say so."

# one check of each gold shape; the lists of confusers are empty or hold other values than the attacks use
GOLDS = {
    "name": (answer_text("Soft Jacket", ["Warm Coat"]), "Soft Jacket", JACKET),
    "person": (answer_text("Grace Nakamura", []), "Grace Nakamura", WHO),
    "price": (answer_number(162.95, 2, [170.0], locale="en-US"), "$162.95", PRICE),
    "euro": (answer_number(394.25, 2, [], locale="de-DE"), "394,25 €", PRICE),
    "count": (answer_count(17), "17", ROUTES),
    "year": (answer_count(1955), "1955", FOUNDED),
    "date": (answer_date("2026-06-07", locale="en-US"), "June 7, 2026", CONCERT),
}


# ---- the first table: what passed and must not -----------------------------------------------------

@pytest.mark.parametrize("confusers", [[], ["Vera Petrov"]], ids=["unlisted", "listed-other"])
@pytest.mark.parametrize("answer", ["It is Grace Nakamura. It is Hiro Eriksen.", "It is Hiro Eriksen. It is Grace Nakamura."])
def test_two_assertions_with_a_value_no_list_holds_fail(answer, confusers):
    assert score(answer_text("Grace Nakamura", confusers), answer, WHO) == 0.0


def test_the_gold_or_another_tasks_answer_fails():
    assert score(GOLDS["name"][0], "Soft Jacket or 394,25 €", JACKET) == 0.0
    assert score(GOLDS["euro"][0], "394,25 € or Soft Jacket", PRICE) == 0.0


@pytest.mark.parametrize("shape", sorted(GOLDS))
@pytest.mark.parametrize("form", ["{} and others", "{} and more", "{}, etc.", "I doubt it is {}", "Could it be {}?",
                                  "{} (?)", "Anything but {}", "{} is ruled out", "Vielleicht {}", "Nicht {}", "可能是 {}",
                                  "不是 {}", "approximately {}", "~{}", "≈{}", "roughly {}"])
def test_open_lists_doubts_questions_foreign_hedges_and_approximations_fail(shape, form):
    check, gold, question = GOLDS[shape]
    answer = form.format(gold)
    assert score(check, answer, question) == 0.0, detail(check, answer, question)


@pytest.mark.parametrize("answer", ["minus $162.95", "negative $162.95", "-$162.95", "- $162.95", "−$162.95"])
def test_a_negative_amount_is_not_the_amount(answer):
    assert score(GOLDS["price"][0], answer, PRICE) == 0.0


def test_a_confuser_behind_zero_width_joiners_is_the_confuser():
    check = answer_text("Hiro Eriksen", ["Vera Petrov"])
    assert score(check, "Hiro Eriksen, V\u200de\u200dr\u200da P\u200de\u200dt\u200dr\u200do\u200dv", WHO) == 0.0
    assert score(answer_text("Hiro Eriksen", []), f"Hiro Eriksen, {with_joiners('Vera Petrov')}", WHO) == 0.0


@pytest.mark.parametrize("confusers", [[], [14]], ids=["unlisted", "listed"])
def test_a_homoglyph_number_is_a_number(confusers):
    assert score(answer_count(4, confusers), "4 or l4", "How many stops are there?") == 0.0
    assert score(answer_count(4, confusers), "4, l4", "How many stops are there?") == 0.0
    assert score(answer_number(592.45, 2, [], locale="en-US"), "$592.45 or $ll8.49", PRICE) == 0.0
    assert score(answer_number(592.45, 2, [], locale="en-US"), "$592.45, $ll8.49", PRICE) == 0.0
    # a Cyrillic look-alike of a confuser is the confuser
    assert score(answer_text("Hiro Eriksen", ["Vera Petrov"]), f"Hiro Eriksen, {with_homoglyphs('Vera Petrov')}", WHO) == 0.0


@pytest.mark.parametrize("answer", ["$162.95 or CCXXXII", "$162.95, CCXXXII", "$162.95 (XLIX)"])
def test_another_value_in_roman_numerals_fails(answer):
    assert score(GOLDS["price"][0], answer, PRICE) == 0.0


@pytest.mark.parametrize("answer", ["4（或二）", "4 (二)", "4, 十五"])
def test_another_value_in_cjk_numerals_fails(answer):
    assert score(answer_count(4), answer, "How many stops are there?") == 0.0


def test_scientific_notation_is_not_the_year():
    assert score(GOLDS["year"][0], "1.955e3", FOUNDED) == 0.0
    assert score(GOLDS["year"][0], "1955", FOUNDED) == 1.0


@pytest.mark.parametrize("answer", ["Not listed. Go with standard housing benefit.", "It is not listed. Similar: XLIX.",
                                    "Not offered; try the family benefit.", "Not listed, maybe 300."])
def test_a_refusal_that_offers_an_alternative_fails(answer):
    assert score(answer_infeasible(), answer, HOUSING) == 0.0


def test_a_byline_task_with_two_assertions_fails():
    check = answer_text("Anna Berg", ["Sara Ek"])
    assert score(check, "It is Olle Lind. It is Anna Berg.", "Who wrote the article 'Harbour lights'?") == 0.0


# ---- the second table: what a person would accept ------------------------------------------------------

@pytest.mark.parametrize("answer", ["I searched but nothing came up.", "Nothing by that name exists on the site."])
def test_plain_refusals_pass_an_infeasible_task(answer):
    assert score(answer_infeasible(), answer, HOUSING) == 1.0


def test_a_feasible_answer_with_a_remark_is_the_answer():
    assert score(GOLDS["name"][0], "Soft Jacket; I could not find a better one.", JACKET) == 1.0


@pytest.mark.parametrize("answer", ["162 dollars and 95 cents", "$162 and 95 cents", "162 dollars 95 cents",
                                    "one hundred sixty-two dollars and ninety-five cents"])
def test_dollars_and_cents(answer):
    assert score(GOLDS["price"][0], answer, PRICE) == 1.0, detail(GOLDS["price"][0], answer, PRICE)


@pytest.mark.parametrize("unit", [None, "routes"])
def test_the_questions_own_noun_is_not_a_unit(unit):
    assert score(answer_count(17, unit=unit), "17 night bus routes", ROUTES) == 1.0
    assert score(answer_count(17, unit=unit), "17 nights", ROUTES) == (0.0 if unit else 1.0)


@pytest.mark.parametrize("answer", ["Not eligible is ruled out", "Not eligible, I doubt it", "Non-refundable? Doubtful",
                                    "Not eligible or maybe eligible"])
def test_a_gold_that_starts_with_a_denial_lends_its_not_to_nothing_after_it(answer):
    check = answer_text("Not eligible", ["Eligible"])
    assert score(check, answer, "Are you eligible for the permit?") == 0.0, detail(check, answer, "Are you eligible?")
    assert score(check, "Not eligible", "Are you eligible for the permit?") == 1.0


# ---- what people write keeps passing ---------------------------------------------------------------------

@pytest.mark.parametrize("shape", sorted(GOLDS))
def test_every_paraphrase_of_the_gold_passes(shape):
    check, gold, question = GOLDS[shape]
    kind = {"person": "name", "price": "number", "euro": "number", "year": "count"}.get(shape, shape)
    for carrier, answer in paraphrases(gold, kind):
        assert score(check, answer, question) == 1.0, (carrier, detail(check, answer, question))


@pytest.mark.parametrize("answer", ["The cheapest jacket is Soft Jacket.", "The cheapest one is the Soft Jacket.",
                                    "Soft Jacket is the cheapest jacket.", "The jacket that is cheapest is Soft Jacket.",
                                    "Definitely the Soft Jacket."])
def test_the_question_restated_around_the_gold_passes(answer):
    assert score(GOLDS["name"][0], answer, JACKET) == 1.0, detail(GOLDS["name"][0], answer, JACKET)


@pytest.mark.parametrize("answer", ["Der Preis ist 394,25 €.", "Es kostet 394,25 €.", "Le prix est 394,25 €.",
                                    "El precio es 394,25 €."])
def test_carriers_of_the_sites_languages_pass(answer):
    assert score(GOLDS["euro"][0], answer, PRICE) == 1.0, detail(GOLDS["euro"][0], answer, PRICE)


@pytest.mark.parametrize("locale,answer,value", [
    ("de-CH", "CHF 1'234.50", 1234.5), ("de-DE", "1.234,50 €", 1234.5), ("fr-FR", "1 234,50 €", 1234.5),
    ("es-ES", "1.234,50 €", 1234.5), ("pt-BR", "R$ 1.234,50", 1234.5), ("en-US", "$1,234.50", 1234.5)])
def test_every_locales_notation_comes_from_its_cldr_data(locale, answer, value):
    assert score(answer_number(value, 2, [], locale=locale), answer, PRICE) == 1.0


@pytest.mark.parametrize("answer", ["7 de junio de 2026", "7 giugno 2026", "7. Juni 2026", "7 juin 2026", "7 juni 2026",
                                    "2026年6月7日", "7 de junho de 2026"])
def test_dates_in_the_sites_languages(answer):
    assert score(answer_date("2026-06-07"), answer, CONCERT) == 1.0, detail(answer_date("2026-06-07"), answer, CONCERT)
    assert score(answer_date("2026-06-08"), answer, CONCERT) == 0.0


# ---- the grammar is an allow-list --------------------------------------------------------------------

def test_no_hedge_approximation_or_alternative_is_a_plain_word():
    never = set("maybe perhaps probably possibly likely guess think believe doubt suppose roughly approximately "
                "approx circa nearly almost around or either nor etc others would should might may must "
                "vielleicht wahrscheinlich oder peut etre quizas tal vez".split())
    assert not never & PLAIN_WORDS, never & PLAIN_WORDS


@pytest.mark.parametrize("word", ["Vermutlich", "Apparemment", "Quizá", "Possiblement", "Forse", "Talvez", "Misschien",
                                  "Kanske", "Być może", "Наверное", "아마", "おそらく", "也许"])
def test_a_hedge_no_list_holds_still_fails(word):
    """Hedges in languages no one listed: the grammar cannot read them, and an answer it cannot read fails."""
    for shape in ("name", "price", "count", "date"):
        check, gold, question = GOLDS[shape]
        assert score(check, f"{word} {gold}", question) == 0.0, (word, shape)


# ---- property: no answer naming a second value of the gold's shape passes -------------------------------

def _other_of_shape(shape: str, rng: random.Random) -> str:
    if shape in ("name", "person"):
        first = rng.choice(["Hiro", "Vera", "Olle", "Amara", "Tomás", "Li", "Noor", "Kai"])
        return f"{first} {rng.choice(['Eriksen', 'Petrov', 'Lind', 'Okafor', 'Ruiz', 'Tanaka', 'Berg'])}"
    if shape in ("price", "euro"):
        value = rng.randint(1, 99999) / 100
        return f"${value:.2f}" if shape == "price" else f"{value:.2f}".replace(".", ",") + " €"
    if shape in ("count", "year"):
        return str(rng.choice([rng.randint(0, 16), rng.randint(18, 99), rng.randint(1900, 1954), rng.randint(1956, 2030)]))
    day = rng.choice([d for d in range(1, 29) if d != 7])
    return f"June {day}, 2026"


def _disguised(value: str, rng: random.Random) -> str:
    digits = "".join(c for c in value if c.isdigit())
    options = [value, with_joiners(value), with_homoglyphs(value)]
    if digits and 0 < int(digits[:4]) < 4000 and "," not in value:  # a number, not a date
        options += [roman(int(digits[:4])), cjk(int(digits[:4]))]
    return rng.choice(options)


CARRIERS = ["{}", "It is {}.", "The answer is {}.", "Answer: {}", "It costs {}.", "Es ist {}.", "C'est {}.", "Es {}.",
            "答案是{}。", "{}!", "\"{}\""]
# the foreign hedges that assert the value they hedge (the denials among them, "Nicht X", deny a second
# value as "not X" does, which leaves the gold the one value asserted)
ASSERTING_HEDGES = [f for f in FOREIGN_HEDGES if f.split()[0] not in ("Nicht", "Pas", "No", "不是")]
JOINS = ["{a} {b}", "{a}, {b}", "{a}; {b}", "{a}\n{b}", "{a} / {b}", "{a} ({b})", "{a} and {b}", "{a} or {b}",
         "{b} {a}", "{b}. {a}", "{a} - {b}"]


@pytest.mark.parametrize("shape", sorted(GOLDS))
def test_no_answer_naming_a_second_value_of_the_golds_shape_passes(shape):
    check, gold, question = GOLDS[shape]
    rng = random.Random(f"property\0{shape}")
    passed = []
    for _ in range(400):
        other = _disguised(_other_of_shape(shape, rng), rng)
        a = rng.choice(CARRIERS).format(gold)
        b = rng.choice(CARRIERS + ASSERTING_HEDGES + list(APPROXIMATIONS)).format(other)
        answer = rng.choice(JOINS).format(a=a, b=b)
        if score(check, answer, question):
            passed.append(answer)
    assert passed == [], passed[:5]


@pytest.mark.parametrize("shape", sorted(GOLDS))
def test_every_attack_phrasing_fails(shape):
    check, gold, question = GOLDS[shape]
    rng = random.Random(f"attacks\0{shape}")
    for _ in range(20):
        others = [_other_of_shape(shape, rng)]
        for kind, label, answer in attack_answers(gold, others, rng, another_answer="Warm Coat"):
            assert score(check, answer, question) == 0.0, (kind, answer, detail(check, answer, question))
    for forms in (FOREIGN_HEDGES, APPROXIMATIONS, OPEN_LISTS, QUESTIONS, DOUBTS):
        for form in forms:
            assert score(check, form.format(gold), question) == 0.0, form
