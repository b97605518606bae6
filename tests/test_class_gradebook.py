"""A gradebook keyed to the class: LMS download names read as one learner each, the copy handed in last
counts, every student on the roster gets every notebook, a wide CSV with totals. Unit tests of the
names, then a real grading of a twelve-student class handed in through three LMSs and a browser."""

from __future__ import annotations

import csv
import shutil
import subprocess
import sys
import unicodedata
from pathlib import Path

import pytest

from looplab.course import COURSE
from looplab.grade.rows.roster import read_roster
from looplab.grade.submissions import lms
from looplab.grade.submissions.finding import learner_from_file
from tests.test_reference_text import pasted_calculator_notebook

ROOT = Path(__file__).resolve().parent.parent
NB1 = COURSE.notebooks[0].stem
STEMS = COURSE.stems
MAXIMUM = sum(exercise.points for exercise in COURSE.exercises)
NB1_POINTS = sum(exercise.points for exercise in COURSE.notebooks[0].exercises)


@pytest.mark.parametrize("name, learner", [
    (f"smithbob_12345_678901_{NB1}.ipynb", "smithbob"),  # Canvas
    (f"smithbob_LATE_12345_678950_{NB1}-1.ipynb", "smithbob"),  # Canvas, late, second file of that name
    (f"Chen Li_223344_assignsubmission_file_{NB1}.ipynb", "Chen Li"),  # Moodle, flat
    (f"erin-{NB1} (1).ipynb", "erin"),  # a browser's second download
    (f"erin-{NB1}.ipynb", "erin"),
])
def test_a_learner_is_read_from_what_the_lms_named_the_file(name, learner):
    assert learner_from_file(Path(name), STEMS) == learner


def test_the_copy_handed_in_last_is_read_from_the_names():
    assert lms.handed_order(f"smithbob_LATE_12345_678950_{NB1}-1.ipynb") > lms.handed_order(
        f"smithbob_12345_678901_{NB1}.ipynb")
    assert lms.handed_order(f"erin-{NB1} (1).ipynb") > lms.handed_order(f"erin-{NB1}.ipynb")
    assert lms.handed_order(f"submissions/submission_900002/{NB1}.ipynb") > lms.handed_order(
        f"submissions/submission_900001/{NB1}.ipynb")
    assert lms.copy_number("team-2") == ("team-2", 0)  # a dash and a number is a name unless Canvas made it


def test_moodle_and_gradescope_folders_name_their_learner(tmp_path):
    (tmp_path / "submission_metadata.yml").write_text(
        "submission_900001:\n  :submitters:\n  - :name: Dana Diaz\n    :sid: '104'\n    :email: dana@school.edu\n"
        "  :created_at: 2026-11-30 10:00:00 -0800\nsubmission_900002:\n  :submitters:\n  - :name: 'Ann Lee'\n"
        "  - :name: Raj Patel\n")
    names = lms.gradescope_names(tmp_path)
    assert names == {"submission_900001": "Dana Diaz", "submission_900002": "Ann Lee & Raj Patel"}
    assert lms.from_folder_name("submission_900001", names) == "Dana Diaz"
    assert lms.from_folder_name("Chen Li_223344_assignsubmission_file_") == "Chen Li"
    assert lms.from_folder_name("alice") is None


def test_a_class_list_matches_logins_emails_and_names_in_either_order(tmp_path):
    path = tmp_path / "class.csv"
    path.write_text("ID,Name,Email\ns01,Alice Martin,alice@school.edu\ns02,Bob Smith,bob.smith@school.edu\n"
                    "s03,Zoë O'Brien,zoe@school.edu\n")
    roster = read_roster(path)
    assert roster.student("s01")["Student"] == "Alice Martin"
    assert roster.student("alice")["ID"] == "s01"  # the e-mail's first part
    assert roster.student("smithbob")["ID"] == "s02"  # Canvas's last-first
    assert roster.student("Bob Smith")["ID"] == "s02"
    assert roster.student("obrienzoe")["ID"] == "s03"  # accents and punctuation ignored
    assert roster.student("bob") is None  # part of a name is not enough
    assert roster.key(roster.student("alice")) == "alice@school.edu"


def test_a_french_class_list_saved_by_a_french_spreadsheet_is_read(tmp_path):
    """Excel in a French locale saves a CSV with `;`, and a French teacher names the columns in French."""
    path = tmp_path / "classe.csv"
    path.write_text("\ufeffidentifiant;Nom;e-mail\ns01;Lefèvre, Benoît;benoit@ecole.fr\ns02;Le Bihan, Maëlle;maelle@ecole.fr\n",
                    encoding="utf-8")
    roster = read_roster(path)
    assert roster.student("maelle-le-bihan")["ID"] == "s02" and roster.key(roster.student("s01")) == "benoit@ecole.fr"
    assert roster.student("benoît lefèvre")["Student"] == "Lefèvre, Benoît"


def test_a_french_unmatched_csv_is_read_back_by_match(tmp_path):
    """unmatched.csv as a French class's run writes it (`;`, French column names, the BOM), its `étudiant` filled in."""
    from looplab.grade.rows.unmatched import read_matches
    roster_path = tmp_path / "class.csv"
    roster_path.write_text("id,name,email\ns01,Maëlle Le Bihan,maelle@ecole.fr\n", encoding="utf-8")
    roster = read_roster(roster_path)
    filled = tmp_path / "unmatched.csv"
    filled.write_text("\ufeffapprenant;fichiers;points;étudiant\nmlb;x.ipynb;3;Maëlle Le Bihan\n", encoding="utf-8")
    assert read_matches(filled, roster) == {"mlb": roster.students[0]}


def test_the_table_names_each_student_as_the_roster_does(tmp_path):
    from looplab.grade.exports.terminal import summary_table
    from tests.class_rows import notebook_rows, solved
    path = tmp_path / "class.csv"
    path.write_text("id,name,email\ns01,José Núñez,jose@school.edu\n", encoding="utf-8")
    roster = read_roster(path)
    rows = notebook_rows("jose@school.edu", NB1, *solved("1.1")) + notebook_rows("zed", NB1, *solved("1.1"))
    table = summary_table(rows, lambda learner: (roster.student(learner) or {}).get("Student") or learner)
    assert "José Núñez" in table and "jose@school.edu" not in table and "\nzed " in table


# --- a class graded for real ---------------------------------------------------------------------------

STUDENTS = [("s01", "Alice Martin", "alice@school.edu"), ("s02", "Bob Smith", "bob.smith@school.edu"),
            ("s03", "Chen Li", "chen.li@school.edu"), ("s04", "Dana Diaz", "dana@school.edu"),
            ("s05", "Erin Park", "erin@school.edu")] + [
            (f"s{n:02}", f"Student {name}", f"{name.lower()}@school.edu")
            for n, name in zip(range(6, 13), ["Fay", "Gil", "Hana", "Ivo", "Jun", "Kai", "Lea"])]
# Students in other scripts, each handing notebook 1 in under another LMS's name (tests/test_names.py reads
# every such name without a kernel; here they are graded, their names unzipped in NFD as macOS does).
SCRIPTS = [("s13", "José Núñez", "jose@school.edu", f"núñezjosé_LATE_1010_4242_{NB1}.ipynb"),  # Canvas
           ("s14", "Νίκος Παπαδάκης", "nikos@school.edu", f"Νίκος Παπαδάκης_556677_assignsubmission_file_/{NB1}.ipynb"),
           ("s15", "Иван Петров", "ivan@school.edu", f"иван-петров-{NB1} (1).ipynb"),  # a browser's copy
           ("s16", "王小明", "wang@school.edu", f"王小明_1012_4244_{NB1}.ipynb"),  # Canvas
           ("s17", "محمد علي", "mohammed@school.edu", f"عليمحمد_1013_4245_{NB1}.ipynb")]  # Canvas, last name first
STUDENTS += [(i, n, e) for i, n, e, _ in SCRIPTS]
HANDED_IN = ["alice@school.edu", "bob.smith@school.edu", "chen.li@school.edu", "dana@school.edu",
             "erin@school.edu"] + [e for _, _, e, _ in SCRIPTS]


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """Twelve students on the roster; five hand notebook 1 in, through Canvas, Moodle, Gradescope, a
    browser and a plain folder, two of them twice; one learner is not on the roster."""
    tmp = tmp_path_factory.mktemp("class")
    complete, stub = ROOT / "solutions" / f"{NB1}.ipynb", ROOT / "notebooks" / f"{NB1}.ipynb"
    folder = tmp / "submissions"
    files = {
        f"alice/{NB1}.ipynb": complete,
        f"smithbob_12345_678901_{NB1}.ipynb": stub,  # Canvas: a first try...
        f"smithbob_LATE_12345_678950_{NB1}-1.ipynb": complete,  # ... and a later one, which counts
        f"Chen Li_223344_assignsubmission_file_/{NB1}.ipynb": complete,  # Moodle
        f"submission_900001/{NB1}.ipynb": stub,  # Gradescope
        f"erin-{NB1}.ipynb": complete,  # a browser's first download...
        f"erin-{NB1} (1).ipynb": stub,  # ... and its second, which counts
    }
    files |= {unicodedata.normalize("NFD", name): complete if email == "jose@school.edu" else stub
              for _, _, email, name in SCRIPTS}
    for name, source in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(source, folder / name)
    pasted_calculator_notebook(complete, folder / "zed" / f"{NB1}.ipynb")  # not on the roster; the reference typed in
    (folder / "submission_metadata.yml").write_text("submission_900001:\n  :submitters:\n  - :name: Dana Diaz\n")
    roster = tmp / "class.csv"
    roster.write_text("id,name,email\n" + "".join(f"{i},{n},{e}\n" for i, n, e in STUDENTS), encoding="utf-8")
    run = subprocess.run([sys.executable, "-m", "looplab.grade", folder, "--roster", roster, "--out",
                          tmp / "grades.csv", "--wide", tmp / "wide.csv", "--canvas", tmp / "canvas.csv",
                          "--cell-timeout", "30", "--jobs", "2", "--quiet"],
                         capture_output=True, text=True, timeout=600, cwd=tmp)
    assert run.returncode == 0, run.stderr
    return tmp, run.stderr


def read(path: Path) -> list[dict[str, str]]:
    """A CSV the grader wrote in English (wide.csv starts with the byte-order mark a spreadsheet needs)."""
    with open(path, newline="", encoding="utf-8-sig") as handle:
        return list(csv.DictReader(handle))


def read_rows(tmp: Path, learner: str) -> list[dict[str, str]]:
    """A learner's rows in the long gradebook: what a failed total shows, to say which exercise and why."""
    return [row for row in read(tmp / "grades.csv") if row["learner"] == learner]


def test_every_student_gets_every_notebook_and_the_last_copy_counts(graded):
    tmp, _ = graded
    rows = read(tmp / "grades.csv")
    keys = [email for _, _, email in STUDENTS]
    assert [row["learner"] for row in rows if row["learner"] != "zed"] == [  # roster order, every notebook
        key for key in keys for notebook in COURSE.notebooks for _ in notebook.exercises
        for _ in range(2 if key in ("bob.smith@school.edu", "erin@school.edu") and notebook.stem == NB1 else 1)]
    points = {}
    for row in rows:
        if row["status"] != "not submitted":
            points.setdefault((row["learner"], row["file"]), 0)
            points[(row["learner"], row["file"])] += int(row["points"])
    assert {learner for learner, _ in points} == set(HANDED_IN) | {"zed"}
    missing = [row for row in rows if row["status"] == "not submitted"]
    assert len(missing) == 7 * len(COURSE.exercises) + len(HANDED_IN) * (
        len(COURSE.exercises) - len(COURSE.notebooks[0].exercises))
    assert all(row["points"] == "0" and row["file"] == "" for row in missing)


def test_the_wide_gradebook_has_a_total_per_student_and_the_flags(graded):
    tmp, _ = graded
    wide = {row["learner"]: row for row in read(tmp / "wide.csv")}
    assert list(wide)[:-1] == [email for _, _, email in STUDENTS] and list(wide)[-1:] == ["zed"]
    expected = {"alice@school.edu": NB1_POINTS, "bob.smith@school.edu": NB1_POINTS, "chen.li@school.edu": NB1_POINTS,
                "dana@school.edu": 0, "erin@school.edu": 0, "fay@school.edu": 0, "zed": NB1_POINTS,
                "jose@school.edu": NB1_POINTS, "wang@school.edu": 0}
    for learner, total in expected.items():
        assert int(wide[learner]["total"]) == total, (learner, read_rows(tmp, learner))
        assert int(wide[learner]["maximum"]) == MAXIMUM
        assert int(wide[learner][NB1]) == total
    assert wide["bob.smith@school.edu"]["name"] == "Bob Smith" and wide["jose@school.edu"]["name"] == "José Núñez"
    assert f"{NB1}: 2 copies, the last counts" in wide["bob.smith@school.edu"]["notes"]
    assert f"{NB1}: 2 copies, the last counts" in wide["erin@school.edu"]["notes"]
    assert wide["zed"]["notes"].startswith("not on the roster")
    assert f"{NB1}: not submitted" in wide["fay@school.edu"]["notes"]


def test_the_instructor_is_told_of_copies_and_strangers(graded):
    _, stderr = graded
    assert "bob.smith@school.edu handed in 2 copies of 01_one_tool_call: the last one counts" in stderr
    assert "smithbob_LATE_12345_678950" in stderr.split("bob.smith@school.edu handed in")[1].split("\n")[0]
    assert "not on the roster (their rows are in the gradebook, under their own names; a Canvas file leaves them " \
           "out): zed" in stderr
    assert "--canvas with a class list as the roster" in stderr  # Canvas wants its own export


def test_every_student_in_every_script_has_their_points_in_the_canvas_file(graded):
    tmp, _ = graded
    with open(tmp / "canvas.csv", newline="", encoding="utf-8-sig") as handle:
        canvas = {row["SIS Login ID"]: row for row in csv.DictReader(handle)}
    title = COURSE.notebooks[0].title
    assert {email: canvas[email]["Student"] for _, _, email, _ in SCRIPTS} == {e: n for _, n, e, _ in SCRIPTS}
    assert canvas["jose@school.edu"][title] == str(NB1_POINTS)
    assert all(canvas[email][title] == "0" for email in HANDED_IN[6:])  # stubs, handed in: 0 points
    assert canvas["fay@school.edu"][title] == "0"  # nothing handed in: 0 too
    assert "zed" not in canvas
    with open(tmp / "unmatched.csv", newline="", encoding="utf-8-sig") as handle:
        assert [row["learner"] for row in csv.DictReader(handle)] == ["zed"]


def test_the_reference_typed_in_keeps_its_points_and_is_flagged_for_review(graded):
    """zed's 1.1 is looplab/tools.py's calculator, renamed and reformatted: solved, and the review column says so."""
    tmp, stderr = graded
    rows = {row["exercise"]: row for row in read(tmp / "grades.csv") if row["learner"] == "zed"}
    assert rows["1.1"]["status"] == "solved" and rows["1.1"]["points"] == "2", rows["1.1"]
    assert rows["1.1"]["review"].startswith("to review: exercise 1.1's cell holds the course's reference code")
    assert rows["1.2"]["review"] == rows["1.3"]["review"] == ""
    assert f"zed (submissions/zed/{NB1}.ipynb): to review: exercise 1.1" in stderr
    wide = {row["learner"]: row for row in read(tmp / "wide.csv")}
    assert "1.1: to review" in wide["zed"]["notes"]
