"""Recognizing a refusal: an answer that says the task cannot be done on the site ("The site does not offer
it.", "I couldn't find it on the site", "There is no such product", "Not available").

An infeasible task passes only for a refusal that asserts no value; "It is not available, but probably
¥300" refuses *and* guesses and fails, and so does "I found it: X". On a feasible task a refusal scores 0.
The patterns read `weblica.scoring.text.normalize_answer` text, where "couldn't" is "could not".
"""
from __future__ import annotations

import re

from weblica.scoring.assertion import clause_before
from weblica.scoring.text import normalize_answer

_W = r"(?:\w+\s+){0,3}?"  # up to three words between the negation and what it denies ("does not seem to have")
_ABSENT = (r"(?:available|listed|offered|sold|shown|found|stated|given|mentioned|provided|displayed|specified|"
           r"present|there|possible|supported|carried|in stock|stocked|included in the catalog\w*|in the catalog\w*|"
           r"on (?:the|this) (?:site|page|website|store|shop)|anywhere|part of|doable|feasible|known)")
_HAVE = (r"(?:exist|offer|sell|carry|have|list|show|stock|provide|include|support|appear|contain|mention|state|"
         r"give|display|feature|specify)")
_DO = (r"(?:find|locate|see|spot|identify|determine|answer|complete|do|perform|get|book|buy|order|open|access|"
       r"provide|give|fulfil+|accomplish|be\s+(?:done|found|completed|determined|located|answered|fulfil+ed|"
       r"booked|bought|ordered|performed|accomplished))")

REFUSAL_PATTERNS = [
    rf"\b(?:does|do|did|will|would|can|could|is|are|was|were|has|have|had)\s+not\s+{_W}{_HAVE}\w*\b",
    rf"\b(?:do|did|does)\s+not\s+{_W}(?:find|see|locate|spot)\b",
    r"\bnothing\s+(?:came|turned|showed|comes|turns|shows)\s+up\b",
    r"\bnothing\s+(?:by|with|under|of)\s+(?:that|this|the|such\s+a)\s+(?:name|title|kind|sort|type)\b",
    r"\b(?:there|here)\s+(?:is|are|was|were)\s+not\s+(?:any|a|an)\b",
    r"(?<![\w.,])(?:0|zero)\s+(?:results?|matches|hits|items|products|entries|listings|options)\b",
    r"\b(?:came|comes|come)\s+back\s+empty\b|\b(?:returned|returns|was|is)\s+empty\b",
    rf"\b(?:is|are|was|were|be|been)\s+not\s+{_W}{_ABSENT}\b",
    rf"\b(?:can|could)\s+not\s+{_W}{_DO}\b",
    rf"\b(?:unable|not able|impossible|failed|fail)\s+to\s+{_W}{_DO}\b",
    r"\bunable to\b",
    rf"\b(?:not|never|nowhere)\s+{_ABSENT}\b",
    r"\b(?:there|here)\s+(?:is|are|was|were|exists?)\s+(?:no|none|nothing)\b",
    r"\b(?:the site|the store|the shop|this site|the website|the page|it|they)\s+(?:only\s+)?(?:has|have|lists?|sells?|"
    r"offers?|shows?|carries?)\s+(?:no|none|nothing)\b",
    r"\b(?:found|find|see|saw|returned|returns|shows?|gave|gives)\s+(?:no|none|nothing)\b",
    rf"\bno\s+(?:\w+\s+){{0,3}}?(?:is|are|was|were)\s+(?:{_ABSENT}|offered|specified)\b",
    r"\bno\s+(?:such|matching|results?|information|info|data|records?|listings?|mention|items?|products?|entr(?:y|ies)|"
    r"way|options?|prices?|values?|pages?|details?|match(?:es)?|hits?)\b",
    r"\bnothing\s+(?:matches|matched|found|called|named|like|is listed|was found|on the site|on this site|there|"
    r"exists|existed|fits)\b",
    r"\bnone\s+(?:found|exists?|listed|available|is listed|are listed|on the site|of the|is offered|are offered)\b",
    r"\b(?:infeasible|impossible|unavailable|unanswerable|non-?existent|not applicable)\b",
    r"(?<!\w)n/a(?!\w)",
    r"\b(?:sold out|out of stock|is missing|are missing|lacks?)\b",
]
_REFUSAL_RE = re.compile("|".join(f"(?:{p})" for p in REFUSAL_PATTERNS), re.IGNORECASE)

# words that, beside a refusal, assert something anyway: a guess, an alternative, a found value
GUESS_PATTERNS = [
    r"\b(?:probably|likely|maybe|perhaps|possibly|presumably|approximately|roughly|estimated?|"
    r"guess|i(?:'d| would) say|suppose|assume|closest|nearest|instead|alternatively|alternative|"
    r"recommend|suggest|try|might be|could be|may be|would be|should be)\b",
    r"\b(?:the answer is|answer:|it costs|costs|priced at|the price is(?! not)|is priced|here it is|found it)\b",
    r"\bi\s+found\s+(?!no\b|nothing\b|none\b)",
]
_GUESS_RE = re.compile("|".join(f"(?:{p})" for p in GUESS_PATTERNS), re.IGNORECASE)


_CONDITIONAL = {"if", "whether", "unless", "when", "whenever", "in case"}


def refusal_spans(norm: str) -> list[tuple[int, int]]:
    """Where normalized `norm` refuses ("does not offer", "0 results"). A conditional refusal ("if the
    site does not offer it, say so", an echo of the question) refuses nothing."""
    return [m.span() for m in _REFUSAL_RE.finditer(norm)
            if not _CONDITIONAL & set(clause_before(norm[:m.start()], 8))]


def refusal_phrase(text: str) -> str | None:
    """The words that make `text` a refusal ("does not offer"), or None (see `refusal_spans`)."""
    norm = normalize_answer(text)
    spans = refusal_spans(norm)
    return norm[spans[0][0]:spans[0][1]] if spans else None


def is_refusal(text: str) -> bool:
    """Whether the answer says the task cannot be done (it may still assert a value; see `guess_phrase`)."""
    return refusal_phrase(text) is not None


def guess_phrase(text: str) -> str | None:
    """The words with which an answer guesses or offers something besides refusing, or None."""
    match = _GUESS_RE.search(normalize_answer(text))
    return match.group(0) if match else None
