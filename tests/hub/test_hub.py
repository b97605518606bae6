"""The course on a real JupyterHub, as a class uses it (issue 39).

A hub on this machine (tests/hub/hub.py: JupyterHub from PyPI, configurable-http-proxy from npm, the simple
local-process spawner, the dummy authenticator), and a local clone of this repository as the course's remote. Eight
learners are created through the hub's REST API, all at once; each logs in, clicks the class link that
`python -m authoring hub-link` writes, writes the answers to notebook 1 and runs it to its first check in a kernel of
their own server, over the hub's proxy, offline. One of them runs all of it in Chromium, so the history viewer's
widgets render through the proxy. Then the grader grades the hub's homes (each whole notebook, in a kernel of its
own), and a course update is pulled: every learner's answers are still there.

Timings and the hub's memory per learner are measured by benchmarks/hub.py, not asserted here.
"""

from __future__ import annotations

import csv
import json
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import nbformat
import pytest

from authoring.hub_link import FOLDER, hub_link
from looplab.course import exercise_number
from tests.hub.hub import Hub, unavailable, why_no_hub

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK = "01_one_tool_call"
PATH = f"{FOLDER}/notebooks/{NOTEBOOK}.ipynb"
LEARNERS = ["ada", "grace", "alan", "edsger", "barbara", "donald", "frances", "ken"]
IN_THE_BROWSER = "ada"
BRANCH = "course"
UPDATE = "A note the course added during the workshop."

pytestmark = pytest.mark.hub


@pytest.fixture(scope="module")
def remote(tmp_path_factory) -> Path:
    """This repository's committed state as a bare repository, its branch `course`: the class's remote."""
    folder = tmp_path_factory.mktemp("remote") / "course.git"
    subprocess.run(["git", "clone", "-q", "--bare", "--no-hardlinks", str(ROOT), str(folder)], check=True)
    head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], check=True, capture_output=True,
                          text=True).stdout.strip()
    subprocess.run(["git", "--git-dir", str(folder), "update-ref", f"refs/heads/{BRANCH}", head], check=True)
    return folder


@pytest.fixture(scope="module")
def hub(tmp_path_factory):
    missing = why_no_hub()
    if missing:
        unavailable(missing)
    started = Hub(tmp_path_factory.mktemp("hub"))
    try:
        yield started
    finally:
        started.stop()


def answered(learner_copy: dict) -> dict:
    """The learner's notebook with every exercise cell holding the solution's answer (the rest as handed out)."""
    solution = json.loads((ROOT / "solutions" / f"{NOTEBOOK}.ipynb").read_text(encoding="utf-8"))
    answers = {exercise_number(cell): cell["source"] for cell in solution["cells"] if exercise_number(cell)}
    for cell in learner_copy["cells"]:
        if exercise_number(cell) in answers:
            cell["source"] = answers[exercise_number(cell)]
    return learner_copy


def shown(output) -> str:
    """An output as text: a stream's, or a display's plain text."""
    return "".join(output.get("text") or output.get("data", {}).get("text/plain", ""))


def check_lines(notebook) -> list[str]:
    """What each check cell of a run showed."""
    return [shown(output) for cell in notebook.cells if "check(" in cell.get("source", "")
            for output in cell.get("outputs", [])]


def first_check(cell, outputs) -> bool:
    """Where a learner's run in their kernel stops: its first check (the benchmark's milestone too). The grader then
    runs each learner's whole notebook from their home, and the Chromium learner runs all of it through the proxy."""
    return "check(" in cell.source


@pytest.fixture(scope="module")
def classroom(hub, remote):
    """Every learner created, their server started, logged in, through the link, their answers written and
    notebook 1 run in their own kernel up to its first check: the learners, the link, and what each check said."""
    link = hub_link(hub.url, str(remote), BRANCH)

    def one(name: str):
        learner = hub.add_learner(name)
        opened = learner.open_link(link)
        learner.write(PATH, answered(learner.read(PATH)))
        checks = [] if name == IN_THE_BROWSER else check_lines(learner.run(PATH, stop_at=first_check))
        return learner, opened, checks

    with ThreadPoolExecutor(len(LEARNERS)) as pool:
        runs = list(pool.map(one, LEARNERS))
    return {learner.name: (learner, opened, checks) for learner, opened, checks in runs}, link


def test_each_learner_opens_the_course_through_the_link_and_passes_the_checks_in_their_own_kernel(classroom):
    learners, _ = classroom
    for name, (learner, opened, checks) in learners.items():
        assert opened == f"lab/tree/{FOLDER}/notebooks"
        assert (learner.home / PATH).exists()
        if name != IN_THE_BROWSER:
            assert len(checks) == 1 and checks[0].startswith("✓ Exercise 1.1"), (name, checks)


def test_one_learner_runs_the_notebook_in_chromium_and_the_viewer_renders_through_the_proxy(classroom, hub):
    from tests.browser.conftest import (_CELL_OUTCOMES, _REACHED_THE_END, _RUN_ALL, CHROMIUM_ARGS, LAB_SETTINGS,
                                        RUN_TIMEOUT)
    from tests.learner_run_all import CHROMIUM, why_no_browser

    missing = why_no_browser()
    if missing:
        pytest.skip(missing)
    from playwright.sync_api import expect, sync_playwright

    learners, link = classroom
    learner = learners[IN_THE_BROWSER][0]
    settings = learner.home / ".jupyter" / "lab" / "user-settings"
    for name, values in LAB_SETTINGS.items():
        (settings / name).parent.mkdir(parents=True, exist_ok=True)
        (settings / name).write_text(json.dumps(values))

    def drive() -> None:
        """In a thread of its own: a test before this one in the same worker may leave an asyncio loop running in
        this one, where Playwright's sync API refuses to run."""
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
            try:
                page = browser.new_context(viewport={"width": 1400, "height": 1100}).new_page()
                page.set_default_timeout(60_000)
                page.goto(f"{hub.url}/hub/login")
                page.fill("input[name=username]", learner.name)
                page.fill("input[name=password]", "any")
                page.click("input[type=submit], button[type=submit]")
                page.goto(link)  # the class link: nbgitpuller's page pulls, then opens JupyterLab on the notebooks
                page.wait_for_url(f"**/user/{learner.name}/lab/tree/{FOLDER}/notebooks**")
                page.wait_for_function("() => window.jupyterapp !== undefined")
                page.evaluate("() => window.jupyterapp.restored.then(() => true)")
                page.evaluate("path => window.jupyterapp.commands.execute('docmanager:open', "
                              "{path, factory: 'Notebook'})", PATH)
                page.wait_for_function("""path => { const panel = window.jupyterapp.shell.currentWidget;
                    const kernel = panel && panel.sessionContext && panel.sessionContext.session
                        && panel.sessionContext.session.kernel;
                    return !!kernel && kernel.status === 'idle' && panel.context.path === path; }""", arg=PATH)
                page.evaluate(_RUN_ALL, PATH)
                page.wait_for_function(_REACHED_THE_END, arg=PATH, timeout=RUN_TIMEOUT, polling=200)
                raised = [(cell["tags"], cell["errors"]) for cell in page.evaluate(_CELL_OUTCOMES, PATH)
                          if cell["errors"] and "raises-exception" not in cell["tags"]]
                assert not raised, raised
                viewers = page.locator(".looplab-viewer")
                expect(viewers.first).to_be_visible()
                expect(viewers.first.locator(".looplab-step-label")).to_contain_text(re.compile(r"Step \d+ of \d+"))
                expect(page.get_by_text("Error displaying widget")).to_have_count(0)
                page.evaluate("() => window.jupyterapp.commands.execute('docmanager:save')")
                page.wait_for_function("() => !window.jupyterapp.shell.currentWidget.context.model.dirty")
            finally:
                browser.close()

    with ThreadPoolExecutor(1) as thread:
        thread.submit(drive).result()
    saved = learner.read(PATH)
    assert any(line.startswith("✓ Exercise 1.1") for line in check_lines(nbformat.from_dict(saved)))


def test_the_grader_grades_the_hub_s_homes_each_learner_by_their_hub_user(classroom, hub, tmp_path):
    out = tmp_path / "grades.csv"
    graded = subprocess.run([sys.executable, "-m", "looplab.grade", "--homes", str(hub.homes), "--folder", FOLDER,
                             "--notebook", NOTEBOOK,
                             "--out", str(out), "--quiet"], cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert graded.returncode == 0, graded.stderr
    with open(out, newline="", encoding="utf-8") as handle:
        rows = [row for row in csv.DictReader(handle) if row["notebook"] == NOTEBOOK]
    assert sorted({row["learner"] for row in rows}) == sorted(LEARNERS)
    assert all(row["status"] == "solved" for row in rows), [row for row in rows if row["status"] != "solved"]


def test_a_course_update_pulled_mid_session_keeps_every_learner_s_answers(classroom, remote, tmp_path):
    learners, link = classroom
    work = tmp_path / "course"
    subprocess.run(["git", "clone", "-q", "--branch", BRANCH, str(remote), str(work)], check=True)
    notebook = json.loads((work / PATH.removeprefix(f"{FOLDER}/")).read_text(encoding="utf-8"))
    first = notebook["cells"][0]  # the title's cell: the learner's edits and outputs are elsewhere in the file
    first["source"] = "".join(first["source"]) + "\n\n" + UPDATE
    (work / PATH.removeprefix(f"{FOLDER}/")).write_text(json.dumps(notebook, indent=1, ensure_ascii=False) + "\n",
                                                         encoding="utf-8")
    (work / "notebooks" / "UPDATE.md").write_text(UPDATE + "\n", encoding="utf-8")
    git = ["git", "-C", str(work), "-c", "user.name=Instructor", "-c", "user.email=instructor@example.org"]
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "A note for the class"], check=True)
    subprocess.run([*git, "push", "-q", "origin", BRANCH], check=True)

    with ThreadPoolExecutor(len(learners)) as pool:
        list(pool.map(lambda entry: entry[0].open_link(link), learners.values()))
    for name, (learner, _, _) in learners.items():
        mine = learner.read(PATH)
        exercises = {exercise_number(cell): cell["source"] for cell in mine["cells"] if exercise_number(cell)}
        assert "NotImplementedError" not in "".join(exercises.values()), f"{name} lost an answer"
        assert UPDATE in "".join(mine["cells"][0]["source"]), f"{name} did not get the update"
        assert (learner.home / FOLDER / "notebooks" / "UPDATE.md").exists()
