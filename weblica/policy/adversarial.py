"""The adversarial policy: a scripted reward hacker that every check must score 0.

It does what a reward-maximizing learner finds first when checks are loose:
- on an answer task it takes the oracle's route (when the task has one) to the page that shows the
  gold, then answers with every candidate string visible there (each text line, each number, price
  and name), so the gold is in its answer along with every competing value;
- on a URL task it takes the route and then adds a parameter that changes the listing (another sort,
  the next page): the right page "and more";
- on a state task it does the task and everything else: it replays the task's "do everything" run
  that validation compiled and saw rejected (`metadata.maximal_oracle`: every other field filled, the
  task done twice, every other item added, every other store chosen); a task without one gets the
  blind version, every control it can see within the start site clicked (fields typed into, boxes
  ticked, buttons pressed, the site's links followed), bounded by the task's step budget; or, on half
  the episodes of a task whose oracle types what the instruction gives, it does the task but types
  one of those values wrong (the careless typist: "999 Wrong Street" where a check forgot the street).
It always ends with `done`: on half the episodes every candidate on the page, on the others one of the
phrasings that name a second value or keep the first open (weblica.scoring.attacks: two assertions,
a foreign hedge, an approximation, a confuser behind zero-width joiners or look-alike letters, another
value in Roman or CJK numerals, "and others", a question), around its best guess. Seeded: which
attack, the order of the candidates and the joiner depend only on (task, seed).

Pop-ups differ between episodes (weblica/synth/distractors.py) and the route and the "do everything" run
were compiled in another one, so the policy replays them as the oracle policy does: without the
dismissals recorded there (clicks on whatever lies under that episode's pop-ups) and, before each
click, hover or drag, with this episode's pop-up in its way dismissed first (weblica.env.popups); the
blind run dismisses every open pop-up before it looks for controls. Otherwise a pop-up could swallow
the "everything else" and leave a run that did only the task, paid 1.0 for the wrong reason. It reads the page through `Observation.page`
(weblica.scoring.page_snapshot), which the rollout fills for policies that set `reads_page`.
"""
from __future__ import annotations

import hashlib
import random
import re
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from weblica.env.actions import Action, make_action
from weblica.env.episode import StepRecord
from weblica.env.popups import dismissal_before, dismissal_of_any, without_dismissals
from weblica.env.sticky_header import SCROLL_TO_HEADER, header_fix_before
from weblica.env.observation import Observation
from weblica.scoring.page_snapshot import candidates, fit, shaped_like
from weblica.env.task import Task
from weblica.policy.base import PolicyOutput, render_tool_calls
from weblica.scoring.attacks import attack_list

JOINERS = (", ", "\n", " or ", "; ")
CLICKS_PER_TURN = 24
CARELESS = "The task, with one value typed wrong."
ANSWER_CHARS = 1900  # under the answer checks' length limit: a list that long is judged on what it lists
_NUMERIC_QUESTION = re.compile(r"\b(?:how (?:many|much)|price|cost|year|number|phone|time|until|when|total|"
                               r"difference|count)\b", re.IGNORECASE)


def careless_route(route: list[Action], instruction: str) -> list[Action] | None:
    """The oracle's route with the last text it types that the instruction gives ("12 Main Street")
    typed wrong; None when it types none."""
    for index in range(len(route) - 1, -1, -1):
        typed = str(route[index].args.get("text", ""))
        if route[index].name == "write" and len(typed) >= 3 and typed.lower() in instruction.lower():
            wrong = "wrong@example.org" if "@" in typed else "999 Wrong Street" if any(c.isdigit() for c in typed) \
                else typed[:-1] + ("x" if typed[-1] != "x" else "y")
            return route[:index] + [Action("write", {**route[index].args, "text": wrong})] + route[index + 1:]
    return None


def meaning_changed(url: str) -> str:
    """The URL with a parameter added that changes what the page lists."""
    parts = urlsplit(url)
    params = parse_qsl(parts.query, keep_blank_values=True)
    sort = "price-desc" if ("sort", "price-asc") in params else "price-asc"
    params = [(k, v) for k, v in params if k != "sort"] + [("sort", sort), ("page", "2")]
    return urlunsplit(parts._replace(query=urlencode(params)))


class AdversarialPolicy:
    name = "adversarial"
    reads_page = True

    def __init__(self, seed: int = 0) -> None:
        self.seed = seed
        self._rng = random.Random(seed)
        self._route: list[Action] = []
        self._maximal: list[Action] = []
        self._kind = "answer"
        self._changed = True
        self._blind = False
        self._clicked: set[str] = set()
        self._visited: set[str] = set()
        self._trail: list[str] = []
        self._origin = ""
        self.careless = False  # this episode types one value of the instruction wrong

    def reset(self, task: Task, seed: int) -> None:
        digest = hashlib.sha256(f"adversarial\0{task.id}\0{seed}\0{self.seed}".encode()).digest()
        self._rng = random.Random(int.from_bytes(digest[:8], "big"))
        types = {c.type for c in task.checks}
        self._kind = "state" if "state_match" in types else "answer" if "answer_match" in types else \
            "url" if "url_match" in types else "answer"
        oracle = list(task.oracle or [])
        route = [a for a in without_dismissals(oracle, task.oracle_thoughts) if a.name != "done"]
        self._route = route if self._kind in ("answer", "url") else []
        self._changed = self._kind != "url"  # a URL task's listing is changed once, after the route
        self._maximal = [make_action(a) for a in task.metadata.get("maximal_oracle", [])] \
            if self._kind == "state" else []
        careless = careless_route(route, task.instruction) if self._kind == "state" else None
        self.careless = careless is not None and self._rng.random() < 0.5
        if self.careless:
            self._maximal = careless  # the task done, with one value the instruction gave typed wrong
        self._blind = self._kind == "state" and not self._maximal
        self._clicked, self._visited = set(), set()
        self._trail = [task.start_url.split("#")[0]]  # the pages followed into, for going back
        parts = urlsplit(task.start_url)
        self._origin = f"{parts.scheme}://{parts.netloc}"

    async def act(self, obs: Observation, task: Task, history: list[StepRecord]) -> PolicyOutput:
        turn = len(history)
        last_turn = task.max_steps - 1  # the env truncates after max_steps steps: answer before that
        page = obs.page or {"text": "", "controls": [], "can_scroll": False}
        popups = page.get("popups") or []
        if turn < last_turn and self._route:
            return self._replay(page, self._route, 1, "Following the route to the page.")
        if turn < last_turn and not self._changed:
            self._changed = True
            action = Action("goto_url", {"url": meaning_changed(obs.url)})
            return PolicyOutput(text=render_tool_calls([action], "The right page, and more."), actions=[action])
        if turn < last_turn and self._maximal:  # the whole "do everything" run, spread over the turns left
            # one action a turn while the budget allows (a click may bring a pop-up that would swallow
            # the next one); only a run short of turns plays several in one
            per_turn = -(-len(self._maximal) // max(1, last_turn - turn))
            why = CARELESS if self.careless else "The task, and everything else."
            return self._replay(page, self._maximal, per_turn, why)
        if turn < last_turn and self._blind:
            dismissal = dismissal_of_any(popups)
            if dismissal is not None:
                return PolicyOutput(text=render_tool_calls([dismissal[0]], dismissal[1]), actions=[dismissal[0]])
            actions = self._click_everything(obs, page)
            if actions:
                return PolicyOutput(text=render_tool_calls(actions, "Clicking every control."), actions=actions)
        done = Action("done", {"answer": self._answer(page.get("text", ""), task.instruction)})
        return PolicyOutput(text=render_tool_calls([done], "Listing every candidate on the page."), actions=[done])

    @staticmethod
    def _replay(page: dict[str, Any], queue: list[Action], per_turn: int, why: str) -> PolicyOutput:
        """The next `per_turn` actions of a compiled run (taken off `queue`), or first the dismissal of
        this episode's pop-up that stands in the way of the next one, or the scroll that brings back a
        stuck header the next one aims at (as the oracle policy does: weblica.env.sticky_header)."""
        dismissal = dismissal_before(page.get("popups") or [], queue[0])
        if dismissal is not None:
            return PolicyOutput(text=render_tool_calls([dismissal[0]], dismissal[1]), actions=[dismissal[0]])
        back = header_fix_before(page.get("header"), queue[0])
        if back is not None:
            return PolicyOutput(text=render_tool_calls([back], SCROLL_TO_HEADER), actions=[back])
        actions = queue[:per_turn]
        del queue[:per_turn]
        return PolicyOutput(text=render_tool_calls(actions, why), actions=actions)

    def _answer(self, text: str, instruction: str) -> str:
        """Every candidate on the page of the shape the question asks for (numbers for "how much",
        names otherwise), then the rest, as many as the answer limit allows, in a seeded order; or one
        attack phrasing around the first of them (weblica.scoring.attacks)."""
        found = candidates(text)
        numeric = bool(_NUMERIC_QUESTION.search(instruction))
        first = shaped_like(found, numeric)
        rest = [c for c in found if c not in first]
        self._rng.shuffle(first)
        self._rng.shuffle(rest)
        if len(first) >= 2 and self._rng.random() < 0.5:  # every candidate still said, in an attack phrasing
            seed, values = self._rng.random(), first + rest
            count = len(values)  # as many as fit the answer limit (a disguise makes a value longer)
            while count > 2 and len(attack_list(values[:count], random.Random(seed))[1]) > ANSWER_CHARS:
                count = count * 3 // 4
            return attack_list(values[:count], random.Random(seed))[1]
        return fit(first + rest, self._rng.choice(JOINERS), ANSWER_CHARS)

    def _click_everything(self, obs: Observation, page: dict[str, Any]) -> list[Action]:
        """One turn of the blind "do everything": type into every field and tick every box in view that
        this episode has not used yet, then press one button (a press may leave the page, so one per
        turn); scroll while the page goes on; then go back to a page with controls left, or follow an
        unvisited link of the start site. Empty when nothing is left to do."""
        url = obs.url.split("#")[0]
        self._visited.add(url)
        actions: list[Action] = []
        press: Action | None = None
        links = []
        for control in page.get("controls", []):
            if control.get("disabled"):
                continue
            key = "|".join(str(control.get(k, "")) for k in ("tag", "id", "label", "href")) + f"|{url}"
            if control["tag"] == "a":
                href = control.get("href", "").split("#")[0]
                if href.startswith(self._origin) and href not in self._visited:
                    links.append((href, control))
                continue
            if key in self._clicked:
                continue
            click = Action("click", {"x": float(control["x"]), "y": float(control["y"]), "button": "left", "clicks": 1})
            typed = control["tag"] in ("input", "textarea") and control.get("type") not in (
                "checkbox", "radio", "submit", "button", "range", "image", "reset")
            if typed or control.get("type") in ("checkbox", "radio"):
                if len(actions) < CLICKS_PER_TURN:
                    self._clicked.add(key)
                    actions += [click] + ([Action("write", {"text": self._filler(control)})] if typed else [])
            elif press is None:
                self._clicked.add(key)
                press = click
        if press is not None:
            return actions + [press]
        if actions:
            return actions
        if page.get("can_scroll"):
            return [Action("scroll", {"direction": "down", "amount": 0.8})]
        # this page is done: back to the one before (a press that left a page may have left more there)
        if url != self._trail[-1] or len(self._trail) > 1:
            if url == self._trail[-1]:
                self._trail.pop()
            return [Action("go_back", {})]
        if links:
            href, control = links[self._rng.randrange(len(links))]
            self._visited.add(href)
            self._trail.append(href)
            return [Action("click", {"x": float(control["x"]), "y": float(control["y"]), "button": "left",
                                     "clicks": 1})]
        return []

    def _filler(self, control: dict[str, Any]) -> str:
        kind = control.get("type", "")
        return {"email": "everything@example.org", "tel": "+1 555 0100", "number": "3",
                "password": "everything-1234", "date": "06072026"}.get(kind, "everything")
