"""The course's reference code handed in as text: found in the notebook file, flagged for the teacher.

The course's package holds complete reference code for every exercise (looplab/tools.py, looplab/loop.py
and each later notebook's module: `Exercise.reference`), because later notebooks import it. A learner
who imports or wraps it gets the status "the course's own code" (0 points: a graded kernel holds stand-ins
the grader runs, and refuses while the exercise is judged: looplab/withheld.py). A learner who opens
looplab/loop.py and *types it in*, renaming
its variables and reformatting it, hands in code the checks cannot tell from their own: it is right,
it is graded `solved`. No grader tells copying from writing by what the code does; only by how much of
it is the same. So this module does not take points: it puts a `review` note on the exercise's row (the
gradebook's `review` column, a mark in the class report and on the terminal), and the teacher decides.

How: the learner's exercise cells (the cells whose metadata names the exercise, and the cell that last
defines its name before it is graded, wherever that is) are read from the notebook file, here in the
grader's process, never in the kernel. Both they and the module holding the
exercise's reference are parsed and normalised: docstrings, comments, annotations and formatting are
gone (the AST has none of the last two), and every identifier but Python's built-ins is renamed by its
first appearance (`v0`, `v1`, ...), consistently within each piece, so `for block in message.content`
and `for b in reply.content` are the same piece; attributes, keywords and literals stay (they are the
API's names and the program's data, which a copy keeps). Each statement and expression is such a piece.
The exercise is flagged when one of its cell's pieces is a piece of the reference module of at least
`THRESHOLD` nodes (statements, expressions, arguments and keywords counted).

Why THRESHOLD is 70: honest answers of this course share pieces with the reference by necessity. The
API fixes the call (`client.messages.create(model=..., tools=..., messages=...)`: about 15 nodes) and
the reply's text (`"".join(b.text for b in reply.content if b.type == "text")`: 14); and the notebooks
build each answer from the one before, as the reference does: 3.3 is 2.3's loop with `run_tools`, so the
solution's whole `for` loop, 61 nodes, is the reference's. Measured (tests/test_reference_text.py, with
`largest_shared`) on every solution notebook's exercise cells and on every right answer in another style
that the checks' soundness tests pass, the largest piece an honest answer shares with its reference
module is 61 nodes (3.3; then 42 in 4.1, 24 in 2.1, 20 or fewer elsewhere): `SHARED_BY_HONEST_ANSWERS`,
which that test re-measures and holds below the threshold, with a seventh more above it. What that
catches, typed in renamed and reformatted (the test pastes each): `agent_turn` with its signature (79
nodes), `run` (194), the calculator with its helpers (`_parse` 118, `_evaluate` 139, `_describe` 77) and
`run_tool` (76). Smaller references (`one_shot` 52, `tool_result` 24, `run_tools` 20, `CALCULATOR_TOOL`
22: an API call, a dict, data whose shape the API fixes) are too small to tell a copy from an honest
answer, and are never flagged: reading the notebook is the teacher's way there.
"""

from __future__ import annotations

import ast
import builtins
import importlib.util
from functools import lru_cache
from pathlib import Path

from ...catalogue import words
from ...checks.source import latest_definition, parsed
from ...course import Exercise, Notebook, exercise_number
from ...notebook_source import without_magics
from ..submissions.plan import grading_points

THRESHOLD = 70  # nodes of a piece shared with the reference: above every honest answer's 61 (module docstring)
SHARED_BY_HONEST_ANSWERS = 61  # the measurement behind THRESHOLD, held by tests/test_reference_text.py
SMALLEST_PIECE = 5  # pieces smaller than this are not indexed (they match anything)
LONGEST_CELL = 100_000  # characters of an exercise's cells read; a longer answer is not a pasted reference

# The words of this module (a later issue moves them into translation catalogues).
WORDS = words(__file__)  # texts/reference_text.toml: the review note, in the report's language

KEPT = frozenset(dir(builtins))
COUNTED = (ast.stmt, ast.expr, ast.arg, ast.keyword)
SKIPPED_FIELDS = {"ctx", "type_comment", "annotation", "returns", "type_params"}
NAMED_FIELDS = {  # the fields that hold an identifier the learner chooses
    ast.Name: ("id",), ast.arg: ("arg",), ast.FunctionDef: ("name",), ast.AsyncFunctionDef: ("name",),
    ast.ClassDef: ("name",), ast.ExceptHandler: ("name",), ast.alias: ("asname",),
    ast.Global: ("names",), ast.Nonlocal: ("names",),
}


def without_docstring(body: list) -> list:
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        return body[1:]
    return body


def normalised(node: ast.AST) -> str:
    """The piece as text, its identifiers renamed by first appearance, docstrings and annotations left out."""
    names: dict[str, str] = {}

    def rename(name):
        if name is None or name in KEPT:
            return name
        return names.setdefault(name, f"v{len(names)}")

    def text(value) -> str:
        if isinstance(value, list):
            return "[" + ",".join(text(item) for item in value) + "]"
        if not isinstance(value, ast.AST):
            return repr(value)
        renamed = NAMED_FIELDS.get(type(value), ())
        parts = []
        for field, inner in ast.iter_fields(value):
            if field in SKIPPED_FIELDS:
                continue
            if field == "body" and isinstance(value, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Module)):
                inner = without_docstring(inner)
            if field in renamed:
                inner = [rename(name) for name in inner] if isinstance(inner, list) else rename(inner)
                parts.append(repr(inner))
            else:
                parts.append(text(inner))
        return f"{type(value).__name__}({','.join(parts)})"

    return text(node)


def sizes(tree: ast.AST) -> dict[ast.AST, int]:
    """Each counted node's size: itself and every counted node under it (docstrings and annotations left out)."""
    found: dict[ast.AST, int] = {}

    def size(node) -> int:
        total = 1 if isinstance(node, COUNTED) else 0
        for field, inner in ast.iter_fields(node):
            if field in SKIPPED_FIELDS:
                continue
            if field == "body" and isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Module)):
                inner = without_docstring(inner)
            for child in inner if isinstance(inner, list) else [inner]:
                if isinstance(child, ast.AST):
                    total += size(child)
        if isinstance(node, COUNTED):
            found[node] = total
        return total

    size(tree)
    return found


def pieces(tree: ast.AST, smallest: int = SMALLEST_PIECE) -> dict[str, int]:
    """Every piece of a tree of at least `smallest` nodes, normalised -> its size."""
    return {normalised(node): size for node, size in sizes(tree).items() if size >= smallest}


@lru_cache(maxsize=None)
def reference_pieces(module: str) -> dict[str, int]:
    """The pieces of a reference module's source (read from its file, never imported into a kernel)."""
    spec = importlib.util.find_spec(module)
    tree = parsed(Path(spec.origin).read_text(encoding="utf-8")) if spec and spec.origin else None
    return pieces(tree) if tree is not None else {}


def reference_module(exercise: Exercise) -> str:
    return exercise.reference.partition(":")[0]


def largest_shared(sources: list[str], module: str, smallest: int = SMALLEST_PIECE) -> int:
    """The size of the largest piece of these cells that is a piece of the module (0 for none)."""
    if sum(len(source) for source in sources) > LONGEST_CELL:
        return 0
    reference = reference_pieces(module)
    largest = 0
    for source in sources:
        tree = parsed(without_magics(source))
        if tree is None:
            continue
        try:
            found = pieces(tree, max(smallest, largest + 1))
        except (RecursionError, MemoryError):  # nested deeper than Python's own limits: not the course's code
            continue
        largest = max([largest] + [size for piece, size in found.items() if piece in reference])
    return largest


def exercise_cells(notebook, exercise: Exercise, course_notebook: Notebook | None = None) -> list[str]:
    """The code of the learner's cells that hold the exercise, from the file: those whose metadata names it, and
    (given the course's notebook, to place its check) the cell that last defines its name before it is graded,
    the answer the grader judged, wherever it was written (the reference pasted into the next cell)."""
    code = [(index, cell.get("source")) for index, cell in enumerate(notebook.cells)
            if cell.get("cell_type") == "code" and isinstance(cell.get("source"), str)]
    own = [source for index, source in code if exercise_number(notebook.cells[index]) == exercise.id]
    if course_notebook is not None:
        points = grading_points(notebook, course_notebook)
        graded_at = next((index for index, exercises in points.items() if exercise in exercises), len(notebook.cells))
        before = [source for index, source in code if index < graded_at]
        judged = latest_definition([without_magics(source) for source in before], exercise.name)
        if judged is not None and judged not in [without_magics(source) for source in own]:
            own.append(judged)
    return own


def review(notebook, exercise: Exercise, course_notebook: Notebook | None = None) -> str:
    """The review note for an exercise whose cells hold the course's reference code, or "" for one that does not."""
    module = reference_module(exercise)
    size = largest_shared(exercise_cells(notebook, exercise, course_notebook), module, THRESHOLD)
    if size < THRESHOLD:
        return ""
    return WORDS("review", exercise=exercise.id, module=module.replace(".", "/") + ".py", size=size,
                         honest=SHARED_BY_HONEST_ANSWERS, threshold=THRESHOLD)
