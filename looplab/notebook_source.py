"""A code cell's source, read without running it: IPython's magic and shell lines, and `check(...)` calls.

Written once for everyone who reads a notebook's code as text: the grader (where an exercise is
checked; the cells as the checks read them), the notebook generator (each exercise followed by its
check), the authoring scripts and the tests (a cell's Python without its `%` and `!` lines). Only the
standard library at import (IPython only when `as_ipython_runs` is called), so it stays light.
"""

from __future__ import annotations

import re

from .catalogue import words

WORDS = words(__file__)
MAGIC_STARTS = ("%", "!")  # IPython's line and cell magics, and shell lines
# `check("2.1", tool_result)`: the exercise's number, and the name it is checked on when the call is just that.
CHECK_CALL = re.compile(r"""\bcheck\(\s*(['"])(?P<number>\d+\.\d+)\1(?:\s*,\s*(?P<name>[A-Za-z_]\w*)\s*\))?""")


def is_magic(line: str) -> bool:
    """A line IPython reads as a magic (`%time`, `%%capture`) or a shell command (`!ls`), not Python."""
    return line.lstrip().startswith(MAGIC_STARTS)


def has_magic(source: str) -> bool:
    return any(is_magic(line) for line in source.splitlines())


def without_magics(source: str) -> str:
    """The cell's Python: its magic and shell lines left out, so `ast.parse` can read the rest."""
    return "\n".join(line for line in source.splitlines() if not is_magic(line))


def as_ipython_runs(sources: list[str]) -> list[str]:
    """The cells as IPython runs them (its input history `In`): magics turned into Python, so the checks'
    source readers parse them as they would in the notebook. A cell IPython cannot read stays as it is
    (it ran as far as its error)."""
    from IPython.core.inputtransformer2 import TransformerManager

    manager = TransformerManager()
    cells = []
    for source in sources:
        try:
            cells.append(manager.transform_cell(source))
        except Exception:
            cells.append(source)
    return cells


def checked_numbers(source: str) -> set[str]:
    """The exercises a cell checks: `check("2.1", ...)` anywhere in its text -> {"2.1"}."""
    return {match["number"] for match in CHECK_CALL.finditer(source)}


def checked_names(source: str) -> dict[str, str]:
    """`check("2.1", tool_result)` -> {"2.1": "tool_result"}: the calls that pass a plain name, read from the
    text, not run."""
    return {match["number"]: match["name"] for match in CHECK_CALL.finditer(source) if match["name"]}


# How ipykernel names the file of a cell it ran (/tmp/ipykernel_4242/1234567.py), or IPython outside a kernel.
KERNEL_CELL = re.compile(r"ipykernel_\d+[/\\]\d+\.py$|^<ipython-input-")


def definitions(cells: list[str], names: list[str], head: str = "") -> str:
    """Python source defining `names` as the notebook's cells last defined them, with everything of the cells they
    use: the learner's own code, for a program a notebook writes from its cells (notebook 5's agent_toolbox.py
    and toolbox_server.py, notebook 6's agent_robust.py). Pass IPython's `In`.

    For each name, the last top-level statement of the cells binding it (a `def` or `class` with its decorators,
    an assignment), not the rest of its cell (a try-it line after a function is left out), then the later
    statements that changed what it holds (`TOOL_REGISTRY["calculator"] = {...}`, `.update(...)`, a loop filling
    it); and, followed back, the definitions of the names those use (a helper, a table of rows, an exception
    class), so that the program runs as the notebook did. A name used that no cell defines stays free; one a cell
    last imported comes with that import (`import json` in a cell of its own), unless `head`, the program's own
    first lines, already binds it (MODEL, calculator: the head imports what the course gives). The
    imports of the cells the statements came from go first; the statements follow in the order the cells ran
    them and the names are asked in, a statement moved only after what it needs as it runs (program_source.py
    reads the cells for all this). A kernel that keeps no history (nbval runs cells so) leaves `In` empty: then
    the cells are the ones the kernel compiled, as it keeps them for its tracebacks, in the order they first ran.
    A name asked for that no cell binds is a NameError saying to run the notebook's cells first (a program
    without it would fail only when run)."""
    from .program_source import Unbound, program

    if not any(isinstance(cell, str) and cell.strip() for cell in cells):
        cells = kernel_cells()
    try:
        return program([without_magics(cell) if isinstance(cell, str) else "" for cell in cells], names, head)
    except Unbound as missing:
        raise NameError(WORDS("not_defined", name=missing.name)) from None


def kernel_cells() -> list[str]:
    """Every cell the kernel ran, as it keeps them for its tracebacks (linecache), in the order they first ran."""
    import linecache

    return ["".join(entry[2]) for name, entry in list(linecache.cache.items())
            if isinstance(name, str) and KERNEL_CELL.search(name) and len(entry) == 4]
