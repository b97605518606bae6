"""What an exercise cell's source text says, read without running it: pure functions on strings.

A check sees the learner's object, not the cell that made it. Two things only the cell shows:
- the stub's `raise NotImplementedError(...)` line left in after the answer was written: the object
  exists and may be right, yet the cell errors (in 1.2 the lines after it, `TOOLS = [...]`, never run);
- a dict answer that is a copy of the course's own (`copy.deepcopy`, a JSON round trip, `{**...}`):
  a copy is equal, not identical, so only the cell's code tells it from a dict typed by hand.
In a notebook the cells are IPython's input history (`In`, looplab.checks.core.session); a grader
reading the notebook file can hand these functions the cells' text just the same.
"""

from __future__ import annotations

import ast
from typing import Iterable, Iterator

COURSE_PACKAGE = "looplab"
STUB_ERROR = "NotImplementedError"
CELL, FUNCTION = "cell", "function"  # where stub_left finds the leftover line


def parsed(source: str) -> ast.Module | None:
    """The cell's tree, or None for a cell Python cannot read (it ran as far as its error, no further)."""
    try:
        return ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):  # too deep for Python too: it never ran
        return None


def stub_left(source: str) -> str | None:
    """Where the stub's `raise NotImplementedError` is still in a cell whose answer is written, or None.

    CELL: the line is a statement of the cell itself (1.2's stub): the cell always errors there, so the
    lines after it never ran, whatever the answer is worth. FUNCTION: the line is a statement of a
    function's body that has code of the learner's before it: it errors only if a call reaches it,
    so the check says so only when it met a NotImplementedError (an unreachable leftover is harmless).
    A function whose body is only a docstring and the raise is the untouched stub: "not written yet".
    """
    tree = parsed(source)
    if tree is None:
        return None
    if any(_raises_the_stub_error(statement) for statement in tree.body):
        return CELL
    for function in tree.body:
        if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
            body = [statement for statement in function.body if not _is_docstring(statement)]
            if len(body) > 1 and any(_raises_the_stub_error(statement) for statement in body):
                return FUNCTION
    return None


def _raises_the_stub_error(statement: ast.stmt) -> bool:
    """`raise NotImplementedError` or `raise NotImplementedError("...")`."""
    if not isinstance(statement, ast.Raise) or statement.exc is None:
        return False
    error = statement.exc.func if isinstance(statement.exc, ast.Call) else statement.exc
    return isinstance(error, ast.Name) and error.id == STUB_ERROR


def _is_docstring(statement: ast.stmt) -> bool:
    return isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant) \
        and isinstance(statement.value.value, str)


def latest_definition(cells: Iterable[str], name: str) -> str | None:
    """The last cell (in the order they ran) that binds `name` in the notebook's namespace, or None."""
    found = None
    for cell in cells:
        tree = parsed(cell) if isinstance(cell, str) else None
        if tree is not None and name in set(bound_names(tree.body)):
            found = cell
    return found


def bound_names(statements: Iterable[ast.AST]) -> Iterator[str]:
    """The names these statements bind in their own namespace: assigned, defined, imported, loop and
    `with` targets. A function's or class's body is its own namespace: only its name counts."""
    for statement in statements:
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            yield statement.name
        elif isinstance(statement, (ast.Import, ast.ImportFrom)):
            yield from (alias.asname or alias.name.split(".")[0] for alias in statement.names)
        else:
            for child in ast.iter_child_nodes(statement):
                if isinstance(child, (ast.stmt, ast.excepthandler, ast.match_case)):
                    yield from bound_names([child])
                    if getattr(child, "name", None) and isinstance(child, ast.excepthandler):
                        yield child.name
                else:
                    yield from (node.id for node in ast.walk(child)
                                if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store))


def names_imported_from_the_course(cells: Iterable[str]) -> set[str]:
    """Every name an import from the course's package bound in these cells (`import looplab` binds
    `looplab`; `from looplab.tools import TOOLS as T` binds `T`)."""
    names = set()
    for cell in cells:
        tree = parsed(cell) if isinstance(cell, str) else None
        for node in ast.walk(tree) if tree is not None else ():
            if isinstance(node, ast.Import):
                names |= {alias.asname or alias.name.split(".")[0] for alias in node.names
                          if alias.name.split(".")[0] == COURSE_PACKAGE}
            elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == COURSE_PACKAGE:
                names |= {alias.asname or alias.name for alias in node.names}
    return names


def names_read_with(source: str, name: str) -> set[str]:
    """The names read by the cell's statements that mention `name` (`name = copy.deepcopy(TOOLS[0])`
    reads `copy` and `TOOLS`): where the cell's value of `name` came from."""
    tree = parsed(source)
    read: set[str] = set()
    for statement in tree.body if tree is not None else ():
        names = [node for node in ast.walk(statement) if isinstance(node, ast.Name)]
        if any(node.id == name for node in names):
            read |= {node.id for node in names if isinstance(node.ctx, ast.Load)}
    return read
