"""Reading a submission and planning its run: where the grader's cells go among the learner's.

Everything about a notebook that can be decided before a kernel starts is decided here.
"""

from __future__ import annotations

import copy
import errno
import hashlib
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Collection

from ..course import COURSE, Exercise, Notebook, made_with
from .course import SubmissionVersion, exercise_number, not_in_version, submission_version, unknown_version
from .gradebook import Ungradable
from .kernel_cells import GRADER_MARK
from .limits import DEFAULT_CELL_TIMEOUT, DEFAULT_TIMEOUT, SUBMISSION_LIMIT
from .status import Status
from .submissions import Submission


LINKED = "{name} is a symbolic link: hand in the file itself, not a link"  # the message of Status.LINKED
NOT_THEIRS = ("a loose file named after {learner}, who has a folder: not counted; move it into the folder if it is "
              "theirs")  # the message of Status.NOT_THEIRS
CHECK_CALL = re.compile(r"""\bcheck\(\s*(['"])(?P<number>\d+\.\d+)\1""")


@dataclass
class GraderCell:
    """One of the grader's own cells in the run: "start" (the memory watch), "check" (its exercises judged), "end"."""
    step: str  # start, check, end
    exercises: list[Exercise] = field(default_factory=list)


@dataclass
class Plan:
    submission: Submission
    course: Notebook
    original: Any  # the learner's notebook, as read (never written back)
    notebook: Any  # the learner's cells with the grader's cells among them
    origin: list  # per cell of `notebook`: the learner's cell number (1-based), or a GraderCell
    version: SubmissionVersion  # the course version it is graded as
    not_in_version: list[Exercise]  # exercises added after that version: never checked, 0 of 0 points
    cell_limit: float = DEFAULT_CELL_TIMEOUT
    total_limit: float = DEFAULT_TIMEOUT

    def position(self, learner_cell: int) -> int:
        """Where the learner's cell (1-based) sits in the run."""
        return self.origin.index(learner_cell)


def _file_notebook(path: Path, course: dict[str, Notebook]) -> str:
    lowered = path.name.lower()
    found = [stem for stem in course if stem.lower() in lowered]
    return max(found, key=len) if found else ""


def _read_at_most(submission: Submission, limit: int, guessed: str) -> bytes:
    """The file's bytes, if it has at most `limit` of them; found in a folder, never through a link.

    Its size is read from the open file before its contents (and no more than `limit` + 1 bytes are read,
    should it grow meanwhile), so a huge file costs nothing. O_NOFOLLOW: a file found in a folder that
    became a link since it was listed is not read either."""
    follow = 0 if submission.given is None else getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(submission.path, os.O_RDONLY | follow)
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise Ungradable(Status.LINKED, LINKED.format(name=submission.path.name), guessed) from None
        raise Ungradable(Status.UNREADABLE, error.strerror or str(error), guessed) from None
    with os.fdopen(fd, "rb") as handle:
        size = os.fstat(handle.fileno()).st_size
        raw = handle.read(limit + 1) if size <= limit else b""
    if size > limit or len(raw) > limit:
        shown = max(size, len(raw))
        raise Ungradable(Status.TOO_LARGE, f"the file is {shown:,} bytes; the grader reads notebooks of up to "
                                           f"{limit:,} bytes ({limit >> 20} MB): clear large outputs and attachments, "
                                           "then hand it in again", guessed)
    submission.digest = hashlib.sha256(raw).hexdigest()  # the bytes just read: identical submissions are named
    return raw


def read_submission(submission: Submission, course: dict[str, Notebook]):
    """The learner's notebook and the course notebook it is; raises Ungradable saying why it can't be graded."""
    import nbformat

    if submission.named_after:  # first: not even a link or a broken file named after them is theirs
        raise Ungradable(Status.NOT_THEIRS, NOT_THEIRS.format(learner=submission.named_after))
    guessed = _file_notebook(submission.path, course)
    if submission.missing:
        raise Ungradable(Status.NO_NOTEBOOK, "this folder holds no .ipynb file")
    if submission.linked:
        raise Ungradable(Status.LINKED, LINKED.format(name=submission.path.name), guessed)
    raw = _read_at_most(submission, SUBMISSION_LIMIT, guessed)
    try:
        data = json.loads(raw.decode("utf-8-sig"))
    except UnicodeDecodeError:
        raise Ungradable(Status.INVALID_JSON, "the file is not UTF-8 text", guessed) from None
    except ValueError as error:
        raise Ungradable(Status.INVALID_JSON, str(error), guessed) from None
    if not isinstance(data, dict):
        raise Ungradable(Status.NOT_A_NOTEBOOK, f"the JSON is a {type(data).__name__}, not an object", guessed)
    if not isinstance(data.get("nbformat"), int) or not isinstance(data.get("cells", data.get("worksheets")), list):
        raise Ungradable(Status.NOT_A_NOTEBOOK, "the JSON has no nbformat version and list of cells", guessed)
    try:
        import warnings
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            notebook = nbformat.reads(json.dumps(data), as_version=4)
        for cell in notebook.cells:
            if cell.get("cell_type") not in ("code", "markdown", "raw") or not isinstance(cell.get("source"), str):
                raise ValueError(f"a cell of type {cell.get('cell_type')!r} without its source text")
            cell.setdefault("metadata", {})
    except Exception as error:  # nbformat raises many kinds
        reason = str(error).splitlines()[0] if str(error) else type(error).__name__
        raise Ungradable(Status.NOT_A_NOTEBOOK, reason, guessed) from None

    found: list[str] = []
    for cell in notebook.cells:
        number = exercise_number(cell)
        if number and number not in found:
            found.append(number)
    if found:
        matches = [nb for nb in course.values() if set(found) <= set(nb.ids)]
        if len(matches) != 1:
            stated = made_with(notebook)
            newer = (f" (it names {unknown_version(stated)}, which this course does not have: is this looplab "
                     f"older than the notebook?)" if stated and stated not in COURSE.versions else "")
            raise Ungradable(Status.OTHER_COURSE, f"exercises found: {', '.join(found)}{newer}")
        identified = matches[0]
    elif guessed:
        identified = course[guessed]
    else:
        raise Ungradable(Status.OTHER_COURSE, "no exercise cells found, and the file name is not a course notebook's")
    return notebook, identified


def grading_points(notebook, course_notebook: Notebook, skipped: Collection[Exercise] = ()) -> dict[int, list[Exercise]]:
    """Before which learner cell (index; len(cells) for the end) each exercise, but the skipped ones, is graded."""
    cells = notebook.cells
    exercise_cells = {i for i, cell in enumerate(cells) if exercise_number(cell)}
    points: dict[int, list[Exercise]] = {}
    for exercise in course_notebook.exercises:
        if exercise in skipped:
            continue
        own = [i for i, cell in enumerate(cells) if exercise_number(cell) == exercise.id]
        checks = [i for i, cell in enumerate(cells) if cell.cell_type == "code"
                  and exercise.id in {m.group("number") for m in CHECK_CALL.finditer(cell.source)}]
        if own:
            anchor = own[-1]
            later_checks = [i for i in checks if i > anchor]
            later_exercises = [i for i in exercise_cells if i > anchor]
            point = later_checks[0] if later_checks else min(later_exercises, default=len(cells))
        else:
            point = checks[-1] if checks else len(cells)
        points.setdefault(point, []).append(exercise)
    return points


def plan_run(submission: Submission, notebook, course_notebook: Notebook) -> Plan:
    import nbformat

    version = submission_version(notebook, course_notebook)
    absent = not_in_version(course_notebook, version.graded_as)
    points = grading_points(notebook, course_notebook, absent)
    cells, origin = [], []

    def add_grader_cell(grader_cell: GraderCell) -> None:
        cell = nbformat.v4.new_code_cell("")
        cell.metadata[GRADER_MARK] = grader_cell.step
        cells.append(cell)
        origin.append(grader_cell)

    add_grader_cell(GraderCell("start"))
    for index, learner_cell in enumerate(list(notebook.cells) + [None]):
        if index in points:
            add_grader_cell(GraderCell("check", points[index]))
        if learner_cell is None:
            break
        cell = copy.deepcopy(learner_cell)
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
        cell.metadata.pop(GRADER_MARK, None)
        cells.append(cell)
        origin.append(index + 1)
    add_grader_cell(GraderCell("end"))
    augmented = nbformat.v4.new_notebook(cells=cells, metadata=copy.deepcopy(notebook.metadata))
    return Plan(submission, course_notebook, notebook, augmented, origin, version, absent)
