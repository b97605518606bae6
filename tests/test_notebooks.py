"""The notebooks: learner copies in sync with the solutions, and they fail exactly where they should.

nbval (see pyproject.toml) runs the solutions and compares every stored output. It cannot tell
whether a learner's stub cell really fails (a `raises-exception` cell that raises nothing passes),
so the learner notebooks are run cell by cell: here with nbclient, except those tests/browser/test_run_all.py
runs in a real JupyterLab (tests/learner_run_all.py says which, and what both check).
"""

import ast
import contextlib
import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from authoring.learner_notebooks import BEGIN, END, NOTEBOOKS, SOLUTIONS, learner_version
from looplab.course import COURSE, exercise_number
from looplab.notebook_source import without_magics
from tests.learner_run_all import check_fails_only_at_the_exercises, learner_notebook, left_to_the_browser

SOLUTION_FILES = sorted(SOLUTIONS.glob("*.ipynb"))
EXPECTED_NOTEBOOKS = COURSE.stems


def tags(cell) -> list[str]:
    return cell.get("metadata", {}).get("tags", [])


def test_the_series_is_complete():
    """The manifest's notebooks, numbered 1, 2, 3... in order, and a solution and a learner copy of each, no other."""
    assert [notebook.number for notebook in COURSE.notebooks] == list(range(1, len(COURSE.notebooks) + 1))
    assert [path.stem for path in SOLUTION_FILES] == EXPECTED_NOTEBOOKS
    assert sorted(path.stem for path in NOTEBOOKS.glob("*.ipynb")) == EXPECTED_NOTEBOOKS


@pytest.mark.parametrize("solution", SOLUTION_FILES, ids=lambda p: p.stem)
def test_each_solution_notebook_agrees_with_the_manifest(solution):
    """The exercise cells (in order) and their check cells are the manifest's, name for name."""
    from authoring.learner_notebooks import manifest_disagreements

    assert manifest_disagreements(nbformat.read(solution, as_version=4), COURSE.notebook(solution.stem)) == []


def test_a_notebook_without_a_known_course_version_disagrees_with_the_manifest():
    """Every notebook says which course version it was made with: one the course has, not older than its exercises."""
    from dataclasses import replace

    from authoring.learner_notebooks import manifest_disagreements
    from looplab.course import Course

    solution = nbformat.read(SOLUTIONS / f"{EXPECTED_NOTEBOOKS[0]}.ipynb", as_version=4)
    entry = COURSE.notebook(EXPECTED_NOTEBOOKS[0])
    del solution.metadata["looplab"]
    assert manifest_disagreements(solution, entry) == [
        f"{entry.stem}: no course version in its metadata (looplab.course_version); "
        f"the course's current one is {COURSE.version}"]
    solution.metadata["looplab"] = {"course_version": "1999.01"}
    assert manifest_disagreements(solution, entry) == [
        f"{entry.stem}: course version '1999.01' is not one of the course's ({', '.join(COURSE.versions)})"]
    # A later version adds an exercise to this notebook: a notebook made with the earlier one cannot hold it.
    added = replace(entry.exercises[-1], since="2099.01")
    later = Course(COURSE.versions + ("2099.01",),
                   (replace(entry, exercises=entry.exercises[:-1] + (added,)),) + COURSE.notebooks[1:])
    solution.metadata["looplab"] = {"course_version": COURSE.version}
    assert manifest_disagreements(solution, later.notebook(entry.stem), later) == [
        f"{entry.stem}: made with course version {COURSE.version}, but exercise {added.id} was added in 2099.01"]
    solution.metadata["looplab"] = {"course_version": "2099.01"}
    assert manifest_disagreements(solution, later.notebook(entry.stem), later) == []


@pytest.mark.parametrize("solution", SOLUTION_FILES, ids=lambda p: p.stem)
def test_learner_notebook_is_exactly_what_the_generator_makes(solution):
    expected = learner_version(nbformat.read(solution, as_version=4))
    committed = nbformat.read(NOTEBOOKS / solution.name, as_version=4)
    assert committed.metadata["looplab"]["course_version"] == COURSE.version
    assert json.loads(nbformat.writes(committed)) == json.loads(nbformat.writes(expected)), (
        f"notebooks/{solution.name} is out of date: run `make notebooks` (python -m authoring notebooks)"
    )


@pytest.mark.parametrize("path", SOLUTION_FILES + sorted(NOTEBOOKS.glob("*.ipynb")), ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_committed_notebooks_carry_no_widget_state(path):
    """A partial metadata.widgets makes GitHub show "Invalid Notebook"; none is kept at all."""
    notebook = nbformat.read(path, as_version=4)
    assert "widgets" not in notebook.metadata
    nbformat.validate(notebook)


@pytest.mark.parametrize("solution", SOLUTION_FILES, ids=lambda p: p.stem)
def test_every_exercise_is_marked_checked_and_stubbed(solution):
    notebook = nbformat.read(solution, as_version=4)
    exercises = [cell for cell in notebook.cells if "exercise" in tags(cell)]
    assert exercises, "a notebook of the series has exercises"
    checks = [cell.source for cell in notebook.cells if "check" in tags(cell)]
    for cell in exercises:
        number = exercise_number(cell)
        assert number and BEGIN in cell.source and END in cell.source
        assert any(source.startswith(f'check("{number}",') for source in checks), f"no check cell for {number}"
    learner = learner_version(notebook)
    for cell in learner.cells:
        assert BEGIN not in cell.source and "### END" not in cell.source
        if "exercise" in tags(cell):
            assert f"Exercise {exercise_number(cell)}" in cell.source
            assert "raise NotImplementedError" in cell.source


def calls_input(source: str) -> bool:
    """Does the cell call input()? Magic lines (%, !) are left out before parsing."""
    try:
        tree = ast.parse(without_magics(source))
    except SyntaxError:
        return False
    return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "input" for n in ast.walk(tree))


def test_no_notebook_asks_for_input():
    for path in SOLUTION_FILES:
        for cell in nbformat.read(path, as_version=4).cells:
            if cell.cell_type == "code":
                assert not calls_input(cell.source), (path.name, cell.source)


def run_learner_notebook(path: Path, kernels=None) -> list[dict]:
    """Run All, as JupyterLab does: an error stops the run unless its cell is tagged raises-exception. In a fresh
    kernel, or in one forked from `kernels` (authoring's ForkedKernels) if given.

    Returns each code cell's outcome as check_fails_only_at_the_exercises reads it."""
    notebook = nbformat.read(path, as_version=4)
    options = dict(timeout=120, allow_errors=False, resources={"metadata": {"path": str(path.resolve().parent)}})
    if kernels is None:
        NotebookClient(notebook, kernel_name="python3", **options).execute()
    else:
        kernels.execute(notebook, **options)
    return [{"tags": tags(cell), "source": cell.source,
             "errors": [{"ename": output.ename, "evalue": output.evalue}
                        for output in cell.outputs if output.output_type == "error"],
             "printed": "".join(output.get("text", "") for output in cell.outputs if output.output_type == "stream")}
            for cell in notebook.cells if cell.cell_type == "code"]


@pytest.fixture(scope="module")
def run_all():
    """`run_all(path, spoken)`: run_learner_notebook in a kernel forked from a warm template speaking `spoken`,
    started the first time a notebook of that language runs here and shared by the others, as `make notebooks`
    runs the solutions (authoring/learner_notebooks.py's ForkedKernels): about 2 s of CPU less per notebook than
    a fresh kernel. (A fresh kernel is what tests/browser/test_run_all.py's JupyterLab starts, for the notebooks
    it runs.) All in a thread of its own: ForkedKernels runs an event loop, and a test before this one in the
    same worker may leave one marked running in the main thread."""
    from authoring.learner_notebooks import forked_kernels

    templates, started = contextlib.ExitStack(), {}

    def in_a_forked_kernel(path: Path, spoken: str) -> list[dict]:
        if spoken not in started:  # None where kernels cannot be forked: fresh ones then
            started[spoken] = templates.enter_context(forked_kernels(spoken, notebooks=len(EXPECTED_NOTEBOOKS)))
        return run_learner_notebook(path, started[spoken])

    with ThreadPoolExecutor(1) as thread:
        yield lambda path, spoken: thread.submit(in_a_forked_kernel, path, spoken).result()
        thread.submit(templates.close).result()


# Every English learner notebook, and the first and last French ones (the browser runs notebook 2's in French). A
# French learner notebook is the English program with other words (tests/test_translations_notebooks.py), made by the
# same generator from its French solution (test_learner_notebook_is_exactly_what_the_generator_makes), whose every
# cell nbval runs in French against its stored outputs: running all eleven again as stubs proved nothing more, and
# cost some 25 s of CPU of the suite's 6 minutes at eleven notebooks.
LEARNER_RUNS = [(name, "en") for name in EXPECTED_NOTEBOOKS] + [(EXPECTED_NOTEBOOKS[0], "fr"),
                                                                  (EXPECTED_NOTEBOOKS[-1], "fr")]


@pytest.mark.parametrize(("name", "spoken"), LEARNER_RUNS)
def test_learner_notebook_runs_to_the_end_failing_only_at_the_exercises(name, spoken, request, run_all):
    """Run All offline reaches the last cell; only the exercise stubs and their checks fail on the way (the
    French learner notebook too, in French: no server names it and no LOOPLAB_LANG is set, so it says it itself).

    tests/browser/test_run_all.py checks the same of the notebooks it runs, in a real JupyterLab: when it runs
    one in this session, this leaves it to the browser rather than run it twice (see left_to_the_browser).
    Without the browser, or with the browser tests deselected, every learner notebook is run here.
    """
    from authoring.learner_notebooks import no_language_chosen

    if (name, spoken) in left_to_the_browser(request.session):
        pytest.skip("Run All of this notebook is checked in JupyterLab by tests/browser/test_run_all.py")
    path = learner_notebook(name, spoken)
    if not path.exists():
        pytest.fail(f"no {path.relative_to(NOTEBOOKS.parent)}: finish its translation, then `make notebooks`")
    with no_language_chosen():
        cells = run_all(path, spoken)
    check_fails_only_at_the_exercises(cells, spoken)


def test_a_notebook_is_left_to_the_browser_only_when_the_browser_test_runs_it(monkeypatch, tmp_path):
    """Left to tests/browser/test_run_all.py: the notebooks it is selected for in this session, on a machine with
    the browser; none without the browser (that test would be skipped) or when it is deselected."""
    from types import SimpleNamespace

    from tests import learner_run_all

    def item(path, name, spoken):
        return SimpleNamespace(path=path, callspec=SimpleNamespace(params={"name": name, "spoken": spoken}))

    browser_selected = SimpleNamespace(items=[item(learner_run_all.BROWSER_RUN_ALL_TEST, "02_closing_the_loop", "fr"),
                                              item(Path(__file__), "02_closing_the_loop", "en")])
    browser_deselected = SimpleNamespace(items=browser_selected.items[1:])
    monkeypatch.setattr(learner_run_all, "CHROMIUM", tmp_path / "chromium")  # not installed
    assert "chromium is not installed" in learner_run_all.why_no_browser()
    assert learner_run_all.left_to_the_browser(browser_selected) == set()
    monkeypatch.setattr(learner_run_all, "why_no_browser", lambda: None)  # installed
    assert learner_run_all.left_to_the_browser(browser_selected) == {("02_closing_the_loop", "fr")}
    assert learner_run_all.left_to_the_browser(browser_deselected) == set()


@pytest.mark.parametrize("solution", SOLUTION_FILES, ids=lambda p: p.stem)
def test_raises_exception_cells_really_raise_in_the_solutions(solution):
    notebook = nbformat.read(solution, as_version=4)
    for cell in notebook.cells:
        if "raises-exception" in tags(cell):
            assert any(output.output_type == "error" for output in cell.outputs), cell.source
        elif cell.cell_type == "code":
            assert not any(output.output_type == "error" for output in cell.outputs), cell.source


def test_a_french_notebook_speaks_french_under_plain_nbclient():
    """Run by nbclient in a fresh kernel, with no Jupyter server to name it and no LOOPLAB_LANG, a French notebook's
    set-up cell speaks French: the notebook says its language itself (`looplab.speak("fr")`), so nbconvert, papermill
    or VS Code need nothing more. (nbval runs every French solution the same way, against its stored outputs.)"""
    from authoring.learner_notebooks import no_language_chosen

    path = learner_notebook(EXPECTED_NOTEBOOKS[0], "fr")
    notebook = nbformat.read(path, as_version=4)
    notebook.cells = [cell for cell in notebook.cells if "setup" in tags(cell)]
    with no_language_chosen():
        NotebookClient(notebook, kernel_name="python3", timeout=120,
                       resources={"metadata": {"path": str(path.parent)}}).execute()
    said = "".join(output.get("text", "") for output in notebook.cells[0].outputs)
    assert "looplab\u00a0: hors ligne, les réponses viennent de l'enregistrement" in said, said


def unusual_notebooks() -> dict[str, str]:
    """The notebooks that write a program of the series, each with its unusual answers (test_series_stages.STAGES)."""
    from tests.test_series_stages import STAGES

    return {stem: unusual for stem, _, unusual in STAGES.values()}


UNUSUAL_NOTEBOOKS = unusual_notebooks()


@pytest.mark.parametrize("name", sorted(UNUSUAL_NOTEBOOKS))
def test_run_all_with_unusual_right_answers_reaches_the_end(name, run_all, tmp_path):
    """Run All of a solution whose exercise cells hold unusual right answers (tests/unusual_answers/: helpers of the
    learner's own, a registry built step by step...): every check passes, every cell runs, the program the notebook
    writes answers as a program, and notebook 5's MCP server lists its three tools."""
    from tests.test_series_stages import unusual_answers

    answers = unusual_answers(UNUSUAL_NOTEBOOKS[name])
    notebook = nbformat.read(SOLUTIONS / f"{name}.ipynb", as_version=4)
    for cell in notebook.cells:
        number = cell.get("metadata", {}).get("looplab", {}).get("exercise")
        if number in answers:
            cell.source = answers.pop(number)
    assert not answers, f"no exercise cell for {sorted(answers)}"
    path = tmp_path / f"{name}.ipynb"
    nbformat.write(notebook, path)
    cells = run_all(path, "en")
    errors = [(cell["source"][:60], cell["errors"]) for cell in cells  # a story cell may show an API error on purpose
              if cell["errors"] and "raises-exception" not in cell["tags"]]
    assert not errors, errors
    said = "\n".join(cell["printed"] for cell in cells)
    assert "Agent> " in said and "Traceback" not in said, said[-2000:]
    if name == "05_toolbox":
        assert "tools/list: count_letters" in said, said[-2000:]
