"""Test-wide settings: everything runs offline, and nbval skips what legitimately varies.

Notebook kernels are child processes and inherit this environment, so setting it here makes the
solution notebooks run offline under nbval whatever the developer's shell says.
"""

import os

os.environ.pop("ANTHROPIC_API_KEY", None)
os.environ["LOOPLAB_MODE"] = "offline"

# Notebooks under tests/ are fixtures (opened by the browser test, fed to the grader), not
# notebooks to check with nbval.
collect_ignore_glob = ["tests/**/*.ipynb"]


def pytest_collectstart(collector):
    """stderr carries the kernel's temporary file paths and looplab's hints: not compared."""
    if collector.fspath and collector.fspath.ext == ".ipynb":
        collector.skip_compare += ("stderr",)


# `make test` hands out one test file per worker (`--dist loadfile`): a long file handed out last keeps one
# worker busy while the other waits, so the longest files (from `pytest -p no:xdist --durations=0`) go first.
# Any other file keeps its place; a file missing from this list only costs a little time, never a failure.
LONGEST_FIRST = (
    "tests/test_grade_limits.py", "tests/test_handout.py", "tests/test_benchmarks.py", "tests/browser/test_run_all.py",
    "tests/browser/test_viewer_in_jupyterlab.py", "tests/test_grade_isolation.py", "tests/test_packaging.py",
    "tests/test_setup.py", "tests/test_class_gradebook.py", "tests/test_grade.py", "tests/test_notebooks.py",
    "tests/test_regenerate.py", "tests/test_adding_a_notebook.py", "tests/test_exports.py",
)


def pytest_collection_modifyitems(items):
    rank = {path: index for index, path in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::")[0], len(rank)))  # stable: the rest keep their order
