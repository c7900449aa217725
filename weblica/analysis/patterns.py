"""Reasoning-pattern proxies (OpenWebRL appendix D): lexical labels on assistant turns.

Each assistant turn's reasoning (the text before its first tool call) is matched against four families of
case-insensitive, precision-oriented regular expressions. The labels are descriptive, not semantic truth: a
turn may carry several, paraphrases are missed, and a few benign sentences match. What they make visible is
*where* response length goes — the paper finds RL lengthens the turns that summarise history, diagnose
blockers, plan retries or prove conditions, while turns with no label barely grow.

| label | the agent ... |
|---|---|
| history_summarization | recounts what it already tried, checked or visited, or that every source failed |
| blocker_diagnosis | names a CAPTCHA, Cloudflare, 403 / access denied, a bot or human verification wall |
| retry_plan_loop | plans one more / a different approach, search, site or path; going back to try again |
| condition_proof | checks the task's constraints one by one, or states a concrete constraint is met |

Response length is counted in characters by default, or in tokens when the step has `token_ids`
(`--unit tokens`), since the paper reports tokens.
"""
from __future__ import annotations

import re
from typing import Iterable

_I = re.IGNORECASE
_VERBS = r"(?:tried|attempted|checked|searched|looked\s+at|visited|used)"
_MANY = r"(?:multiple|several)\s+(?:attempts|approaches|searches|sites|websites|sources)"
_APOS = r"(?:'|’)"

HISTORY_SUMMARIZATION = [
    rf"\b(?:i{_APOS}ve|i\s+have|we{_APOS}ve|we\s+have)\s+(?:already\s+)?{_VERBS}\b",
    rf"\b(?:i|we)\s+already\s+{_VERBS}\b",
    rf"\b(?:i|we)\s+had\s+(?:already\s+)?{_VERBS}\b",
    r"\b(?:previous|earlier|last)\s+(?:attempts?|search(?:es)?|approach(?:es)?|steps?|sites?|pages?)\b",
    rf"\b(?:so\s+far|up\s+to\s+this\s+point),?\s+(?:i|we)\s+(?:have|{_APOS}ve|had)\b",
    rf"\b{_VERBS}\b[^.!?\n]{{0,80}}\b{_MANY}\b",
    rf"\b{_MANY}\b[^.!?\n]{{0,80}}\b(?:failed|blocked|led\s+to|resulted\s+in|did\s+not|didn{_APOS}t|couldn{_APOS}t|cannot)\b",
    r"\b(?:all|every)\s+(?:attempt|approach|site|source|path|option)(?:e?s)?\s+(?:has|have)\s+(?:failed|led\s+to|resulted\s+in)\b",
    r"\b(?:exhausted|tried)\s+(?:all|every|multiple|several)\s+(?:options|approaches|paths|sources|sites)\b",
]

BLOCKER_DIAGNOSIS = [
    r"\b(?:captcha|recaptcha|hcaptcha|cloudflare|access\s+denied|403\s+forbidden|robot\s+check)\b",
    r"\baccess\s+(?:is\s+)?forbidden\b",
    rf"\b(?:blocked|blocking|unable\s+to\s+access|cannot\s+access|can{_APOS}t\s+access|not\s+accessible)\b",
    r"\b(?:(?:security|bot|human)\s+verification|verification\s+(?:challenge|required|page|screen|check))\b",
    r"\b(?:security\s+check|security\s+measure|anti-?bot|anti-?automation)\b",
    r"\b(?:automated\s+access|automated\s+behaviou?r|bot\s+detection|detected\s+(?:as\s+)?automated)\b",
    r"\b(?:requires?|needs?)\s+human\s+(?:interaction|verification|input)\b",
    rf"\b(?:cannot|can{_APOS}t|unable\s+to)\s+(?:interact\s+with|solve|complete)\s+(?:the\s+)?(?:captcha|recaptcha|verification)\b",
]

_ALT = r"(?:different|alternative|another|new)\s+(?:approach|search|query|site|source|path|method)"
RETRY_PLAN_LOOP = [
    r"\b(?:one|a)\s+(?:final|last)\s+(?:approach|attempt|try|option)\b",
    rf"\b(?:try|attempt|use|take)\s+(?:a\s+|an\s+)?{_ALT}\b",
    rf"\b(?:need|needs|needed|should|could|might|may|will|would|try|use|take|switch\s+to|look\s+for|search\s+for)\b"
    rf"[^.!?\n]{{0,50}}\b{_ALT}\b",
    rf"\b{_ALT}\b[^.!?\n]{{0,50}}\b(?:is\s+needed|may\s+work|might\s+work|could\s+work|should\s+work|would\s+help|"
    r"to\s+try|to\s+search|to\s+use)\b",
    r"\b(?:go\s+back|return)\s+(?:and|to)\s+(?:try|search|look|navigate)\b",
    r"\b(?:navigate\s+directly|search\s+directly|try\s+searching\s+directly|search\s+more\s+broadly)\b",
    r"\b(?:let\s+me|i\s+should)\s+(?:reconsider|try\s+again|try\s+another|switch\s+to|use\s+a\s+different)\b",
    rf"\b(?:rather\s+than|instead\s+of)\s+[^.!?\n]{{0,80}}\b(?:i\s+should|i{_APOS}ll|i\s+will|let\s+me)\s+"
    r"(?:try|search|navigate|use)\b",
]

_PROOF_VERB = (r"\b(?:meets?|matches?|satisf(?:y|ies|ied)|fulfills?|qualif(?:y|ies|ied)|confirms?|verif(?:y|ies|ied)|"
               r"fits?|complies\s+with|addresses)\b")
_REQ = r"(?:criteria|requirements|conditions|constraints|criterion|requirement|condition|constraint)"
_REQ_MET = _PROOF_VERB + r"[^.!?\n]{0,80}\b" + _REQ + r"\b"
_ALL_MET = (r"\b(?:all|each|every)\s+(?:the\s+|of\s+the\s+)?(?:criteria|requirements|conditions|constraints)\b"
            r"[^.!?\n]{0,80}\b(?:met|satisfied|fulfilled|addressed|checked)\b")
_ORDINAL_REQ = (r"\b(?:first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|final|last|\d+(?:st|nd|rd|th)?)"
                r"\s+" + _REQ + r"\b")
_NUM = r"[0-9][0-9,]*(?:\.[0-9]+)?"
VALUE_PATTERNS = [
    rf"\b(?:under|less\s+than|below)\s+\$?{_NUM}",
    rf"\b(?:at\s+least|at\s+most|no\s+more\s+than|fewer\s+than|greater\s+than|more\s+than)\s+\$?{_NUM}",
    rf"\bwithin\s+{_NUM}\s*(?:miles?|mi|km|kilometers?|kilometres?)\b",
    r"\b(?:before|after)\s+[0-9]{1,2}:[0-9]{2}\b",
    r"\b(?:model\s+years?|years?)\s+[0-9]{4}\s*(?:-|to)\s*[0-9]{4}\b",
]
DOMAIN_PATTERNS = [
    r"\bgood\s+with\s+(?:kids|children|cats|dogs)\b", r"\bgluten-?free\b", r"\bnut-?free\b", r"\bvegan\b",
    r"\bshort-?haired\b", r"\bdepart(?:ing|s)?\s+from\s+[A-Z][A-Za-z.-]+", r"\blocated\s+near\s+[A-Z0-9][A-Za-z0-9.-]+",
]

LABELS = ("history_summarization", "blocker_diagnosis", "retry_plan_loop", "condition_proof")
NO_PROXY = "no_proxy"

_COMPILED = {name: [re.compile(p, _I) for p in pats] for name, pats in
             (("history_summarization", HISTORY_SUMMARIZATION), ("blocker_diagnosis", BLOCKER_DIAGNOSIS),
              ("retry_plan_loop", RETRY_PLAN_LOOP))}
_VALUES = [re.compile(p, _I) for p in VALUE_PATTERNS]
_DOMAIN = [re.compile(p, _I) for p in DOMAIN_PATTERNS]
_TOOL_CALL = re.compile(r"<tool_call>|```json|\{\s*\"name\"\s*:", _I)


def reasoning_text(response: str) -> str:
    """The reasoning part of a response: everything before its first tool call, think tags removed."""
    match = _TOOL_CALL.search(response or "")
    text = (response or "")[:match.start()] if match else (response or "")
    return text.replace("<think>", " ").replace("</think>", " ")


def has_condition_proof(text: str) -> bool:
    """Explicit requirement-satisfaction language, or a proof verb next to a concrete constraint value in one
    sentence (or next to two domain constraints): mentioning a constraint is not enough."""
    if re.search(_REQ_MET, text, _I) or re.search(_ALL_MET, text, _I) or re.search(_ORDINAL_REQ, text, _I):
        return True
    for sentence in re.split(r"[.!?\n]+", text):
        if not re.search(_PROOF_VERB, sentence, _I):
            continue
        values = sum(bool(p.search(sentence)) for p in _VALUES)
        domains = sum(bool(p.search(sentence)) for p in _DOMAIN)
        if values or values + domains >= 2:
            return True
    return False


def proxy_labels(response: str) -> set[str]:
    """The proxy labels of one assistant turn (possibly none)."""
    text = reasoning_text(response)
    labels = {name for name, patterns in _COMPILED.items() if any(p.search(text) for p in patterns)}
    if has_condition_proof(text):
        labels.add("condition_proof")
    return labels


def label_turns(responses: Iterable[str]) -> list[set[str]]:
    return [proxy_labels(r) for r in responses]
