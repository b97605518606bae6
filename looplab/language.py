"""Which language the course speaks: the one switch every catalogue reads (see catalogue.py).

The course's words follow the notebook being run, never the machine: every French laptop sets
LANG=fr_FR.UTF-8, and an English learner on it must still read English. In order:
1. LOOPLAB_LANG, when set, overrides everything (a teacher's choice, a test's);
2. what the notebook says itself: a translated notebook's set-up cell calls `looplab.speak("fr")`, so it
   speaks French however it is run (JupyterLab, nbclient, nbconvert, papermill, VS Code, Colab), and so do
   the programs it starts (notebook 4's agent.py, notebook 5's MCP server), which inherit SPOKEN;
3. the notebook the kernel runs, by its metadata `looplab.lang`: Jupyter's server tells the
   kernel its notebook in JPY_SESSION_NAME (nbclient, nbconvert and papermill never do);
4. English.
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
SPOKEN = "LOOPLAB_NOTEBOOK_LANG"  # set by `speak`: the notebook's word, for its kernel and the programs it starts

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


def speak(language: str) -> None:
    """The notebook says which language it speaks: `looplab.speak("fr")` in a French notebook's set-up cell.

    Its kernel then speaks it with no help from a Jupyter server (see the module's docstring), and so does every
    program the notebook starts, which inherits the kernel's environment; LOOPLAB_LANG still overrides it."""
    os.environ[SPOKEN] = checked(language)


def current() -> str:
    """The language the course speaks now (see the module's docstring for the order)."""
    chosen = _chosen.get()
    if chosen:
        return chosen[-1]
    if os.environ.get(OVERRIDE, "").strip():
        return checked(os.environ[OVERRIDE].strip().lower())
    return checked(os.environ.get(SPOKEN, "").strip().lower() or _of_session() or SOURCE)


@contextlib.contextmanager
def using(language: str):
    """Speak `language` while the block runs (the grader judging one notebook), as before after it."""
    token = _chosen.set(_chosen.get() + (checked(language),))
    try:
        yield language
    finally:
        _chosen.reset(token)
