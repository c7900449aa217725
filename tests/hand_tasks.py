"""Four hand-written tasks on the foundation test site (tests/sites.py): a click, typing with Enter, a form
submission and a read, each with its oracle; the tests of `weblica run`, its pipelines and its exports play them."""
from weblica.env.task import Task


def hand_tasks(url):
    def act(name, **args):
        return {"name": name, "arguments": args}

    return [Task.from_dict(d) for d in [
        {"id": "open-search", "start_url": url + "/", "instruction": "Press the Search button.",
         "checks": [{"type": "url_match", "expected": url + "/second"}],
         "oracle": [act("click", x=150, y=115), act("done", answer="")], "skill": "navigation"},
        {"id": "name-enter", "start_url": url + "/", "instruction": "Type Bob as your name and press Enter; say the name.",
         "checks": [{"type": "answer_match", "expected": "bob"}],
         "oracle": [act("click", x=150, y=215), act("write", text="Bob"), act("press_keys", keys=["Enter"]),
                    act("done", answer="Bob")], "skill": "forms"},
        {"id": "submit-form", "start_url": url + "/form", "instruction": "Submit the word hello.",
         "checks": [{"type": "url_match", "expected": url + "/submit"},
                    {"type": "answer_match", "expected": "got hello", "mode": "regex"}],
         "oracle": [act("type", text="hello", x=200, y=60), act("click", x=430, y=60),
                    act("done", answer="got hello")], "skill": "forms"},
        {"id": "read-second", "start_url": url + "/second", "instruction": "What does the page say under the heading?",
         "checks": [{"type": "answer_match", "expected": "results"}], "max_steps": 4,
         "oracle": [act("done", answer="Results")], "skill": "reading"},
    ]]
