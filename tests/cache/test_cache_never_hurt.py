"""Rules never hurt (issue 20, point 8): an inferred rule is tried on the recorded runs themselves, each
run's requests replay-matched against the other runs' exchanges with and without it; a `require` that
turns served requests into misses is downgraded (or dropped), a rule that changes a served response
away from the recorded one is dropped, and the report names the rule with its evidence."""
import json
import time

from click.testing import CliRunner

from weblica.cache.exchange import Exchange
from weblica.cache.infer import infer_rules, rulebook
from weblica.cache.matcher import ReplayIndex
from weblica.cache.rulecheck import RuleTrial, check_rules
from weblica.cache.rules import RuleBook, load_rules
from weblica.cache.store import Store
from weblica.cli import get_cli

NOW = time.time()
JSON = [("Content-Type", "application/json")]


class Rec:
    def __init__(self, path):
        self.store = Store.open_dir(path, create=True)
        self.run, self.seq = None, 0

    def new_run(self):
        self.run, self.seq = self.store.new_run("record"), 0

    def add(self, url, body):
        ex = Exchange(method="GET", url=url, status=200, response_headers=list(JSON), run_id=self.run, seq=self.seq,
                      started=NOW, ended=NOW)
        self.seq += 1
        self.store.add_exchange(ex, None, body.encode())


def feed_recording(path):
    """`v` alone changes the answer and v=1 answers the same in both runs, so inference requires it;
    but run 2 also asked v=3, which run 1 never did: with the require it is a miss, without it served."""
    rec = Rec(path)
    rec.new_run()
    rec.add("https://www.feed.test/feed?v=1&a=1&b=2", '{"items": ["A"]}')
    rec.new_run()
    rec.add("https://www.feed.test/feed?v=1&a=1&b=2", '{"items": ["A"]}')
    rec.add("https://www.feed.test/feed?v=3&a=1&b=2", '{"items": ["C"]}')
    return rec


def served(store, rules, run):
    """Of `run`'s requests replayed against the other runs, how many are served."""
    others = [ex for ex in store.exchanges() if ex.run_id != run]
    index = ReplayIndex(others, rules)
    return sum(index.match(ex.view, "e").tier != "miss" for ex in store.exchanges() if ex.run_id == run)


def test_a_require_that_turns_served_requests_into_misses_is_downgraded_to_ignore(tmp_path):
    rec = feed_recording(tmp_path / "rec")
    inferred = infer_rules(rec.store, NOW)
    assert rulebook(inferred).required("GET", "www.feed.test", "/feed", {"query:v"}) == {"query:v"}
    run2 = rec.store.runs()[1].id
    assert served(rec.store, rulebook(inferred), run2) == 1 < served(rec.store, RuleBook(), run2) == 2
    checked, decisions = check_rules(rec.store, inferred, NOW)
    [decision] = decisions
    assert decision.action == "downgraded" and decision.rule.field == "query:v"
    assert decision.evidence == [{"run": run2, "method": "GET", "url": "https://www.feed.test/feed?v=3&a=1&b=2",
                                  "without_rule": "scored", "with_rule": "miss"}]
    book = rulebook(checked)
    assert not book.required("GET", "www.feed.test", "/feed", {"query:v"})
    assert book.ignored("GET", "www.feed.test", "/feed", {"query:v"}) == {"query:v"}
    assert served(rec.store, book, run2) == 2
    rec.store.close()


def test_a_rule_that_serves_another_response_than_without_it_is_dropped(tmp_path):
    rec = Rec(tmp_path / "rec")
    rec.new_run()
    rec.add("https://www.feed.test/list?page=1&sid=aa11bb22cc33dd44", '{"items": ["first"]}')
    rec.add("https://www.feed.test/list?page=2&sid=aa11bb22cc33dd44", '{"items": ["second"]}')
    rec.new_run()
    rec.add("https://www.feed.test/list?page=2&sid=ee55ff66aa77bb88", '{"items": ["second"]}')
    # a bad rule as inference might write it: ignoring `page` serves page 1 for page 2 (in recorded order)
    from weblica.cache.rules import Rule, RuleSet

    sid = Rule(kind="ignore", field="query:sid", host="www.feed.test", path="/list")   # hand-written, right
    bad = Rule(kind="ignore", field="query:page", host="www.feed.test", path="/list", source="inferred",
               confidence=0.6)
    checked, decisions = check_rules(rec.store, {"feed.test": RuleSet("feed.test", [sid, bad])}, NOW)
    [decision] = decisions
    assert decision.action == "dropped" and "another response" in decision.reason
    assert decision.evidence[0]["url"].endswith("page=2&sid=ee55ff66aa77bb88")
    assert decision.evidence[0]["without_rule"] == decision.evidence[0]["with_rule"] == "normalized"
    assert checked["feed.test"].rules == [sid]
    # a hand-written rule is obeyed as written, never judged
    manual = Rule(kind="ignore", field="query:page", host="www.feed.test", path="/list")
    checked, decisions = check_rules(rec.store, {"feed.test": RuleSet("feed.test", [sid, manual])}, NOW)
    assert not decisions and checked["feed.test"].rules == [sid, manual]
    rec.store.close()


def test_helpful_rules_are_kept_and_one_run_is_left_alone(tmp_path):
    rec = Rec(tmp_path / "rec")
    for run, cb in enumerate(("4718293047", "9182736450")):
        rec.new_run()
        rec.add(f"https://ads.feed.test/ad?slot=side&cb={cb}", '{"text": "ad %d"}' % run)
    inferred = infer_rules(rec.store, NOW)
    checked, decisions = check_rules(rec.store, inferred, NOW)
    assert not decisions
    assert rulebook(checked).ignored("GET", "ads.feed.test", "/ad", {"query:cb"}) == {"query:cb"}
    trial = RuleTrial(rec.store, NOW)
    assert {o.tier for o in trial.outcomes([(d, r) for d, rs in checked.items() for r in rs.rules]).values()} \
        == {"normalized"}
    rec.store.close()
    one = Rec(tmp_path / "one")
    one.new_run()
    one.add("https://www.feed.test/feed?v=1", "{}")
    assert check_rules(one.store, infer_rules(one.store, NOW), NOW)[1] == []
    one.store.close()


def test_rules_infer_reports_the_downgrade_through_the_cli(tmp_path):
    feed_recording(tmp_path / "rec").store.close()
    out = tmp_path / "rules"
    result = CliRunner().invoke(get_cli(), ["rules", "infer", str(tmp_path / "rec"), "--out", str(out), "--json"],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    summary = json.loads(result.output)
    [rule] = summary["never_hurt"]["rules"]
    assert summary["never_hurt"]["downgraded"] == 1 and rule["field"] == "query:v" and rule["action"] == "downgraded"
    assert rule["evidence"][0]["without_rule"] == "scored" and rule["evidence"][0]["with_rule"] == "miss"
    written = load_rules(out / "feed.test.yaml")
    assert not written.of_kind("require") and [r.field for r in written.of_kind("ignore")] == ["query:v"]
    human = CliRunner().invoke(get_cli(), ["rules", "infer", str(tmp_path / "rec"), "--out", str(out)])
    assert "downgraded ignore query:v" not in human.output and "downgraded require query:v" in human.output
    assert "without the rule scored, with it miss" in human.output
