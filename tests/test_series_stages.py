"""The programs the notebooks write pass the series' own stage tests (the-ai-coffee/ai-agent-from-scratch).

Each notebook that ends with a program in the series' shape writes it next to itself from the learner's
cells. Here the solution notebook's code cells run offline, as a kernel would, in a folder of their own,
up to the cell that writes the program; the series' tests of that stage are copied beside it, the program
as `agent.py`, and run with pytest in a process of their own. The series' tests are never copied into this
repository: they are found through LOOPLAB_SERIES_TESTS, else ../shared/seed/series-tests beside the
repository, else /work/shared/seed/series-tests.
"""

from __future__ import annotations

import contextlib
import io
import linecache
import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from looplab.client import offline_environ, offline_environment
from looplab.notebook_source import has_magic

ROOT = Path(__file__).resolve().parent.parent
VARIABLE = "LOOPLAB_SERIES_TESTS"
# The series' stage -> (the notebook that writes its program, the program's file name).
STAGES = {"agent-007-multi-tool-dispatch": ("05_toolbox", "agent_toolbox.py"),
          "agent-008-malformed-tool-call-handling": ("06_when_calls_go_wrong", "agent_robust.py")}


def series_tests() -> Path | None:
    """Where the series' stage tests are, or None."""
    candidates = [os.environ.get(VARIABLE), ROOT.parent / "shared" / "seed" / "series-tests",
                  "/work/shared/seed/series-tests"]
    return next((Path(found) for found in candidates if found and Path(found).is_dir()), None)


def written_program(stem: str, program: str, folder: Path) -> Path:
    """Run the solution notebook's code cells in `folder`, offline, until one has written `program`; its path."""
    notebook = nbformat.read(ROOT / "solutions" / f"{stem}.ipynb", as_version=4)
    namespace: dict = {"__name__": f"solution_{stem}", "In": [""]}
    target = folder / program
    before = Path.cwd()
    os.chdir(folder)
    try:
        with offline_environ(), contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            for index, cell in enumerate(notebook.cells):
                if cell.cell_type != "code" or has_magic(cell.source):
                    continue
                namespace["In"].append(cell.source)
                # Each cell's text where its functions' code says it is, as IPython keeps it (a program may be
                # written from the cells that defined its functions).
                filename = f"<{stem} cell {index}>"
                linecache.cache[filename] = (len(cell.source), None, cell.source.splitlines(True), filename)
                with contextlib.suppress(Exception):  # the check cells of a solution pass; a stub's would raise
                    exec(compile(cell.source, filename, "exec"), namespace)
                if target.exists():
                    return target
    finally:
        os.chdir(before)
    raise AssertionError(f"solutions/{stem}.ipynb never wrote {program}")


@pytest.mark.parametrize("stage", sorted(STAGES))
def test_the_program_passes_the_series_stage_tests(stage, tmp_path):
    found = series_tests()
    if found is None or not (found / stage).is_dir():
        pytest.skip(f"the series' stage tests are not here: set {VARIABLE} to the folder holding {stage}/")
    stem, program = STAGES[stage]
    written = written_program(stem, program, tmp_path)
    tests = tmp_path / "series" / stage
    shutil.copytree(found / stage, tests)
    for path in tests.rglob("*"):  # the series' folder may be read-only; its copy must take agent.py
        path.chmod(0o755 if path.is_dir() else 0o644)
    shutil.copyfile(written, tests / "agent.py")
    ran = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tests)],
                         cwd=tests, capture_output=True, text=True, timeout=300,
                         env=dict(offline_environment(), PYTHONDONTWRITEBYTECODE="1", PYTEST_DISABLE_PLUGIN_AUTOLOAD="1"))
    assert ran.returncode == 0, f"{stage} against {program}:\n{ran.stdout[-4000:]}\n{ran.stderr[-2000:]}"
    assert " passed" in ran.stdout and " failed" not in ran.stdout
