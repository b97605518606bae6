"""Checks run the grader's way: the checker here, the learner's object behind the channel (looplab/grade/judgement/).

The kernel's end (looplab.serve.serve) runs in a thread of this process, over a real Unix socket,
with the object in a namespace of its own: the same code as in a kernel, without starting one.
`judged` gives the grader's result; `same_as_in_process` asserts it is exactly the in-process one.
With LOOPLAB_CHECKS_REMOTE=1, every `passes` / `fails` of tests/check_helpers.py does the latter too.
"""

from __future__ import annotations

import inspect
import tempfile
import textwrap
import threading
from pathlib import Path
from typing import Any

from looplab.checks import core, run_check
from looplab.checks.core import Session
from looplab.course import COURSE
from looplab.grade.judgement.judge import Judge
from looplab.serve import serve


def source_cells(obj: Any, name: str) -> list[str]:
    """The cells the grader would read from a notebook: the session's `In` where a test set one up, else the
    object's source as the one cell that defined it, bound to the exercise's name."""
    found = core.session()
    if found is not None:
        return found.cells
    try:
        source = textwrap.dedent(inspect.getsource(obj))
    except (OSError, TypeError):
        return []
    own = getattr(obj, "__name__", None)
    return [source + (f"\n{name} = {own}\n" if own and own != name and own.isidentifier() else "")]


def judged(number: str, obj: Any, cells: list[str] | None = None, seconds: float = 10,
           kernel=serve, answered=lambda: None) -> dict:
    """{"kind", "message", "hint"}: exercise `number` judged by the grader, `obj` served from a thread.

    `answered` is called once the judge has its result, before the serving thread is joined: a test whose
    object never returns stops it there, instead of spinning through the join's wait."""
    exercise = COURSE.exercise(number)
    folder = Path(tempfile.mkdtemp(prefix="looplab-judge-"))
    judge = Judge([exercise], source_cells(obj, exercise.name) if cells is None else cells, folder, seconds)
    thread = threading.Thread(target=kernel, args=(str(judge.path), {exercise.name: obj}), daemon=True)
    thread.start()
    try:
        return judge.run()[number]
    finally:
        answered()
        thread.join(seconds + 5)
        folder.rmdir()


def same_as_in_process(number: str, obj: Any) -> dict:
    """The grader's result, asserted equal to run_check's in this process (given the same cell)."""
    cells = source_cells(obj, COURSE.exercise(number).name)
    in_a_session = core.session() is not None
    local = run_check(number, obj, session=None if in_a_session or not cells else Session(cells, {})).as_dict()
    remote = judged(number, obj, cells)
    assert (remote["kind"], remote["message"], remote["hint"]) == (local["kind"], local["failed"], local["hint"]), \
        f"in-process: {local}\ngrader: {remote}"
    return remote
