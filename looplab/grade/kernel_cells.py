"""The grader's own cells: the source of in_kernel.py, put into a cell with this step's arguments.

The code is a real module (linted and unit-tested), but a kernel never imports it: each cell runs
its source in a namespace of its own, so nothing the learner did to `sys.modules` changes what runs.
"""

from __future__ import annotations

from pathlib import Path

GRADER_MARK = "looplab_grader"  # cell metadata key of the grader's own cells
IN_KERNEL_SOURCE = (Path(__file__).resolve().parent / "in_kernel.py").read_text(encoding="utf-8")


def grader_cell_source(step: dict) -> str:
    """A cell that runs in_kernel.main(step) without importing anything of the grader."""
    code = f"{IN_KERNEL_SOURCE}\n\nmain(STEP)\n"
    namespace = {"__name__": "looplab_grader", "STEP": step}
    return ("# Added by the looplab grader (python -m looplab.grade): not part of the submission.\n"
            f"exec(compile({code!r}, '<looplab grader>', 'exec'), {namespace!r})\n")
