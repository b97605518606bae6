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
