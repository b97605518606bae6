"""Test-wide settings: everything runs offline, and nbval skips what legitimately varies.

Notebook kernels are child processes and inherit this environment, so setting it here makes the
solution notebooks run offline under nbval whatever the developer's shell says.
"""

import os

import pytest

os.environ.pop("ANTHROPIC_API_KEY", None)
os.environ["LOOPLAB_MODE"] = "offline"
os.environ.pop("LOOPLAB_LANG", None)  # each notebook speaks its own language (below); a test wanting another says so
os.environ.pop("LOOPLAB_NOTEBOOK_LANG", None)  # what a notebook says with looplab.speak: never the shell's

# Notebooks under tests/ are fixtures (opened by the browser test, fed to the grader), not
# notebooks to check with nbval.
collect_ignore_glob = ["tests/**/*.ipynb"]


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    """No test runs with a notebook named in JPY_SESSION_NAME, as no Jupyter server runs here: nbval's kernels run
    the solutions as nbclient runs a notebook anywhere, and solutions/fr/ speak French because their set-up cell
    says so (`looplab.speak("fr")`), which nbval's stored French outputs prove."""
    os.environ.pop("JPY_SESSION_NAME", None)


def pytest_collectstart(collector):
    """stderr carries the kernel's temporary file paths and looplab's hints: not compared."""
    if collector.fspath and collector.fspath.ext == ".ipynb":
        collector.skip_compare += ("stderr",)


# `make test` hands out one test file per worker (`--dist loadfile`): a long file handed out last keeps one
# worker busy while the others wait, so the longest files go first, in this order (per-file seconds summed from a
# `-n 2` run, tests/browser/ counted as one). Any other file keeps its place; a file missing from this list only
# costs a little time, never a failure. xdist would otherwise hand files out by their number of tests, most first
# (its --loadscope-reorder): the many quick check tests first and these last, so it is turned off below. The
# browser tests share one worker (ONE_WORKER): together the longest, they go first.
LONGEST_FIRST = (
    "tests/browser/test_run_all.py", "tests/browser/test_viewer_in_jupyterlab.py", "tests/browser/test_french_edition.py",
    "tests/browser/test_class_report.py", "tests/test_handout.py", "tests/test_grade_isolation.py",
    "tests/test_regenerate.py", "tests/test_grade_processes.py", "tests/test_grade_limits.py", "tests/test_grade.py",
    "tests/test_benchmarks.py", "tests/test_adding_a_notebook.py", "tests/test_notebooks.py", "tests/test_exports.py",
    "tests/test_setup.py", "tests/test_packaging.py", "tests/test_grade_language.py", "solutions/fr/05_toolbox.ipynb",
    "tests/test_class_gradebook.py", "tests/test_grade_judge.py", "solutions/05_toolbox.ipynb", "tests/test_authoring.py",
    "tests/test_viewer_export.py", "tests/test_translations_notebooks.py", "tests/test_series_stages.py",
    "tests/test_grade_versions.py", "tests/test_rules.py", "tests/test_agent_script.py",
    "solutions/02_closing_the_loop.ipynb", "solutions/fr/02_closing_the_loop.ipynb",
    "solutions/06_when_calls_go_wrong.ipynb", "solutions/fr/06_when_calls_go_wrong.ipynb",
    "solutions/04_your_agent.ipynb", "solutions/fr/04_your_agent.ipynb",
    "solutions/03_matching_ids.ipynb", "solutions/fr/03_matching_ids.ipynb",
    "solutions/01_one_tool_call.ipynb", "solutions/fr/01_one_tool_call.ipynb", "tests/test_public_interfaces.py",
)
# Files that share one worker, so that its session fixtures are made once: the browser tests' JupyterLab server
# and Chromium (tests/browser/conftest.py) start once instead of once per worker.
ONE_WORKER = ("tests/browser/",)


def pytest_configure(config):
    if hasattr(config.option, "loadscopereorder"):  # pytest-xdist: keep the order below
        config.option.loadscopereorder = False


def pytest_collection_modifyitems(items):
    rank = {path: index for index, path in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::")[0], len(rank)))  # stable: the rest keep their order


@pytest.hookimpl(optionalhook=True)  # a hook of pytest-xdist: unknown when it is not loaded (-p no:xdist)
def pytest_xdist_make_scheduler(config, log):
    """`--dist loadfile`, with the files under each of ONE_WORKER handed out together, as one file is."""
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    # A private method of pytest-xdist (xdist.scheduler.LoadFileScheduling._split_scope): its public
    # `--dist loadgroup` would do, but marks added here were not seen by its workers' grouping (tried: the cells of
    # one notebook were split). tests/test_public_interfaces.py names it, so an xdist without it fails by name.
    class LoadFileSharingFolders(LoadFileScheduling):
        def _split_scope(self, nodeid):
            path = nodeid.split("::")[0]
            return next((folder for folder in ONE_WORKER if path.startswith(folder)), path)

    return LoadFileSharingFolders(config, log)
