"""Imports whose objects live as long as the process, made without the cyclic garbage collector.

A grader run, and each kernel template, imports some 3,000 modules (the SDK's classes most of all), whose
objects are never freed. CPython's collector does not know that: while they are imported it passes over them
again and again, and at exit once more, for nothing; that was a third of a grader's start (2.1 s of CPU ->
1.4 s for `import looplab.grade.__main__` here, Python 3.11). So they are imported with the collector paused,
then frozen (`gc.freeze`: moved where no later collection walks them), then the collector is back as it was.
It is also CPython's recipe for a process that forks without exec, as the kernel template does: a kernel's
collections neither walk the template's objects nor write to the pages it shares with the template.
What the process makes after this is collected as usual.
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
