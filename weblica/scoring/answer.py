"""Whether an answer asserts the gold and no competing value: the `answer_match` check.

A reward-maximizing policy learns whatever passes, so an answer passes only when it states the gold and
(a) names no confuser (a value of the same field the site shows for another entity), (b) does not deny
the gold ("not X", "X? No"), (c) does not hedge ("X or Y", "maybe X", "between 1 and 3") and (d) does
not list several values of the gold's shape (two different numbers for a number; several comma- or
or-joined names for a name). Values the question itself states ("at most ¥317") are context, not
competing values, and a value the answer denies ("¥316, not ¥342") is not asserted. What a person would
accept passes: `weblica.scoring.numbers` reads number words, locale notations, currencies and units,
`weblica.scoring.dates` dates and clock times, `weblica.scoring.text` phrases (case, punctuation, articles);
`weblica.scoring.context` reads what surrounds the gold (the question's values, confusers, hedges).

Infeasible tasks (mode `refusal`) pass only for a refusal that asserts no value (`weblica.scoring.refusal`);
on any other task a refusal, or the `done` tool's `infeasible: true`, fails.

Answers are capped at `MAX_ANSWER_CHARS` and check patterns run under `REGEX_TIMEOUT_S`, so a hostile
answer or task file cannot hang a run; either limit fails the check with a reason.
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Sequence

import regex

from weblica.scoring import numbers as A
from weblica.scoring import dates as D
from weblica.scoring import text as T
from weblica.scoring.context import (Outcome, Question, confuser_parts, fmt_number, named_confusers, spoiler,
                                        token_span, word_before)
from weblica.scoring.assertion import is_bound, is_negated, list_items, shape
from weblica.scoring.refusal import guess_phrase, refusal_phrase, refusal_spans
from weblica.scoring.grammar import unread_part
from weblica.scoring.vocabulary import PLAIN_WORDS

if TYPE_CHECKING:
    from weblica.scoring.model import Check

# the same rule in words, for LLM judges (weblica.scoring.judge, weblica.scoring.benchmark_judges, the rubric judge)
ANSWER_RULE = ("An answer must state the one value asked for, plainly: the value alone, or in a short sentence that "
               "carries it ('It costs $12.50.') or restates the question around it. An answer that names a second "
               "value of the same kind (another name, number, date or price, even in a second sentence), lists "
               "several candidates, leaves a list open ('and others'), hedges or approximates in any language "
               "('X or Y', 'maybe X', 'about X', 'between 1 and 3'), asks a question, denies the value it names, "
               "or says the task cannot be done and offers a value or an alternative anyway is unsuccessful, even "
               "when the right value is among what it says. When the task cannot be done on the site, an answer "
               "that says so and asserts no value is successful; on a task that can be done, such a refusal is "
               "unsuccessful.")
MAX_ANSWER_CHARS = 2000
REGEX_TIMEOUT_S = 0.1  # CPU seconds (the regex package counts process time); legit patterns need microseconds


class PatternError(ValueError):
    """A check pattern that does not compile, or ran past its time limit."""


def safe_search(pattern: str, text: str, flags: int = 0) -> Any:
    """`regex.search` with a time limit; raises PatternError on a bad pattern or a timeout."""
    try:
        return regex.search(pattern, text, flags, timeout=REGEX_TIMEOUT_S)
    except TimeoutError:
        raise PatternError(f"the pattern ran past its {REGEX_TIMEOUT_S:g} s limit") from None
    except (regex.error, TypeError, ValueError) as exc:
        raise PatternError(f"the pattern does not compile ({exc})") from None


# ---- modes ------------------------------------------------------------------------------------------

def _numeric(norm: str, gold: float, tol: float, unit: str | None, currency: str | None,
             confusers: Sequence[Any] | None, question: Question, locale: str | None) -> Outcome:
    conf_numbers, conf_phrases = confuser_parts(confusers)
    nums = A.find_numbers(norm, locale)

    def close(a: float, b: float) -> bool:
        return math.isclose(a, b, rel_tol=0.0, abs_tol=max(tol, 1e-9))

    def unit_ok(n: A.Number) -> bool:
        if A.units_compatible(n.unit, unit):
            return True
        # "17 night bus routes" for "How many night bus routes ...?": the question's own noun before the
        # unit is not a unit ("night" is one in "17 nights")
        after = [t.key for t in T.tokens(norm[n.end:n.end + 60])][:4]
        key = A.unit_key(unit)
        return bool(n.unit) and T.fold(n.unit) in question.keys and any(A.unit_key(w) == key for w in after[1:])

    def is_gold(n: A.Number) -> bool:
        return (close(n.value, gold) and unit_ok(n)
                and (n.currency is None or currency is None or A.same_currency(n.currency, currency)))

    # a gold the question itself states, echoed with the question's own words, asserts nothing
    golds = [n for n in nums if is_gold(n) and (n.value, word_before(norm, n.start)) not in question.contexts]
    if not golds and any(is_gold(n) for n in nums):
        return Outcome(False, f"states {fmt_number(gold)} only where it echoes the question")
    if not golds:
        wrong_currency = [n for n in nums if close(n.value, gold) and n.currency and currency]
        if wrong_currency:
            return Outcome(False, f"states {fmt_number(gold)} in {wrong_currency[0].currency}, not {currency}")
        stated = ", ".join(dict.fromkeys(fmt_number(n.value) for n in nums[:5]))
        return Outcome(False, f"states no {fmt_number(gold)}{' ' + unit if unit else ''}"
                              + (f" (it states {stated})" if stated else ""))
    for n in golds:
        if is_negated(norm[:n.start], norm[n.end:], question.keys):
            return Outcome(False, f"denies {fmt_number(gold)}")
        if is_bound(norm[:n.start]):
            return Outcome(False, f"gives a bound, not the value {fmt_number(gold)}")
    competing = []
    for n in nums:
        if not is_gold(n) and not question.states_number(n.value) and \
                not is_negated(norm[:n.start], norm[n.end:], question.keys):
            competing.append(n)
            if len(competing) >= 5:  # enough to say why
                break
    if competing:
        names = [fmt_number(n.value) + (" (a confuser)" if any(close(n.value, c) for c in conf_numbers) else "")
                 + (f" (in {n.currency})" if close(n.value, gold) else "") for n in competing]
        return Outcome(False, f"also states {', '.join(dict.fromkeys(names))}")
    spans = [(n.start, _with_unit(norm, n.end, unit)) for n in golds]
    named = named_confusers(norm, conf_phrases, spans, question, [])
    if named:
        return Outcome(False, f"also names {', '.join(repr(x) for x in named)}")
    spoiled = spoiler(norm, spans, question)
    if spoiled:
        return Outcome(False, spoiled)
    return Outcome(True, f"states {fmt_number(gold)}", tuple(spans), value_spans(norm, locale))


def _with_unit(norm: str, end: int, unit: str | None) -> int:
    """Where a gold quantity ends once the words of its unit written after it are counted ("37 Bridge
    Street", "3 previous owners", "17 night bus routes" for the unit "routes"): up to four words on to
    the unit's last word, or the number's own end when the unit is not written there."""
    keys = T.phrase_keys(unit) if unit else ()
    if not keys:
        return end
    after = T.tokens(norm[end:end + 80])[:len(keys) + 3]
    for i, tok in enumerate(after):
        if norm[end:end + tok.start].strip(" ") and any(c in T.BOUNDARY_CHARS for c in norm[end:end + tok.start]):
            break
        if A.unit_key(tok.key) == A.unit_key(keys[-1]):
            return end + tok.end
    return end


def _name_word(tok: T.Token) -> bool:
    return tok.text[:1].isupper() and tok.key not in T.FUNCTION_WORDS and not tok.key.isdigit()


def _extends_name(norm: str, toks: list[T.Token], occ: tuple[int, int], gold: str) -> str | None:
    """A capitalized word right beside a capitalized gold, in the same phrase ("Alpine" in "Alpine Ridge",
    "Cropped Cardigan" in "Soft Oxford Cropped Cardigan"): a longer name, or names run together. A word
    that starts the sentence ("Definitely Cropped Cardigan") is not counted before the gold."""
    i, j = occ
    if not gold[:1].isupper():
        return None
    shown = norm[toks[i].start:toks[j - 1].end]
    if j < len(toks) and not norm[toks[j - 1].end:toks[j].start].strip() and _name_word(toks[j]):
        return f"{shown} {toks[j].text}"
    if i >= 1 and not norm[toks[i - 1].end:toks[i].start].strip() and _name_word(toks[i - 1]):
        sentence_start = i == 1 or any(c in ".!?:;\n" for c in norm[toks[i - 2].end:toks[i - 1].start])
        if not sentence_start:
            return f"{toks[i - 1].text} {shown}"
    return None


# words that label an answer ("Author: Anna Berg", "Title: ...", "Best match: ..."), beside the question's words
_LABEL_WORDS = frozenset("answer final result author authors written writer by byline name named title best match "
                         "it is".split())


def _labels_gold(norm: str, item: list[T.Token], gold_spans: Sequence[tuple[int, int]], asked: frozenset[str]) -> bool:
    """Whether the item is a label right before the gold ("Author:" in "Author: Anna Berg"): words of the
    question or of a label only, so no candidate name can hide there."""
    after = norm[item[-1].end:]
    if not after.lstrip().startswith(":"):
        return False
    colon = item[-1].end + after.index(":")
    starts_gold = any(not norm[colon + 1:gs].strip() for gs, _ in gold_spans if gs > colon)
    return starts_gold and all(t.key in _LABEL_WORDS or t.key in asked for t in item)


def _competing_items(norm: str, gold_spans: Sequence[tuple[int, int]], gold_keys: Sequence[Sequence[str]],
                     asked: frozenset[str] = frozenset()) -> list[str]:
    """List items other than the gold that have the gold's shape: "Cropped Cardigan, Bold Poncho"."""
    longest = max(len(k) for k in gold_keys)
    shapes = {shape(k) for k in gold_keys}
    wordy = all("n" not in s for s in shapes)
    out = []
    for item in list_items(norm):
        if any(gs < item[-1].end and item[0].start < ge for gs, ge in gold_spans):
            continue
        if _labels_gold(norm, item, gold_spans, asked):
            continue
        keys = [t.key for t in item]
        while len(keys) > 1 and keys[0] in T.ARTICLES:  # "the Bold Poncho" is a name too
            keys, item = keys[1:], item[1:]
        if keys[0] in T.FUNCTION_WORDS or len(keys) > longest + 2:
            continue
        if len(keys) >= 3 and all(k in PLAIN_WORDS or k in asked for k in keys):
            continue  # a remark in plain words ("Nothing else came close"), not a value
        if (wordy and any(k.isdigit() for k in keys)) or (not wordy and shape(keys) not in shapes):
            continue
        out.append(norm[item[0].start:item[-1].end])
    return out


_QUOTED = regex.compile(r'"([^"\n]+)"')


def _unquoted(norm: str) -> str:
    """`norm` with straight quotes around a title read as spaces: quoting does not split a sentence into
    a list, so 'The longest song is "Believe".' reads as 'The longest song is Believe.' and
    '"Believe", not "Hope"' as 'Believe, not Hope'. A quote right after a capitalized word stays a
    boundary: 'Hope "Believe"' names two titles, where 'Hope Believe' could be one name said at the
    start of a sentence. The same length as `norm`, so offsets hold."""
    chars = list(norm)
    for m in _QUOTED.finditer(norm):
        lead = norm[max(0, m.start() - 40):m.start()]
        before = T.tokens(lead)
        if before and not lead[before[-1].end:].strip(' "') and _name_word(before[-1]):
            continue
        if any(c in T.BOUNDARY_CHARS for c in m.group(1)):
            continue
        chars[m.start()] = chars[m.end() - 1] = " "
    return "".join(chars)


def _phrase(norm: str, golds: Sequence[str], confusers: Sequence[Any] | None, question: Question,
            need_all: bool = False) -> Outcome:
    """Text golds (aliases of one value, or with `need_all` the members of a set)."""
    # a text value's confusers are phrases, even those that look like numbers ("100" beside "None")
    present = {t.key for t in T.tokens(norm)}
    conf_phrases = [str(c) for c in confusers or [] if T.phrase_keys(str(c)) and set(T.phrase_keys(str(c))) <= present]
    toks = T.tokens(norm)
    gold_keys = [k for k in (T.phrase_keys(g) for g in golds) if k]
    if not gold_keys:
        return Outcome(False, "the check's expected value is empty")
    longer = [occ for c in conf_phrases for occ in T.find_phrase(toks, T.phrase_keys(c))]
    found: dict[int, list[tuple[int, int]]] = {}
    for gi, keys in enumerate(gold_keys):
        for occ in T.find_phrase(toks, keys):
            # "Alpine" inside the confuser "Alpine Ridge" is not the gold
            if any(c[0] <= occ[0] and occ[1] <= c[1] and c[1] - c[0] > occ[1] - occ[0] for c in longer):
                continue
            found.setdefault(gi, []).append(occ)
    missing = [golds[gi] for gi in range(len(gold_keys)) if gi not in found]
    if (need_all and missing) or not found:
        return Outcome(False, f"does not name {missing[0] if need_all else golds[0]!r}")
    occs = [occ for group in found.values() for occ in group]
    spans = [token_span(norm, toks, occ) for occ in occs]
    read = _unquoted(norm)
    for occ, (s, e) in zip(occs, spans):
        if is_negated(read[:s], read[e:], question.keys):
            return Outcome(False, f"denies {norm[s:e]!r}")
        longer_name = _extends_name(read, toks, occ, golds[0])
        if longer_name:
            return Outcome(False, f"names {longer_name!r}, which is more than {norm[s:e]!r}")
    named = named_confusers(read, conf_phrases, spans, question, gold_keys)
    if named:
        return Outcome(False, f"also names {', '.join(repr(x) for x in named[:5])}")
    items = _competing_items(read, spans, gold_keys, question.keys)
    if items:
        return Outcome(False, f"lists other candidates besides the gold: {', '.join(repr(x) for x in items[:5])}")
    spoiled = spoiler(norm, spans, question)
    if spoiled:
        return Outcome(False, spoiled)
    return Outcome(True, f"names {', '.join(repr(golds[gi]) for gi in sorted(found))}", tuple(spans),
                   value_spans(norm, None), names_compete=True, alternatives=need_all)


def _date(norm: str, iso: str, locale: str | None, question: Question) -> Outcome:
    gold = D.parse_iso_date(iso)
    if gold is None:
        return Outcome(False, f"the check's expected date {iso!r} is not ISO YYYY-MM-DD")
    dates = D.find_dates(norm, locale)
    golds = [d for d in dates if D.date_matches(d, gold)]
    if not golds:
        return Outcome(False, f"states no date that reads as {iso}")
    for d in golds:
        if is_negated(norm[:d.start], norm[d.end:], question.keys):
            return Outcome(False, f"denies {iso}")
    others = [norm[d.start:d.end] for d in dates if not D.date_matches(d, gold)
              and not is_negated(norm[:d.start], norm[d.end:], question.keys) and not d.readings <= question.dates]
    # "June 7 or 8": a bare day number beside a date is another date
    others += [norm[n.start:n.end] for n in A.find_numbers(norm, locale) if 1 <= n.value <= 31
               and n.value == int(n.value) and not question.states_number(n.value)
               and not is_negated(norm[:n.start], norm[n.end:], question.keys)]
    if others:
        return Outcome(False, f"also states {', '.join(repr(o) for o in others[:5])}")
    spans = [(d.start, d.end) for d in golds]
    spoiled = spoiler(norm, spans, question)
    return Outcome(False, spoiled) if spoiled else Outcome(True, f"states {iso}", tuple(spans), value_spans(norm, locale))


def _whole_value(text: str, match: Any) -> bool:
    """A match that is a value of its own: two or more letters or digits, not cut out of a longer word
    (so a catch-all pattern such as "." never counts as naming two values)."""
    s, e = match.span()
    inside = (s > 0 and text[s - 1].isalnum() and text[s].isalnum()) or \
        (e < len(text) and text[e].isalnum() and text[e - 1].isalnum())
    return sum(c.isalnum() for c in match.group(0)) >= 2 and not inside


def _time(norm: str, gold: int, confusers: Sequence[Any] | None, question: Question) -> Outcome:
    """A clock time: "18:00", "6 pm" and "6:00 p.m." are one value; another time beside it competes."""
    shown = f"{gold // 60:02d}:{gold % 60:02d}"
    times = D.find_times(norm)
    golds = [t for t in times if t[0] == gold]
    if not golds:
        return Outcome(False, f"states no time that reads as {shown}")
    for _, s, e in golds:
        if is_negated(norm[:s], norm[e:], question.keys):
            return Outcome(False, f"denies {shown}")
    asked = {t[0] for t in D.find_times(T.normalize_answer(question.text))}
    others = [norm[s:e] for minutes, s, e in times if minutes != gold and minutes not in asked
              and not is_negated(norm[:s], norm[e:], question.keys)]
    if others:
        return Outcome(False, f"also states {', '.join(repr(o) for o in others[:5])}")
    spans = [(s, e) for _, s, e in golds]
    phrases = [str(c) for c in confusers or [] if D.clock_time(str(c)) is None]
    named = named_confusers(norm, phrases, spans, question, [])
    if named:
        return Outcome(False, f"also names {', '.join(repr(x) for x in named[:5])}")
    spoiled = spoiler(norm, spans, question)
    return Outcome(False, spoiled) if spoiled else Outcome(True, f"states {shown}", tuple(spans), value_spans(norm, None))


def _regex(answer: str, pattern: str, confusers: Sequence[Any] | None, question: Question) -> Outcome:
    try:
        match = safe_search(str(pattern), answer, regex.IGNORECASE | regex.DOTALL)
    except PatternError as exc:
        return Outcome(False, str(exc))
    if match is None:
        return Outcome(False, f"does not match {pattern!r}")
    before, after = answer[:match.start()], answer[match.end():]
    if is_negated(T.normalize_answer(before[-200:]), T.normalize_answer(after[:200]), question.keys):
        return Outcome(False, f"denies {match.group(0)!r}")
    try:  # the pattern matching two different values ("#A-1234 or #A-9999") is a list, not an answer
        later = safe_search(str(pattern), after, regex.IGNORECASE | regex.DOTALL)
    except PatternError as exc:
        return Outcome(False, str(exc))
    if later is not None and _whole_value(after, later) and _whole_value(answer, match) and \
            T.phrase_keys(later.group(0)) != T.phrase_keys(match.group(0)) and \
            not is_negated(T.normalize_answer(after[:later.start()][-200:]),
                           T.normalize_answer(after[later.end():][:200]), question.keys):
        return Outcome(False, f"matches two different values: {match.group(0)!r} and {later.group(0)!r}")
    rest = T.normalize_answer(before) + " | " + T.normalize_answer(after)
    named = named_confusers(rest, [str(c) for c in confusers or []], [], question, [])
    if named:
        return Outcome(False, f"also names {', '.join(repr(x) for x in named[:5])}")
    spoiled = spoiler(rest, [], question)
    if spoiled:
        return Outcome(False, spoiled)
    # the matched text is the gold: the answer is read as for that value, so a list of prices around a
    # price pattern ("$12.50, $13.00, 12.05") fails as it would against the number itself
    as_value = _matched_value(answer, match, confusers, question) if _spelled_out(pattern, match.group(0)) else None
    if as_value is not None and not as_value.passed:
        return Outcome(False, as_value.reason)
    if not _whole_value(answer, match):
        # a pattern that accepts any text ("." in test recipes): the task asks for no value, so the
        # grammar has no gold to read the rest around
        return Outcome(True, f"matches {pattern!r}", plain=False)
    norm = T.normalize_answer(answer)
    try:
        spans = tuple(m.span() for m in regex.finditer(str(pattern), norm, regex.IGNORECASE | regex.DOTALL,
                                                        timeout=REGEX_TIMEOUT_S) if m.end() > m.start())
    except TimeoutError:
        return Outcome(False, f"the pattern ran past its {REGEX_TIMEOUT_S:g} s limit")
    return Outcome(True, f"matches {pattern!r}", spans or ((0, 0),), value_spans(norm, None))


def _spelled_out(pattern: str, shown: str) -> bool:
    """Whether the pattern spells the matched value out (`12\\.50`, `Cropped Cardigan`): only then is the
    match a gold value of its own. A wildcard's match (`.` on any answer) is not."""
    literal = regex.sub(r"\\(.)", r"\1", pattern).casefold()
    words = regex.findall(r"[^\W_]+", shown.casefold())
    return bool(words) and all(w in literal for w in words)


def _matched_value(answer: str, match: Any, confusers: Sequence[Any] | None, question: Question) -> Outcome | None:
    """The answer read against the value a regex matched: a number when the match is one number, else the
    matched phrase (a name); None when the match is too short to be a value of its own."""
    shown = match.group(0).strip()
    if not T.phrase_keys(shown):
        return None
    norm = T.normalize_answer(answer)
    q = A.quantity(shown)
    if q is not None:
        return _numeric(norm, q[0], 0.0, q[1], A.currency_of(shown), confusers, question, None)
    if A.find_numbers(T.normalize_answer(shown)):
        return None  # a value with several numbers in it (a range, a model name): the pattern speaks for itself
    return _phrase(norm, [shown], confusers, question)


def _names(norm: str, question: Question) -> list[str]:
    """Capitalized words inside a sentence that the question does not use: a name the answer offers."""
    asked = {t.key for t in question.toks}
    toks = T.tokens(norm)
    out = []
    for prev, tok in zip(toks, toks[1:]):
        starts_sentence = any(c in ".!?:;\n" for c in norm[prev.end:tok.start])
        if (len(tok.text) >= 2 and tok.text[0].isupper() and not tok.text.isupper() and not starts_sentence
                and tok.key not in T.FUNCTION_WORDS and tok.key not in asked):
            out.append(tok.text)
    return out


def _refusal(norm: str, confusers: Sequence[Any] | None, question: Question, infeasible: bool,
             locale: str | None) -> Outcome:
    phrase = refusal_phrase(norm)
    if not infeasible and phrase is None:
        return Outcome(False, "does not say the task cannot be done (it is infeasible)")
    guess = guess_phrase(norm)
    if guess:
        return Outcome(False, f"refuses but also guesses ('{guess}')")
    refusing = refusal_spans(norm)  # "0 results" refuses; its 0 is no value
    values = [n for n in A.find_numbers(norm, locale) if not question.states_number(n.value)
              and not any(s <= n.start and n.end <= e for s, e in refusing)]
    values_text = [norm[n.start:n.end] for n in values] + [
        norm[d.start:d.end] for d in D.find_dates(norm, locale) if not d.readings <= question.dates]
    if values_text:
        return Outcome(False, f"refuses but also states {', '.join(repr(v) for v in values_text[:5])}")
    named = named_confusers(norm, confuser_parts(confusers)[1], [], question, []) or _names(norm, question)
    if named:
        return Outcome(False, f"refuses but also names {', '.join(repr(x) for x in named[:5])}")
    how = "infeasible: true" if infeasible and phrase is None else f"'{phrase}'"
    return Outcome(True, f"a refusal ({how}) that asserts no value", (), value_spans(norm, locale), names_compete=True)


def _malformed(check: "Check") -> str | None:
    if check.confusers is not None and not isinstance(check.confusers, list):
        return "confusers must be a list"
    for name in ("locale", "unit", "confusers_from"):
        if getattr(check, name) is not None and not isinstance(getattr(check, name), str):
            return f"{name} must be a string"
    if isinstance(check.tol, bool) or not isinstance(check.tol, (int, float)) or not math.isfinite(check.tol):
        return "tol must be a finite number"
    if not isinstance(check.mode, str):
        return "mode must be a string"
    return None


def check_answer(check: "Check", answer: str, *, instruction: str = "", infeasible: bool = False) -> Outcome:
    """Run one `answer_match` check on a final answer (see the module docstring). A check whose fields
    have the wrong types (from a hand-written task file) fails with the reason instead of raising. An
    answer the mode accepts must also read as a plain answer (weblica.scoring.grammar)."""
    outcome = _read(check, answer, instruction, infeasible)
    if not outcome.passed or not outcome.plain:
        return outcome
    question = Question(instruction, check.locale)
    norm = T.normalize_answer(str(answer))
    unread = unread_part(norm, question.text, question.keys | _comparatives(question), outcome.golds,
                         outcome.values, names_compete=outcome.names_compete,
                         allow_alternatives=outcome.alternatives)
    if unread:
        return Outcome(False, f"{unread}: not a plain answer")
    return outcome


def value_spans(norm: str, locale: str | None) -> tuple[tuple[int, int], ...]:
    """Where `norm` states numbers, dates and clock times (the modes judge them; the grammar reads past them)."""
    return tuple((n.start, n.end) for n in A.find_numbers(norm, locale)) + tuple(A.masked_spans(norm, locale))


def _comparatives(question: Question) -> frozenset[str]:
    """The words of "costs less" an answer may rank the options in when the question asks for the cheaper."""
    from weblica.scoring.context import _CHEAPER, _asks_cheaper

    return _CHEAPER if _asks_cheaper(question) else frozenset()


def _read(check: "Check", answer: str, instruction: str, infeasible: bool) -> Outcome:
    problem = _malformed(check)
    if problem:
        return Outcome(False, f"the check is malformed: {problem}")
    answer = str(answer)
    if len(answer) > MAX_ANSWER_CHARS:
        return Outcome(False, f"the answer is {len(answer)} characters, over the {MAX_ANSWER_CHARS} limit")
    reader = ANSWER_MODES.get(check.mode)
    if reader is None:
        return Outcome(False, f"unknown answer mode {check.mode!r} (use {', '.join(ANSWER_MODES)})")
    if infeasible and check.mode != "refusal":
        return Outcome(False, "the agent declared the task infeasible (infeasible: true); it is feasible")
    return reader(check, answer, T.normalize_answer(answer), Question(instruction, check.locale), infeasible)


# ---- one reader per mode: (check, answer as given, its normalized text, the question, the infeasible flag) ----

def _read_refusal(check: "Check", answer: str, norm: str, question: Question, infeasible: bool) -> Outcome:
    return _refusal(norm, check.confusers, question, infeasible, check.locale)


def _read_numeric(check: "Check", answer: str, norm: str, question: Question, infeasible: bool) -> Outcome:
    expected = check.expected
    text = T.normalize_answer(str(expected))
    nums = [float(expected)] if isinstance(expected, (int, float)) and not isinstance(expected, bool) else \
        [n.value for n in A.find_numbers(text, check.locale)]
    if not nums:
        return Outcome(False, f"the check's expected value {expected!r} holds no number")
    q = A.quantity(str(expected))
    currency = A.currency_of(str(expected)) or A.locale_currency(check.locale)
    return _numeric(norm, nums[0], check.tol, check.unit or (q[1] if q else None), currency, check.confusers,
                    question, check.locale)


def _read_date(check: "Check", answer: str, norm: str, question: Question, infeasible: bool) -> Outcome:
    return _date(norm, str(check.expected), check.locale, question)


def _read_regex(check: "Check", answer: str, norm: str, question: Question, infeasible: bool) -> Outcome:
    return _regex(answer, str(check.expected), check.confusers, question)


def _read_set(check: "Check", answer: str, norm: str, question: Question, infeasible: bool) -> Outcome:
    expected = check.expected
    items = expected if isinstance(expected, (list, tuple, set)) else \
        [i for i in regex.split(r"\s*(?:,|;|\n|\band\b)\s*", str(expected)) if i.strip()]
    return _phrase(norm, [str(i) for i in items], check.confusers, question, need_all=True)


def _read_exact(check: "Check", answer: str, norm: str, question: Question, infeasible: bool) -> Outcome:
    """A phrase, or what the phrase is: a clock time ("18:00"), a quantity ("Three owners", "12 kg")."""
    expected = check.expected
    if isinstance(expected, bool) or expected is None:
        ok = T.fold(norm.strip().rstrip(".")) == T.fold(str(expected))
        return Outcome(ok, f"{'is' if ok else 'is not'} {expected!r}")
    golds = [str(e) for e in expected] if isinstance(expected, (list, tuple)) else [str(expected)]
    clock = D.clock_time(golds[0]) if len(golds) == 1 else None
    if clock is not None:
        return _time(norm, clock, check.confusers, question)
    q = A.quantity(golds[0]) if len(golds) == 1 else None
    if q is not None:
        return _numeric(norm, q[0], check.tol, check.unit or q[1], A.currency_of(golds[0]), check.confusers,
                        question, check.locale)
    return _phrase(norm, golds, check.confusers, question)


ANSWER_MODES = {"exact": _read_exact, "numeric": _read_numeric, "set": _read_set, "regex": _read_regex,
                "date": _read_date, "refusal": _read_refusal}
