"""The class report in headless Chromium, opened from disk with the network cut off.

The page must stand on its own (no request leaves file://), show each learner x exercise cell with its
status, the pass rates, and the failure messages of an exercise ranked by how many learners hit them,
each learner linking to their feedback notebook. The screenshot (artifacts/class_report.png) is the
one in docs/report.png.
"""

from pathlib import Path

import pytest

from looplab.grade import Row
from looplab.grade.exports.class_report import write_report
from tests.class_rows import CALC, CLASS_COURSE, class_rows

pytestmark = pytest.mark.browser

ARTIFACTS = Path(__file__).resolve().parents[2] / "artifacts"


def feedback_files(rows: list[Row], folder: Path) -> dict[str, Path]:
    """A stand-in feedback notebook for every submission that ran, where the grader would write it."""
    files = {}
    for row in rows:
        if row.exercise and row.file not in files:
            target = folder / row.learner.replace("=", "_").replace("+", "_") / Path(row.file).name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text("{}")
            files[row.file] = target
    return files


def test_the_class_report_shows_where_the_class_is_stuck(page, tmp_path):
    rows = class_rows()
    report = tmp_path / "report.html"
    feedback = feedback_files(rows, tmp_path / "feedback")
    write_report(rows, report, feedback, course=CLASS_COURSE)

    requests = []

    def only_files(route):
        requests.append(route.request.url)
        route.continue_() if route.request.url.startswith("file://") else route.abort()

    page.context.route("**/*", only_files)
    page.goto(report.as_uri())
    assert requests == [report.as_uri()]  # the page alone: no style sheet, font or image fetched

    grid = page.locator("table.grid")
    cell = lambda learner, exercise: grid.locator(  # noqa: E731
        f'td[data-learner="{learner}"][data-exercise="{exercise}"]')
    assert cell("alice", "2.3").get_attribute("class") == "cell solved"
    assert cell("alice", "2.3").inner_text().split() == ["2/2", "solved"]
    assert "not solved" in cell("bob", "1.2").inner_text() and "failed" in cell("bob", "1.2").get_attribute("class")
    assert "the course's own code" in cell("tina", "1.1").inner_text()
    assert "tampered" in cell("tina", "1.1").get_attribute("class")
    assert cell("chen", "2.1").get_attribute("data-status") == "not handed in"
    assert "invalid JSON" in cell("ravi", "1.3").inner_text()
    assert cell("=2+3", "1.1").get_attribute("data-status") == "solved"
    assert cell("quinn", "1.1").inner_text().split() == ["2/2", "solved"]  # the better of quinn's two files
    assert grid.locator("tbody th.learner").all_inner_texts() == [
        "=2+3", "alice", "bob", "chen", "dana", "quinn", "ravi", "tina", "uma"]

    rate = grid.locator('tfoot td[data-exercise="1.2"]')
    assert (rate.get_attribute("data-passed"), rate.get_attribute("data-handed")) == ("2", "7")  # ravi's broken file is not in it
    assert "29%" in rate.inner_text()

    # 1.2: "calc" hit by three learners first, then the single ones.
    ranking = page.locator('ol.stuck[data-exercise="1.2"] > li')
    counts = [int(item.get_attribute("data-count")) for item in ranking.all()]
    assert counts == sorted(counts, reverse=True) and counts[0] == 3
    first = ranking.first
    assert CALC in first.inner_text()
    assert first.locator("a").all_inner_texts() == ["=2+3", "bob", "quinn"]
    target = first.locator("a").nth(1).get_attribute("href")
    assert (tmp_path / target).resolve() == feedback["submissions/bob/01_one_tool_call.ipynb"].resolve()
    assert page.locator('p.all-solved[data-exercise="2.1"]').count() == 1

    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "class_report.png"), full_page=True)
