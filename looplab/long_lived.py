"""Imports whose objects live as long as the process, made without the cyclic garbage collector.

The SDK is some 3,000 modules and 250,000 objects (its classes most of all), which are never freed. CPython's
collector does not know that: while they are imported it passes over them again and again, and once more at
exit, for nothing. Measured here (Python 3.11): `import looplab.grade.__main__` 2.1 s of CPU -> 1.4 s; the
imports of a notebook's first cell 1.9 s -> 1.1 s. So the imports that bring the SDK (a kernel's or an agent
program's first read of `looplab.client` or `looplab.check`, looplab/__init__.py; the grader's,
looplab/grade/__init__.py; a kernel template's, looplab/grade/kernels/fork_server.py) run with the collector
paused; then everything there is is frozen (`gc.freeze`: moved where no later collection walks it), and the
collector is back as it was. What the process makes after that is collected as usual.
For the kernel template it is also CPython's recipe for a process that forks without exec: a kernel's
collections neither walk the template's objects nor write to the pages it shares with the template.
"""

from __future__ import annotations

import contextlib
import gc
from typing import Iterator


@contextlib.contextmanager
def imported_for_good() -> Iterator[None]:
    """Run the imports in the `with` block with the collector paused; freeze what exists, then resume it."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if collecting:
            gc.enable()
