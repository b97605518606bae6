"""Which language the course speaks: the one switch every catalogue reads (see catalogue.py).

The course's words follow the notebook being run, never the machine: every French laptop sets
LANG=fr_FR.UTF-8, and an English learner on it must still read English. In order:
1. LOOPLAB_LANG, when set, overrides everything (a teacher's choice, a test's);
2. the notebook the kernel runs, by its metadata `looplab.lang`: Jupyter's server tells the
   kernel its notebook in JPY_SESSION_NAME (so does the grader, and the test runner for nbval);
3. English.
The grader, which judges many notebooks in one process, says the language of each with `using`.
"""

from __future__ import annotations

import contextlib
import contextvars
import json
import os
from pathlib import Path

LANGUAGES = ("en", "fr")  # the course's languages; the first is the source every other translates
SOURCE = LANGUAGES[0]
OVERRIDE = "LOOPLAB_LANG"
SESSION = "JPY_SESSION_NAME"  # set by jupyter_server for each kernel: the path of the notebook it runs

# The languages `using` blocks have set, innermost last. A context variable, not a list: the grader judges
# several notebooks at once (asyncio tasks, each check point in a thread started by asyncio.to_thread, which
# copies the context), and each must keep its own notebook's language.
_chosen: contextvars.ContextVar[tuple[str, ...]] = contextvars.ContextVar("looplab_language", default=())


def checked(language: str) -> str:
    """`language` if the course speaks it, else a ValueError naming the ones it does."""
    if language not in LANGUAGES:
        raise ValueError(f"looplab speaks {', '.join(LANGUAGES)}; got {language!r} "
                         f"(from {OVERRIDE} or a notebook's metadata looplab.lang).")
    return language


def of_notebook(notebook: dict) -> str:
    """A notebook's language, from its metadata (`looplab.lang`); a notebook without one is English."""
    return ((notebook.get("metadata") or {}).get("looplab") or {}).get("lang", SOURCE)


def _of_session() -> str | None:
    path = os.environ.get(SESSION, "")
    if not path.endswith(".ipynb"):
        return None
    try:
        return of_notebook(json.loads(Path(path).read_text(encoding="utf-8")))
    except (OSError, ValueError, AttributeError):
        return None


def current() -> str:
    """The language the course speaks now (see the module's docstring for the order)."""
    chosen = _chosen.get()
    if chosen:
        return chosen[-1]
    if os.environ.get(OVERRIDE, "").strip():
        return checked(os.environ[OVERRIDE].strip().lower())
    return checked(_of_session() or SOURCE)


@contextlib.contextmanager
def using(language: str):
    """Speak `language` while the block runs (the grader judging one notebook), as before after it."""
    token = _chosen.set(_chosen.get() + (checked(language),))
    try:
        yield language
    finally:
        _chosen.reset(token)
