"""The grader's own cells: the source of in_kernel.py, put into a cell with this step's arguments.

The code is a real module (linted and unit-tested), but a kernel never imports it: each cell runs
its source in a namespace of its own, so nothing the learner did to `sys.modules` changes what runs.
Why the later cells are different, and signed: in_kernel.py's docstring.
"""

from __future__ import annotations

from pathlib import Path

from .in_kernel import RUNNER

GRADER_MARK = "looplab_grader"  # cell metadata key of the grader's own cells
IN_KERNEL_SOURCE = (Path(__file__).resolve().parent / "in_kernel.py").read_text(encoding="utf-8")


def grader_cell_source(step: dict) -> str:
    """A cell that runs in_kernel's step without importing anything of the grader.

    The first cell runs in the fresh kernel, before any learner code: it may look up `exec` and
    friends, which nothing has shadowed yet, and it gives in_kernel's functions a copy of the builtins
    as they are then. Later cells look up no global name: an import statement (which finds
    `__import__` among the builtins, never among the learner's names) of the runner the first one
    left, and a literal. A learner who breaks that path (replacing `__builtins__`, the runner, the
    cell's text) only keeps the signed report from arriving, which counts as tampering.
    """
    header = "# Added by the looplab grader (python -m looplab.grade): not part of the submission.\n"
    if step["step"] != "start":
        return f"{header}import {RUNNER}\n{RUNNER}.run({step!r})\ndel {RUNNER}\n"
    code = f"{IN_KERNEL_SOURCE}\n\nstart(STEP)\n"
    namespace = {"__name__": "looplab_grader", "STEP": step}
    return (f"{header}exec(compile({code!r}, '<looplab grader>', 'exec'), "
            f"{{**{namespace!r}, '__builtins__': __import__('builtins').__dict__.copy()}})\n")
