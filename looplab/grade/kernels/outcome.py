"""What one run of a notebook left behind.

Its own module so the runner that fills it and the rows and feedback that read it need not import
each other.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class Outcome:
    # cell index in plan.notebook -> what the judge found there: {"step": "check", "results": {exercise: result}}
    payloads: dict[int, dict] = field(default_factory=dict)
    failures: dict[int, str] = field(default_factory=dict)  # grader cells without a result: why
    timed_out: dict[int, float] = field(default_factory=dict)  # cell index in plan.notebook -> the limit it ran past
    died_at: int | None = None
    garbled_at: int | None = None  # the kernel sent a message the grader cannot read (messages.py) in this cell
    wrote_too_much: str | None = None  # the kernel was stopped for what it wrote into its folders: "bytes" or "entries"
    stopped_at: int | None = None  # the total limit
    stuck_at: int | None = None  # a stopped cell that went on running: the interrupt was caught
    error: str | None = None  # the grader failed (the kernel would not start...)
    current: int | None = None  # the cell running now
    executed: Any = None
