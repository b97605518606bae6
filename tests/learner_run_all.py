"""Run All of a learner notebook: what it must show, and which of two runners shows it.

tests/test_notebooks.py runs every learner notebook with nbclient; tests/browser/test_run_all.py runs those of
RUN_IN_THE_BROWSER with Run All in a real JupyterLab in Chromium. Both check every code cell's outcome with
check_fails_only_at_the_exercises, so one run of a notebook proves it all: the nbclient test leaves to the browser
the notebooks the browser test really runs (see left_to_the_browser).
"""

from pathlib import Path

from authoring.translated_notebooks import notebooks_in
from looplab.course import COURSE

CHROMIUM = Path("/usr/bin/chromium")
BROWSER_RUN_ALL_TEST = Path(__file__).resolve().parent / "browser" / "test_run_all.py"

# (notebook, language) run with Run All in JupyterLab: the first notebook, and the ones whose viewer shows what no
# other does (8: the splice after a compaction; 9: a subagent's steps linked to its parent's call; 11: a whole
# session of three agents), in English; and one French one (its kernel speaks French because its notebook says so;
# the French code is the English program, so one suffices). The others run under nbclient (tests/test_notebooks.py),
# which checks the same outcome of every cell: in the browser, each cost some 4 s more of the suite's CPU, and the
# viewer itself is driven in JupyterLab by tests/browser/test_viewer_in_jupyterlab.py and, through a hub's proxy, by
# tests/hub/test_hub.py.
BROWSER_STEMS = [COURSE.stems[0], "08_context_compaction", "09_subagent", COURSE.stems[-1]]
RUN_IN_THE_BROWSER = [(name, "en") for name in BROWSER_STEMS] + [("02_closing_the_loop", "fr")]


def learner_notebook(name: str, spoken: str) -> Path:
    return notebooks_in(spoken) / f"{name}.ipynb"


def why_no_browser() -> str | None:
    """Why this machine cannot run the browser tests (Debian's Chromium, driven by Playwright), or None if it can."""
    if not CHROMIUM.exists():
        return f"Debian's chromium is not installed ({CHROMIUM}): run `bash scripts/install_system_deps.sh` as root"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "playwright is not installed: run `make test` (or pip install -r requirements-dev.txt)"
    return None


def left_to_the_browser(session) -> set[tuple[str, str]]:
    """The (notebook, language) pairs whose Run All tests/browser/test_run_all.py checks in this pytest session.

    The nbclient test skips these: one run of a notebook proves what both would. So that no proof is lost, a pair
    is left to the browser only if the browser test will really run it: it is selected in this session (none are
    under -m "not browser", -k, or when only tests/test_notebooks.py runs), and this machine has the browser
    (without it the browser test is skipped; in CI it fails, and the nbclient test still runs every notebook).
    """
    if why_no_browser():
        return set()
    return {(item.callspec.params["name"], item.callspec.params["spoken"])
            for item in session.items if item.path == BROWSER_RUN_ALL_TEST}


def not_written_yet(spoken: str) -> str:
    """How a check says, in `spoken`, that the exercise is still the stub: "not written yet"."""
    from looplab import language
    from looplab.checks.core import TEXTS

    with language.using(spoken):
        return TEXTS["not_written"].said().failed.split(":")[0]


def check_fails_only_at_the_exercises(cells: list[dict], spoken: str) -> None:
    """The code cells of a Run All that reached the end, each {"tags", "errors": [{"ename", "evalue"}], "source"}:
    the exercise stubs raise NotImplementedError, their checks fail saying "not written yet" in the notebook's
    language, every other cell tagged raises-exception raises, and no other cell does."""
    for number, cell in enumerate(cells, start=1):
        raised = [error["ename"] for error in cell["errors"]]
        where = f"code cell {number}:\n{cell['source']}\n"
        if "exercise" in cell["tags"]:
            assert raised == ["NotImplementedError"], f"{where}should fail as a stub; raised {raised}"
        elif "check" in cell["tags"]:
            assert raised == ["CheckFailed"], f"{where}(a check of a stub) should fail; raised {raised}"
            assert not_written_yet(spoken) in cell["errors"][0]["evalue"], (
                f"{where}should say {not_written_yet(spoken)!r}, said: {cell['errors'][0]['evalue']}")
        elif "raises-exception" in cell["tags"]:
            assert raised, f"{where}is tagged raises-exception but raised nothing"
        else:
            assert not raised, f"{where}failed in the learner's copy: {cell['errors']}"
