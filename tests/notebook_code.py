"""The exercise code of a solution notebook, as Python objects the check tests can use.

The solution notebooks are the single source of the exercise solutions, so the tests check them
directly: run the notebook's code cells in a fresh namespace, offline, as a kernel would, and hand
back that namespace. Cells that show an error on purpose (`raises-exception`) may raise; cells with
IPython magics or shell lines (`%`, `!`) are left out.
"""

import contextlib
import io
import linecache
import os
from pathlib import Path

import nbformat

from looplab.client import offline_environ
from looplab.course import exercise_number
from looplab.notebook_source import has_magic

ROOT = Path(__file__).resolve().parent.parent


def solution_namespace(stem: str, until: str | None = None) -> dict:
    """The namespace after running the notebook; with `until`, only up to that exercise's cell."""
    notebook = nbformat.read(ROOT / "solutions" / f"{stem}.ipynb", as_version=4)
    namespace: dict = {"__name__": f"solution_{stem}", "In": [""]}  # `In`: the cells run so far, as IPython keeps them
    with offline_environ(), contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        for index, cell in enumerate(notebook.cells):
            tags = cell.get("metadata", {}).get("tags", [])
            if cell.cell_type != "code" or has_magic(cell.source):
                continue
            # Each cell's text kept where its functions' code says it is, as IPython keeps it (notebook 6 writes
            # its program from the cells that defined its functions).
            filename = f"<{stem} cell {index}>"
            linecache.cache[filename] = (len(cell.source), None, cell.source.splitlines(True), filename)
            namespace["In"].append(cell.source)
            try:
                exec(compile(cell.source, filename, "exec"), namespace)
            except Exception:
                if "raises-exception" not in tags:
                    raise
            if until is not None and exercise_number(cell) == until:
                return namespace
    return namespace


def solution_in_a_folder(folder: Path, stem: str, until: str | None = None) -> dict:
    """solution_namespace, run with `folder` as the working directory: a notebook that writes its program
    (agent_subagent.py...) writes it there, not into the repository."""
    before = os.getcwd()
    os.chdir(folder)
    try:
        return solution_namespace(stem, until=until)
    finally:
        os.chdir(before)


def notebook_question(stem: str, name: str) -> str:
    """A question as its solution notebook writes it (the `*_QUESTION` constant): a test never copies the
    words, so rewording a question stays one edit (authoring/author_recordings.py reads them the same way)."""
    from authoring import author_recordings as author

    return author.notebook_questions(ROOT / "solutions" / f"{stem}.ipynb")[name]
