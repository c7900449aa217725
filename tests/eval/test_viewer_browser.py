"""The viewer in a real browser: the page renders a real run, and every action marker sits on the pixel
of the displayed screenshot where the action landed."""
import pytest
from playwright.sync_api import sync_playwright

from sites import LocalServer
from hand_tasks import hand_tasks
from tests_helpers import run
from weblica.browser.launcher import BrowserOptions, context_kwargs
from weblica.env.task import save_tasks
from weblica.policy.oracle import OraclePolicy
from weblica.policy.random_policy import RandomPolicy
from weblica.rollout import load_trajectories, run_tasks
from weblica.viewer import create_app


@pytest.fixture(scope="module")
def run_dirs(site, tmp_path_factory):
    root = tmp_path_factory.mktemp("viewer-runs")
    tasks = hand_tasks(site.url)
    run(run_tasks(tasks, OraclePolicy, root / "oracle", parallel=2))
    save_tasks(tasks, root / "oracle" / "tasks.jsonl")  # as `weblica eval` does: gives the skill filter its values
    for t in tasks:
        t.max_steps = 2
    run(run_tasks(tasks[:2], lambda: RandomPolicy(7), root / "random", parallel=2))
    return root / "oracle", root / "random"


@pytest.fixture(scope="module")
def page():
    with sync_playwright() as pw:
        browser = pw.chromium.launch(**BrowserOptions().launch_kwargs())
        context = browser.new_context(**context_kwargs())
        page = context.new_page()
        page.set_default_timeout(15000)
        yield page
        browser.close()


def marker_positions(page):
    """(action x, action y, expected centre, actual centre) for every marker on the page."""
    return page.evaluate("""() => [...document.querySelectorAll('.shot .marker')].map(m => {
        const img = m.parentElement.querySelector('img').getBoundingClientRect();
        const box = m.getBoundingClientRect();
        return {x: +m.dataset.x, y: +m.dataset.y, kind: m.dataset.kind,
                img: [img.left, img.top, img.width, img.height],
                centre: [box.left + box.width / 2, box.top + box.height / 2]};
    })""")


def assert_on_target(markers):
    assert markers
    for m in markers:
        left, top, width, height = m["img"]
        assert width > 100 and height == pytest.approx(width * 720 / 1280, abs=1.5)  # not cropped or stretched
        expected = (left + m["x"] * width / 1280, top + m["y"] * height / 720)
        assert m["centre"][0] == pytest.approx(expected[0], abs=1.0), m
        assert m["centre"][1] == pytest.approx(expected[1], abs=1.0), m


def test_single_run_renders_and_markers_land_on_the_actions(run_dirs, page):
    oracle, _ = run_dirs
    trajectories = load_trajectories(oracle)
    with LocalServer(create_app([oracle])) as server:
        page.goto(server.url + "/")
        page.wait_for_selector("body[data-ready='1']")
        assert page.locator("#episodes li").count() == 4
        page.locator("#episodes li").first.click()
        page.wait_for_selector(".step .shot img")
        assert page.locator(".pane h2").inner_text().endswith("open-search #0")
        markers = marker_positions(page)
        # the oracle clicked the Search button at (150, 115) on the start page
        assert [(m["x"], m["y"], m["kind"]) for m in markers] == [(150, 115, "click")]
        assert_on_target(markers)
        page.wait_for_function("document.querySelector('.step .shot img').complete")
        assert page.evaluate("document.querySelector('.step .shot img').naturalWidth") == 1280
        page.keyboard.press("j")  # next episode from the keyboard
        page.wait_for_function("document.querySelector('.pane h2').textContent.includes('name-enter')")
        page.keyboard.press("k")
        page.wait_for_function("document.querySelector('.pane h2').textContent.includes('open-search')")
        assert "done" in page.locator(".step").nth(1).locator(".calls").inner_text()
        assert trajectories[0].steps[0].feedback[0] in page.locator(".step .feedback").first.inner_text()

        # the filter narrows the list; the 'submit-form' episode has a write with coordinates and a click
        page.select_option("select[name=skill]", "forms")
        page.wait_for_function("document.querySelectorAll('#episodes li').length === 2")
        page.locator("#episodes li").nth(1).click()
        page.wait_for_function("document.querySelector('.pane h2').textContent.includes('submit-form')")
        page.wait_for_selector(".shot .marker")
        markers = marker_positions(page)
        assert [(m["x"], m["y"], m["kind"]) for m in markers] == [(200, 60, "write"), (430, 60, "click")]
        assert_on_target(markers)

        # markers follow the image when the layout changes size
        page.set_viewport_size({"width": 900, "height": 700})
        page.wait_for_timeout(100)
        assert_on_target(marker_positions(page))
        page.set_viewport_size({"width": 1280, "height": 720})


def test_two_runs_side_by_side(run_dirs, page):
    oracle, random_run = run_dirs
    random_clicks = [(a["arguments"]["x"], a["arguments"]["y"])
                     for a in load_trajectories(random_run)[0].steps[0].actions if a["name"] == "click"]
    with LocalServer(create_app([oracle, random_run])) as server:
        page.goto(server.url + "/#pair/0")
        page.wait_for_selector("body[data-ready='1']")
        page.wait_for_selector(".pane[data-run='1']")
        assert page.locator(".pane").count() == 2
        assert page.locator("#episodes li").first.locator(".badge").count() == 2
        assert page.locator(".pane[data-run='0'] .outcome-success").count() == 1
        markers = marker_positions(page)
        assert_on_target(markers)
        left = page.locator(".pane[data-run='0']").bounding_box()
        right = page.locator(".pane[data-run='1']").bounding_box()
        assert right["x"] >= left["x"] + left["width"] - 1  # side by side, not stacked
        right_markers = {(m["x"], m["y"]) for m in markers if m["img"][0] >= right["x"] - 1}
        assert set(random_clicks) <= right_markers


def test_hover_and_drag_markers(tmp_path, page):
    from test_viewer import make_run

    make_run(tmp_path / "r", [("a", True, "done", False)])
    with LocalServer(create_app([tmp_path / "r"])) as server:
        page.goto(server.url + "/#episode/0/0")
        page.wait_for_selector(".step .shot .marker.hover")
        markers = marker_positions(page)
        assert [(m["x"], m["y"], m["kind"]) for m in markers] == [
            (640, 360, "click"), (10, 20, "drag-start"), (300, 400, "drag-end"), (1279, 719, "hover")]
        assert_on_target(markers)
        assert page.locator(".step").first.locator("svg.drag-lines line").count() == 1


def test_long_task_ids_keep_their_distinct_ends_in_view(tmp_path, page):
    """Tasks of one site share a long id prefix (forms-travel-2a9523da-t01, -t02, ...): the list cuts an id in
    its middle, so the ends that tell them apart stay readable (issue 42: t01-t04 looked alike)."""
    import json

    from weblica.env.episode import Trajectory

    run_dir = tmp_path / "run"
    run_dir.mkdir()
    ids = [f"forms-travel-2a9523da-contact-form-with-a-long-name-t0{i}" for i in range(1, 5)]
    (run_dir / "episodes.jsonl").write_text("".join(
        json.dumps(Trajectory(task_id=i, seed=0, episode_id=f"ep-{n}", start_url="https://x.test/",
                              start_screenshot_sha256="", termination_reason="done").to_dict()) + "\n"
        for n, i in enumerate(ids)))
    with LocalServer(create_app([run_dir])) as server:
        page.goto(server.url + "/")
        page.wait_for_selector("body[data-ready='1']")
        rows = page.evaluate("""() => [...document.querySelectorAll('#episodes li .task')].map(t => {
            const tail = t.querySelector('.tail'), head = t.querySelector('.head');
            return {tail: tail.textContent, tailFits: tail.scrollWidth <= tail.clientWidth + 1,
                    tailShown: tail.getBoundingClientRect().right <= t.getBoundingClientRect().right + 1,
                    headCut: head.scrollWidth > head.clientWidth, title: t.title};
        })""")
    assert [r["tail"] for r in rows] == [f"{i[-12:]} #0" for i in ids]
    assert all(r["tailFits"] and r["tailShown"] for r in rows), rows
    assert all(r["headCut"] for r in rows)  # the id is longer than the list is wide: its middle is what gives
    assert [r["title"].split(" #")[0] for r in rows] == ids
