"""The grader's exports: Canvas CSV, Gradescope results.json, the class report, spreadsheet-safe CSV.

Built from gradebook rows (tests/class_rows.py, a made-up class), so no kernel runs, except in the
last tests: the command line on two fixture folders and a learner named `=2+3`, and Gradescope's
run_autograder script on one notebook.
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from looplab.course import COURSE
from looplab.grade import Row, write_csv
from looplab.grade.exports.canvas import canvas_export, write_canvas
from looplab.grade.exports.class_report import ClassReport, failures, relative_links, status_of
from looplab.grade.exports.gradescope import results
from looplab.grade.exports.spreadsheet import FORMULA_STARTS, one_line, safe_cell
from looplab.grade.rows.roster import Roster, RosterError, read_roster
from tests.class_rows import CALC, CLASS_COURSE, MAX, NB1, NB2, class_rows
from tests.test_grade import SUBMISSIONS, read_csv, refused, run_grader

REPO = Path(__file__).resolve().parents[1]
GRADESCOPE = REPO / "grading" / "gradescope"

ROSTER = """\ufeffStudent,ID,SIS User ID,SIS Login ID,Section,One tool call (4521),Closing the loop (4522),Current Score
    Points Possible,,,,,5,6,
"Smith, Alice",101,s101,alice,A,,,
"=HYPERLINK(""http://x"")",102,s102,=2+3,A,,,
Bob Brown,103,S103,,A,,,
Chen Li,104,s104,CHEN,B,,,
Dana Diaz,105,s105,dana,B,,,
Quinn Q,106,s106,quinn,B,,,
Ravi R,107,s107,ravi,B,,,
Tina T,108,s108,tina,B,,,
Zoe Z,109,s109,zoe,B,,,
"""


def read_text_csv(text: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text)))


@pytest.fixture
def roster(tmp_path) -> Roster:
    path = tmp_path / "roster.csv"
    path.write_text(ROSTER, encoding="utf-8")
    return read_roster(path)


# --- spreadsheet-safe cells ---------------------------------------------------------------------------------


@pytest.mark.parametrize("value, shown", [
    ("=2+3", "'=2+3"), ("+1", "'+1"), ("-1", "'-1"), ("@SUM(A1)", "'@SUM(A1)"), ("\t=1", "'\t=1"), ("\r=1", "'\r=1"),
    ("alice", "alice"), ("", ""), ("2+3=5", "2+3=5"), (5, 5), (0, 0),
])
def test_a_cell_a_spreadsheet_would_run_gets_an_apostrophe(value, shown):
    assert safe_cell(value) == shown


@given(st.text())
def test_no_text_cell_starts_a_formula_and_none_is_lost(value):
    shown = safe_cell(value)
    assert not shown.startswith(FORMULA_STARTS)
    assert shown in (value, "'" + value)


def test_the_gradebook_escapes_formulas(tmp_path):
    out = tmp_path / "grades.csv"
    write_csv([Row("=2+3", NB1, "1.1", 2, 2, "solved", "-1 is not a str", "submissions/=2+3/x.ipynb", "+2026.12",
                   "@SUM(A1)")], out)
    lines = out.read_text(encoding="utf-8").splitlines()
    # the last column, `review`, is empty: nothing to review
    assert lines[1] == f"'=2+3,{NB1},1.1,2,2,solved,'-1 is not a str,submissions/=2+3/x.ipynb,'+2026.12,'@SUM(A1),"


def test_every_csv_cell_is_one_line_so_a_learner_s_text_cannot_look_like_a_row(tmp_path):
    """A learner's exception text with `\\r\\n` and a forged row: quoted, it was valid CSV, but `grep` and
    `wc -l` saw a row of its own. Every text cell of every CSV (spreadsheet.py) is written on one line."""
    forged = "boom\r\nmallory,01_one_tool_call,1.1,2,2,solved\n\tand\x00more\u2028end"
    out = tmp_path / "grades.csv"
    write_csv([Row("mallory\nx", NB1, "1.1", 0, 2, "not solved", forged, "submissions/mallory/x.ipynb")], out)
    lines = out.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 2 and not any(line.startswith("mallory,01_one_tool_call") for line in lines)
    with open(out, newline="", encoding="utf-8") as handle:
        [row] = list(csv.DictReader(handle))
    assert row["message"] == "boom ⏎ mallory,01_one_tool_call,1.1,2,2,solved ⏎  and more ⏎ end"
    assert row["learner"] == "mallory ⏎ x"
    assert one_line(5) == 5 and one_line("\r=1") == " ⏎ =1"


def test_a_french_class_s_csv_opens_in_a_french_excel(tmp_path):
    """`;` between cells, a decimal comma, the byte-order mark: Excel in a French locale splits on `;` and reads the
    comma as a decimal mark (the Canvas file stays Canvas's: commas and points, test below)."""
    from looplab import language
    from looplab.grade.exports.spreadsheet import for_spreadsheet, write_csv_rows
    out = tmp_path / "wide.csv"
    with language.using("fr"):
        write_csv_rows(out, ["apprenant", "nom", "total"], [["zoé@école.fr", "Núñez, Zoé", 2.5], ["=1", "x", 3]],
                       for_spreadsheet())
        write_csv([Row("léa", NB1, "1.1", 2, 2, "réussi", "", "x.ipynb")], tmp_path / "grades.csv")
    raw = out.read_bytes()
    assert raw.startswith(b"\xef\xbb\xbf")
    table = list(csv.reader(io.StringIO(raw.decode("utf-8-sig"), newline=""), delimiter=";"))
    assert table == [["apprenant", "nom", "total"], ["zoé@école.fr", "Núñez, Zoé", "2,5"], ["'=1", "x", "3"]]
    assert float(table[1][2].replace(",", ".")) == 2.5
    gradebook = (tmp_path / "grades.csv").read_bytes().decode("utf-8-sig").splitlines()
    assert gradebook[0].startswith("apprenant;notebook;exercice;points;points max;statut;")
    assert gradebook[1].startswith(f"léa;{NB1};1.1;2;2;réussi;")
    write_csv([Row("lea", NB1, "1.1", 2, 2, "solved", "", "x.ipynb")], tmp_path / "english.csv")
    assert (tmp_path / "english.csv").read_bytes().startswith(b"learner,notebook,")  # as scripts have read it


# --- Canvas ---------------------------------------------------------------------------------------------------


def test_the_roster_is_a_canvas_export(roster):
    assert [s["SIS Login ID"] for s in roster.students][:2] == ["alice", "=2+3"]  # Points Possible skipped
    assert len(roster.students) == 9
    assert roster.assignments == {"one tool call": "One tool call (4521)", "closing the loop": "Closing the loop (4522)"}
    assert roster.student("ALICE")["Student"] == "Smith, Alice"  # case ignored
    assert roster.student("chen")["ID"] == "104"
    assert roster.student("s103")["Student"] == "Bob Brown"  # no login: the SIS User ID
    assert roster.student("105")["Student"] == "Dana Diaz"  # then the Canvas ID
    assert roster.student("nobody") is None


def test_a_roster_that_is_neither_a_class_list_nor_a_canvas_export_is_refused(tmp_path):
    path = tmp_path / "roster.csv"
    path.write_text("learner,grade\nalice,12\n")
    with pytest.raises(RosterError, match="neither the columns id, name, email of a class list nor those of a Canvas"):
        read_roster(path)
    with pytest.raises(RosterError, match="cannot read the roster"):
        read_roster(tmp_path / "missing.csv")


def test_the_canvas_file_has_a_row_per_student_and_a_column_per_notebook(roster):
    export = canvas_export(class_rows(), roster, CLASS_COURSE)
    assert export.header == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section",
                             "One tool call (4521)", "Closing the loop (4522)"]  # the roster's assignments
    points_possible, *students = export.rows
    assert points_possible == ["    Points Possible", "", "", "", "", 5, 6]
    by_login = {row[3]: row[5:] for row in students}
    assert [row[0] for row in students] == [s["Student"] for s in roster.students]  # the roster's order
    assert by_login["alice"] == [5, 6]
    assert by_login["quinn"] == [2, 0]  # the last of two submissions; notebook 2 not handed in: 0, as in the gradebook
    assert by_login["ravi"] == [0, 0]  # broken JSON of notebook 1: handed in, 0 points
    assert by_login["CHEN"] == [0, 0]  # the login matched whatever its case
    assert by_login["=2+3"] == [2, 0]
    assert by_login["zoe"] == [0, 0]  # on the roster, nothing handed in
    assert by_login[""] == [0, 0]  # Bob Brown: no login, and the learner "bob" is not his SIS User ID
    assert export.not_on_roster == ["bob", "uma"]
    assert export.without_submission == ["S103", "zoe"]


def test_a_student_under_two_names_is_credited_with_the_copy_handed_in_last(roster):
    """As in the gradebook (class_results.py): the last copy counts, even when an earlier one scored more."""
    from tests.class_rows import notebook_rows, solved
    earlier = notebook_rows("dana", NB1, *solved("1.1", "1.2", "1.3"), file=f"submissions/dana/{NB1}.ipynb")
    later = notebook_rows("Dana Diaz", NB1, *solved("1.1"), ("1.2", "not solved", CALC), ("1.3", "not solved", CALC),
                          file=f"submissions/Dana Diaz/{NB1} (2).ipynb")
    export = canvas_export(earlier + later, roster, CLASS_COURSE)
    assert {row[3]: row[5:] for row in export.rows[1:]}["dana"] == [2]


def test_the_canvas_file_is_spreadsheet_safe(roster, tmp_path):
    out = tmp_path / "canvas.csv"
    write_canvas(class_rows(), roster, out, CLASS_COURSE)
    table = read_text_csv(out.read_text(encoding="utf-8-sig"))
    row = next(row for row in table if row[1] == "102")
    assert row[:4] == ["'=HYPERLINK(\"http://x\")", "102", "s102", "'=2+3"]
    assert row[5] == "2"  # points stay numbers


def canvas_roster(tmp_path, *assignments: str) -> Roster:
    """The roster above with these assignment columns instead of its own."""
    header, points, *students = ROSTER.lstrip("\ufeff").splitlines()
    lines = [",".join(["Student,ID,SIS User ID,SIS Login ID,Section", *assignments, "Current Score"])]
    lines += [",".join([line.split(",,", 1)[0]] + [""] * (len(assignments) + 1)) for line in [points, *students]]
    path = tmp_path / "canvas-export.csv"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return read_roster(path)


def test_canvas_assignments_named_in_french_are_the_course_s_notebooks(tmp_path):
    """A French course's Canvas export names its assignments in French: each is matched by the course's title in either
    language, case, accents and punctuation aside; no new column."""
    roster = canvas_roster(tmp_path, "Un appel d’outil (4521)", "FERMER LA BOUCLE (4522)")
    export = canvas_export(class_rows(), roster, CLASS_COURSE)
    assert export.header[5:] == ["Un appel d’outil (4521)", "FERMER LA BOUCLE (4522)"] and export.created == []
    assert {row[3]: row[5:] for row in export.rows[1:]}["alice"] == [5, 6]


def test_a_notebook_no_assignment_is_is_an_error_naming_those_it_could_be(tmp_path):
    from looplab.grade.exports.canvas import CanvasColumnError, chosen_columns
    roster = canvas_roster(tmp_path, "One tool call (4521)", "Ma boucle à moi (4522)", "Quiz 1 (4600)")
    with pytest.raises(CanvasColumnError) as refused:
        canvas_export(class_rows(), roster, CLASS_COURSE)
    said = str(refused.value)
    assert "02_closing_the_loop (Closing the loop / Fermer la boucle)" in said
    assert "Ma boucle à moi (4522), Quiz 1 (4600)" in said and "One tool call (4521)," not in said  # taken
    assert '--canvas-column "02_closing_the_loop=<assignment>"' in said
    chosen = chosen_columns(["02_closing_the_loop=Ma boucle à moi"], roster)  # its name, without the id, will do
    assert chosen == {"02_closing_the_loop": "Ma boucle à moi (4522)"}
    assert canvas_export(class_rows(), roster, CLASS_COURSE, columns=chosen).header[5:] == [
        "One tool call (4521)", "Ma boucle à moi (4522)"]
    left_out = canvas_export(class_rows(), roster, CLASS_COURSE, columns=chosen_columns(["02_closing_the_loop="], roster))
    assert left_out.header[5:] == ["One tool call (4521)"] and all(len(row) == 6 for row in left_out.rows)
    with pytest.raises(CanvasColumnError, match=r"no such assignment; its assignments: One tool call \(4521\), Ma"):
        chosen_columns(["02_closing_the_loop=Closing the loop (4522)"], roster)
    with pytest.raises(CanvasColumnError, match="a notebook of the course"):
        chosen_columns(["07_nope=Quiz 1"], roster)


def test_columns_that_create_assignments_are_said(tmp_path):
    """A roster with no assignment at all (a class list, a new course's export): the columns are the notebooks' titles,
    in the class's language, and a note says Canvas creates them."""
    from looplab import language
    from looplab.grade.exports.canvas import created_note
    roster = canvas_roster(tmp_path)
    export = canvas_export(class_rows(), roster, CLASS_COURSE)
    assert export.header[5:] == export.created == ["One tool call", "Closing the loop"]
    assert created_note(export)[0].startswith("the Canvas file's columns One tool call, Closing the loop are no ")
    with language.using("fr"):
        assert canvas_export(class_rows(), roster, CLASS_COURSE).header[5:] == ["Un appel d'outil", "Fermer la boucle"]


def test_the_command_line_refuses_a_canvas_column_before_grading(tmp_path, roster, capsys, monkeypatch):
    from looplab.grade import __main__ as command_line
    (tmp_path / "roster.csv").write_text(ROSTER, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as stopped:
        command_line.main([str(SUBMISSIONS / "stub"), "--roster", "roster.csv", "--canvas", "c.csv", "--quiet",
                           "--canvas-column", "02_closing_the_loop=Nope (1)"])
    assert stopped.value.code == 2 and "the roster has no such assignment" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        command_line.main([str(SUBMISSIONS / "stub"), "--canvas-column", "02_closing_the_loop=", "--quiet"])
    assert "--canvas-column needs --canvas" in capsys.readouterr().err


def test_a_canvas_column_error_leaves_the_other_files_written(tmp_path, capsys, monkeypatch):
    """The Canvas file is not written (no guess), the gradebook and the other exports are, and the run says why."""
    from looplab.grade import __main__ as command_line
    from looplab.grade.grading import GradingResult
    roster = canvas_roster(tmp_path, "One tool call (4521)")
    monkeypatch.setattr(command_line, "grade", lambda paths, options: GradingResult(class_rows(), 3))
    monkeypatch.setattr(command_line, "read_roster", lambda path: roster)
    code = command_line.main([str(SUBMISSIONS / "stub"), "--roster", "r.csv", "--canvas", str(tmp_path / "c.csv"),
                              "--wide", str(tmp_path / "w.csv"), "--out", str(tmp_path / "g.csv"), "--isolation", "none"])
    said = capsys.readouterr()
    assert code == 1 and not (tmp_path / "c.csv").exists()
    assert (tmp_path / "g.csv").exists() and (tmp_path / "w.csv").exists()
    assert "error: the Canvas file" in said.err and "02_closing_the_loop" in said.err
    assert "; wide: " in said.out and "Canvas:" not in said.out


# --- Gradescope -------------------------------------------------------------------------------------------------

TEST_KEYS = {"name", "score", "max_score", "status", "output", "output_format", "visibility"}


def assert_gradescope_shape(document: dict):
    assert {"score", "execution_time", "output", "output_format", "visibility", "stdout_visibility",
            "tests"} <= set(document)
    for test in document["tests"]:
        assert TEST_KEYS <= set(test), test
        assert test["status"] in ("passed", "failed")
        assert isinstance(test["score"], int) and isinstance(test["max_score"], int)
        assert 0 <= test["score"] <= test["max_score"]
        assert test["visibility"] in ("hidden", "after_due_date", "after_published", "visible")
    assert document["score"] == sum(test["score"] for test in document["tests"])
    json.dumps(document)


def one_learner(learner: str) -> list[Row]:
    return [row for row in class_rows() if row.learner == learner]


def test_gradescope_has_one_test_per_exercise():
    document = results(one_learner("bob"), execution_time=12.4, course=CLASS_COURSE)
    assert_gradescope_shape(document)
    assert [(t["number"], t["score"], t["max_score"], t["status"]) for t in document["tests"]] == [
        ("1.1", 2, 2, "passed"), ("1.2", 0, 1, "failed"), ("1.3", 2, 2, "passed"),
        ("2.1", 1, 1, "passed"), ("2.2", 0, 3, "failed"), ("2.3", 0, 2, "failed")]
    assert document["tests"][1]["name"] == "1.2 CALCULATOR_TOOL (One tool call)"
    assert document["tests"][1]["output"] == f"not solved: {CALC}"
    assert document["tests"][5]["output"] == "not written yet: the code still raises NotImplementedError"
    assert document["score"] == 5 and document["execution_time"] == 12
    assert document["output"].startswith("5/11 points, 2 notebook(s) graded.")


def test_gradescope_fails_every_exercise_of_a_broken_notebook_and_names_an_unknown_file():
    document = results(one_learner("ravi") + one_learner("uma"), visibility="after_published", course=CLASS_COURSE)
    assert_gradescope_shape(document)
    assert [(t.get("number"), t["max_score"], t["status"]) for t in document["tests"]] == [
        ("1.1", 2, "failed"), ("1.2", 1, "failed"), ("1.3", 2, "failed"), (None, 0, "failed")]
    assert document["tests"][0]["output"].startswith("invalid JSON: Expecting property name")
    assert document["tests"][3]["name"] == "uma: no notebook found"
    assert {t["visibility"] for t in document["tests"]} == {"after_published"}
    with pytest.raises(ValueError, match="visibility must be one of"):
        results([], visibility="students")
    assert results([])["tests"] == [] and "No notebook was found" in results([])["output"]


# --- the class report, as HTML (the browser test looks at it in Chromium) ----------------------------------------


def test_statuses_are_recognised_with_their_variable_parts():
    assert status_of("stopped: cells 16 and 17 ran past the 5 s limit").name == "CELL_STOPPED"
    assert status_of("the kernel died (during the check of exercise 1.3)").name == "KERNEL_DIED"
    assert status_of("not a notebook").name == "NOT_A_NOTEBOOK"
    assert status_of("something new") is None


def test_failures_are_ranked_by_how_many_learners_hit_them():
    report = ClassReport(class_rows(), course=CLASS_COURSE)
    ranked = failures(COURSE.exercise("1.2"), report.graded(NB1))
    assert [(len(f.learners), f.status) for f in ranked][0] == (3, "not solved")
    assert [one.learner for one in ranked[0].learners] == ["=2+3", "bob", "quinn"]
    assert all(len(a.learners) >= len(b.learners) for a, b in zip(ranked, ranked[1:]))
    assert "ravi" not in {one.learner for f in ranked for one in f.learners}  # broken file: listed apart


def test_the_report_page_stands_alone_and_escapes_names(roster):
    rows = class_rows() + [Row("<b>x</b>", NB2, "2.1", 0, 1, "not solved", "<script>alert(1)</script>",
                               "submissions/x/02_closing_the_loop.ipynb")]
    page = ClassReport(rows, {"submissions/bob/01_one_tool_call.ipynb": "feedback/bob/01_one_tool_call.ipynb"},
                       roster).html()
    assert "<script" not in page and "&lt;script&gt;" in page and "&lt;b&gt;x&lt;/b&gt;" in page
    assert not re.search(r"(src|href)=\"(https?:)?//", page)  # nothing fetched, no link off the disk
    assert "Content-Security-Policy" in page
    assert '<a href="feedback/bob/01_one_tool_call.ipynb">' in page
    assert 'id="not-on-roster"' in page and "uma" in page and 'id="without-submission"' in page
    assert 'data-learner="zoe"' in page  # a roster student without a submission has a line


@pytest.fixture
def sixteen(tmp_path):
    """The made-up class with a roster of sixteen (tests/class_rows.py), keyed as the command line keys it."""
    from looplab.grade.rows.class_gradebook import keyed_to_roster
    from tests.class_rows import roster_text, sixteen_students_rows
    path = tmp_path / "class.csv"
    path.write_text(roster_text(), encoding="utf-8")
    class_list = read_roster(path)
    return keyed_to_roster(sixteen_students_rows(), class_list), class_list


def test_the_report_orders_exercises_worst_first_and_learners_lowest_first(sixteen):
    rows, class_list = sixteen
    report = ClassReport(rows, roster=class_list, course=CLASS_COURSE)
    worst = [exercise.id for _, exercise in report.exercise_order(worst_first=True)]
    assert worst[0] == "1.2" and worst[-1] == "2.1"  # 3/9 solved; 3/3
    assert [exercise.id for _, exercise in report.exercise_order(worst_first=False)] == list(MAX)
    page = report.html()
    assert '<tr data-exercise="1.2" data-solved="3" data-graded="9">' in page and "3/9 solved" in page
    lowest = sorted(report.standings(), key=lambda one: (one.points, one.solved, one.name.casefold()))
    assert lowest[0].points == 0 and lowest[-1].name == "Alice Smith"
    assert {one.name for one in lowest} >= {"José Núñez", "Νίκος Παπαδάκης", "Lea Lind", "王小明"}  # roster names
    assert report.summary().startswith("16 student(s) on the roster, 11 handed something in;")
    assert "Canvas" not in page  # none was asked for
    stranger = rows + [Row("zed", NB1, "1.1", 0, 2, "not solved", "x", "submissions/zed/01.ipynb")]
    assert "left out of the Canvas file" in ClassReport(stranger, roster=class_list, course=CLASS_COURSE, canvas=True).html()
    assert "Canvas" not in ClassReport(stranger, roster=class_list, course=CLASS_COURSE).html()
    assert 'data-review="yes"' in page and 'id="review"' in page and "<script" not in page


def test_feedback_links_are_relative_to_the_page(tmp_path):
    links = relative_links({"a.ipynb": tmp_path / "feedback" / "a b" / "n#1.ipynb"}, tmp_path / "out" / "report.html")
    assert links == {"a.ipynb": "../feedback/a%20b/n%231.ipynb"}


# --- through the command line, and Gradescope's script ------------------------------------------------------------


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """partial, stub, and stub again under the name `=2+3`, graded with every export asked for."""
    tmp = tmp_path_factory.mktemp("exports")
    for learner in ("partial", "stub"):
        shutil.copytree(SUBMISSIONS / learner, tmp / "submissions" / learner)
    shutil.copytree(SUBMISSIONS / "stub", tmp / "submissions" / "=2+3")
    (tmp / "roster.csv").write_text(ROSTER.replace("alice", "partial"), encoding="utf-8")
    # one slot: one kernel template to start (seconds of CPU); notebooks graded side by side are tests/test_grade.py's
    run = run_grader("submissions", "--jobs", "1", "--cell-timeout", "60", "--out", "grades.csv",
                     "--feedback", "feedback", "--report", "report/class.html", "--roster", "roster.csv",
                     "--canvas", "canvas.csv", "--quiet", cwd=tmp)
    assert run.returncode == 0, run.stderr
    return tmp, run


def test_a_learner_named_like_a_formula_is_text_in_every_csv(exported):
    tmp, _ = exported
    header, everything = read_csv(tmp / "grades.csv")
    rows = [row for row in everything if row[5] != "not submitted"]  # with a roster, every student is listed
    assert {row[0] for row in rows} == {"'=2+3", "partial", "stub"}
    assert [row[2:6] for row in rows if row[0] == "'=2+3"] == [row[2:6] for row in rows if row[0] == "stub"]
    canvas = read_text_csv((tmp / "canvas.csv").read_text(encoding="utf-8-sig"))
    assert canvas[0][5:] == ["One tool call (4521)", "Closing the loop (4522)"]
    by_login = {row[3]: row[5:] for row in canvas[2:]}
    partial = [sum(int(row[3]) for row in rows if row[0] == "partial" and row[1] == stem) for stem in (NB1, NB2)]
    assert by_login["partial"] == [str(points) for points in partial] and by_login["'=2+3"] == ["0", "0"]
    assert partial[0] >= 2 and partial[1] >= 4  # 1.1 solved; 2.1 and 2.2 solved


def test_the_command_line_warns_about_learners_not_on_the_roster(exported):
    tmp, run = exported
    assert ("not on the roster (their rows are in the gradebook, under their own names; a Canvas file leaves them "
            "out): stub") in run.stderr
    assert "grade again with --match unmatched.csv" in run.stderr
    assert read_text_csv((tmp / "unmatched.csv").read_text(encoding="utf-8-sig"))[1][::3] == ["stub", ""]


def test_the_command_line_writes_the_report_with_links_to_feedback(exported):
    tmp, _ = exported
    page = (tmp / "report" / "class.html").read_text(encoding="utf-8")
    links = [link for link in re.findall(r'<a href="([^"]+)">', page) if not link.startswith("#")]  # not the views
    assert links and all((tmp / "report" / link).resolve().is_file() for link in links)
    assert "../feedback/partial/01_one_tool_call.ipynb" in links
    assert 'data-learner="stub"' in page and 'id="not-on-roster"' in page


def test_gradescope_results_are_refused_for_a_class_folder(exported):
    """One results.json is one submission: a class's would be one nameless learner with everyone's tests."""
    tmp, _ = exported
    said = refused("submissions", "--gradescope", "results.json", "--out", "class.csv", "--quiet", cwd=tmp)
    assert "--gradescope is for one submission" in said and "3 learners (=2+3, partial, stub)" in said, said
    assert not (tmp / "results.json").exists() and not (tmp / "class.csv").exists()


def test_one_upload_holding_a_notebook_under_several_names_scores_it_once():
    """Four copies of notebook 1 under four names (each a "learner" by the file-name rule) were 4 x 5 points."""
    copies = [replace(row, learner=name, file=f"submission/{name}.ipynb") for name in ("a", "b", "c", "d")
              for row in one_learner("alice") if row.notebook == NB1]
    document = results(copies, course=CLASS_COURSE)
    assert_gradescope_shape(document)
    assert document["score"] == 5 and [t["number"] for t in document["tests"]] == ["1.1", "1.2", "1.3"]
    assert "One tool call was handed in 4 times: only the last copy counts (d.ipynb); not counted: a.ipynb, b.ipynb, " \
           "c.ipynb." in document["output"]


def test_results_say_when_kernels_were_not_isolated():
    from looplab.grade.exports.gradescope import not_isolated

    document = results(one_learner("bob"), course=CLASS_COURSE,
                       notes=[not_isolated("bwrap cannot make a sandbox here: setting up uid map: Permission denied")])
    assert document["output"].splitlines()[-1].startswith("Warning: this submission was graded WITHOUT isolation "
                                                          "(bwrap cannot make a sandbox here: setting up uid map")
    assert "WITHOUT isolation (--isolation none)" in not_isolated(None)


def test_the_gradescope_autograder_grades_one_submission(tmp_path):
    root = tmp_path / "autograder"
    (root / "submission").mkdir(parents=True)
    shutil.copy(SUBMISSIONS / "partial" / f"{NB1}.ipynb", root / "submission")
    shutil.copy(SUBMISSIONS / "partial" / f"{NB1}.ipynb", root / "submission" / "a_copy.ipynb")  # counted once
    env = dict(os.environ, AUTOGRADER_ROOT=str(root), PYTHON=sys.executable)
    run = subprocess.run(["bash", str(GRADESCOPE / "run_autograder")], env=env, capture_output=True, text=True,
                         timeout=240)
    assert run.returncode == 0, run.stderr
    document = json.loads((root / "results" / "results.json").read_text())
    assert_gradescope_shape(document)
    later = [e for e in COURSE.notebook(NB1).exercises if e.id not in ("1.1", "1.2", "1.3")]  # added since: solved
    assert [(t["number"], t["score"], t["status"]) for t in document["tests"]] == [
        ("1.1", 2, "passed"), ("1.2", 0, "failed"), ("1.3", 0, "failed"), *[(e.id, e.points, "passed") for e in later]]
    assert document["score"] == 2 + sum(e.points for e in later)
    assert "was handed in 2 times: only the last copy counts (a_copy.ipynb)" in document["output"]
    assert (root / "submission" / f"{NB1}.ipynb").read_bytes() == (SUBMISSIONS / "partial" / f"{NB1}.ipynb").read_bytes()


def test_the_autograder_zip_holds_the_scripts_and_the_course(tmp_path):
    sys.path.insert(0, str(GRADESCOPE))
    try:
        import make_zip
    finally:
        sys.path.remove(str(GRADESCOPE))
    target = tmp_path / "autograder.zip"
    names = make_zip.make_zip(target)
    with zipfile.ZipFile(target) as archive:
        assert archive.namelist() == names
        assert names[:2] == ["setup.sh", "run_autograder"]
        assert archive.getinfo("run_autograder").external_attr >> 16 & 0o111
    assert {"pyproject.toml", "requirements.txt", "README.md", "looplab/grade/exports/gradescope.py"} <= set(names)
    assert not any("__pycache__" in name for name in names)
