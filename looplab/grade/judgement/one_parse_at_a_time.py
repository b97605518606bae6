"""Python's parser, one thread at a time, in the grader's process: a workaround for a CPython bug.

CPython 3.11 before 3.11.8, and 3.12 before 3.12.2, count the depth of the tree `ast.parse` hands back in
one counter per interpreter, and a garbage collection halfway through can give the GIL to another
thread (python/cpython#106905, fixed by python/cpython#113035). Two threads parsing at once then make
one of them raise "SystemError: AST constructor recursion depth mismatch".

The grader judges --jobs notebooks at once, each check point in a thread of its own (judge.py), and
those threads parse: the learner's cells (checks/source.py, reference_text.py) and the calculator's
expressions when a check runs the course's tools for the expected answer (checks/notebook2.py,
notebook4.py). On CI, an honest 1.1 was marked "the check could not finish: SystemError: ...". So on
those releases, once a judge exists, `ast.parse` takes a lock: a parse lasts milliseconds, and taking
turns costs nothing measurable. Every parse in the process goes through it, `ast.literal_eval` too,
since they look `ast.parse` up when called. On a fixed Python nothing changes.
"""

from __future__ import annotations

import ast
import functools
import sys
import threading
from typing import Callable

FIXED_IN = {(3, 11): (3, 11, 8), (3, 12): (3, 12, 2)}  # the first release of each affected line with the fix
AFFECTED = sys.version_info[:3] < FIXED_IN.get(sys.version_info[:2], (0,))


def in_turn(parse: Callable) -> Callable:
    """`parse`, each call waiting for any other thread's call to end. Reentrant: a parse started in the same thread
    while one runs (a finalizer that parses, run by a garbage collection halfway through) goes on, never waits
    for itself."""
    lock = threading.RLock()

    @functools.wraps(parse)
    def parse_in_turn(*args, **kwargs):
        with lock:
            return parse(*args, **kwargs)

    parse_in_turn.in_turn = True
    return parse_in_turn


def install() -> None:
    """Make `ast.parse` take turns in this process where this Python needs it (once: it stays)."""
    if AFFECTED and not getattr(ast.parse, "in_turn", False):
        ast.parse = in_turn(ast.parse)


__all__ = ["AFFECTED", "FIXED_IN", "in_turn", "install"]
