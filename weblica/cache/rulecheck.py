"""Rules never hurt: each inferred rule is tried on the recorded runs themselves before it is kept.

Every recorded run's requests are replay-matched, in memory through `ReplayIndex` (no browser), against
the exchanges of the *other* runs, once with the current rules and once without the rule under test
(leave one out, rule by rule in a fixed order). A rule is judged by what it changes:

- a request served without the rule that misses with it: a `require` rule is downgraded to an
  ignore rule (the recorded responses are then served in order), any other rule is dropped;
- a request served both ways that got the response it was recorded with without the rule and gets
  another one with it: the rule is dropped (a downgraded rule is tried again and dropped on this
  too). An ignore rule for a field fresh in every run (a cache-buster on a rotating ad) is exempt:
  serving the recorded rotation in order is what it is for, and no response of it is the wrong one.

What a rule serves that was a miss without it is counted as its benefit. The decisions and their
evidence (which requests, which tiers) are the report `rules infer` prints.
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field, replace
from typing import Any

from weblica.cache.addons import stub_response
from weblica.cache.exchange import Exchange
from weblica.cache.identity import ResponseComparer
from weblica.cache.matcher import ReplayIndex, Validators
from weblica.cache.rules import Rule, RuleBook, RuleSet, registrable_domain
from weblica.cache.store import Store

EVIDENCE_SHOWN = 3   # requests quoted per decision


@dataclass
class Outcome:
    """How one recorded request fared in an in-memory replay."""

    tier: str
    exchange: Exchange | None = None   # the recorded exchange that answered (None: a stub or a miss)
    stub: Rule | None = None

    @property
    def served(self) -> bool:
        return self.tier != "miss"


@dataclass
class Decision:
    rule: Rule
    action: str                        # kept | downgraded | dropped
    reason: str = ""
    evidence: list[dict[str, Any]] = field(default_factory=list)
    affected: int = 0                  # requests the rule turned into misses or into other responses
    served_by_rule: int = 0            # requests served with the rule that miss without it

    def to_dict(self) -> dict[str, Any]:
        rule = {k: v for k, v in self.rule.to_dict().items() if k in ("field", "host", "path", "method", "pattern")}
        return {"kind": self.rule.kind, **rule, "action": self.action, "reason": self.reason,
                "requests": self.affected, "evidence": self.evidence}


def _label(rule: Rule) -> str:
    what = rule.field or rule.pattern or rule.path
    return f"{rule.kind} {what} on {rule.host}{rule.path if rule.kind != 'path' else ''}"


class RuleTrial:
    """The recorded runs of a store, replayed against each other under any rule book."""

    def __init__(self, store: Store, capture_time: float | None = None, background: RuleBook | None = None):
        self.store = store
        runs, _cut = store.finished_runs()  # as inference: runs cut by a kill are left out
        self.exchanges = store.exchanges(run_ids=[r.id for r in runs])
        self.by_run: dict[int, list[Exchange]] = defaultdict(list)
        for ex in self.exchanges:
            self.by_run[ex.run_id].append(ex)
        self.compare = ResponseComparer(store, capture_time)
        self.background = background or RuleBook()

    def outcomes(self, items: list[tuple[str, Rule | None]], scope: list[Exchange] | None = None) -> dict[int, Outcome]:
        """Each recorded request's outcome (by exchange id) when replayed against the other runs, under
        the background rules and `items` ((domain, rule) pairs; None is a removed rule). With `scope`,
        only those requests, against only those exchanges: a request's candidates share its method,
        host and path, so what a rule scoped to them changes is decided among them."""
        book = RuleBook(self.background.by_domain.values())
        by_domain: dict[str, list[Rule]] = defaultdict(list)
        for domain, rule in items:
            # within a scope, a rule that meets none of its requests changes nothing (and costs lookups)
            if rule is not None and (scope is None or _in_scope(rule, domain, scope)):
                by_domain[domain].append(rule)
        for domain, members in by_domain.items():
            book.merge(RuleSet(domain, members))
        out: dict[int, Outcome] = {}
        if len(self.by_run) < 2:
            return out
        pool = self.exchanges if scope is None else scope
        for run_id in self.by_run:
            requests = [ex for ex in pool if ex.run_id == run_id]
            if not requests:
                continue
            others = [ex for ex in pool if ex.run_id != run_id]
            index = ReplayIndex(others, book)
            episode = f"trial-{run_id}"
            for ex in requests:
                view = ex.view
                stub = book.stub_for(view.method, view.host, view.path)
                if stub is not None:
                    out[ex.id or 0] = Outcome("stub", stub=stub)
                    continue
                match = index.match(view, episode, validators=Validators.of(ex.request_headers))
                out[ex.id or 0] = Outcome(match.tier, match.exchange)
        return out

    def same(self, a: Outcome, b: Outcome) -> bool:
        if a.exchange is not None and b.exchange is not None:
            return a.exchange.id == b.exchange.id or self.compare.same(a.exchange, b.exchange)
        if a.stub is not None and b.stub is not None:
            return a.stub.response == b.stub.response
        stub, other = (a, b) if a.stub is not None else (b, a)
        if stub.stub is None or other.exchange is None:
            return False
        answer = stub_response(stub.stub)   # what the Stubber would send
        body = self.store.bodies.get(other.exchange.response_body_digest)
        return answer.status_code == other.exchange.status and answer.content == body

    def truth(self, ex: Exchange) -> Outcome:
        return Outcome("recorded", ex)


def _in_scope(rule: Rule, domain: str, exchanges: list[Exchange]) -> list[Exchange]:
    """The recorded requests a rule can act on: its domain, method, host and path glob."""
    return [ex for ex in exchanges if registrable_domain(ex.view.host) == domain
            and rule.scope_matches(ex.view.method, ex.view.host, ex.view.path)]


def _evidence(ex: Exchange, before: Outcome, after: Outcome) -> dict[str, Any]:
    return {"run": ex.run_id, "method": ex.method, "url": ex.url, "without_rule": before.tier, "with_rule": after.tier}


def check_rules(store: Store, rulesets: dict[str, RuleSet], capture_time: float | None = None,
                background: RuleBook | None = None) -> tuple[dict[str, RuleSet], list[Decision]]:
    """The rule sets with every harmful inferred rule downgraded or dropped, and one decision per
    changed rule (kept rules are not listed). Hand-written rules are never judged."""
    trial = RuleTrial(store, capture_time, background)
    # scope: every rule keeps its domain so the rule book routes it as the inferred file would
    current: list[tuple[str, Rule | None]] = [(d, r) for d, rs in sorted(rulesets.items()) for r in rs.rules]
    decisions: list[Decision] = []
    if len(trial.by_run) < 2:
        return rulesets, decisions

    by_id = {ex.id or 0: ex for ex in trial.exchanges}
    for position in range(len(current)):
        domain, rule = current[position]
        if rule is None or rule.source != "inferred":
            continue
        scope = _in_scope(rule, domain, trial.exchanges)
        if not scope:
            continue   # a rule no recorded request meets cannot hurt here
        without = current[:position] + [(domain, None)] + current[position + 1:]
        base = trial.outcomes(without, scope)
        decision = _judge(trial, by_id, base, trial.outcomes(current, scope), rule)
        if decision.action == "downgraded":
            softer = replace(rule, kind="ignore", confidence=min(rule.confidence, 0.6),
                             note=f"downgraded from require: {decision.reason}")
            softened = current[:position] + [(domain, softer)] + current[position + 1:]
            retried = _judge(trial, by_id, base, trial.outcomes(softened, scope), softer)
            if retried.action == "kept":
                current = softened
            else:
                decision = Decision(rule, "dropped", f"{decision.reason}; as an ignore rule: {retried.reason}",
                                    decision.evidence + retried.evidence, decision.affected + retried.affected)
        if decision.action == "dropped":
            current = without   # positions stay: a removed rule is None
        if decision.action != "kept":
            decisions.append(decision)
    out: dict[str, RuleSet] = {}
    for domain, rule in current:
        if rule is not None:
            out.setdefault(domain, RuleSet(domain)).add(rule)
    for domain in rulesets:
        out.setdefault(domain, RuleSet(domain))
    return out, decisions


def _judge(trial: RuleTrial, by_id: dict[int, Exchange], base: dict[int, Outcome], with_rule: dict[int, Outcome],
           rule: Rule) -> Decision:
    lost, changed, gained = [], [], 0
    # a field fresh in every run (a cache-buster on a rotating ad) is ignored to serve the recorded
    # responses in order: which of the rotation a request gets is no wrong answer
    rotation = rule.kind == "ignore" and bool(rule.evidence.get("fresh_every_run"))
    for ex_id, before in base.items():
        after = with_rule.get(ex_id)
        if after is None:
            continue
        ex = by_id[ex_id]
        if before.served and not after.served:
            lost.append(_evidence(ex, before, after))
        elif before.served and after.served and not rotation and not trial.same(before, after) \
                and trial.same(before, trial.truth(ex)) and not trial.same(after, trial.truth(ex)):
            changed.append(_evidence(ex, before, after))
        elif after.served and not before.served:
            gained += 1
    if lost:
        action = "downgraded" if rule.kind == "require" else "dropped"
        return Decision(rule, action, f"{len(lost)} recorded request(s) served without it miss with it ({_label(rule)})",
                        lost[:EVIDENCE_SHOWN], len(lost), gained)
    if changed:
        return Decision(rule, "dropped", f"{len(changed)} recorded request(s) get another response with it than "
                        f"without it, and not the recorded one ({_label(rule)})", changed[:EVIDENCE_SHOWN],
                        len(changed), gained)
    return Decision(rule, "kept", served_by_rule=gained)


def summarize_decisions(decisions: list[Decision]) -> dict[str, Any]:
    return {"downgraded": sum(d.action == "downgraded" for d in decisions),
            "dropped": sum(d.action == "dropped" for d in decisions),
            "rules": [d.to_dict() for d in decisions]}


def infer_checked_rules(store: Store, capture_time: float | None = None, background: RuleBook | None = None
                        ) -> tuple[dict[str, RuleSet], list[Decision]]:
    """Rules inferred from a recording, then tried on its own runs (see the module doc)."""
    from weblica.cache.infer import infer_rules

    return check_rules(store, infer_rules(store, capture_time), capture_time, background)


def human_decisions(decisions: list[Decision]) -> list[str]:
    lines = []
    for d in decisions:
        lines.append(f"{d.action} {_label(d.rule)}: {d.reason}")
        for e in d.evidence:
            lines.append(f"    run {e['run']} {e['method']} {e['url']}: without the rule {e['without_rule']}, "
                         f"with it {e['with_rule']}")
    return lines
