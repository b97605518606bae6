"""How an API error reads in a notebook: a few lines, not the SDK's 80-line traceback.

The course shows 400s on purpose (a cell tagged `raises-exception` sends a broken history). IPython
would print every frame of the SDK's request machinery, burying the one line that matters, the
API's message. So in a notebook an error of the API, or looplab's NotRecordedError, shows as

    BadRequestError (400): messages.1: `tool_use` ids were found without `tool_result` blocks ...
    looplab hint: Message 1 (assistant) called toolu_..., but the message right after it ...
      line 6 of the cell: client.messages.create(model=MODEL, max_tokens=1024, tools=TOOLS, messages=messages)

the exception, what to do about it, and the learner's own lines that led there (frames in the SDK,
httpx2, IPython or looplab are left out). The error itself is unchanged: same class, same
`str(error)`, so a notebook's error output keeps its `ename` and `evalue`, which nbval and the
grader read.

IPython's public hooks do it: an exception with a `_render_traceback_()` method shows the lines it
returns. NotRecordedError is ours and has the method; the SDK's errors are not ours, so
`show_api_errors_briefly` registers an IPython custom exception handler (`set_custom_exc`) for
`anthropic.APIStatusError` that gives the error that method, then lets IPython show it as usual.
Outside IPython (a script, a test) nothing changes.
"""

from __future__ import annotations

import json
import sys
import sysconfig
import traceback
from pathlib import Path

import anthropic

from .catalogue import words
from .rules import check_request

WORDS = words(__file__)

# Frames from these folders are machinery, not the learner's code: the standard library and
# installed packages (the SDK, httpx2, IPython...), and looplab itself.
MACHINERY = tuple(
    str(Path(folder).resolve())
    for folder in {*(sysconfig.get_paths()[key] for key in ("stdlib", "platstdlib", "purelib", "platlib")),
                   Path(__file__).parent}
)


def brief_traceback(error: BaseException) -> list[str]:
    """The lines to show for an API error or a NotRecordedError: the error, its hint, the learner's lines."""
    if isinstance(error, anthropic.APIStatusError):
        lines = [f"{type(error).__name__} ({error.status_code}): {error.api_message or error}"]
        hint = looplab_hint(error)
        if hint:
            lines.append(hint_line(hint))
    else:
        lines = [f"{type(error).__name__}: {error}"]
    return lines + learners_lines(error.__traceback__)


def hint_line(hint: str) -> str:
    """The hint under a 400, in the course's language (the API's message above it stays as the API wrote it)."""
    return WORDS("hint_line", hint=hint)


def looplab_hint(error: anthropic.APIStatusError) -> str | None:
    """The hint for a 400 that broke one of the course's rules: the request says which one."""
    try:
        violation = check_request(json.loads(error.request.content))
    except (ValueError, AttributeError):  # no JSON body, or no request to read
        return None
    if violation is None or violation.message != error.api_message:
        return None
    return violation.hint


def learners_lines(tb) -> list[str]:
    """Where the learner's code was when it raised: one line per frame of their own code, outermost first."""
    lines = []
    for frame in traceback.extract_tb(tb):
        if is_machinery(frame.filename):
            continue
        where = (WORDS("in_the_cell", line=frame.lineno) if frame.name == "<module>"
                 else WORDS("in_function", line=frame.lineno, function=frame.name))
        lines.append(f"  {where}: {(frame.line or '').strip()}")
    return lines


def is_machinery(filename: str) -> bool:
    try:
        resolved = str(Path(filename).resolve())
    except (OSError, ValueError):
        return False
    return resolved.startswith(MACHINERY)


def show_api_errors_briefly() -> bool:
    """In IPython, show the SDK's API errors briefly from now on; True when they are (so the hint is shown).

    It registers once per shell, and never replaces a custom exception handler someone else set.
    """
    shell = _ipython()
    if shell is None:
        return False
    if anthropic.APIStatusError in shell.custom_exceptions:
        return True
    if shell.custom_exceptions:
        return False
    shell.set_custom_exc((anthropic.APIStatusError,), _show_briefly)
    return True


def _ipython():
    """The running IPython shell, or None; IPython is never imported just to ask."""
    ipython = sys.modules.get("IPython")
    return ipython.get_ipython() if ipython is not None else None


def _show_briefly(shell, etype, value, tb, tb_offset=None):
    """IPython's custom handler: give the error the brief rendering, then show it the usual way.

    `showtraceback` sends the error output (ename, evalue, and these lines as its traceback) and
    marks the cell as failed, exactly as for any other exception.
    """
    value._render_traceback_ = lambda: brief_traceback(value)
    shell.showtraceback((etype, value, tb), tb_offset=tb_offset)
