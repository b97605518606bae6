"""A session's lines fed to a program's REPL in a notebook, each shown as it is read.

A program such as notebook 8's `run` reads its lines from a stream and writes `User> ` before each one; in a
terminal you would see what you type after it. Fed a plain `io.StringIO`, a notebook's output shows
`User> Agent> ...`, the questions nowhere. `typed(text)` is that StringIO, writing each line it hands out to the
notebook's output too, so the session reads as it would in a terminal. It changes nothing the program sees.
"""

from __future__ import annotations

import io
import sys
from typing import TextIO


class Typed(io.StringIO):
    """The lines of `text`, each also written to `shown` when the program reads it (the notebook's output)."""

    def __init__(self, text: str, shown: TextIO | None = None):
        super().__init__(text)
        self.shown = shown

    def readline(self, size: int = -1) -> str:
        line = super().readline(size)
        (self.shown or sys.stdout).write(line)
        return line


def typed(text: str) -> Typed:
    """A session of lines a REPL reads with `readline()`, shown as they are read, like lines typed in a terminal."""
    return Typed(text)
