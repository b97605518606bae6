"""The grader's own cells in a kernel: the first one runs in_kernel.py's source; each check point connects to the judge.

The code of the first cell is a real module (linted and unit-tested), but a kernel never imports it:
the cell runs its source in a namespace of its own, before any learner code. The later cells, one per
check point, are judgement/judge.py's `Judge.cell_source`: an import of looplab.serve and a call.
Whatever the learner does to them (shadowing names, rewriting the cell) only changes what answers
the judge, and what answers is judged like any answer of the learner's.
"""

from __future__ import annotations

from pathlib import Path

IN_KERNEL_SOURCE = (Path(__file__).resolve().parent / "in_kernel.py").read_text(encoding="utf-8")
HEADER = "# Added by the looplab grader (python -m looplab.grade): not part of the submission.\n"


def start_cell_source(step: dict) -> str:
    """The first cell: in_kernel's source and `start(STEP)`, in a namespace of its own."""
    code = f"{IN_KERNEL_SOURCE}\n\nstart(STEP)\n"
    namespace = {"__name__": "looplab_grader", "STEP": step}
    return (f"{HEADER}exec(compile({code!r}, '<looplab grader>', 'exec'), "
            f"{{**{namespace!r}, '__builtins__': __import__('builtins').__dict__.copy()}})\n")
