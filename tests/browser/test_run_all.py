"""Run All on a learner notebook, in a real JupyterLab, reaches the last cell whatever state the exercises are in.

The prose promises it: a learner who has not written an exercise yet can still run the notebook and
read every output. The generator tags the exercise and check cells of the learner copies
`raises-exception`, which JupyterLab honours (the kernel is told not to abort the cells queued after
one that raises). Only those cells, and the others tagged so, may fail, and with the stubs in place they do: the
same outcomes tests/test_notebooks.py checks with nbclient, which leaves these notebooks to this test when it runs
(tests/learner_run_all.py).
"""

import pytest

from tests.learner_run_all import RUN_IN_THE_BROWSER, check_fails_only_at_the_exercises, learner_notebook

pytestmark = pytest.mark.browser


@pytest.mark.parametrize("name, spoken", RUN_IN_THE_BROWSER, ids=lambda value: value)
def test_run_all_reaches_the_last_cell_of_the_learner_notebook(page, run_all_to_the_end, name, spoken):
    # A French notebook is run from a folder of its own, as a learner opens it: its kernel speaks French because
    # its notebook says so (JupyterLab hands the kernel its notebook's path).
    folder = "" if spoken == "en" else spoken
    cells = run_all_to_the_end(page, learner_notebook(name, spoken), folder)
    assert all(cell["ran"] for cell in cells)
    check_fails_only_at_the_exercises(cells, spoken)
