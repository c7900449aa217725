"""Attacks on the answer checks (weblica/scoring/answer.py): a label before the gold
("Author: Anna Berg") is no candidate, and "I think" / "I believe" hedge. A reward-maximizing policy
would stuff labels with candidates, chain them, use a confuser's name as the label, or list every
candidate behind one label; where the question names the candidates itself, no single answer may win
whichever of them is the gold.

And on how they read a question (weblica/scoring/answer.py, context.py, assertion.py):
the options a question names compete with the gold; "A", "A, not B", "A rather than B" pass and "A or B"
fails. A reward-maximizing policy tries hedges that keep the other option open ("A if not B", "A, or
the other one"), negated comparisons ("A is never cheaper than B", which says B is the cheaper), double
negations that name the gold second, near-duplicate names, labels stuffed with options and invisible
or look-alike characters. The rule a strict but fair check keeps: no fixed answer scores for two
different golds, a hedge scores for none, and a statement scores only for the option it asserts."""
from __future__ import annotations
import pytest
from test_answer_checks import score
from weblica.synth.checks import answer_number, answer_text
from weblica.scoring import context as answer_context
from weblica.scoring import assertion

WHO = "Which writer wrote the article?"
GAMES = [
    "Author: Anna Berg, Sara Ek", "Author: Anna Berg, Sara Ek, Olle Lind", "Name: Anna Berg; Name: Sara Ek",
    "Author: Anna Berg. Author: Sara Ek", "Author: Anna Berg / Sara Ek", "Author: Anna Berg or Sara Ek",
    "Authors: Sara Ek: Anna Berg", "Written by Sara Ek: Anna Berg", "Name: Sara Ek\nAnswer: Anna Berg",
    "Sara Ek\nAnswer: Anna Berg", "Sara Ek - Answer: Anna Berg", "Sara Ek. Answer: Anna Berg",
    "Sara Ek (Author: Anna Berg)", "Answer: Anna Berg\nAuthor: Sara Ek", "writer: Anna Berg, article: Sara Ek",
    "Article: Sara Ek, writer: Anna Berg", "Sara Ek, Olle Lind, Answer: Anna Berg", "Ek: Anna Berg", "Berg: Anna Berg",
    "Anna: Anna Berg", "Anna Berg, I think", "I believe it is Anna Berg", "Answer: Anna Berg (I think)",
    "Title: Anna Berg, Sara Ek", "Best match: Sara Ek: Anna Berg", "Title: Sara Ek. Best match: Anna Berg",
    "Best match: Anna Berg / Sara Ek", "Sara Ek\nTitle: Anna Berg", "Best match: Anna Berg, I think",
]


@pytest.mark.parametrize("confusers", [[], ["Sara Ek", "Olle Lind"]], ids=["no-confusers", "confusers"])
@pytest.mark.parametrize("answer", GAMES)
def test_a_label_hides_no_candidate_and_a_hedge_stays_a_hedge(answer, confusers):
    assert score(answer_text("Anna Berg", confusers), answer, WHO) == 0.0


@pytest.mark.parametrize("answer", ["Author: Anna Berg", "Answer:Anna Berg", "Answer : Anna Berg", "The author: Anna Berg",
                                    "Writer: Anna Berg", "Not Sara Ek. Author: Anna Berg"])
def test_a_plain_label_still_passes(answer):
    assert score(answer_text("Anna Berg", ["Sara Ek", "Olle Lind"]), answer, WHO) == 1.0


@pytest.mark.parametrize("answer", [
    "Sara Ek: Anna Berg", "Anna Berg: Sara Ek", "Sara Ek: Anna Berg: Sara Ek", "Anna Berg: Sara Ek: Anna Berg",
    "Sara Ek:Anna Berg:Sara Ek", "Sara Ek: Anna Berg; Anna Berg: Sara Ek", "Sara Ek: Anna Berg, Anna Berg: Sara Ek",
    "Sara Ek or Anna Berg: Anna Berg", "Sara Ek or Anna Berg: Sara Ek", "Anna Berg / Sara Ek: Sara Ek",
    "Sara Ek: Anna Berg\nAnna Berg: Sara Ek"])
def test_where_the_question_names_both_no_answer_wins_for_either_gold(answer):
    # the question's own words may be a label ("Sara Ek: ..."), but then the gold must follow it: one
    # fixed answer cannot be right whichever of the two is the gold
    asked = "Who wrote it, Sara Ek or Anna Berg?"
    won = [score(answer_text(gold, [other]), answer, asked) for gold, other in
           (("Anna Berg", "Sara Ek"), ("Sara Ek", "Anna Berg"))]
    assert sum(won) <= 1.0, (answer, won)


@pytest.mark.parametrize("answer,expected", [
    ("Price: 316", 1.0), ("Total: 316", 1.0), ("Answer: 316", 1.0), ("Price: 316, Total: 342", 0.0),
    ("Price 342: 316", 0.0), ("342: 316", 0.0), ("Answer: 316 (I think)", 0.0)])
def test_a_label_before_a_number_hides_no_other_number(answer, expected):
    assert score(answer_number(316, 0, [342]), answer, "How much is the cheapest one?") == expected


def test_a_hedge_word_inside_the_gold_is_no_hedge():
    book = answer_text("I Think Therefore I Am", ["The Art of War"])
    assert score(book, "I Think Therefore I Am", "Which book is the cheapest?") == 1.0
    assert score(book, "I think it's I Think Therefore I Am", "Which book is the cheapest?") == 0.0


def test_a_hedge_made_of_the_gold_s_own_word_still_hedges():
    song = "Which song is the longest?"
    believe, maybe = answer_text("Believe", ["Hope"]), answer_text("Maybe", ["Sure"])
    for hedged in ("I believe it is Believe", "I believe: Believe", "Believe, I believe", "I believe Believe"):
        assert score(believe, hedged, song) == 0.0, hedged
    for hedged in ("Maybe it is Maybe", "Maybe Maybe", "It is Maybe, maybe", "Maybe. Maybe."):
        assert score(maybe, hedged, song) == 0.0, hedged
    for plain in ("Believe", "It is Believe.", "The longest one is Believe."):
        assert score(believe, plain, song) == 1.0, plain
    for plain in ("Maybe", "maybe", "It is Maybe.", "Answer: Maybe"):
        assert score(maybe, plain, song) == 1.0, plain
    # a gold holding a hedge phrase, said once, is the gold; a second hedge beside it is still one
    book = answer_text("I Think Therefore I Am", ["The Art of War"])
    assert score(book, "Probably I Think Therefore I Am", "Which book is the cheapest?") == 0.0


def test_common_answer_labels_are_labels():
    shirt = answer_text("Soft Oxford", ["Bold Poncho", "Cropped Cardigan"])
    for answer in ("Title: Soft Oxford", "Best match: Soft Oxford", "title:Soft Oxford", "The best match: Soft Oxford"):
        assert score(shirt, answer, "Which shirt is the cheapest?") == 1.0, answer
    # the new label words hide no candidate: a confuser as the label, chained labels, a label holding
    # candidates, or a label word beside a name still fail
    for answer in ("Bold Poncho: Soft Oxford", "Title: Bold Poncho: Soft Oxford", "Best match: Bold Poncho, Soft Oxford",
                   "Title: Soft Oxford, Best match: Bold Poncho", "Best Poncho: Soft Oxford", "Title Cropped: Soft Oxford",
                   "Best match: Soft Oxford or Bold Poncho", "Title: Soft Oxford (best match: Cropped Cardigan)",
                   "Best match: Soft Oxford, title: Sweet Gown", "Soft Oxford, Sweet Gown, Best match: Soft Oxford"):
        assert score(shirt, answer, "Which shirt is the cheapest?") == 0.0, answer


def test_no_chain_of_labels_wins_for_both_of_two_nested_names():
    # one name inside the other's words ("Oslo Hotel", "Oslo Palace Hotel"), both named by the question:
    # every chain of them joined by colons, up to four long, wins for one gold at most
    import itertools

    short, long = "Oslo Hotel", "Oslo Palace Hotel"
    asked = f"Which is cheaper, the {short} or the {long}?"
    answers = {sep.join(combo) for n in (2, 3, 4) for combo in itertools.product((short, long), repeat=n)
               for sep in (": ", ":", " : ")}
    for answer in sorted(answers):
        won = score(answer_text(short, [long]), answer, asked) + score(answer_text(long, [short]), answer, asked)
        assert won <= 1.0, answer


def test_a_quoted_title_is_the_answer_and_quotes_hide_no_candidate():
    # session 11's read-through: 'The longest song is "Believe".' scored 0 (the quote split the sentence
    # into a list, so "longest song is" read as a candidate); quoting the gold is how people write titles
    song = "Which song is the longest?"
    for believe in (answer_text("Believe", ["Hope"]), answer_text("Believe", [])):
        for plain in ('The longest song is "Believe".', '"Believe"', 'It is "Believe", not "Hope".',
                      'Song: "Believe"', 'the song "Believe"', 'Answer: "Believe"'):
            assert score(believe, plain, song) == 1.0, plain
        # a hedge stays a hedge, and quotes do not let a second title through
        for hedged in ('I believe it is "Believe".', 'The longest song is "Believe" (I think).', 'Hope "Believe"',
                       '"Hope" "Believe"', '"Believe" "Hope"', '"Believe", "Hope"', '"Believe" or "Hope"',
                       'Hope: "Believe"', 'The Hope "Believe"', '"Believe Hope"', 'It is "Hope", not "Believe".',
                       # a quote hid a denial before (these passed): 'not "Believe"' denies as 'not Believe' does
                       'It is not "Believe".', 'Not "Believe"', '"Believe"? No.', '"Believe" is not it'):
            assert score(believe, hedged, song) == 0.0, hedged


# ---- how a question is read ------------------------------------------------------------
A, B, C = "Apex Laptop", "Nimbus Laptop", "Polar Laptop"
TWO = f"Which is cheaper: the {A} or the {B}?"
THREE = f"Which is cheapest: the {A}, the {B} or the {C}?"
COSTS = f"Which costs less: the {A} or the {B}?"


def _scores(answer: str, question: str, options: list[str]) -> list[float]:
    """The answer's score with each option as the gold (the others its confusers)."""
    return [score(answer_text(gold, [o for o in options if o != gold]), answer, question) for gold in options]


# ---- no fixed answer wins for two golds; hedges win for none ---------------------------------------------

HEDGES = [f"{A} or {B}", f"{A}? {B}?", f"{A}/{B}", f"{A} (or maybe {B})", f"{A} (or {B})", f"{A}, {B}",
          f"{A} if not {B}", f"{A}, or the other one", f"{A} or the other", f"{A} (if not the other)",
          f"{A}, not {B}, or {B}", f"{A} and {B}", f"{A} vs {B}", f"{A} - {B}", f"{A} (50%) {B} (50%)",
          f"{A}, unless it's {B}", f"{A}; else {B}", f"{A}... no wait, {B}", f"not {B}", f"neither {B}",
          f"Not the {B}", f"Neither {A} nor {B}", f"Not {A}, not {B}"]


@pytest.mark.parametrize("answer", HEDGES)
def test_a_hedge_between_the_options_scores_for_no_gold(answer):
    assert _scores(answer, TWO, [A, B]) == [0.0, 0.0]


@pytest.mark.parametrize("answer", [f"{A} if not {B}", f"{A}, or the other one", f"{A} (if not the other)"])
def test_keeping_the_other_option_open_was_a_pass_and_is_a_hedge(answer):
    # these scored 1 for the lucky gold before: "if not" and "or the other" are hedges now
    assert score(answer_text(A, [B]), answer, TWO) == 0.0
    assert assertion.hedge(answer) is not None


def test_a_hedge_of_numbers_is_a_hedge_too():
    price = answer_number(316, 0, [342])
    for hedged in ("316 if not 342", "316, or the other one", "316 (if not more)"):
        assert score(price, hedged, "How much is the cheapest one?") == 0.0, hedged
    assert score(price, "316", "How much is the cheapest one?") == 1.0


ASSERTIONS = [A, f"{A}, not {B}", f"{A} rather than {B}", f"{A} instead of {B}", f"Not {B}: {A}", f"{A} (not {B})",
              f"The cheaper one is the {A}, not the {B}.", f"It's the {A} and not the {B}", f"{A}. Not {B}",
              f"{A} is cheaper than {B}", f"{B} is not cheaper than {A}", f"{B} isn't cheaper than {A}",
              f"{B} is never cheaper than {A}", f"{B} is by no means cheaper than {A}"]


@pytest.mark.parametrize("answer", ASSERTIONS)
def test_an_answer_that_asserts_one_option_scores_for_it_alone(answer):
    assert _scores(answer, TWO, [A, B]) == [1.0, 0.0]


@pytest.mark.parametrize("answer", [
    f"{A} is never cheaper than {B}", f"{A} is no cheaper than {B}", f"{A} is by no means cheaper than {B}",
    f"{A} is not cheaper than {B}", f"{A} isn't cheaper than {B}", f"{A} is hardly cheaper than {B}",
    f"{A} can't be cheaper than {B}", f"{A} would never be cheaper than {B}",
    f"The {A} is not cheaper than the {B}.", f"{A} is not the cheaper one, {B} is"])
def test_a_negated_comparison_asserts_the_other_option(answer):
    # "A is never cheaper than B" says B is the cheaper. The denial before "than" was read as denying
    # B, so most of these scored 1 for the gold A (a wrong reward) and 0 for B
    assert _scores(answer, TWO, [A, B]) == [0.0, 1.0]


@pytest.mark.parametrize("answer", [f"{A} never costs less than {B}", f"{A} doesn't cost less than {B}",
                                    f"{A} does not cost less than {B}"])
def test_a_negated_comparison_in_the_question_s_other_words_asserts_the_other_option(answer):
    assert _scores(answer, COSTS, [A, B]) == [0.0, 1.0]


@pytest.mark.parametrize("answer", [f"{A}, not {B}, not {C}", f"{A}, not {B} and not {C}", f"Not {B}, not {C}: {A}"])
def test_three_options_denied_but_one_score_for_that_one(answer):
    assert _scores(answer, THREE, [A, B, C]) == [1.0, 0.0, 0.0]


@pytest.mark.parametrize("answer", [f"{A}, not {B}", f"{A} or {C}", f"{A}, {B}, {C}", f"{A}, not {B}, {C}",
                                    f"{A} if not {C}", f"not {B}", f"{A}/{B}/{C}"])
def test_no_answer_to_three_options_wins_for_two_golds(answer):
    assert sum(_scores(answer, THREE, [A, B, C])) <= 1.0


# ---- near-duplicate names: the gold inside the loser's name ----------------------------------------------

PRO = "Apex Laptop Pro"
NEAR = f"Which is cheaper: the {A} or the {PRO}?"


@pytest.mark.parametrize("answer,expected", [
    (A, [1.0, 0.0]), (PRO, [0.0, 1.0]), (f"{A}, not {PRO}", [1.0, 0.0]), (f"{PRO}, not {A}", [0.0, 1.0]),
    (f"Not {PRO}. {A}", [1.0, 0.0]), (f"Not {A}. {PRO}", [0.0, 1.0]), (f"{A} rather than {PRO}", [1.0, 0.0]),
    (f"{PRO} rather than {A}", [0.0, 1.0]), (f"{A} or {PRO}", [0.0, 0.0]), (f"{PRO} or {A}", [0.0, 0.0]),
    ("The Pro", [0.0, 0.0]), (f"{A} is cheaper than {PRO}", [1.0, 0.0]), (f"{PRO} is cheaper than {A}", [0.0, 1.0])])
def test_a_gold_inside_the_other_option_s_name(answer, expected):
    assert _scores(answer, NEAR, [A, PRO]) == expected


# ---- labels stuffed with options ----------------------------------------------------------------------------

@pytest.mark.parametrize("answer", [f"Title: {A} or {B}", f"Best match: {B}: {A}", f"{A} or {B}: {A}",
                                    f"{B} or {A}: {B}", f"Best match: {A} ({B})", f"Best match {B}: {A}",
                                    f"Title: {B}\nBest match: {A}", f"Cheaper: {A}, {B}", f"Title: {A} {B}"])
def test_a_label_holding_options_wins_for_no_gold(answer):
    assert sum(_scores(answer, TWO, [A, B])) == 0.0, answer


# ---- invisible and look-alike characters ----------------------------------------------------------------------

@pytest.mark.parametrize("answer", [f"{A}\u200d{B}", f"{A}\u2060{B}", f"{A}\u200d,\u200d{B}", f"{A}\u200b, {B}",
                                    f"{A} or {B.replace('a', 'а')}", f"{A}, {B.replace('i', 'і')}",
                                    f"{A} or Nimbus\u00adLaptop", f"{A}\u00a0or\u00a0{B}", f"{A}\u3000{B}", f"{A}\u2028{B}",
                                    f"{A}\u202e or {B}", f"<b>{A}</b> <s>{B}</s>", f"{A} ~~{B}~~"])
def test_invisible_or_look_alike_characters_hide_no_option(answer):
    assert sum(_scores(answer, TWO, [A, B])) == 0.0, ascii(answer)


def test_the_gold_spelled_with_invisible_or_wide_characters_is_the_gold_and_a_look_alike_is_not():
    gold = answer_text(A, [B])
    for same in ("Apex\u200d Laptop", "Ａｐｅｘ Ｌａｐｔｏｐ", "APEX LAPTOP"):
        assert score(gold, same, TWO) == 1.0, ascii(same)
    # a Cyrillic а reads as its Latin prototype (Unicode's confusables, issue 37): the gold, not another word,
    # and so the same letter cannot hide a second option either (test_invisible_or_look_alike_...)
    assert score(gold, "Apex Lаptop", TWO) == 1.0


# ---- one list of denial words (assertion.NEGATIONS), each word decided both ways ---------------------------

def test_the_denial_words_are_one_list():
    # assertion owns it; the ranking in answer_context reads its verb denials (all but the prepositions)
    assert not hasattr(answer_context, "NEGATIONS") and not hasattr(assertion, "_NEG_BEFORE")
    assert answer_context.VERB_DENIALS is assertion.VERB_DENIALS
    assert assertion.NEGATIONS - assertion.VERB_DENIALS == {"except", "excluding", "without", "non"}
    assert "hardly" in assertion.VERB_DENIALS


@pytest.mark.parametrize("check,answer,question,expected", [
    # hardly: a denial of what follows (both scored 1 before the lists were one) ...
    (answer_text(A, [B]), f"It is hardly {A}", TWO, 0.0),
    (answer_number(316, 0, [342]), "hardly 316", "How much is the cheapest one?", 0.0),
    # ... and of a comparison (ranked_below_gold), so "A is hardly cheaper than B" asserts B
    (answer_text(B, [A]), f"{A} is hardly cheaper than {B}", TWO, 1.0),
    # ... but not of what it does not precede
    (answer_text(A, [B]), f"The {A}; I hardly had to look.", TWO, 1.0),
    (answer_number(316, 0, [342]), "316 — hardly a bargain", "How much is the cheapest one?", 1.0),
    # except / excluding / without: deny the value after them, not the value before
    (answer_text(A, [B]), f"Any of them except {A}", TWO, 0.0),
    (answer_text(A, [B]), f"{A} except {B}", TWO, 1.0),
    (answer_text("Breakfast", ["Parking", "Wi-Fi"]), "A room without breakfast", "What does the Garden Room include?", 0.0),
    (answer_text("Breakfast", ["Parking", "Wi-Fi"]), "excluding breakfast", "What does the Garden Room include?", 0.0),
    (answer_text("Breakfast", ["Parking", "Wi-Fi"]), "Breakfast", "What does the Garden Room include?", 1.0),
    # a comparison the question words with "without": the answer in its words still ranks the options
    (answer_text("Garden Room", ["Sea Room"]), "The Garden Room is cheaper without breakfast than the Sea Room",
     "Which is cheaper without breakfast: the Garden Room or the Sea Room?", 1.0),
    (answer_text("Sea Room", ["Garden Room"]), "The Garden Room is cheaper without breakfast than the Sea Room",
     "Which is cheaper without breakfast: the Garden Room or the Sea Room?", 0.0),
    # non: "non-refundable" denies "refundable", and is a gold of its own
    (answer_text("Refundable", ["Non-refundable"]), "It is non-refundable", "What is the cancellation policy?", 0.0),
    (answer_text("Non-refundable", ["Refundable"]), "It is non-refundable", "What is the cancellation policy?", 1.0),
])
def test_each_denial_word_denies_what_follows_and_only_that(check, answer, question, expected):
    assert score(check, answer, question) == expected


@pytest.mark.parametrize("answer,question,expected", [
    ("The Garden Room does not allow pets", "Which room does not allow pets?", 1.0),
    ("Garden Room doesn't allow pets", "Which room does not allow pets?", 1.0),
    ("The Garden Room is not available", "Which room is not available?", 1.0),
    ("The Garden Room is not available", "Which room is the cheapest?", 0.0),
    ("The Garden Room is never available", "Which room is the cheapest?", 0.0)])
def test_a_denied_verb_after_the_gold_denies_it_unless_the_question_asks_it(answer, question, expected):
    assert score(answer_text("Garden Room", ["Sea Room"]), answer, question) == expected


@pytest.mark.xfail(strict=True, reason="answer_context.named_confusers reads a shorter confuser inside a longer "
                   "one ('Cobalt Headphones' in 'Cobalt Headphones Pro') on its own, where the words after it are "
                   "'Pro is not', so the denial of the longer name does not reach it: a correct double negation "
                   "fails (a miss) on 6 of 41 cheaper-of-two tasks (electronics multi-page, seeds 1-30)")
def test_a_double_negation_of_a_name_holding_another_confuser_scores():
    question = "Is the Cobalt Headphones Pro or the Apex Tab cheaper? Give me the name."
    check = answer_text("Apex Tab", ["Cobalt Headphones Pro", "Cobalt Headphones", "Nimbus Tab"])
    assert score(check, "Apex Tab, not Cobalt Headphones Pro", question) == 1.0  # holds today
    assert score(check, "Cobalt Headphones Pro is not cheaper than Apex Tab", question) == 1.0
