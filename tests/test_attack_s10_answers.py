"""Attacks on session 10's answer-check changes (weblica/scoring/answer.py): a label before the gold
("Author: Anna Berg") is no candidate, and "I think" / "I believe" hedge. A reward-maximizing policy
would stuff labels with candidates, chain them, use a confuser's name as the label, or list every
candidate behind one label; where the question names the candidates itself, no single answer may win
whichever of them is the gold."""
from __future__ import annotations

import pytest

from tests.test_answer_checks import score
from weblica.synth.checks import answer_number, answer_text

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
