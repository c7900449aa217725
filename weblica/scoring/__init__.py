"""Scoring: everything that decides an episode's reward, in one room.

- `model`: a task's checks (`Check`) and what they say of an episode (`CheckResult`);
- `registry`: one entry per (type, mode): how it scores, how a page shows its gold, its negatives;
  `checks`: `evaluate_checks` / `run_check` over the registry;
- answers: `answer` (the modes: exact, numeric, set, regex, date, refusal), `grammar` and `vocabulary`
  (an answer passes only as the gold said plainly: an allow-list), `context` (the question's own values,
  confusers, spoilers), `assertion` (denials, bounds, hedges, lists), `refusal`, and the readers under
  them: `text` (normalization: NFKC, invisible characters, look-alikes through `confusables`), `numbers`
  (locale notations, number words, Roman and CJK numerals, disguised digits), `dates`;
- state and URLs: `state` (paths into the state, one function per mode; passwords through the site's
  verifier);
- what validation asks the checks: `negatives` (answers, URLs, states, a named field typed wrong) and
  `attacks` (the phrasings a reward hacker tries, and the ones a person writes);
- where a page tells the checks more: `page_confusers`, `page_snapshot`;
- judges for tasks without checks: `judge` (the reward judge), `rubric` and `fact_groups` (WebGym
  rubrics), `benchmark_judges` (live benchmarks' protocols); `reward` puts it together for training.
"""
