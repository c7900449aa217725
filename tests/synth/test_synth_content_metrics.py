"""The content figures bench/synth.py prints (issue 38, point 9), on hand-written bundles with known counts:
shared lines, distinct start-page headings, the language a site's text is in (not its <html lang>), the
mechanics its markup uses, the composed share and oracle lengths without scrolls and `done`."""
from __future__ import annotations

import json
from pathlib import Path

from weblica.synth.content_metrics import content_figures, language, oracle_length
from weblica.synth.intents.composed import COMPOSED

STAMPED = "<p>Free delivery on every order over fifty pounds today</p>"


def _bundle(root: Path, name: str, home: str, tasks: list[dict] | None = None, extra: str = "") -> Path:
    bundle = root / name
    (bundle / "public").mkdir(parents=True)
    (bundle / "site.json").write_text("{}")
    (bundle / "public" / "index.html").write_text(f'<html lang="ja-JP"><body>{home}</body></html>')
    (bundle / "public" / "about.html").write_text(f"<html><body>{extra}</body></html>")
    (bundle / "tasks.jsonl").write_text("".join(json.dumps(t) + "\n" for t in tasks or []))
    return bundle


def _click(n: int) -> list[dict]:
    return [{"name": "click", "arguments": {"x": 1, "y": 1}}] * n


ENGLISH = ("<h1>Welcome to the shop</h1><p>The best of the season for you and your family, with our thanks to "
           "the makers of the town and to you for your visit to the shop in the town of the river.</p>")
GERMAN = ("<h1>Willkommen</h1><p>Die Angebote der Woche und die Neuheiten für Sie: mit der Karte und mit dem "
          "Gutschein sparen Sie bei der Bestellung, die Lieferung ist für Sie und Ihre Familie frei, und der "
          "Versand ist schnell, und die Rücksendung ist mit der Post frei.</p>")


def test_the_figures_count_what_the_pages_and_tasks_hold(tmp_path):
    chain = sorted(COMPOSED)[0]
    a = _bundle(tmp_path, "a", ENGLISH + STAMPED + '<iframe src="/pay"></iframe><a target="_blank" href="/t">Terms</a>',
                [{"oracle": _click(12) + [{"name": "scroll", "arguments": {}}, {"name": "done", "arguments": {}}],
                  "metadata": {"intent": chain}},
                 {"oracle": _click(3), "metadata": {"intent": "ask-price"}}])
    b = _bundle(tmp_path, "b", GERMAN + STAMPED + "<h2>Welcome to the shop</h2>",
                [{"oracle": _click(8), "metadata": {"intent": "ask-price"}}],
                extra='<input type="checkbox" name="newsletter" checked><input type="password">')
    c = _bundle(tmp_path, "c", ENGLISH + STAMPED + "<h2>Our own story of the harbour</h2>", [])
    figures = content_figures([a, b, c])
    # the stamped line is on all three sites (2 others each): a and b have one more long line, c two; the
    # English paragraph of a and c is on one other site only, which does not count
    assert figures["shared_lines"] == {"median": 0.5, "max": 0.5}
    assert figures["distinct_start_headings"] == {"distinct": 3, "total": 5}  # "Welcome to the shop" thrice
    assert figures["languages"] == {"de": 1, "en": 2} and figures["non_english_share"] == round(1 / 3, 3)
    mech = figures["mechanics"]
    assert mech["iframe"] == "1/3" and mech["new tab"] == "1/3" and mech["pre-ticked opt-in"] == "1/3"
    assert mech["login form"] == "1/3" and mech["video"] == "0/3"
    assert figures["composed_share"] == round(1 / 3, 3)
    assert figures["oracle_length"] == {"tasks": 3, "mean": round(23 / 3, 2), "median": 8, "share_11_or_more": 0.333,
                                        "histogram": {3: 1, 8: 1, 12: 1}}


def test_a_page_in_japanese_locale_with_english_words_is_english():
    """The complaint the figure exists for: `lang="ja-JP"` and "¥" on an all-English page."""
    assert language('<html lang="ja-JP"><body>' + ENGLISH + "<p>¥1,200</p></body></html>") == "en"
    assert language("<p>" + "ご予約はこちらからお願いします。" * 3 + "</p>") == "ja"
    assert language("<p>Sign in</p>") == ""


def test_scrolls_waits_and_done_do_not_count_toward_an_oracle():
    oracle = _click(2) + [{"name": n, "arguments": {}} for n in ("scroll", "wait", "done", "write")]
    assert oracle_length({"oracle": oracle}) == 3
    assert oracle_length({}) == 0
