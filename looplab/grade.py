"""Grade a folder of submitted notebooks into a gradebook, offline, in fresh kernels.

    python -m looplab.grade SUBMISSIONS... --out grades.csv [--feedback DIR] [--jobs N]

SUBMISSIONS are notebook files and folders. In a folder, each subfolder is one learner (named
after the subfolder; every notebook under it is theirs) and each notebook lying directly in it
is named from its file: the file name minus the course notebook's name (`alice-01_one_tool_call`
-> `alice`), or, when nothing is left, the name of the folder holding it
(`alice/01_one_tool_call.ipynb` given on its own -> `alice`). Files other than notebooks are
ignored in folders; hidden folders (such as `.ipynb_checkpoints`) are skipped.

How a notebook is graded
------------------------
- Which notebook it is comes from its exercise cells' metadata (`looplab.exercise`): their numbers
  must all belong to one course notebook (the set in `solutions/`). A notebook without any exercise
  metadata is matched by its file name instead. The object each exercise is checked on is the name
  the official notebook's check cell passes, `check("2.1", tool_result)`.
- It runs top to bottom in a fresh kernel (nbclient), offline whatever the environment says
  (no ANTHROPIC_* variables, LOOPLAB_MODE=offline, HTTP proxies pointed at a closed port, its own
  IPython directory), in a temporary folder holding a copy of the file. Errors don't stop the run.
  A cell that runs past `--cell-timeout` is interrupted and the run goes on; the whole notebook is
  stopped at `--timeout`. `--jobs N` (default: the number of cores) grades N notebooks at a time,
  each in its own kernel.
- The grader adds its own cells, run without entering the history: one before the learner's first
  cell, which records a fingerprint of the check machinery (every function, class and constant of
  the looplab modules, their code, and the builtins); one right before each exercise's check cell
  (or, if the learner deleted it, before the next exercise), which runs the official
  `looplab.checks.run_check` on the learner's object as it is at that point, between two more
  fingerprints; one after the last cell. Grading where the check cell sits matters: notebook 2
  redefines `agent_turn` in a later exercise, and a check at the very end would grade the wrong one.
- Points come only from those cells' results, read from the one output that carries the nonce the
  grader made for this run; everything a submission stores (outputs, scores) and everything the
  learner's own cells print is ignored. If a fingerprint differs from the first one, the notebook
  tampered with the checks and gets 0 everywhere.
- By default (on Linux) kernels are forked from a template process that has already imported the
  kernel, the SDK and looplab (and formatted one traceback: IPython's first costs most of a
  second), so each notebook pays neither the kernel's start-up imports nor `import anthropic`. The
  template is forked from the grader itself at start, before it has run anything. A forked kernel
  is still a fresh process: it has never run anyone's code and shares nothing with other kernels.
  `--plain-kernels` starts each kernel the usual way instead (about 2 s more per notebook).

The gradebook
-------------
One CSV row per exercise of each graded notebook, one row for a submission that could not be
graded at all (exercise empty). Columns: learner, notebook, exercise, points, max_points, status,
message, file. The status, in plain words:

    solved                     full points
    not solved                 the check failed; the message is the check's own explanation
    not written yet            the exercise still raises NotImplementedError (or is still empty)
    not defined                the exercise's function or variable does not exist where it is graded
    syntax error               the exercise cell does not parse, so nothing in it ran
    stopped: cell N ran past the S s limit
                               a cell was interrupted at --cell-timeout; it is reported on the
                               first exercise graded after it (else the last one), which was still
                               graded and failed (if it passed, it is "solved" and the message
                               notes the stop)
    stopped: the notebook ran past the total limit (S s)
                               the run was stopped before this exercise was graded
    the kernel died (in cell N)
                               the kernel exited (os._exit, a crash, memory) before this exercise
                               was graded; "(during the check of exercise X)" if it died in a check
    tampered with the checks   the check machinery changed while the notebook ran; 0 points
    could not be graded        the grader's own cell failed in this kernel; the message says how
    grader error               the grader itself failed (e.g. the kernel would not start)

    invalid JSON               (one row) the file is not JSON
    not a notebook             (one row) JSON, but not a notebook
    not a notebook of this course
                               (one row) its exercises are not those of a course notebook
    no notebook found          (one row) a learner's folder without a notebook
    cannot be read             (one row) the file could not be opened

Cells are numbered from 1, counting every cell from the top, markdown included.

`--feedback DIR` writes, for each notebook that ran, the executed copy (the learner's cells with
their new outputs, without the grader's cells) and the grade as a last markdown cell, to
DIR/<learner>/<file name>. Submissions are only ever read.

What it cannot do: the learner's code runs in the same process as the checks (it has to: the
checks call it), so code written specifically to attack the grader from inside the kernel
(rewriting the grader's cells as they run, patching the interpreter) is beyond what any in-kernel
grader can rule out. Code that redefines or patches the checks, forges their output or prints
fake results is caught. It also runs the learner's code as you: grade untrusted submissions in a
throwaway account or container.
"""

from __future__ import annotations

import argparse
import ast
import asyncio
import copy
import csv
import json
import os
import re
import secrets
import shutil
import signal
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
COURSE_DIRS = (ROOT / "solutions", ROOT / "notebooks")
MIME = "application/vnd.looplab.grader+json"
GRADER_MARK = "looplab_grader"  # cell metadata key of the grader's own cells
DEFAULT_CELL_TIMEOUT = 30  # seconds
DEFAULT_TIMEOUT = 300  # seconds, the whole notebook
CHECK_MARGIN = 5  # seconds per exercise on top of the check's own time limit, for the grader's cells
CHECK_CALL = re.compile(r"""\bcheck\(\s*(['"])(?P<number>\d+\.\d+)\1""")
CSV_COLUMNS = ["learner", "notebook", "exercise", "points", "max_points", "status", "message", "file"]
DEAD_PORT_PROXY = "http://127.0.0.1:9"  # the discard port: nothing answers, so the network fails fast

# Module state the course changes legitimately while a notebook runs: not part of the fingerprint.
MUTABLE_STATE = ("looplab.checks._best", "looplab.checks._hints_shown", "looplab.client._traffic_by_client")
# Classes outside looplab whose methods the checks go through; their methods are fingerprinted too.
SDK_CLASSES = (
    "anthropic.Anthropic", "anthropic.resources.messages.messages.Messages", "anthropic._base_client.SyncAPIClient",
    "httpx2.Client", "httpx2.MockTransport",
)
# Functions the grader's own cells use.
GRADER_FUNCTIONS = (
    "json.dumps", "hashlib.sha256", "IPython.display.publish_display_data",
    "IPython.core.getipython.get_ipython",
)


# --- the grader's cells, as they run in the learner's kernel ------------------------------------------

KERNEL_CODE = r'''
import builtins, hashlib, json, sys, types
from IPython.core.getipython import get_ipython
from IPython.display import publish_display_data


def _ours(kind):
    name = f"{getattr(kind, '__module__', '')}.{getattr(kind, '__qualname__', '')}"
    return name.startswith("looplab") or name in DEEP


_MEMO = {}  # (id, depth) -> (value, digest), for one fingerprint: the same object shows up in many modules


def _describe(value, depth=0):
    """An int that changes when the value, or anything it holds (to some depth), is replaced or changed.

    Built from ids and Python's own hashes, which are stable within one process: that is all a
    fingerprint compared within one kernel needs, and far cheaper than formatting text.
    """
    kind = type(value)
    if value is None or kind in (bool, int, float, complex, str, bytes):
        return hash((kind, value))
    known = _MEMO.get((id(value), depth))
    if known is not None and known[0] is value:
        return known[1]
    digest = hash(_parts(value, kind, depth))
    _MEMO[(id(value), depth)] = (value, digest)
    return digest


def _parts(value, kind, depth):
    if isinstance(value, types.ModuleType):
        return ("module", value.__name__, id(value))
    if isinstance(value, types.FunctionType):
        # A code object hashes its bytecode, constants (nested code too), names and signature.
        parts = ("function", id(value), hash(value.__code__))
        if depth < 4:
            cells = []
            for cell in value.__closure__ or ():
                try:
                    cells.append(_describe(cell.cell_contents, depth + 1))
                except ValueError:
                    cells.append(0)
            parts += (_describe(value.__defaults__, depth + 1), _describe(value.__kwdefaults__, depth + 1),
                      tuple(cells))
        return parts
    if isinstance(value, types.MethodType):  # a new object at each access: what it binds is what counts
        return ("method", _describe(value.__func__, depth + 1), id(value.__self__))
    if isinstance(value, (staticmethod, classmethod)):
        return (kind.__name__, _describe(value.__func__, depth + 1))
    if isinstance(value, property):
        return ("property",) + tuple(_describe(f, depth + 1) for f in (value.fget, value.fset, value.fdel))
    if isinstance(value, type):
        parts = ("class", id(value))
        if depth < 2 and _ours(value):
            parts += tuple((key, _describe(item, depth + 1)) for key, item in list(vars(value).items())
                           if key not in ("__dict__", "__weakref__", "__doc__"))
        return parts
    if depth >= 5:
        return ("object", id(value))
    if kind in (list, tuple):
        return (kind.__name__,) + tuple(_describe(item, depth + 1) for item in value)
    if kind in (set, frozenset):
        return (kind.__name__, frozenset(_describe(item, depth + 1) for item in value))
    if kind is dict:
        return ("dict",) + tuple((_describe(k, depth + 1), _describe(v, depth + 1)) for k, v in list(value.items()))
    if _ours(kind) and hasattr(value, "__dict__"):
        return ("object", id(value), _describe(dict(vars(value)), depth + 1))
    return ("object", id(value))


def _resolve(dotted):
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        module = sys.modules.get(".".join(parts[:cut]))
        if module is not None:
            value = module
            for part in parts[cut:]:
                value = getattr(value, part)
            return value
    raise LookupError(dotted)


_MISSING = object()


def _fingerprint(modules, builtin_names):
    _MEMO.clear()
    prints = {}
    for name in modules:
        module = sys.modules.get(name)
        if module is None:
            prints[name] = "missing"
            continue
        prints[name] = f"module {name} {id(module)}"
        for attr, value in list(vars(module).items()):
            key = f"{name}.{attr}"
            if attr.startswith("__") or key in SKIP:
                continue
            if isinstance(value, types.ModuleType):
                prints[key] = f"module {value.__name__} {id(value)}"
            else:
                prints[key] = f"{_describe(value) & 0xFFFFFFFFFFFFFFFF:x}"
    namespace = vars(builtins)
    for attr in builtin_names:
        value = namespace.get(attr, _MISSING)
        if isinstance(value, types.MethodType):
            prints[f"builtins.{attr}"] = f"method {id(value.__func__)} of {id(value.__self__)}"
        else:
            prints[f"builtins.{attr}"] = "missing" if value is _MISSING else str(id(value))
    for dotted in EXTRA:
        try:
            prints[dotted] = f"{_describe(_resolve(dotted), 1) & 0xFFFFFFFFFFFFFFFF:x}"
        except Exception:
            prints[dotted] = "missing"
    return prints


def _pack(prints):
    """One line per name: a single string is far cheaper to send and store than a dict of hundreds."""
    return "\n".join(f"{name}\t{value}" for name, value in sorted(prints.items()))


def _report(prints, expected):
    """The fingerprint's digest; the whole fingerprint only when it differs from the first one."""
    packed = _pack(prints)
    digest = hashlib.sha256(packed.encode()).hexdigest()
    return {"digest": digest} if digest == expected else {"digest": digest, "prints": packed}


def _run_checks(exercises):
    run_check = sys.modules["looplab.checks"].run_check
    namespace = get_ipython().user_ns
    results = {}
    for number, name in exercises:
        if name not in namespace:
            results[number] = {"missing": True}
            continue
        try:
            result = run_check(number, namespace[name])
            failed = result.failed
            results[number] = {"ok": failed is None, "failed": None if failed is None else str(failed)}
        except BaseException as error:  # the learner's code can raise anything, KeyboardInterrupt too
            results[number] = {"error": f"{type(error).__name__}: {error}"}
    return results


def _main(step):
    payload = {"nonce": step["nonce"], "step": step["step"]}
    try:
        if step["step"] == "start":
            import looplab.checks  # noqa: F401 - the official checks, imported before any learner code
            modules = sorted(name for name in sys.modules
                             if (name == "looplab" or name.startswith("looplab.")) and name != "looplab.grade")
            names = sorted(name for name in vars(builtins) if name != "_")
            packed = _pack(_fingerprint(modules, names))
            payload.update(modules=modules, builtins=names, fingerprint=packed,
                           digest=hashlib.sha256(packed.encode()).hexdigest())
        else:
            modules, names, expected = step["modules"], step["builtins"], step["expected"]
            payload["before"] = _report(_fingerprint(modules, names), expected)
            if step["exercises"]:
                payload["results"] = _run_checks(step["exercises"])
                payload["after"] = _report(_fingerprint(modules, names), expected)
    except BaseException as error:
        payload["error"] = f"{type(error).__name__}: {error}"
    publish_display_data({MIME: json.loads(json.dumps(payload, default=str))})


_main(STEP)
'''


def grader_cell_source(step: dict) -> str:
    globals_ = {"__name__": "looplab_grader", "STEP": step, "MIME": MIME, "SKIP": set(MUTABLE_STATE),
                "DEEP": set(SDK_CLASSES), "EXTRA": list(SDK_CLASSES + GRADER_FUNCTIONS)}
    return ("# Added by the looplab grader (python -m looplab.grade): not part of the submission.\n"
            f"exec(compile({KERNEL_CODE!r}, '<looplab grader>', 'exec'), {globals_!r})\n")


# --- the course: which notebooks, which exercises, checked on which names --------------------------------


@dataclass
class Exercise:
    number: str
    name: str | None  # the object the official check cell passes
    title: str
    points: int | None  # None: no official check for it


@dataclass
class CourseNotebook:
    stem: str
    exercises: list[Exercise]

    @property
    def numbers(self) -> list[str]:
        return [exercise.number for exercise in self.exercises]


def _exercise_of(cell) -> str | None:
    looplab_meta = (cell.get("metadata") or {}).get("looplab")
    number = looplab_meta.get("exercise") if isinstance(looplab_meta, dict) else None
    return str(number) if number is not None else None


def _checked_names(source: str) -> dict[str, str]:
    """`check("2.1", tool_result)` -> {"2.1": "tool_result"}, read from the code, not run."""
    python = "\n".join(line for line in source.splitlines() if not line.lstrip().startswith(("%", "!")))
    try:
        tree = ast.parse(python)
    except SyntaxError:
        return {}
    names = {}
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and len(node.args) >= 2):
            continue
        func = node.func
        called = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
        number, obj = node.args[0], node.args[1]
        if called == "check" and isinstance(number, ast.Constant) and isinstance(number.value, str) \
                and isinstance(obj, ast.Name):
            names[number.value] = obj.id
    return names


def load_course(dirs: tuple[Path, ...] = COURSE_DIRS) -> dict[str, CourseNotebook]:
    """The course notebooks (from solutions/, else notebooks/) and their exercises, in order."""
    import nbformat

    from .checks import EXERCISES

    course: dict[str, CourseNotebook] = {}
    for folder in dirs:
        for path in sorted(folder.glob("*.ipynb")):
            if path.stem in course:
                continue
            notebook = nbformat.read(path, as_version=4)
            numbers: list[str] = []
            names: dict[str, str] = {}
            for cell in notebook.cells:
                number = _exercise_of(cell)
                if number and number not in numbers:
                    numbers.append(number)
                if cell.cell_type == "code":
                    names.update(_checked_names(cell.source))
            if not numbers:
                continue
            exercises = []
            for number in numbers:
                official = EXERCISES.get(number)
                title = official.title if official else number
                name = names.get(number) or (title if official and title.isidentifier() else None)
                exercises.append(Exercise(number, name, title, official.points if official else None))
            course[path.stem] = CourseNotebook(path.stem, exercises)
    return course


# --- submissions -------------------------------------------------------------------------------------------


@dataclass
class Submission:
    path: Path
    learner: str
    missing: bool = False  # a learner's folder holding no notebook

    @property
    def file(self) -> str:
        try:
            return os.path.relpath(self.path)
        except ValueError:  # another drive, on Windows
            return str(self.path)


def _visible(path: Path, root: Path) -> bool:
    return not any(part.startswith(".") or part == "__pycache__" for part in path.relative_to(root).parts)


def learner_from_file(path: Path, stems: list[str]) -> str:
    """`alice-01_one_tool_call.ipynb` -> `alice`; `alice/01_one_tool_call.ipynb` -> `alice`."""
    name = path.stem
    for stem in sorted(stems, key=len, reverse=True):
        name = re.sub(re.escape(stem), "", name, flags=re.IGNORECASE)
    name = name.strip(" -_.")
    return name or path.resolve().parent.name


def collect(paths: list[str], stems: list[str]) -> list[Submission]:
    submissions = []
    for given in paths:
        path = Path(given)
        if path.is_dir():
            for entry in sorted(path.iterdir()):
                if entry.name.startswith(".") or entry.name == "__pycache__":
                    continue
                if entry.is_dir():
                    found = sorted(p for p in entry.rglob("*.ipynb") if p.is_file() and _visible(p, entry))
                    submissions += [Submission(p, entry.name) for p in found] or [Submission(entry, entry.name, True)]
                elif entry.suffix == ".ipynb":
                    submissions.append(Submission(entry, learner_from_file(entry, stems)))
        elif path.exists():
            submissions.append(Submission(path, learner_from_file(path, stems)))
        else:
            raise FileNotFoundError(f"no such file or folder: {given}")
    return submissions


# --- the gradebook's rows ----------------------------------------------------------------------------------


@dataclass
class Row:
    learner: str
    notebook: str
    exercise: str
    points: int
    max_points: int | None
    status: str
    message: str
    file: str

    def as_csv(self) -> list:
        return [self.learner, self.notebook, self.exercise, self.points,
                "" if self.max_points is None else self.max_points, self.status, self.message, self.file]


def _one_row(submission: Submission, status: str, message: str, notebook: str = "") -> list[Row]:
    return [Row(submission.learner, notebook, "", 0, None, status, message, submission.file)]


def _cells(numbers: list[int]) -> str:
    if len(numbers) == 1:
        return f"cell {numbers[0]}"
    return "cells " + ", ".join(str(n) for n in numbers[:-1]) + f" and {numbers[-1]}"


def _names(names: list[str], limit: int = 5) -> str:
    shown = ", ".join(names[:limit])
    return shown + (f" and {len(names) - limit} more" if len(names) > limit else "")


# --- reading a submission and planning its run --------------------------------------------------------


@dataclass
class Step:
    """One of the grader's cells: where it sits and which exercises it checks."""
    kind: str  # start, check, end
    exercises: list[Exercise] = field(default_factory=list)


@dataclass
class Plan:
    submission: Submission
    course: CourseNotebook
    original: Any  # the learner's notebook, as read (never written back)
    notebook: Any  # the learner's cells with the grader's cells among them
    origin: list  # per cell of `notebook`: the learner's cell number (1-based), or a Step
    nonce: str
    gradable: list[Exercise]
    ungradable: list[Exercise]  # no official check for these
    cell_limit: float = DEFAULT_CELL_TIMEOUT
    total_limit: float = DEFAULT_TIMEOUT

    def position(self, learner_cell: int) -> int:
        """Where the learner's cell (1-based) sits in the run."""
        return self.origin.index(learner_cell)


def _file_notebook(path: Path, course: dict[str, CourseNotebook]) -> str:
    lowered = path.name.lower()
    found = [stem for stem in course if stem.lower() in lowered]
    return max(found, key=len) if found else ""


def read_submission(submission: Submission, course: dict[str, CourseNotebook]):
    """The learner's notebook and the course notebook it is, or the rows saying why it can't be graded."""
    import nbformat

    guessed = _file_notebook(submission.path, course)
    if submission.missing:
        return _one_row(submission, "no notebook found", "this folder holds no .ipynb file")
    try:
        raw = submission.path.read_bytes()
    except OSError as error:
        return _one_row(submission, "cannot be read", error.strerror or str(error), guessed)
    try:
        data = json.loads(raw.decode("utf-8-sig"))
    except UnicodeDecodeError:
        return _one_row(submission, "invalid JSON", "the file is not UTF-8 text", guessed)
    except ValueError as error:
        return _one_row(submission, "invalid JSON", str(error), guessed)
    if not isinstance(data, dict):
        return _one_row(submission, "not a notebook", f"the JSON is a {type(data).__name__}, not an object", guessed)
    if not isinstance(data.get("nbformat"), int) or not isinstance(data.get("cells", data.get("worksheets")), list):
        return _one_row(submission, "not a notebook", "the JSON has no nbformat version and list of cells", guessed)
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
        return _one_row(submission, "not a notebook", reason, guessed)

    found: list[str] = []
    for cell in notebook.cells:
        number = _exercise_of(cell)
        if number and number not in found:
            found.append(number)
    if found:
        matches = [nb for nb in course.values() if set(found) <= set(nb.numbers)]
        if len(matches) != 1:
            return _one_row(submission, "not a notebook of this course", f"exercises found: {', '.join(found)}")
        identified = matches[0]
    elif guessed:
        identified = course[guessed]
    else:
        return _one_row(submission, "not a notebook of this course",
                        "no exercise cells found, and the file name is not a course notebook's")
    return notebook, identified


def _grading_points(notebook, course_notebook: CourseNotebook) -> dict[int, list[Exercise]]:
    """Before which learner cell (index; len(cells) for the end) each exercise is graded."""
    cells = notebook.cells
    exercise_cells = {i for i, cell in enumerate(cells) if _exercise_of(cell)}
    points: dict[int, list[Exercise]] = {}
    for exercise in course_notebook.exercises:
        own = [i for i, cell in enumerate(cells) if _exercise_of(cell) == exercise.number]
        checks = [i for i, cell in enumerate(cells) if cell.cell_type == "code"
                  and exercise.number in {m.group("number") for m in CHECK_CALL.finditer(cell.source)}]
        if own:
            anchor = own[-1]
            later_checks = [i for i in checks if i > anchor]
            later_exercises = [i for i in exercise_cells if i > anchor]
            point = later_checks[0] if later_checks else min(later_exercises, default=len(cells))
        else:
            point = checks[-1] if checks else len(cells)
        points.setdefault(point, []).append(exercise)
    return points


def plan_run(submission: Submission, notebook, course_notebook: CourseNotebook) -> Plan:
    import nbformat

    gradable = [e for e in course_notebook.exercises if e.points is not None and e.name]
    ungradable = [e for e in course_notebook.exercises if e not in gradable]
    points = _grading_points(notebook, CourseNotebook(course_notebook.stem, gradable))
    nonce = secrets.token_hex(16)
    cells, origin = [], []

    def add_step(step: Step) -> None:
        cell = nbformat.v4.new_code_cell("")
        cell.metadata[GRADER_MARK] = step.kind
        cells.append(cell)
        origin.append(step)

    add_step(Step("start"))
    for index, learner_cell in enumerate(list(notebook.cells) + [None]):
        if index in points:
            add_step(Step("check", points[index]))
        if learner_cell is None:
            break
        cell = copy.deepcopy(learner_cell)
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
        cell.metadata.pop(GRADER_MARK, None)
        cells.append(cell)
        origin.append(index + 1)
    add_step(Step("end"))
    augmented = nbformat.v4.new_notebook(cells=cells, metadata=copy.deepcopy(notebook.metadata))
    return Plan(submission, course_notebook, notebook, augmented, origin, nonce, gradable, ungradable)


# --- kernels ---------------------------------------------------------------------------------------------------

FORK_SERVER_BOOT = "import looplab.grade as grade; grade._serve_forks()"

# What a kernel imports to start and to run the course's notebooks: imported once, in the template.
PRELOAD = (
    "looplab", "looplab.checks", "looplab.loop", "looplab.scripted", "looplab.viewer", "anthropic", "httpx2",
    "ipywidgets", "IPython", "IPython.core.ultratb", "IPython.core.completer", "IPython.extensions",
    "ipykernel.kernelapp", "ipykernel.ipkernel", "ipykernel.zmqshell", "ipykernel.comm", "ipykernel.debugger",
    "jupyter_client.localinterfaces", "psutil", "stack_data", "executing", "pure_eval", "asttokens",
    "pygments.lexers", "pygments.lexers.python", "pygments.formatters", "pygments.styles", "ipython_pygments_lexers",
    "sqlite3", "pdb", "pydoc", "tornado.queues", "tornado.locks", "xmlrpc.client", "http.server",
)


def _write_line(fd: int, message: dict) -> None:
    data = (json.dumps(message) + "\n").encode()
    while data:
        written = os.write(fd, data)
        data = data[written:]


def _die_with_parent() -> None:
    """Linux: get SIGKILL when the process that forked us exits."""
    try:
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except Exception:
        pass


def _serve_forks() -> None:
    """The kernel template: import what kernels need once, then fork a kernel per request.

    Speaks JSON lines: reads {"id", "argv", "env", "cwd"} on stdin, answers {"id", "pid"}, and
    {"id", "exit"} when that kernel has exited. Stays single-threaded (forking is only safe
    then), and kills every kernel it made when its stdin closes.
    """
    import importlib
    import select
    import threading

    parent = os.getppid()
    _die_with_parent()
    if os.getppid() != parent:
        os._exit(1)
    if sys.path and sys.path[0] in ("", os.getcwd()):
        del sys.path[0]  # as ipykernel_launcher does; the kernel puts the cwd back
    for name in PRELOAD:
        try:
            importlib.import_module(name)
        except Exception:
            pass
    try:
        from jupyter_client import localinterfaces
        localinterfaces.localhost()  # finds the machine's addresses once, for every kernel
    except Exception:
        pass
    _warm_tracebacks()
    threads = threading.active_count()
    if threads != 1:
        _write_line(1, {"error": f"the template started {threads - 1} thread(s); forking would not be safe"})
        return

    wake_read, wake_write = os.pipe()
    os.set_blocking(wake_read, False)
    os.set_blocking(wake_write, False)
    signal.set_wakeup_fd(wake_write)
    signal.signal(signal.SIGCHLD, lambda signum, frame: None)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    children: dict[int, Any] = {}
    _write_line(1, {"ready": True, "pid": os.getpid()})

    def reap() -> None:
        while children:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            request_id = children.pop(pid, None)
            if request_id is not None:
                _write_line(1, {"id": request_id, "exit": os.waitstatus_to_exitcode(status)})

    buffer = b""
    while True:
        try:
            ready, _, _ = select.select([0, wake_read], [], [])
        except InterruptedError:
            continue
        if wake_read in ready:
            try:
                while os.read(wake_read, 512):
                    pass
            except BlockingIOError:
                pass
            reap()
        if 0 not in ready:
            continue
        chunk = os.read(0, 65536)
        if not chunk:
            break
        buffer += chunk
        while b"\n" in buffer:
            line, buffer = buffer.split(b"\n", 1)
            request = json.loads(line)
            pid = os.fork()
            if pid == 0:
                os.close(wake_read)
                os.close(wake_write)
                _kernel_child(request)  # never returns
            try:
                os.setpgid(pid, pid)
            except OSError:
                pass
            children[pid] = request["id"]
            _write_line(1, {"id": request["id"], "pid": pid})
        reap()
    for pid in list(children):
        try:
            os.killpg(pid, signal.SIGKILL)
        except OSError:
            pass
    os._exit(0)  # no interpreter teardown: thousands of modules, half a second


def _warm_tracebacks() -> None:
    """Format one traceback raised inside the SDK, as IPython does in a kernel.

    The first traceback a process shows costs most of a second (IPython reads and parses every
    source file on the stack, and maps every loaded module to its file); later ones cost a few
    milliseconds. The course's notebooks show the API's 400 on purpose, so the template pays that
    once and every forked kernel inherits the caches. Nothing else is kept.
    """
    try:
        from IPython.core import ultratb

        from .client import MODEL
        from .scripted import reply, scripted_client, text, tool_use

        client, _ = scripted_client([reply(text("unused"))])
        unanswered = {"role": "assistant", "content": [tool_use("calculator", {"expression": "1"}, id="toolu_warm")]}
        try:
            client.messages.create(model=MODEL, max_tokens=16, messages=[
                {"role": "user", "content": "1?"}, unanswered, {"role": "user", "content": "and?"}])
        except Exception:
            ultratb.AutoFormattedTB(mode="Context").structured_traceback(*sys.exc_info())
    except Exception:
        pass


def _kernel_child(request: dict) -> None:
    code = 1
    try:
        signal.set_wakeup_fd(-1)
        os.setpgid(0, 0)
        _die_with_parent()
        for signum in (signal.SIGCHLD, signal.SIGTERM, signal.SIGPIPE):
            signal.signal(signum, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        devnull = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(devnull, fd)
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        sys.argv = ["ipykernel_launcher"] + request["argv"]
        from ipykernel.kernelapp import IPKernelApp
        app = IPKernelApp.instance()
        app.initialize(request["argv"])
        app.start()
        code = 0
    except BaseException:
        import traceback
        traceback.print_exc()
    finally:
        os._exit(code)


class ForkedKernel:
    """What LocalProvisioner expects of a Popen, for a kernel forked by the template."""

    stdin = stdout = stderr = None

    def __init__(self, pid: int):
        self.pid = pid
        self.returncode: int | None = None
        self.exited = asyncio.Event()

    def poll(self) -> int | None:
        return self.returncode

    def wait(self, timeout: float | None = None) -> int | None:
        return self.returncode

    def send_signal(self, signum: int) -> None:
        if self.returncode is None:
            os.kill(self.pid, signum)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def _exit(self, code: int) -> None:
        if self.returncode is None:
            self.returncode = code
        self.exited.set()


class ForkServer:
    """The grader's side of the kernel template: JSON lines over two pipes.

    `spawn()` starts the template before the event loop exists. When this process is still
    single-threaded it forks itself, so the template starts with the SDK and looplab already
    imported (they come with `import looplab.grade`); otherwise it starts a new interpreter.
    """

    def __init__(self, env: dict, cwd: str, debug: bool):
        self.env, self.cwd, self.debug = env, cwd, debug
        self.process_id: int | None = None  # the template's
        self.pid: int | None = None  # the template's, as it reports itself
        self._to, self._from = -1, -1
        self._buffer = b""
        self._ready: asyncio.Future | None = None
        self._pending: dict[int, asyncio.Future] = {}
        self._kernels: dict[int, ForkedKernel] = {}
        self._next = 0

    def spawn(self) -> None:
        import threading

        to_read, to_write = os.pipe()
        from_read, from_write = os.pipe()
        stderr = None if self.debug else os.open(os.devnull, os.O_WRONLY)
        if threading.active_count() == 1:
            pid = os.fork()
            if pid == 0:
                try:
                    os.setsid()
                    os.dup2(to_read, 0)
                    os.dup2(from_write, 1)
                    if stderr is not None:
                        os.dup2(stderr, 2)
                    for fd in (to_read, to_write, from_read, from_write):
                        os.close(fd)
                    if sys.path and sys.path[0] in ("", os.getcwd()):
                        del sys.path[0]  # this process's folder: a kernel gets its own instead
                    os.chdir(self.cwd)
                    os.environ.clear()
                    os.environ.update(self.env)
                    _serve_forks()
                finally:
                    os._exit(0)
        else:
            import subprocess
            pid = subprocess.Popen([sys.executable, "-c", FORK_SERVER_BOOT], stdin=to_read, stdout=from_write,
                                   stderr=stderr, env=self.env, cwd=self.cwd, start_new_session=True).pid
        for fd in (to_read, from_write) + (() if stderr is None else (stderr,)):
            os.close(fd)
        self.process_id, self._to, self._from = pid, to_write, from_read

    async def start(self) -> None:
        if self.process_id is None:
            self.spawn()
        loop = asyncio.get_running_loop()
        self._ready = loop.create_future()
        os.set_blocking(self._from, False)
        loop.add_reader(self._from, self._read)
        message = await self._ready
        if not message.get("ready"):
            await self.close()
            raise RuntimeError(message.get("error", "the kernel template did not start"))
        self.pid = message["pid"]

    def _read(self) -> None:
        try:
            chunk = os.read(self._from, 65536)
        except BlockingIOError:
            return
        if not chunk:
            self._ended()
            return
        self._buffer += chunk
        while b"\n" in self._buffer:
            line, self._buffer = self._buffer.split(b"\n", 1)
            message = json.loads(line)
            if self._ready is not None and not self._ready.done():
                self._ready.set_result(message)
            elif "pid" in message:
                kernel = ForkedKernel(message["pid"])
                self._kernels[message["id"]] = kernel
                future = self._pending.pop(message["id"], None)
                if future and not future.done():
                    future.set_result(kernel)
            elif "exit" in message and message["id"] in self._kernels:
                self._kernels.pop(message["id"])._exit(message["exit"])

    def _ended(self) -> None:
        """The template is gone, and its kernels with it."""
        asyncio.get_running_loop().remove_reader(self._from)
        if self._ready is not None and not self._ready.done():
            self._ready.set_result({"error": "the kernel template exited while starting"})
        for kernel in self._kernels.values():
            kernel._exit(-signal.SIGKILL)
        for future in self._pending.values():
            if not future.done():
                future.set_exception(RuntimeError("the kernel template exited"))
        self._pending.clear()

    async def fork(self, argv: list[str], env: dict, cwd: str) -> ForkedKernel:
        self._next += 1
        future = asyncio.get_running_loop().create_future()
        self._pending[self._next] = future
        request = {"id": self._next, "argv": argv, "env": env, "cwd": cwd}
        _write_line(self._to, request)  # a few hundred bytes: the pipe never fills
        return await future

    async def close(self) -> None:
        if self._to >= 0:
            os.close(self._to)  # the template kills its kernels and exits
            self._to = -1
        if self.process_id is not None:
            deadline = time.monotonic() + 10
            while True:
                done, _ = os.waitpid(self.process_id, os.WNOHANG)
                if done or time.monotonic() > deadline:
                    break
                await asyncio.sleep(0.005)
            if not done:
                os.kill(self.process_id, signal.SIGKILL)
                os.waitpid(self.process_id, 0)
            self.process_id = None
        if self._from >= 0:
            try:
                asyncio.get_running_loop().remove_reader(self._from)
            except Exception:
                pass
            os.close(self._from)
            self._from = -1


def _provisioner_classes():
    from jupyter_client.provisioning import LocalProvisioner

    class PlainProvisioner(LocalProvisioner):
        """The usual kernel start, always with this interpreter, and a quicker wait for its exit."""

        async def launch_kernel(self, cmd, **kwargs):
            if len(cmd) > 2 and cmd[1:3] == ["-m", "ipykernel_launcher"]:
                cmd = [sys.executable] + list(cmd[1:])
            return await super().launch_kernel(cmd, **kwargs)

        async def wait(self):
            while self.process is not None and self.process.poll() is None:
                await asyncio.sleep(0.01)
            return await super().wait()

    class ForkProvisioner(LocalProvisioner):
        """A kernel forked from the template instead of started from scratch."""

        server: ForkServer

        async def launch_kernel(self, cmd, **kwargs):
            argv = list(cmd[cmd.index("-f"):])
            env = dict(kwargs.get("env") or os.environ)
            env["JPY_PARENT_PID"] = str(self.server.pid)  # ipykernel exits if the template does
            self.process = await self.server.fork(argv, env, str(kwargs.get("cwd") or os.getcwd()))
            self.pid = self.pgid = self.process.pid
            self.cwd = kwargs.get("cwd")
            return self.connection_info

        async def wait(self):
            if self.process is None:
                return 0
            await self.process.exited.wait()
            code, self.process = self.process.returncode, None
            return code

    return PlainProvisioner, ForkProvisioner


# --- running one notebook ------------------------------------------------------------------------------


@dataclass
class Outcome:
    payloads: dict[int, dict] = field(default_factory=dict)  # cell index in plan.notebook -> the grader's result
    forged: set[int] = field(default_factory=set)  # grader cells with more than one output carrying the nonce
    failures: dict[int, str] = field(default_factory=dict)  # grader cells without a result: why
    timed_out: list[int] = field(default_factory=list)  # cell indexes in plan.notebook
    died_at: int | None = None
    stopped_at: int | None = None  # the total limit
    error: str | None = None  # the grader failed (the kernel would not start...)
    current: int | None = None  # the cell running now
    executed: Any = None


@dataclass
class Session:
    km: Any
    kc: Any
    client: Any
    count: int = 0  # the learner's cells run so far: their execution counts


def _grader_client_class():
    from nbclient import NotebookClient

    class GraderClient(NotebookClient):
        current_index = -1

        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.timeouts_seen: list[int] = []

        async def _async_handle_timeout(self, timeout, cell=None):
            if self.current_index not in self.timeouts_seen:
                self.timeouts_seen.append(self.current_index)
            return await super()._async_handle_timeout(timeout, cell)

    return GraderClient


async def _wait_ready(kc, km, timeout: float) -> None:
    """The kernel answers on shell and publishes on IOPub (no fixed waits, unlike wait_for_ready)."""
    from queue import Empty

    deadline = time.monotonic() + timeout
    while True:
        if time.monotonic() > deadline:
            raise RuntimeError(f"the kernel did not start within {timeout:.0f} s")
        if not await km.is_alive():
            raise RuntimeError("the kernel exited while starting")
        msg_id = kc.kernel_info()
        try:
            while True:
                reply = await kc.shell_channel.get_msg(timeout=1)
                if reply["parent_header"].get("msg_id") == msg_id:
                    break
        except Empty:
            continue
        try:
            while True:
                message = await kc.iopub_channel.get_msg(timeout=0.1)
                if message["parent_header"].get("msg_id") == msg_id:
                    return
        except Empty:
            continue


def _payload(cell, nonce: str) -> tuple[dict | None, int]:
    found = []
    for output in cell.get("outputs", []):
        data = output.get("data", {}) if output.get("output_type") == "display_data" else {}
        value = data.get(MIME)
        if isinstance(value, str):
            try:
                value = json.loads(value)
            except ValueError:
                value = None
        if isinstance(value, dict) and value.get("nonce") == nonce:
            found.append(value)
    return (found[0] if len(found) == 1 else None), len(found)


def _cell_error(cell) -> str | None:
    for output in cell.get("outputs", []):
        if output.get("output_type") == "error":
            return f"{output.get('ename')}: {output.get('evalue')}"
    return None


class Grader:
    def __init__(self, *, jobs: int, cell_timeout: float, timeout: float, forked: bool, feedback: Path | None,
                 progress: Progress | None = None):
        self.jobs, self.cell_timeout, self.timeout = jobs, cell_timeout, timeout
        self.forked, self.feedback, self.progress = forked, feedback, progress
        self.notes: list[str] = []
        self.tmp = Path(tempfile.mkdtemp(prefix="looplab-grade-"))
        (self.tmp / "ipython").mkdir()  # one IPython directory (no config, no startup files) for every kernel
        self.server: ForkServer | None = None
        self.slots = asyncio.Semaphore(jobs)  # kernels alive at once
        self.debug = os.environ.get("LOOPLAB_GRADE_DEBUG")
        self.taken: set[Path] = set()  # feedback files written

    @property
    def check_limit(self) -> float:
        from .checks.core import TIME_LIMIT_SECONDS
        return TIME_LIMIT_SECONDS

    def kernel_env(self, ipython_dir: Path) -> dict:
        env = {key: value for key, value in os.environ.items()
               if not key.startswith("ANTHROPIC_") and key.upper() not in ("NO_PROXY", "JPY_PARENT_PID")}
        env["LOOPLAB_MODE"] = "offline"
        for key in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"):
            env[key] = env[key.lower()] = DEAD_PORT_PROXY
        env["IPYTHONDIR"] = str(ipython_dir)
        env["PYDEVD_DISABLE_FILE_VALIDATION"] = "1"
        return env

    def spawn_template(self) -> None:
        """Start the kernel template now, before the event loop (see ForkServer.spawn)."""
        if self.forked and self.server is None:
            self.server = ForkServer(self.kernel_env(self.tmp / "ipython"), str(self.tmp), bool(self.debug))
            self.server.spawn()

    async def start(self) -> None:
        if not self.forked:
            return
        try:
            if self.server is None:
                self.server = ForkServer(self.kernel_env(self.tmp / "ipython"), str(self.tmp), bool(self.debug))
            await self.server.start()
        except Exception as error:
            self.server = None
            self.forked = False
            self.notes.append(f"kernels are started the plain way: the kernel template failed ({error})")

    async def grade(self, submissions: list[Submission], course: dict[str, CourseNotebook]) -> list[Row]:
        submissions = sorted(submissions, key=_sort_key)
        results: dict[int, list[Row]] = {}

        async def one(position: int, submission: Submission) -> None:
            try:
                read = read_submission(submission, course)
                if isinstance(read, list):
                    rows = read
                else:
                    notebook, identified = read
                    plan = plan_run(submission, notebook, identified)
                    plan.cell_limit, plan.total_limit = self.cell_timeout, self.timeout
                    outcome = await self.run(plan)
                    rows = rows_for(plan, outcome)
                    if self.feedback is not None:
                        write_feedback(self.feedback, plan, outcome, rows, self.taken)
            except Exception as error:  # every submission gets its rows, even when the grader fails
                rows = _one_row(submission, "grader error", f"{type(error).__name__}: {error}")
            results[position] = rows
            if self.progress:
                self.progress.update(f"{submission.learner}: {submission.file}")

        await asyncio.gather(*(one(i, s) for i, s in enumerate(submissions)))
        return [row for i in range(len(submissions)) for row in results[i]]

    async def close(self) -> None:
        if self.server:
            await self.server.close()
        shutil.rmtree(self.tmp, ignore_errors=True)

    def _cell_limit(self, plan: Plan, index: int) -> float:
        origin = plan.origin[index] if 0 <= index < len(plan.origin) else None
        if isinstance(origin, Step):
            return len(origin.exercises) * (self.check_limit + CHECK_MARGIN) + 60
        return plan.cell_limit

    async def run(self, plan: Plan) -> Outcome:
        """Run one notebook in a fresh kernel, once one of the --jobs slots is free."""
        outcome = Outcome()
        workdir = Path(tempfile.mkdtemp(dir=self.tmp))
        session = None
        try:
            async with self.slots:
                started = time.perf_counter()
                try:
                    session = await self._start(plan, outcome, workdir)
                    if 0 not in outcome.failures and outcome.died_at is None:
                        await self._run_with_limit(plan, outcome, session)
                except Exception as error:
                    outcome.error = f"{type(error).__name__}: {error}"
                finally:
                    if session is not None:
                        await self._shutdown(session.km, session.kc)
                    self._log_time(plan, time.perf_counter() - started)
        finally:
            shutil.rmtree(workdir, ignore_errors=True)
        return outcome

    @staticmethod
    def _log_time(plan: Plan, seconds: float) -> None:
        """For benchmarks/grading.py: LOOPLAB_GRADE_TIMINGS=FILE gets one JSON line per notebook run."""
        target = os.environ.get("LOOPLAB_GRADE_TIMINGS")
        if target:
            with open(target, "a", encoding="utf-8") as handle:
                handle.write(json.dumps({"notebook": plan.course.stem, "file": plan.submission.file,
                                         "seconds": round(seconds, 4)}) + "\n")

    async def _run_with_limit(self, plan: Plan, outcome: Outcome, session: Session) -> None:
        task = asyncio.create_task(self._run_cells(plan, outcome, session, first=1))
        expired = False

        def expire():
            nonlocal expired
            expired = True
            task.cancel()

        timer = asyncio.get_running_loop().call_later(self.timeout, expire)
        try:
            await task
        except asyncio.CancelledError:
            if not expired:
                raise
        except Exception:
            if not expired:
                raise
        finally:
            timer.cancel()
        if expired:
            outcome.stopped_at = outcome.current
            outcome.died_at = None

    async def _start(self, plan: Plan, outcome: Outcome, workdir: Path) -> Session:
        """A fresh kernel in its own folder, ready, with the grader's first cell run."""
        import zmq
        from jupyter_client import AsyncKernelManager

        work = workdir / "work"
        work.mkdir()
        (work / plan.submission.path.name).write_bytes(plan.submission.path.read_bytes())
        env = self.kernel_env(self.tmp / "ipython")
        plain, forked = _provisioner_classes()
        km = AsyncKernelManager(kernel_name="python3")
        km.kernel_id = str(uuid.uuid4())
        if self.server is not None:
            km.provisioner = forked(kernel_id=km.kernel_id, kernel_spec=km.kernel_spec, parent=km)
            km.provisioner.server = self.server
            extra = {}
        else:
            km.provisioner = plain(kernel_id=km.kernel_id, kernel_spec=km.kernel_spec, parent=km)
            log = None if self.debug else asyncio.subprocess.DEVNULL
            extra = {"stdout": log, "stderr": log}
        client = _grader_client_class()(
            plan.notebook, km=km, timeout=self.cell_timeout, allow_errors=True, interrupt_on_timeout=True,
            record_timing=False, skip_cells_with_tag="looplab-grader-never-skips", kernel_name="python3",
        )
        client.timeout_func = lambda cell: self._cell_limit(plan, client.current_index)
        outcome.executed = plan.notebook
        session = Session(km, None, client)
        try:
            await km.start_kernel(env=env, cwd=str(work), **extra)
            kc = session.kc = km.client()
            # The kernel binds its ports ~50 ms after the fork; zmq's default is to retry a refused
            # connection every 100 ms, which costs up to that much per notebook.
            kc.context.setsockopt(zmq.RECONNECT_IVL, 5)
            kc.start_channels()
            await _wait_ready(kc, km, 60)
            kc.allow_stdin = False
            client.kc = kc
            client.reset_execution_trackers()
            await self._run_cells(plan, outcome, session, first=0, last=0)
        except BaseException:
            await self._shutdown(km, session.kc)
            raise
        return session

    async def _run_cells(self, plan: Plan, outcome: Outcome, session: Session, first: int,
                         last: int | None = None) -> None:
        from nbclient.exceptions import DeadKernelError

        client = session.client
        cells = plan.notebook.cells
        for index in range(first, len(cells) if last is None else last + 1):
            cell = cells[index]
            if cell.cell_type != "code":
                continue
            outcome.current = index
            client.current_index = index
            step = plan.origin[index]
            if isinstance(step, Step):
                cell.source = grader_cell_source(self._step_args(plan, outcome, step))
            elif cell.source.strip():
                session.count += 1
            try:
                await client.async_execute_cell(cell, index, execution_count=None if isinstance(step, Step)
                                                else session.count, store_history=not isinstance(step, Step))
            except DeadKernelError:
                outcome.died_at = index
                return
            finally:
                outcome.timed_out = list(client.timeouts_seen)
            if isinstance(step, Step):
                payload, seen = _payload(cell, plan.nonce)
                if seen > 1:
                    outcome.forged.add(index)
                elif payload is None or "error" in payload:
                    outcome.failures[index] = payload["error"] if payload else (_cell_error(cell) or
                                                                                "it showed no result")
                    if step.kind == "start":
                        return
                else:
                    outcome.payloads[index] = payload

    def _step_args(self, plan: Plan, outcome: Outcome, step: Step) -> dict:
        args: dict = {"nonce": plan.nonce, "step": step.kind}
        if step.kind != "start":
            start = next((p for p in outcome.payloads.values() if p.get("step") == "start"), {})
            args.update(modules=start.get("modules", []), builtins=start.get("builtins", []),
                        expected=start.get("digest"), exercises=[[e.number, e.name] for e in step.exercises])
        return args

    async def _shutdown(self, km, kc) -> None:
        try:
            if kc is not None:
                kc.stop_channels()
            if km.provisioner is not None and km.provisioner.has_process:
                try:
                    await km.provisioner.kill()
                except OSError:
                    pass
                try:
                    await asyncio.wait_for(km.provisioner.wait(), 10)
                except TimeoutError:
                    pass
            await km.cleanup_resources()
        except Exception:
            pass


# --- from a run to rows ----------------------------------------------------------------------------------


_SYNTAX = re.compile(r"^(?P<message>.*) \((?P<file>[^()]*), line (?P<line>\d+)\)$", re.DOTALL)
SYNTAX_ERRORS = ("SyntaxError", "IndentationError", "TabError")


def _plain_syntax_error(evalue: str) -> str:
    """'invalid syntax (1063758517.py, line 1)' -> 'invalid syntax, line 1': the kernel's file name varies."""
    match = _SYNTAX.match(evalue)
    return f"{match['message']}, line {match['line']}" if match else evalue


def _unpack(packed: Any) -> dict[str, str]:
    if not isinstance(packed, str):
        return {}
    return dict(line.split("\t", 1) for line in packed.splitlines() if "\t" in line)


def _tampering(outcome: Outcome) -> str | None:
    """What the notebook changed in the check machinery, in words; None if nothing."""
    if outcome.forged:
        return "an output imitated the grader's own results"
    start = next((p for p in outcome.payloads.values() if p.get("step") == "start"), None)
    if start is None:
        return None
    reference = _unpack(start.get("fingerprint"))
    changed: set[str] = set()
    for payload in outcome.payloads.values():
        for key in ("before", "after"):
            report = payload.get(key)
            if not isinstance(report, dict) or report.get("digest") == start.get("digest"):
                continue
            prints = _unpack(report.get("prints"))
            names = {name for name, value in prints.items() if reference.get(name) != value
                     and not (name not in reference and str(value).startswith("module looplab"))}
            names |= {name for name in reference if name not in prints}
            if not prints:
                changed.add("the grader's fingerprint")
            changed |= names  # empty when the only change is a looplab submodule imported since
    return f"changed while the notebook ran: {_names(sorted(changed))}" if changed else None


def rows_for(plan: Plan, outcome: Outcome) -> list[Row]:
    sub, stem = plan.submission, plan.course.stem

    def row(exercise: Exercise, points: int, status: str, message: str) -> Row:
        return Row(sub.learner, stem, exercise.number, points, exercise.points, status, message, sub.file)

    rows: dict[str, Row] = {}
    for exercise in plan.ungradable:
        rows[exercise.number] = row(exercise, 0, "grader error",
                                    f"no official check, or no name to check, for exercise {exercise.number}")

    def finish() -> list[Row]:
        return [rows[e.number] for e in plan.course.exercises if e.number in rows]

    if outcome.error and not outcome.payloads:
        for exercise in plan.gradable:
            rows[exercise.number] = row(exercise, 0, "grader error", outcome.error)
        return finish()

    start_index = 0
    if start_index in outcome.failures and outcome.died_at is None and outcome.stopped_at is None:
        for exercise in plan.gradable:
            rows[exercise.number] = row(exercise, 0, "could not be graded",
                                        f"the grader's first cell failed: {outcome.failures[start_index]}")
        return finish()

    message = _tampering(outcome)
    if message:
        for exercise in plan.gradable:
            rows[exercise.number] = row(exercise, 0, "tampered with the checks", message)
        return finish()

    def where(index: int) -> str:
        """'cell 12', or which of the grader's cells."""
        origin = plan.origin[index]
        if not isinstance(origin, Step):
            return f"cell {origin}"
        if origin.exercises:
            return f"the check of exercise {', '.join(e.number for e in origin.exercises)}"
        return f"the grader's {'first' if origin.kind == 'start' else 'last'} cell"

    # Where each exercise was graded, in the order the run went.
    steps = [(i, o) for i, o in enumerate(plan.origin) if isinstance(o, Step) and o.exercises]
    graded_order = [e for _, step in steps for e in step.exercises]
    last = graded_order[-1] if graded_order else None

    # Timed-out learner cells: on the first exercise graded after them, else on the last one.
    incidents: dict[str, list[int]] = {}
    for index in outcome.timed_out:
        if isinstance(plan.origin[index], Step):
            continue
        after = next((step for i, step in steps if i > index), None)
        target = after.exercises[0] if after else last
        if target is not None:
            incidents.setdefault(target.number, []).append(plan.origin[index])

    stop_index = outcome.died_at if outcome.died_at is not None else outcome.stopped_at
    for index, step in steps:
        payload = outcome.payloads.get(index)
        for exercise in step.exercises:
            result = (payload or {}).get("results", {}).get(exercise.number) if payload else None
            if result is None:
                if stop_index is not None and index >= stop_index:
                    place = where(stop_index)
                    if outcome.died_at is not None:
                        status = (f"the kernel died (in {place})" if place.startswith("cell ")
                                  else f"the kernel died (during {place})")
                        message = "the kernel exited before this exercise was graded"
                    else:
                        status = f"stopped: the notebook ran past the total limit ({_seconds(plan.total_limit)} s)"
                        message = f"stopped during {place}, before this exercise was graded"
                else:
                    status, message = "could not be graded", \
                        f"the grader's cell failed: {outcome.failures.get(index, 'it showed no result')}"
                rows[exercise.number] = row(exercise, 0, status, message)
                continue
            rows[exercise.number] = _graded_row(plan, exercise, result, row, incidents.get(exercise.number))

    # Something that ended the run after the last exercise was graded: a note on that exercise.
    if stop_index is not None and last is not None and last.number in rows:
        last_row = rows[last.number]
        grading_index = next(i for i, step in steps if last in step.exercises)
        if stop_index > grading_index:
            what = ("the kernel died" if outcome.died_at is not None else "the notebook ran past the total limit")
            note = f"note: {what} during {where(stop_index)}, after the grading"
            last_row.message = f"{last_row.message}; {note}" if last_row.message else note
    return finish()


def _seconds(value: float) -> str:
    return f"{value:g}"


def _graded_row(plan: Plan, exercise: Exercise, result: dict, row, stopped_cells: list[int] | None) -> Row:
    limit = _seconds(plan.cell_limit)
    if result.get("ok") is True:
        row_ = row(exercise, exercise.points, "solved", "")
        if stopped_cells:
            verb = "was" if len(stopped_cells) == 1 else "were"
            row_.message = f"note: {_cells(stopped_cells)} ran past the {limit} s limit and {verb} stopped"
        return row_
    if result.get("missing"):
        status = "not defined"
        message = f"{exercise.name} is not defined where exercise {exercise.number} is graded"
        anchor = next((i for i, cell in reversed(list(enumerate(plan.original.cells)))
                       if _exercise_of(cell) == exercise.number), None)
        executed = plan.notebook.cells[plan.position(anchor + 1)] if anchor is not None else None
        error = next((o for o in (executed.get("outputs", []) if executed else []) if o.get("output_type") == "error"),
                     None)
        if error is not None and error.get("ename") in SYNTAX_ERRORS:
            status = "syntax error"
            message = (f"cell {anchor + 1} does not parse ({_plain_syntax_error(error.get('evalue', ''))}), "
                       f"so {exercise.name} was never defined")
        elif error is not None:
            message += f" (cell {anchor + 1} raised {error.get('ename')}: {error.get('evalue')})"
    elif "error" in result:
        status, message = "not solved", f"the check could not finish: {result['error']}"
    else:
        message = str(result.get("failed") or "the check failed")
        status = "not written yet" if "not written yet" in message else "not solved"
    if stopped_cells:
        status = f"stopped: {_cells(stopped_cells)} ran past the {limit} s limit"
    return row(exercise, 0, status, message)


# --- feedback copies -------------------------------------------------------------------------------------


def _markdown_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def feedback_notebook(plan: Plan, outcome: Outcome, rows: list[Row]):
    import nbformat

    executed = outcome.executed if outcome.executed is not None else plan.notebook
    cells = []
    for cell, origin in zip(executed.cells, plan.origin):
        if isinstance(origin, Step):
            continue
        cell = copy.deepcopy(cell)
        cell.metadata.pop("execution", None)
        if "id" not in cell:
            cell["id"] = uuid.uuid4().hex[:8]
        cells.append(cell)
    total = sum(r.points for r in rows)
    maximum = sum(r.max_points or 0 for r in rows)
    lines = [
        "## Grade (looplab grader)",
        "",
        f"**{plan.submission.learner} · {plan.course.stem}: {total}/{maximum} points**",
        "",
        "| exercise | points | status | details |",
        "|---|---|---|---|",
    ]
    titles = {e.number: e.title for e in plan.course.exercises}
    for r in rows:
        lines.append(f"| {r.exercise} {_markdown_escape(titles.get(r.exercise, ''))} | {r.points}/{r.max_points} | "
                     f"{_markdown_escape(r.status)} | {_markdown_escape(r.message)} |")
    lines += ["", "Graded in a fresh kernel, offline; only the grader's own run of the official checks counts."]
    cells.append(nbformat.v4.new_markdown_cell("\n".join(lines)))
    notebook = nbformat.v4.new_notebook(cells=cells, metadata=copy.deepcopy(executed.metadata))
    notebook.metadata.pop("widgets", None)
    notebook.nbformat_minor = max(notebook.get("nbformat_minor", 5), 5)
    return notebook


def write_feedback(folder: Path, plan: Plan, outcome: Outcome, rows: list[Row], taken: set[Path]) -> Path:
    import nbformat

    safe = re.sub(r"[^\w.-]+", "_", plan.submission.learner) or "learner"
    target = folder / safe / plan.submission.path.name
    counter = 1
    while target in taken:
        counter += 1
        target = folder / safe / f"{plan.submission.path.stem}-{counter}{plan.submission.path.suffix}"
    taken.add(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(feedback_notebook(plan, outcome, rows), target)
    return target


# --- the terminal: progress and the table ----------------------------------------------------------------


class Progress:
    def __init__(self, total: int, stream=sys.stderr):
        self.total, self.done, self.stream = total, 0, stream
        self.tty = hasattr(stream, "isatty") and stream.isatty()
        self.started = time.monotonic()

    def update(self, label: str) -> None:
        self.done += 1
        if self.tty:
            width = 30
            filled = int(width * self.done / max(self.total, 1))
            elapsed = time.monotonic() - self.started
            bar = "#" * filled + "." * (width - filled)
            text = f"\rgrading [{bar}] {self.done}/{self.total}  {elapsed:5.1f} s  {label}"
            self.stream.write(text[:120].ljust(120))
            if self.done == self.total:
                self.stream.write("\n")
        else:
            self.stream.write(f"graded {self.done}/{self.total}: {label}\n")
        self.stream.flush()


def summary_table(rows: list[Row]) -> str:
    """One line per submission: the learner, the notebook, the points, and each exercise's status."""
    groups: dict[tuple, list[Row]] = {}
    for r in rows:
        groups.setdefault((r.learner, r.file), []).append(r)
    lines = []
    for (learner, file), group in groups.items():
        notebook = group[0].notebook or f"({Path(file).name})"
        if len(group) == 1 and not group[0].exercise:
            score = "-"
            detail = group[0].status + (f": {group[0].message}" if group[0].message else "")
        else:
            score = f"{sum(r.points for r in group)}/{sum(r.max_points or 0 for r in group)}"
            detail = " · ".join(f"{r.exercise} {r.status}" for r in group)
        lines.append((learner, notebook, score, detail))
    widths = [max([len(h)] + [len(line[i]) for line in lines]) for i, h in enumerate(("learner", "notebook", "points"))]
    header = f"{'learner':<{widths[0]}}  {'notebook':<{widths[1]}}  {'points':>{widths[2]}}  exercises"
    out = [header, "-" * min(len(header) + 40, 120)]
    for learner, notebook, score, detail in lines:
        text = f"{learner:<{widths[0]}}  {notebook:<{widths[1]}}  {score:>{widths[2]}}  {detail}"
        out.append(text if len(text) <= 160 else text[:157] + "...")
    return "\n".join(out)


def write_csv(rows: list[Row], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(CSV_COLUMNS)
        for r in rows:
            writer.writerow(r.as_csv())


# --- everything together -----------------------------------------------------------------------------------


def _sort_key(submission: Submission) -> tuple:
    return (submission.learner.lower(), submission.file)


async def grade_all(submissions: list[Submission], course: dict[str, CourseNotebook], *, jobs: int,
                    cell_timeout: float = DEFAULT_CELL_TIMEOUT, timeout: float = DEFAULT_TIMEOUT,
                    forked: bool = True, feedback: Path | None = None, progress: Progress | None = None,
                    notes: list[str] | None = None) -> list[Row]:
    """Grade these submissions: the rows of the gradebook, in order (learner, then file)."""
    grader = Grader(jobs=jobs, cell_timeout=cell_timeout, timeout=timeout, forked=forked, feedback=feedback,
                    progress=progress)
    try:
        await grader.start()
        return await grader.grade(submissions, course)
    finally:
        await grader.close()
        if notes is not None:
            notes.extend(grader.notes)


def _default_jobs() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def _inside(path: Path, folders: list[Path]) -> bool:
    path = path.resolve()
    return any(path == folder or folder in path.parents for folder in folders)


class UsageError(Exception):
    pass


async def _main(args, grader: Grader) -> tuple[list[Row], list[str], int]:
    """The kernel template is already starting: it imports in its own process while this one loads the course."""
    feedback = grader.feedback
    try:  # SIGTERM stops the run like Ctrl-C: kernels killed, temporary files removed
        asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, asyncio.current_task().cancel)
    except (NotImplementedError, RuntimeError):
        pass
    template = asyncio.create_task(grader.start())
    await asyncio.sleep(0)
    try:
        course = load_course()
        if not course:
            raise UsageError(f"no course notebooks found in {', '.join(str(d) for d in COURSE_DIRS)}")
        try:
            submissions = collect(args.submissions, list(course))
        except FileNotFoundError as error:
            raise UsageError(str(error)) from None
        roots = [Path(p).resolve() for p in args.submissions if Path(p).is_dir()]
        if feedback is not None and _inside(feedback, roots):
            raise UsageError("--feedback must be outside the submissions: they are never written to")
        grader.progress = None if args.quiet else Progress(len(submissions))
        await template
        rows = await grader.grade(submissions, course)
    finally:
        if not template.done():
            await asyncio.gather(template, return_exceptions=True)
        await grader.close()
    return rows, grader.notes, len(submissions)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m looplab.grade",
        description="Grade submitted notebooks offline, each in a fresh kernel, into a CSV gradebook.",
    )
    parser.add_argument("submissions", nargs="+", help="notebook files and folders (a subfolder per learner, or flat)")
    parser.add_argument("--out", default="grades.csv", help="the CSV gradebook to write (default: grades.csv)")
    parser.add_argument("--feedback", metavar="DIR", help="also write each executed notebook, with its grade, here")
    parser.add_argument("--jobs", type=int, default=_default_jobs(), help="notebooks graded at once (default: cores)")
    parser.add_argument("--cell-timeout", type=float, default=DEFAULT_CELL_TIMEOUT,
                        help=f"seconds a cell may run before it is interrupted (default: {DEFAULT_CELL_TIMEOUT})")
    parser.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT,
                        help=f"seconds a whole notebook may run (default: {DEFAULT_TIMEOUT})")
    parser.add_argument("--plain-kernels", action="store_true",
                        help="start every kernel from scratch instead of forking it from a template")
    parser.add_argument("--quiet", action="store_true", help="no progress bar and no table")
    args = parser.parse_args(argv)
    if args.jobs < 1:
        parser.error("--jobs must be at least 1")
    missing = [p for p in args.submissions if not Path(p).exists()]
    if missing:
        parser.error(f"no such file or folder: {', '.join(missing)}")

    started = time.monotonic()
    forked = not args.plain_kernels and sys.platform.startswith("linux") and hasattr(os, "fork")
    grader = Grader(jobs=args.jobs, cell_timeout=args.cell_timeout, timeout=args.timeout, forked=forked,
                    feedback=Path(args.feedback) if args.feedback else None)
    grader.spawn_template()
    try:
        rows, notes, graded = asyncio.run(_main(args, grader))
    except UsageError as error:
        parser.error(str(error))
    except (KeyboardInterrupt, asyncio.CancelledError):
        print("\nlooplab.grade: stopped; no gradebook written", file=sys.stderr)
        return 130
    elapsed = time.monotonic() - started
    write_csv(rows, Path(args.out))
    for note in notes:
        print(f"looplab.grade: {note}", file=sys.stderr)
    if not args.quiet:
        print(summary_table(rows))
        print(f"\n{graded} submission(s) graded in {elapsed:.1f} s ({elapsed / max(graded, 1):.2f} s each, "
              f"--jobs {args.jobs}); gradebook: {args.out}"
              + (f"; feedback: {args.feedback}/" if args.feedback else ""))
    return 0


if __name__ == "__main__":
    code = main()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)  # everything is written; skip tearing down thousands of modules (half a second)
