"""`make drift` (scripts/drift.py) says what broke in words a maintainer can act on.

nbval reports every notebook failure as "Notebook cell execution failed"; drift's report reads the details.
A cell that raised shows its exception; a cell whose output is no longer the stored one shows
`stored output differs` and what differs (the deliberate 400s under anthropic 2.17.0: issue 34). nbval is one
of the packages drift moves, so this runs the real nbval on a small notebook and reads its real report.
"""

from __future__ import annotations

import runpy
import subprocess
import sys
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
drift = runpy.run_path(str(ROOT / "scripts" / "drift.py"))  # its functions, without running main


def stored_cell(source: str, tags: tuple[str, ...] = (), **output) -> nbformat.NotebookNode:
    """A code cell as a run stored it: executed, with this output."""
    return nbformat.v4.new_code_cell(source, execution_count=1, outputs=[nbformat.v4.new_output(**output)],
                                     metadata={"tags": list(tags)})


def test_drift_tells_a_changed_output_from_a_cell_that_raised(tmp_path):
    notebook = nbformat.v4.new_notebook(cells=[
        stored_cell("print('printed now')", output_type="stream", name="stdout", text="printed once\n"),
        stored_cell("raise ValueError('a new message')", ("raises-exception",),  # a deliberate error, as in 01 and 03
                    output_type="error", ename="ValueError", evalue="the old message", traceback=[]),
        stored_cell("1 / 0", output_type="stream", name="stdout", text=""),
        stored_cell("print('same')", output_type="stream", name="stdout", text="same\n"),
    ])
    nbformat.write(notebook, tmp_path / "drifted.ipynb")
    (tmp_path / "pytest.ini").write_text("[pytest]\n")  # not the course's options: nbval alone
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "--disable-plugin-autoload", "-p", "nbval.plugin",
                          "-p", "no:cacheprovider", "--nbval", "--nbval-current-env", "--junitxml=junit.xml",
                          "drifted.ipynb"], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert run.returncode == 1, run.stdout[-3000:] + run.stderr[-3000:]
    assert drift["failures"](tmp_path / "junit.xml") == [
        "drifted.ipynb::Cell 0: stored output differs: mismatch 'stdout'",
        "drifted.ipynb::Cell 1: stored output differs: mismatch 'evalue'",
        "drifted.ipynb::Cell 2: Notebook cell execution failed (ZeroDivisionError: division by zero)",
    ]
