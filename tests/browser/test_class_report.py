"""The class report in headless Chromium, opened from disk with the network cut off.

The page must stand on its own (no request leaves file://), show each learner x exercise cell with its
status, the pass rates, and the failure messages of an exercise ranked by how many learners hit them,
each learner linking to their feedback notebook (the whole page: artifacts/class_report.png). On a
laptop's screen (1366 x 768) its first screen answers both questions, "which exercise is the class stuck
on" and "who needs help" (artifacts/class_report_first_screen.png, the one in docs/report.png), and the
other orders are static views, reached by a link, with no script.
"""

from pathlib import Path

import pytest

from looplab.grade import Row
from looplab.grade.exports.class_report import write_report
from looplab.grade.rows.class_gradebook import keyed_to_roster
from looplab.grade.rows.roster import read_roster
from tests.class_rows import CALC, CLASS_COURSE, CLASS_LIST, class_rows, roster_text, sixteen_students_rows

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
    assert rate.inner_text().split() == ["2/7", "29%"]  # the counts first

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


LAPTOP = {"width": 1366, "height": 768}


def test_the_first_screen_of_a_laptop_answers_both_questions(page, tmp_path):
    """Sixteen students (names in five scripts), the worst exercise and the learners who need help above the fold."""
    (tmp_path / "class.csv").write_text(roster_text(), encoding="utf-8")
    roster = read_roster(tmp_path / "class.csv")
    rows = keyed_to_roster(sixteen_students_rows(), roster)
    report = tmp_path / "report.html"
    write_report(rows, report, feedback_files(rows, tmp_path / "feedback"), roster, course=CLASS_COURSE)
    page.set_viewport_size(LAPTOP)
    page.goto(report.as_uri())

    def above_the_fold(locator):
        box = locator.bounding_box()
        assert box is not None and box["y"] >= 0 and box["y"] + box["height"] <= LAPTOP["height"], box
        assert box["x"] + box["width"] <= LAPTOP["width"], box

    assert "16 student(s) on the roster" in page.locator("p.summary").inner_text()
    assert "Canvas" not in page.content()
    worst = page.locator("#exercises table.rates tr")
    assert worst.first.get_attribute("data-exercise") == "1.2" and "3/9 solved" in worst.first.inner_text()
    assert CALC[:20] in worst.first.inner_text()  # the failure most learners hit, beside its count
    for line in worst.all():  # every exercise, worst first, on the first screen
        above_the_fold(line)
    learners = page.locator("#learners table.standings tr")
    assert learners.count() == len(CLASS_LIST)
    points = [int(line.get_attribute("data-points")) for line in learners.all()]
    assert points == sorted(points) and points[0] == 0
    for line in learners.all():  # every student, lowest score first, on the first screen
        above_the_fold(line)
    names = learners.locator("th").all_inner_texts()
    assert any(name.startswith("Νίκος Παπαδάκης") for name in names) and any("⚑ review" in n for n in names)
    assert not page.locator("#learners-by-name").is_visible()
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "class_report_first_screen.png"))

    # The other orders: static views, shown by following their link (the page has no script).
    page.locator("#learners p.orders a").click()
    assert page.locator("#learners-by-name").is_visible() and not page.locator("#learners").is_visible()
    by_name = page.locator("#learners-by-name table.standings th").all_inner_texts()
    assert by_name == sorted(by_name, key=str.casefold)
    page.locator("#exercises p.orders a").click()
    assert page.locator("#exercises-in-course-order").is_visible()
    in_order = page.locator("#exercises-in-course-order table.rates tr")
    assert [line.get_attribute("data-exercise") for line in in_order.all()] == ["1.1", "1.2", "1.3", "2.1", "2.2", "2.3"]
    assert page.locator("script").count() == 0
