"""Genre flows (weblica/synth/genres): one site per genre is built and validated in real Chromium; the
flow's tasks are kept (their oracles pass, every negative is rejected), the wrong action (another
flight, slot, account or job) fails the state checks, and the same seed gives the same bytes."""
from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from weblica.env.task import load_tasks, save_tasks
from weblica.scoring.checks import evaluate_checks
from weblica.synth.intents.difficulty import planned
from weblica.synth.generate import build_site, keep_valid, write_unvalidated
from weblica.synth.genres.registry import FLOWS
from weblica.synth.intents import INTENTS, MIN_PHRASINGS
from weblica.synth.spec import sample_spec

# genre -> (skill the site is built with, seed, prefix of the flow's intents)
GENRES = {"travel": ("search", 21, "travel-"), "banking": ("forms", 22, "banking-"),
          "government": ("search", 5, "gov-"), "healthcare": ("forms", 24, "health-"), "jobs": ("search", 25, "jobs-")}


def flow_tasks(path: Path, prefix: str) -> list:
    return [t for t in load_tasks(path / "tasks.jsonl") if t.metadata.get("intent", "").startswith(prefix)]


@pytest.fixture(scope="module")
def validated(tmp_path_factory):
    """One site per genre, only its flow's tasks kept in the bundle (the skill's are tested elsewhere),
    all validated in one browser."""
    out = tmp_path_factory.mktemp("flows")
    paths, generated = {}, {}
    for genre, (skill, seed, prefix) in GENRES.items():
        path = write_unvalidated(sample_spec(seed, skill, genre), out)
        tasks = flow_tasks(path, prefix)
        save_tasks(tasks, path / "tasks.jsonl")
        paths[genre], generated[genre] = path, tasks
    results = asyncio.run(keep_valid(list(paths.values()), concurrency=6))
    return paths, generated, {r.site_id: r for r in results}


def test_every_genre_has_a_registered_flow_with_grammatical_intents():
    assert set(GENRES) <= set(FLOWS)
    for genre, (skill, seed, prefix) in GENRES.items():
        site = build_site(sample_spec(seed, skill, genre))
        drafts = [d for d in site.tasks if d.intent.startswith(prefix)]
        assert 3 <= len(drafts) <= 6, (genre, len(drafts))
        assert any(d.checks[0].type == "state_match" for d in drafts), genre  # an action, not only questions
        assert all(d.difficulty == planned(d.plan) for d in drafts), genre  # computed, never typed
        for d in drafts:
            assert len(INTENTS[d.intent].phrasings) >= MIN_PHRASINGS
            assert d.instruction[0].isupper() and d.instruction.rstrip()[-1] in ".?", d.instruction
            assert " a a" not in d.instruction and " a e" not in d.instruction.lower().replace(" a email", ""), d.instruction
            assert "maker" not in d.instruction.lower() and "cart" not in d.instruction.lower(), d.instruction
            assert not any(w in d.instruction.lower() for w in ("click", "use the search", "scroll")), d.instruction


def test_other_categories_get_no_flow_pages():
    site = build_site(sample_spec(3, "search", "books"))
    assert not any(p.startswith(("/flights", "/banking", "/doctors", "/jobs", "/services")) for p in site.pages)


def test_flow_tasks_are_kept_and_every_negative_rejected(validated):
    paths, generated, results = validated
    for genre, path in paths.items():
        result = results[path.name]
        assert result.tasks_kept == len(generated[genre]) >= 3, (genre, result.failures)
        kept = load_tasks(path / "tasks.jsonl")
        assert all(t.oracle for t in kept)
        # the adversarial negatives were really tried, and all rejected
        assert result.negatives_tried == result.negatives_rejected, (genre, result.negatives_tried)
        assert result.negatives_tried.get("noop") == len(kept)
        if any(c.type == "state_match" for t in kept for c in t.checks):
            assert result.negatives_tried.get("maximal", 0) >= 1, genre
            assert result.negatives_tried.get("altered_state", 0) >= 3, genre


def _state_task(path: Path, intent: str):
    return next(t for t in load_tasks(path / "tasks.jsonl") if t.metadata.get("intent") == intent)


def _wrong_plans(paths: dict[str, Path]) -> list[tuple[str, object, list[dict]]]:
    """Per genre, a state task and the same task done with the wrong thing: another flight, slot,
    account, job or district."""
    out = []
    data = {g: json.loads((p / "data.json").read_text()) for g, p in paths.items()}

    task = _state_task(paths["travel"], "travel-book-earliest")
    flight = next(s["sel"] for s in task.metadata["plan"] if "[data-fare-link]" in s.get("sel", ""))
    fid = flight.split("=")[1].split("]")[0]
    booked = next(f for f in data["travel"]["flights"] if f["id"] == fid)
    other = next(f for f in data["travel"]["flights"] if f["id"] != fid and
                 (f["from"], f["to"], f["day"]) == (booked["from"], booked["to"], booked["day"]))
    out.append(("travel", task, [dict(s, sel=s["sel"].replace(f"={fid}]", f"={other['id']}]")) if "sel" in s else s
                                 for s in task.metadata["plan"]]))

    task = _state_task(paths["banking"], "banking-own-transfer")
    target = next(s for s in task.metadata["plan"] if s.get("sel") == "#f-to")
    other = next(a["id"] for a in data["banking"]["bank"]["accounts"] if a["id"] != target["value"])
    out.append(("banking", task, [dict(s, value=other) if s is target else s for s in task.metadata["plan"]]))

    task = _state_task(paths["healthcare"], "health-book-earliest-in-network")
    slot = next(s["sel"] for s in task.metadata["plan"] if "data-slot-link" in s.get("sel", ""))
    sid = slot.split("=")[1].rstrip("]")
    doctor = next(d for d in data["healthcare"]["doctors"] if any(s["id"] == sid for s in d["slots"]))
    later = next(s for s in doctor["slots"] if s["open"] and s["id"] != sid)
    out.append(("healthcare", task, [dict(s, sel=f"[data-slot-link={later['id']}]") if s.get("sel") == slot else s
                                     for s in task.metadata["plan"]]))

    task = _state_task(paths["jobs"], "jobs-save-best-paid-remote")
    saved = next(c.expected for c in task.checks if c.path == "saved_jobs.0.job")
    other = next(j for j in data["jobs"]["jobs"] if j["id"] != saved)
    out.append(("jobs", task, [{"op": "goto", "url": task.start_url.rsplit("/jobs", 1)[0] + f"/jobs/{other['slug']}"},
                               {"op": "click", "sel": "#save-job"}]))

    task = _state_task(paths["government"], "gov-apply-parking")
    district = next(s for s in task.metadata["plan"] if s.get("sel") == "#f-district")
    options = sorted({o["district"] for o in data["government"]["offices"]})
    other = next(d for d in options if d != district["value"])
    out.append(("government", task, [dict(s, value=other) if s is district else s for s in task.metadata["plan"]]))
    return out


def test_the_wrong_action_fails_the_state_checks(validated):
    """Run each wrong plan in Chromium against the real site server: it stores something (the run is
    not a no-op), and the task's checks reject what it stored."""
    from playwright.async_api import async_playwright

    from weblica.browser.launcher import context_kwargs, launch_browser
    from weblica.serve.backend import SynthBackend
    from weblica.serve.server import SiteServer
    from weblica.synth.player import Compiler, RequestTracker, settle

    paths, _, _ = validated
    cases = _wrong_plans(paths)

    async def run() -> list[tuple[str, float, dict]]:
        scores = []
        async with async_playwright() as pw:
            browser = await launch_browser(pw)
            try:
                with SiteServer(list(paths.values())) as server:
                    backend = SynthBackend(server)
                    context = await browser.new_context(**context_kwargs(proxy=server.url))
                    for genre, task, plan in cases:
                        net = await backend.begin(task, f"wrong-{genre}", 0)
                        page = await context.new_page()
                        await page.set_extra_http_headers(net.extra_headers)
                        tracker = RequestTracker(page)
                        await page.goto(task.start_url, wait_until="load")
                        await settle(page, tracker)
                        await Compiler(page, tracker).run(plan)
                        state = await backend.state(task, f"wrong-{genre}")
                        scores.append((genre, evaluate_checks(task, None, page.url, state)[0], state))
                        await page.close()
                    await context.close()
            finally:
                await browser.close()
        return scores

    for genre, reward, state in asyncio.run(run()):
        stored = {"travel": "flight_bookings", "banking": "transfers", "healthcare": "appointments",
                  "jobs": "saved_jobs", "government": "permit_applications"}[genre]
        assert len(state[stored]) == 1, (genre, state)  # the wrong thing was really done
        assert reward == 0.0, (genre, state[stored])


@pytest.mark.parametrize("genre", sorted(GENRES))
def test_same_seed_same_bytes(genre, tmp_path):
    skill, seed, _ = GENRES[genre]
    a = write_unvalidated(sample_spec(seed, skill, genre), tmp_path / "a")
    b = write_unvalidated(sample_spec(seed, skill, genre), tmp_path / "b")
    files_a = sorted(p.relative_to(a) for p in a.rglob("*") if p.is_file())
    assert files_a == sorted(p.relative_to(b) for p in b.rglob("*") if p.is_file())
    assert all((a / f).read_bytes() == (b / f).read_bytes() for f in files_a)
    other = write_unvalidated(sample_spec(seed + 1, skill, genre), tmp_path / "c")
    assert json.loads((other / "data.json").read_text()) != json.loads((a / "data.json").read_text())


def test_same_bytes_whatever_the_hash_seed(tmp_path):
    """Two processes with different string hash seeds (a set's order differs) write the same bundles."""
    import os
    import subprocess
    import sys

    script = ("import sys; from pathlib import Path; from weblica.synth.generate import write_unvalidated; "
              "from weblica.synth.spec import sample_spec\n"
              f"for g, (skill, seed, _) in {GENRES!r}.items(): write_unvalidated(sample_spec(seed, skill, g), Path(sys.argv[1]))")
    for hash_seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": hash_seed}
        subprocess.run([sys.executable, "-c", script, str(tmp_path / hash_seed)], check=True, env=env, timeout=120)
    one = sorted(p.relative_to(tmp_path / "1") for p in (tmp_path / "1").rglob("*") if p.is_file())
    assert one and one == sorted(p.relative_to(tmp_path / "2") for p in (tmp_path / "2").rglob("*") if p.is_file())
    assert [f for f in one if (tmp_path / "1" / f).read_bytes() != (tmp_path / "2" / f).read_bytes()] == []
