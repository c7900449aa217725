"""Page confusers for the cache tasks a build keeps: the other values of the gold's shape that the recorded
HTML documents show, put on each `answer_match` check that has none (`confusers_from="page"`), so that an
answer naming the gold beside another author, price or date of the site fails as it does on a synth task.

The pages near the gold are those the solving recorded run fetched; the gold's frame ("By Anna Berg") is
looked for on every recorded page (the crawl's too: another article's "By Olle Lind").
"""
from __future__ import annotations

from dataclasses import replace
from html.parser import HTMLParser
from pathlib import Path
from typing import Any, Sequence

from weblica.scoring.answer import check_answer
from weblica.scoring.page_confusers import check_confusers
from weblica.env.task import Task

# elements that start a line of their own on screen (cells too: page_confusers reads each as a line)
BLOCK_TAGS = {"address", "article", "aside", "blockquote", "br", "caption", "dd", "details", "div", "dl",
              "dt", "fieldset", "figcaption", "figure", "footer", "form", "h1", "h2", "h3", "h4", "h5", "h6",
              "header", "hr", "label", "legend", "li", "main", "nav", "ol", "option", "p", "pre", "section",
              "summary", "table", "td", "th", "tr", "ul"}
# never shown as text, or a control's label ("Search", "Add to cart"), which is no value of any field
HIDDEN_TAGS = {"head", "script", "style", "noscript", "template", "svg", "button"}


class _Text(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.hidden = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in HIDDEN_TAGS:
            self.hidden += 1
        elif tag in BLOCK_TAGS:
            self.parts.append("\n")

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in BLOCK_TAGS:
            self.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in HIDDEN_TAGS:
            self.hidden = max(0, self.hidden - 1)
        elif tag in BLOCK_TAGS:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if not self.hidden:
            self.parts.append(" ".join(data.split()) if data.strip() else " ")


def html_text(html: str) -> str:
    """The text a page shows, one line per block element (scripts, styles and the head left out)."""
    parser = _Text()
    try:
        parser.feed(html)
        parser.close()
    except Exception:   # a page the parser chokes on keeps the text read so far
        pass
    lines = (line.strip() for line in "".join(parser.parts).split("\n"))
    return "\n".join(line for line in lines if line)


def recorded_texts(recording: str | Path, run_ids: list[int] | None = None) -> list[str]:
    """The text of each distinct HTML document recorded in `run_ids` (every run by default)."""
    from weblica.cache.crawl import recorded_pages
    from weblica.cache.store import Store

    with Store.open_dir(recording, readonly=True) as store:
        pages = recorded_pages(store, run_ids)
    return list(dict.fromkeys(html_text(html) for _, html in pages))


def with_page_confusers(task: Task, recording: str | Path, solving_run: int,
                        solved_answers: Sequence[str] = ()) -> tuple[Task, int]:
    """`task` with page confusers on each `answer_match` check that has none, and how many it got. The
    answers that solved the task (live and under the cache) must still pass: a confuser one of them
    names is left out, so the stricter check never turns a kept task's recorded solution into a failure."""
    if not any(c.type == "answer_match" and not c.confusers for c in task.checks):
        return task, 0
    near = recorded_texts(recording, [solving_run])
    every = recorded_texts(recording)

    def passing(check: Any, answers: Sequence[str]) -> list[str]:
        return [a for a in answers if check_answer(check, a, instruction=task.instruction).passed]

    checks: list[Any] = []
    added = 0
    for check in task.checks:
        found = [] if check.confusers else check_confusers(check, task.instruction, near, every)
        solutions = passing(check, [a for a in solved_answers if a]) if found else []
        found = [v for v in found if len(passing(replace(check, confusers=[v]), solutions)) == len(solutions)]
        if found and len(passing(replace(check, confusers=found), solutions)) == len(solutions):
            check = replace(check, confusers=found, confusers_from="page")
            added += len(found)
        checks.append(check)
    return replace(task, checks=checks), added
