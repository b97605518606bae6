"""The French edition in a real browser: a French notebook speaks French in JupyterLab, and so does the class report.

Nothing tells the kernel its language but the notebook itself: JupyterLab's server hands every kernel the
path of its notebook (JPY_SESSION_NAME), and looplab reads `looplab.lang` in that notebook's metadata
(looplab/language.py). So this runs the generated French notebook as a learner would open it, from a
folder of its own, and looks for the French words on the page: the client's mode line, the viewer's step
titles and legend. (A Run All of a French learner notebook is one of tests/browser/test_run_all.py's.)
"""

from pathlib import Path

import pytest

from looplab import language
from looplab.grade.exports.class_report import write_report
from tests.class_rows import CLASS_COURSE, class_rows

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
FRENCH_SOLUTION = ROOT / "solutions" / "fr" / "02_closing_the_loop.ipynb"


def test_a_french_notebook_speaks_french_in_jupyterlab(page, run_notebook):
    from playwright.sync_api import expect

    run_notebook(page, FRENCH_SOLUTION, "fr")
    expect(page.get_by_text("hors ligne, les réponses viennent de l").first).to_be_visible()
    viewer = page.locator(".looplab-viewer").first
    expect(viewer.locator(".looplab-step-label")).to_contain_text("Étape ")
    expect(viewer.locator(".looplab-step-label")).to_contain_text(" sur ")
    expect(viewer.locator(".looplab-legend")).to_contain_text("l'API refuse ceci")
    expect(page.get_by_text("offline, answers come from")).to_have_count(0)
    expect(page.get_by_text("Error displaying widget")).to_have_count(0)


def test_the_french_class_report_reads_french(page, tmp_path):
    report = tmp_path / "rapport.html"
    with language.using("fr"):  # rows of an English class, a report in French: read alike
        write_report(class_rows(), report, {}, course=CLASS_COURSE)
    page.goto(report.as_uri())
    assert page.locator("html").get_attribute("lang") == "fr"
    grid = page.locator("table.grid")
    alice = grid.locator('td[data-learner="alice"][data-exercise="2.3"]')
    assert alice.inner_text().split()[0] == "2/2" and "solved" in alice.get_attribute("class")
    assert page.locator("h1").inner_text() == "Rapport de la classe"
    assert "Sur quel exercice la classe bloque-t-elle\u202f?" in page.locator("body").inner_text()
    rate = grid.locator('tfoot td[data-exercise="1.2"]')
    assert rate.inner_text().split()[0] == "2/7"  # counted alike in every language
