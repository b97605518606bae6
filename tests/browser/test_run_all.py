"""Run All on a learner notebook, in a real JupyterLab, reaches the last cell whatever state the exercises are in.

The prose promises it: a learner who has not written an exercise yet can still run the notebook and
read every output. The generator tags the exercise and check cells of the learner copies
`raises-exception`, which JupyterLab honours (the kernel is told not to abort the cells queued after
one that raises). Only those cells may fail, and with the stubs in place they do.
"""

from pathlib import Path

import pytest

pytestmark = pytest.mark.browser

LEARNER = Path(__file__).resolve().parents[2] / "notebooks"
# Every English learner notebook, and one French one (run from a folder of its own, as a learner opens it: its
# kernel speaks French because its notebook says so; the French code is the English program, so one suffices).
NOTEBOOKS = [(path, "") for path in sorted(LEARNER.glob("*.ipynb"))] + [(LEARNER / "fr" / "02_closing_the_loop.ipynb", "fr")]


@pytest.mark.parametrize("notebook, folder", NOTEBOOKS, ids=lambda value: getattr(value, "stem", value or "en"))
def test_run_all_reaches_the_last_cell_of_the_learner_notebook(page, run_all_to_the_end, notebook, folder):
    cells = run_all_to_the_end(page, notebook, folder)
    assert all(cell["ran"] for cell in cells)
    for number, cell in enumerate(cells, start=1):
        if "exercise" in cell["tags"]:
            assert cell["errors"] == ["NotImplementedError"], f"code cell {number}: the stub should raise"
        elif "check" in cell["tags"]:
            assert cell["errors"] == ["CheckFailed"], f"code cell {number}: the check of a stub should fail"
        elif "raises-exception" not in cell["tags"]:
            assert not cell["errors"], f"code cell {number} raised {cell['errors']} in the learner's copy"
