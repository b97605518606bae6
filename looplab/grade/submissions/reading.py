"""Reading a submission: its file, within the size the grader reads and never through a link, parsed into
a notebook of the course (which one, from its exercise cells' metadata, else its file name); or Ungradable,
saying why it cannot be graded.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
from pathlib import Path

from ... import language
from ...catalogue import words
from ...course import COURSE, Course, Notebook, exercise_number, made_with
from ..shared.gradebook import Ungradable
from ..shared.limits import CODE_CELL_LIMIT, CODE_LIMIT, NESTING_LIMIT, SUBMISSION_LIMIT
from ..shared.numbers import integer
from ..shared.status import Status
from .finding import Submission
from .versions import unknown_version

# The messages of the rows of submissions that cannot be graded (texts/reading.toml), in the report's language.
WORDS = words(__file__)
LINKED = WORDS.rows["linked"]["en"]  # the English message of Status.LINKED, as tests read it
NOT_THEIRS = WORDS.rows["not_theirs"]["en"]  # the English message of Status.NOT_THEIRS


def load_course(course: Course = COURSE) -> dict[str, Notebook]:
    """The course notebooks by stem, in order: what a submission may be."""
    return {notebook.stem: notebook for notebook in course.notebooks}


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
            raise Ungradable(Status.LINKED, WORDS("linked", name=submission.path.name), guessed) from None
        raise Ungradable(Status.UNREADABLE, error.strerror or str(error), guessed) from None
    with os.fdopen(fd, "rb") as handle:
        size = os.fstat(handle.fileno()).st_size
        raw = handle.read(limit + 1) if size <= limit else b""
    if size > limit or len(raw) > limit:
        shown = max(size, len(raw))
        raise Ungradable(Status.TOO_LARGE, WORDS("too_large", size=integer(shown), limit=integer(limit),
                                                 megabytes=limit >> 20), guessed)
    submission.digest = hashlib.sha256(raw).hexdigest()  # the bytes just read: identical submissions are named
    return raw


def _json_of(raw: bytes, guessed: str):
    """The file's JSON, or Ungradable saying why not: not UTF-8, not JSON, or nested deeper than the grader reads.

    Why a limit on nesting: Python's JSON reader, and every step after it that walks a notebook (nbformat's
    validation, copying, writing the feedback), recurses once a level; a 20 KB file nesting arrays 3,000 deep
    raised RecursionError where the grader first reads every file (the class's language) and stopped the whole
    class before any row (issue 33). Measured after reading, without recursion."""
    try:
        data = json.loads(raw.decode("utf-8-sig"))
    except UnicodeDecodeError:
        raise Ungradable(Status.INVALID_JSON, WORDS("not_utf8"), guessed) from None
    except RecursionError:
        raise Ungradable(Status.INVALID_JSON, WORDS("too_deep", limit=NESTING_LIMIT), guessed) from None
    except ValueError as error:
        raise Ungradable(Status.INVALID_JSON, json_error(error), guessed) from None
    if _deeper_than(data, NESTING_LIMIT):
        raise Ungradable(Status.INVALID_JSON, WORDS("too_deep", limit=NESTING_LIMIT), guessed)
    return data


JSON_SAID = "json_said_"  # the rows of Python's JSON reader's messages: `text` is its message, exactly


def json_error(error: ValueError) -> str:
    """Why a file is not JSON, in the current language: Python's reader's message and where ("Expecting value: line
    1 column 1 (char 0)", in English exactly as Python says it); a message the catalogue lacks stays Python's."""
    if not isinstance(error, json.JSONDecodeError):
        return str(error)
    said = next((WORDS(key) for key, row in WORDS.rows.items()
                 if key.startswith(JSON_SAID) and row[language.SOURCE] == error.msg), error.msg)
    return WORDS("json_at", said=said, line=error.lineno, column=error.colno, char=error.pos)


def _deeper_than(data, limit: int) -> bool:
    """Does the JSON value nest lists and objects more than `limit` levels deep? A walk without recursion."""
    pending = [(data, 1)]
    while pending:
        value, depth = pending.pop()
        if depth > limit:
            return True
        children = value.values() if isinstance(value, dict) else value if isinstance(value, list) else ()
        pending.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))
    return False


def spoken(notebook) -> str:
    """The language a submission is judged in: its metadata's `looplab.lang` when the course speaks it, else
    the course's source language (English), as a learner's kernel would speak it."""
    said = language.of_notebook(notebook)
    return said if said in language.LANGUAGES else language.SOURCE


def language_of(submission: Submission) -> str | None:
    """A submission's language read from its file alone (the report's default language is the class's when
    every notebook agrees); None for a file that cannot be read (it has no say)."""
    if submission.named_after or submission.missing or submission.linked or submission.unreadable:
        return None
    try:
        return spoken(_json_of(_read_at_most(submission, SUBMISSION_LIMIT, ""), ""))
    except Exception:  # the file's own row will say what is wrong with it: it has no say in the class's language
        return None


def _within_the_code_limits(notebook, guessed: str) -> None:
    """Ungradable (too large) when the notebook holds more code than the grader reads (shared/limits.py says why):
    measured, never parsed."""
    total = 0
    for number, cell in enumerate(notebook.cells, start=1):
        if cell.get("cell_type") != "code":
            continue
        size = len(cell.source)
        total += size
        if size > CODE_CELL_LIMIT:
            raise Ungradable(Status.TOO_LARGE, WORDS("code_cell_too_large", cell=number, size=integer(size),
                                                     limit=integer(CODE_CELL_LIMIT)), guessed)
    if total > CODE_LIMIT:
        raise Ungradable(Status.TOO_LARGE, WORDS("code_too_large", size=integer(total), limit=integer(CODE_LIMIT)), guessed)


def read_submission(submission: Submission, course: dict[str, Notebook]):
    """The learner's notebook and the course notebook it is; raises Ungradable saying why it can't be graded."""
    import nbformat

    if submission.named_after:  # first: not even a link or a broken file named after them is theirs
        raise Ungradable(Status.NOT_THEIRS, WORDS("not_theirs", learner=submission.named_after))
    guessed = _file_notebook(submission.path, course)
    if submission.unreadable:  # a folder of a hub's home the grader may not enter (homes.py)
        raise Ungradable(Status.UNREADABLE, WORDS("folder_unreadable", folder=submission.file,
                                                  error=submission.unreadable))
    if submission.missing:
        raise Ungradable(Status.NO_NOTEBOOK, WORDS("no_course_notebook", folder=submission.looked_in)
                         if submission.looked_in else WORDS("no_notebook"))
    if submission.linked:
        raise Ungradable(Status.LINKED, WORDS("linked", name=submission.path.name), guessed)
    data = _json_of(_read_at_most(submission, SUBMISSION_LIMIT, guessed), guessed)
    if not isinstance(data, dict):
        raise Ungradable(Status.NOT_A_NOTEBOOK, WORDS("not_an_object", kind=type(data).__name__), guessed)
    if not isinstance(data.get("nbformat"), int) or not isinstance(data.get("cells", data.get("worksheets")), list):
        raise Ungradable(Status.NOT_A_NOTEBOOK, WORDS("no_cells"), guessed)
    try:
        import warnings
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            notebook = nbformat.reads(json.dumps(data), as_version=4)
        for cell in notebook.cells:
            if cell.get("cell_type") not in ("code", "markdown", "raw") or not isinstance(cell.get("source"), str):
                raise ValueError(WORDS("cell_without_source", kind=repr(cell.get("cell_type"))))
            cell.setdefault("metadata", {})
    except Exception as error:  # nbformat raises many kinds
        reason = str(error).splitlines()[0] if str(error) else type(error).__name__
        raise Ungradable(Status.NOT_A_NOTEBOOK, reason, guessed) from None

    _within_the_code_limits(notebook, guessed)
    found: list[str] = []
    for cell in notebook.cells:
        number = exercise_number(cell)
        if number and number not in found:
            found.append(number)
    if found:
        matches = [nb for nb in course.values() if set(found) <= set(nb.ids)]
        if len(matches) != 1:
            stated = made_with(notebook)
            newer = (WORDS("newer", version=unknown_version(stated))
                     if stated and stated not in COURSE.versions else "")
            raise Ungradable(Status.OTHER_COURSE, WORDS("exercises_found", exercises=", ".join(found)) + newer)
        identified = matches[0]
    elif guessed:
        identified = course[guessed]
    else:
        raise Ungradable(Status.OTHER_COURSE, WORDS("no_exercises"))
    return notebook, identified
