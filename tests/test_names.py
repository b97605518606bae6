"""Every name, every student: LMS download names in any script (NFC or NFD), matched to a class list in any
script; learners the roster does not match written to unmatched.csv and read back with --match; the
Canvas file (0 for a notebook not handed in, a byte-order mark for Excel). No kernel runs: the names are
read from paths, the exports from rows (tests/class_rows.py's helpers); the real grading of such a class
is tests/test_class_gradebook.py's `graded` fixture."""

from __future__ import annotations

import csv
import unicodedata
from pathlib import Path

import pytest

from looplab.grade.__main__ import main
from looplab.grade.exports.canvas import CLASS_LIST_WARNING, canvas_export, class_list_warning, write_canvas
from looplab.grade.rows.roster import CLASS_LIST, read_roster
from looplab.grade.rows.unmatched import MatchError, read_matches, unmatched_table
from looplab.grade.submissions import lms
from looplab.grade.submissions.finding import collect, learner_from_file
from tests.class_rows import CLASS_COURSE, NB1, NB2, notebook_rows, solved

ROOT = Path(__file__).resolve().parent.parent
STEMS = [notebook.stem for notebook in CLASS_COURSE.notebooks]
# A class in five scripts: (id, name, email) and the names an LMS gives their downloads.
CLASS = [
    ("s01", "José Núñez", "jose@school.edu"),
    ("s02", "Νίκος Παπαδάκης", "nikos@school.edu"),
    ("s03", "Иван Петров", "ivan@school.edu"),
    ("s04", "王小明", "wang@school.edu"),
    ("s05", "محمد علي", "mohammed@school.edu"),
    ("s06", "Zoë O'Brien", "zoe@school.edu"),
]
DOWNLOADS = {  # file name -> the student it is; Canvas lower-cases the sortable name (last, first) and drops non-words
    f"núñezjosé_1010_4242_{NB1}.ipynb": "s01",  # Canvas
    f"núñezjosé_LATE_1010_4250_{NB1}-1.ipynb": "s01",  # Canvas, late
    f"παπαδάκηςνίκος_1011_4243_{NB1}.ipynb": "s02",  # Canvas, Greek
    f"Νίκος Παπαδάκης_556677_assignsubmission_file_{NB2}.ipynb": "s02",  # Moodle, flat
    f"Иван Петров_556678_assignsubmission_file_{NB1}.ipynb": "s03",  # Moodle
    f"иван-петров-{NB2} (1).ipynb": "s03",  # a browser's second download
    f"王小明_1012_4244_{NB1}.ipynb": "s04",  # Canvas: a name without spaces
    f"عليمحمد_1013_4245_{NB1}.ipynb": "s05",  # Canvas, Arabic, last name first
    f"محمد-علي-{NB2}.ipynb": "s05",  # a browser's download
    f"obrienzoë_1014_4246_{NB1}.ipynb": "s06",
}


def nfd(text: str) -> str:
    return unicodedata.normalize("NFD", text)


@pytest.fixture
def class_list(tmp_path):
    path = tmp_path / "class.csv"
    path.write_text("id,name,email\n" + "".join(f"{i},{n},{e}\n" for i, n, e in CLASS), encoding="utf-8")
    return read_roster(path)


@pytest.mark.parametrize("form", [str, nfd], ids=["NFC", "NFD"])
@pytest.mark.parametrize("name, student", DOWNLOADS.items())
def test_a_download_name_in_any_script_is_its_student(class_list, name, student, form):
    learner = learner_from_file(Path(form(name)), STEMS)
    assert learner == unicodedata.normalize("NFC", learner)
    assert class_list.student(learner)["ID"] == student, learner


def test_a_canvas_name_in_any_script_is_read_as_canvas_made_it():
    for name in (f"núñezjosé_1010_4242_{NB1}.ipynb", nfd(f"núñezjosé_1010_4242_{NB1}.ipynb")):
        assert lms.from_file_name(name) == "núñezjosé"
        assert lms.handed_order(name) == (4242, 0)
    assert lms.handed_order(nfd(f"núñezjosé_LATE_1010_4250_{NB1}-1.ipynb")) == (4250, 1)
    assert lms.from_file_name(f"Alice_12_34_{NB1}.ipynb") is None  # upper case: Canvas lowers every name
    assert lms.from_folder_name(nfd("José Núñez_556677_assignsubmission_file_")) == "José Núñez"


def test_a_class_folder_in_nfd_is_one_learner_per_student(tmp_path, class_list):
    """macOS unzips names in NFD: the same student's Canvas file and Moodle folder are one learner."""
    folder = tmp_path / "submissions"
    for name in DOWNLOADS:
        (folder / nfd(name)).parent.mkdir(parents=True, exist_ok=True)
        (folder / nfd(name)).write_text("{}")
    (folder / nfd("José Núñez_556679_assignsubmission_file_")).mkdir()
    (folder / nfd("José Núñez_556679_assignsubmission_file_") / f"{NB2}.ipynb").write_text("{}")
    learners = {submission.learner for submission in collect([str(folder)], STEMS)}
    matched = class_list.match(sorted(learners))
    assert matched.not_on_roster == [] and matched.without_submission == []
    assert {class_list.key(student) for student in matched.students.values()} == {e for _, _, e in CLASS}


def test_a_part_of_a_name_in_any_script_is_not_enough(class_list):
    assert class_list.student("νίκος") is None and class_list.student("王") is None
    assert class_list.student("Παπαδάκης Νίκος")["ID"] == "s02"
    assert class_list.student(nfd("JOSÉ NÚÑEZ"))["ID"] == "s01"


# --- unmatched.csv and --match ------------------------------------------------------------------------------


def class_rows_of(*learners: str) -> list:
    rows = []
    for learner in learners:
        rows += notebook_rows(learner, NB1, *solved("1.1", "1.2", "1.3"))
    return rows


def test_an_unmatched_learner_is_listed_and_a_match_file_brings_their_points_to_canvas(tmp_path, class_list):
    rows = class_rows_of("núñezjosé", "pepe", "nikolaos")
    assert unmatched_table(rows, class_list, CLASS_COURSE) == [
        ["pepe", f"submissions/pepe/{NB1}.ipynb", 5, ""], ["nikolaos", f"submissions/nikolaos/{NB1}.ipynb", 5, ""]]
    before = canvas_export(rows, class_list, CLASS_COURSE)
    assert before.not_on_roster == ["pepe", "nikolaos"]

    filled = tmp_path / "unmatched.csv"
    filled.write_text("\ufefflearner,files,points,student\npepe,x,5,José Núñez\nnikolaos,y,5,nikos@school.edu\n",
                      encoding="utf-8")
    roster = class_list.with_matches(read_matches(filled, class_list))
    after = canvas_export(rows, roster, CLASS_COURSE)
    assert after.not_on_roster == []
    by_id = {row[1]: row[5:] for row in after.rows[1:]}
    assert by_id["s02"] == [5]  # nikolaos is Νίκος: his notebook 1 (the only notebook handed in)
    # The table keeps the answers, so the file written again can be fed back as it is.
    assert unmatched_table(rows, roster, CLASS_COURSE) == [
        ["pepe", f"submissions/pepe/{NB1}.ipynb", 5, "jose@school.edu"],
        ["nikolaos", f"submissions/nikolaos/{NB1}.ipynb", 5, "nikos@school.edu"]]


@pytest.mark.parametrize("text, said", [
    ("who,student\npepe,s01\n", "has no column 'learner'"),
    ("learner,files\npepe,x\n", "has no column 'student'"),
    ("learner,student\npepe,Nobody Here\n", "line 2: 'Nobody Here' is no student of the roster"),
    ("learner,student\n,s01\n", "line 2: the student 's01' is given, but no learner"),
    ("learner,student\npepe,s01\nPEPE,s02\n", "line 3: the learner 'PEPE' is already matched, on line 2"),
    (b"learner,student\n\xff\xfe,s01\n", "cannot read the match file"),
])
def test_a_malformed_match_file_gets_a_specific_message(tmp_path, class_list, text, said):
    path = tmp_path / "match.csv"
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    with pytest.raises(MatchError, match=said.replace("(", r"\(").replace("'", "'")):
        read_matches(path, class_list)


def test_the_command_line_refuses_a_malformed_match_file_before_grading(tmp_path, capsys, monkeypatch):
    (tmp_path / "class.csv").write_text("id,name,email\ns01,Ann Lee,ann@school.edu\n")
    (tmp_path / "match.csv").write_text("learner,student\nann2,Someone Else\n")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as stopped:  # parser.error: before any kernel starts
        main([str(ROOT / "notebooks" / f"{NB1}.ipynb"), "--roster", "class.csv", "--match", "match.csv", "--quiet"])
    assert stopped.value.code == 2
    assert "match.csv, line 2: 'Someone Else' is no student of the roster" in capsys.readouterr().err
    assert not (tmp_path / "graded").exists()


# --- the Canvas file ----------------------------------------------------------------------------------------


def test_the_canvas_file_opens_with_accents_in_excel_and_reads_back_identically(tmp_path, class_list):
    rows = class_rows_of("núñezjosé", "王小明")
    out = tmp_path / "canvas.csv"
    export = write_canvas(rows, class_list, out, CLASS_COURSE)
    assert out.read_bytes().startswith(b"\xef\xbb\xbf")
    with open(out, newline="", encoding="utf-8-sig") as handle:
        back = list(csv.reader(handle))
    assert back == [[str(cell) for cell in row] for row in [export.header] + export.rows]
    assert back[2][:2] == ["José Núñez", "s01"] and back[5][0] == "王小明"


def test_a_notebook_not_handed_in_is_0_in_the_canvas_file_unless_asked_blank(class_list):
    rows = class_rows_of("núñezjosé") + notebook_rows("núñezjosé", NB2, *solved("2.1"), ("2.2", "not solved", "x"),
                                                      ("2.3", "not solved", "y"))
    rows += class_rows_of("ivan@school.edu")
    zero = {row[1]: row[5:] for row in canvas_export(rows, class_list, CLASS_COURSE).rows[1:]}
    assert zero["s01"] == [5, 1] and zero["s03"] == [5, 0] and zero["s02"] == [0, 0]
    blank = {row[1]: row[5:] for row in canvas_export(rows, class_list, CLASS_COURSE, missing="blank").rows[1:]}
    assert blank["s03"] == [5, ""] and blank["s02"] == ["", ""]


def test_a_class_list_as_the_canvas_roster_is_warned_about(class_list, tmp_path):
    assert class_list.kind == CLASS_LIST
    assert class_list_warning(class_list, "class.csv") == [CLASS_LIST_WARNING.format(path="class.csv")]
    export = tmp_path / "export.csv"
    export.write_text("Student,ID,SIS User ID,SIS Login ID,Section\nAnn Lee,1,s1,ann,A\n")
    assert class_list_warning(read_roster(export), "export.csv") == []
