"""One call into the learner's code, as a check makes it: bounded in time, its earlier pieces swapped in, and
where it failed, in the learner's own lines.

Both ends of a check use these: the in-process checks of a learner's own notebook (looplab/checks/core.py),
and the kernel's end of the grader's channel (looplab/serve.py), which runs in a kernel the grader gives
the package's graded edition, where looplab/checks holds no check at all (looplab/graded_checks.py). So this
module knows nothing of the checks: only how a call is bounded and isolated.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import os
import signal
import sysconfig
import threading
import traceback
from pathlib import Path
from typing import Any

PACKAGE_DIR = Path(__file__).resolve().parent

# A check stops the learner's code after this long: a loop that never ends gets words, not a hang. In the
# learner's notebook: 10 s of wall-clock time. The grader sets LOOPLAB_CHECK_SECONDS, seconds of the
# kernel's CPU time (a busy machine must not stop a correct answer), and LOOPLAB_CHECK_WALL_SECONDS, a
# wall-clock bound beside it for code that sleeps (looplab/grade/shared/limits.py: checks take under 0.1 s offline).
TIME_LIMIT_SECONDS = 10
CPU_SECONDS_VARIABLE, WALL_SECONDS_VARIABLE = "LOOPLAB_CHECK_SECONDS", "LOOPLAB_CHECK_WALL_SECONDS"


class CheckTimeout(BaseException):
    """Raised in the learner's code when it runs past the time limit (its seconds, when not TIME_LIMIT_SECONDS)."""


def time_limit_seconds() -> tuple[float, float | None]:
    """(the limit, the wall-clock bound): (10, None) in a learner's notebook, (CPU s, wall s) under the grader.
    Read at each check: a kernel forked from the grader's template gets its own environment after the import."""
    cpu = os.environ.get(CPU_SECONDS_VARIABLE)
    if not cpu:
        return float(TIME_LIMIT_SECONDS), None
    wall = os.environ.get(WALL_SECONDS_VARIABLE)
    return float(cpu), float(wall) if wall else 3 * float(cpu)


@contextlib.contextmanager
def time_limit(seconds: float, wall: float | None = None):
    """Stop the learner's code after `seconds`, where a signal can do it (the main thread).

    With `wall` (under the grader), `seconds` is CPU time this process used (ITIMER_PROF: every thread's
    user and system time), so a loaded machine does not stop a correct answer; `wall` seconds of real
    time bound code that sleeps or waits. Without it, `seconds` is wall-clock time (ITIMER_REAL)."""
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "setitimer"):
        yield
        return

    def stop(signum, frame):
        raise CheckTimeout()

    timers = [(signal.SIGALRM, signal.ITIMER_REAL, seconds if wall is None else wall)]
    if wall is not None:
        timers.append((signal.SIGPROF, signal.ITIMER_PROF, seconds))
    previous = [(signum, which, signal.signal(signum, stop)) for signum, which, _ in timers]
    for signum, which, limit in timers:
        signal.setitimer(which, limit)
    try:
        yield
    finally:
        for signum, which, handler in previous:
            signal.setitimer(which, 0)
            signal.signal(signum, handler)


@contextlib.contextmanager
def isolated(obj: Any, references: dict[str, Any]):
    """Swap the learner's earlier pieces for the course's while `obj` is checked: a bug in an earlier exercise
    never fails a later one. Under the grader the pieces come from the grader, each made for this one call."""
    namespace = getattr(obj, "__globals__", {})
    saved = {name: namespace[name] for name in references if name in namespace and namespace[name] is not obj}
    namespace.update({name: references[name] for name in saved})
    try:
        yield
    finally:
        namespace.update(saved)


def learner_line(error: BaseException) -> str | None:
    """The last line of the traceback that is not looplab's, the SDK's or Python's own (None if there is none)."""
    ours = (str(PACKAGE_DIR), sysconfig.get_paths()["stdlib"], sysconfig.get_paths()["purelib"])
    frames = [f for f in traceback.extract_tb(error.__traceback__) if not f.filename.startswith(ours)]
    return frames[-1].line if frames and frames[-1].line else None


def is_the_course_version(obj: Any, reference: Any) -> bool:
    """Is `obj` the course's own version (maybe behind functools.wraps / partial, or a copy of the function made
    from its code, `types.FunctionType(reference.__code__, ...)` or `__code__.replace()`)? It is one import away.
    Code typed again in a cell compiles to other code (its own file name and lines): that is the learner's."""
    try:
        unwrapped = inspect.unwrap(obj) if callable(obj) else obj
    except ValueError:  # a cycle of __wrapped__
        return False
    while isinstance(unwrapped, functools.partial):
        unwrapped = unwrapped.func
    if unwrapped is reference:
        return True
    code, theirs = getattr(reference, "__code__", None), getattr(unwrapped, "__code__", None)
    if code is None or not isinstance(theirs, type(code)):
        return False
    # equal code under any name: the same code object, or one copied from it (its lines and file kept)
    return theirs.replace(co_name=code.co_name, co_qualname=code.co_qualname) == code


def course_version_of(obj: Any, course) -> str | None:
    """Which exercise's course version `obj` is ("module:attribute"), among the modules loaded (an object can only be
    one of those); None when it is none. The course's version of any exercise is never a learner's answer to any
    exercise: notebook 5's agent_turn handed in as a later notebook's agent_turn, or under another name."""
    import sys

    for exercise in course.exercises:
        module, _, attribute = exercise.reference.partition(":")
        try:
            value = vars(sys.modules[module]).get(attribute) if module in sys.modules else None
        except TypeError:
            continue
        if value is not None and is_the_course_version(obj, value):
            return exercise.reference
    return None
