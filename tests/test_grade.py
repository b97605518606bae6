"""The grader: every kind of submission gets exactly the rows it should, and submissions stay untouched.

The fixture set (made from the course's notebooks by tests/grading_fixtures/make_fixtures.py when the
tests run) is graded once, as an instructor would, with `python -m looplab.grade submissions --jobs 2`, and the
gradebook is compared row by row. Cell numbers in the expected rows are read from the fixtures, so
the test follows the notebooks when they change; check messages longer than a line are compared
on a stable part.
"""

from __future__ import annotations

import contextlib
import csv
import filecmp
import hashlib
import io
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace

import nbformat
import pytest

from looplab import grade
from looplab.checks import run_check
from looplab.course import COURSE
from authoring.learner_notebooks import SOLUTIONS
from looplab.grade.shared.limits import AFTER_A_STOP, CHECK_SECONDS

FIXTURES = Path(__file__).resolve().parent / "grading_fixtures"
sys.path.insert(0, str(FIXTURES))
import make_fixtures  # noqa: E402

SUBMISSIONS = make_fixtures.built()  # built from the solutions when the tests run, never committed
WORKDIR = SUBMISSIONS.parent  # the grader runs here, so the gradebook names files "submissions/..."

# The runaway fixtures (ON_THEIR_OWN, and the total limit's) are graded with short limits: a cell limit of
# CELL_TIMEOUT, and the limits without an option (the check's, after a stop, the stuck grace) LIMIT_SCALE
# times their values (limits.py's LOOPLAB_GRADE_LIMIT_SCALE, set in RUNAWAY_ENV for the grader run), so the
# endless loop costs 1 s in its cell, 0.5 s in each check, 0.75 s in the cell after
# (each of those seconds is CPU the suite burns on purpose: the shortest that still grades the honest cells).
CELL_TIMEOUT = 1
LIMIT_SCALE = 0.25
RUNAWAY_ENV = {**os.environ, "LOOPLAB_GRADE_LIMIT_SCALE": str(LIMIT_SCALE)}
# The rest of the set is graded with a limit no honest cell meets even on a loaded machine (notebook 4
# starts a Python interpreter in one cell): a timeout note there would be the machine's, not the learner's.
GENEROUS_CELL_TIMEOUT = 120
# The fixtures that need the short limit, each graded on its own (tests/test_grade_limits.py).
ENDLESS, SWALLOWED, STALLED = "endless_loop", "swallowed_interrupt", "stalled_check"
ON_THEIR_OWN = (ENDLESS, SWALLOWED, STALLED)
NB1 = "01_one_tool_call"
NB2 = "02_closing_the_loop"
FILE = grade.CSV_COLUMNS.index("file")


@dataclass(frozen=True)
class Has:
    """A message compared on a stable part: the check's own wording may grow."""
    part: str

    def __eq__(self, other):
        return isinstance(other, str) and self.part in other

    def __repr__(self):
        return f"<message containing {self.part!r}>"


@dataclass(frozen=True)
class Starts:
    prefix: str

    def __eq__(self, other):
        return isinstance(other, str) and other.startswith(self.prefix)

    def __repr__(self):
        return f"<message starting {self.prefix!r}>"


def digest_tree(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def run_grader(*args: str, cwd: Path = WORKDIR, timeout: float = 240, env: dict | None = None
               ) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "looplab.grade", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout, env=env)


def refused(*args: str, cwd: Path = WORKDIR) -> str:
    """What the command line says when it refuses these arguments (exit status 2, before anything is graded):
    its `main`, called in this process as `python -m looplab.grade` calls it. A refusal needs no interpreter of
    its own (the grader's imports cost about 2 s of CPU); the command itself runs in run_grader's tests."""
    from looplab.grade.__main__ import main

    said = io.StringIO()
    with contextlib.chdir(cwd), contextlib.redirect_stderr(said), pytest.raises(SystemExit) as exited:
        main(list(args))
    assert exited.value.code == 2, said.getvalue()
    return said.getvalue()


def read_csv(path: Path) -> tuple[list[str], list[list[str]]]:
    with open(path, newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle))
    return rows[0], rows[1:]


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """Every fixture graded in one run, on a copy without the endless loop, with a generous cell limit
    (tests/test_grade_limits.py grades the endless loop alone, with the short one)."""
    tmp = tmp_path_factory.mktemp("grading")
    shutil.copytree(SUBMISSIONS, tmp / "submissions", ignore=lambda folder, names: [n for n in names if n in ON_THEIR_OWN])
    before = digest_tree(SUBMISSIONS)
    out, feedback = tmp / "grades.csv", tmp / "feedback"
    run = run_grader("submissions", "--jobs", "2", "--cell-timeout", str(GENEROUS_CELL_TIMEOUT), "--out", str(out),
                     "--feedback", str(feedback), cwd=tmp)
    assert run.returncode == 0, run.stderr
    header, rows = read_csv(out)
    return SimpleNamespace(run=run, header=header, rows=rows, feedback=feedback, before=before)


def expected_for(*learners: str) -> list[tuple]:
    """The expected rows of these learners (all but the endless loop when none are named)."""
    return [row for row in expected_rows() if (row[0] in learners if learners else row[0] not in ON_THEIR_OWN)]


def given_below(rows: list[tuple]) -> list[tuple]:
    """The expected rows of a run given a learner's folder (`submissions/partial`) or a notebook in one,
    rather than `submissions`: the gradebook's `file` starts at the folder given, or at the one holding
    the notebook given (`partial/01_one_tool_call.ipynb`)."""
    prefix = f"{SUBMISSIONS.name}/"
    return [row[:FILE] + (row[FILE].removeprefix(prefix),) + row[FILE + 1:] for row in rows]


def fixture_cell(relative: str, predicate) -> int:
    """The 1-based number of the first cell of a fixture notebook matching `predicate`."""
    notebook = nbformat.read(SUBMISSIONS / relative, as_version=4)
    return next(i + 1 for i, cell in enumerate(notebook.cells) if predicate(cell))


def exercise_cell(relative: str, number: str) -> int:
    return fixture_cell(relative, lambda cell: grade.exercise_number(cell) == number)


def check_cell(relative: str, number: str) -> int:
    return fixture_cell(relative, lambda cell: cell.cell_type == "code"
                        and cell.source.startswith(f'check("{number}",'))


class AnyText:
    """The hint column of a check that failed: the check's own words (test_the_check_s_hint_... pins one)."""

    def __eq__(self, other):
        return isinstance(other, str)

    def __repr__(self):
        return "<any hint>"


# Rows the grader writes itself (no check spoke): no hint.
NO_HINT = ("solved", "the kernel died", "syntax error", "not in this version")


def rows_of(learner: str, stem: str, *rows) -> list[tuple]:
    file = f"submissions/{learner}/{stem}.ipynb"
    return [(learner, stem, number, str(points), str(COURSE.exercise(number).points), status, message, file,
             COURSE.version, "" if status.startswith(NO_HINT) else AnyText(), "")  # review: empty, no reference typed in
            for number, points, status, message in rows]


def solved(*numbers: str) -> list[tuple]:
    return [(number, COURSE.exercise(number).points, "solved", "") for number in numbers]


def after(stem: str, number: str) -> list[str]:
    """The exercises of a notebook that come after `number`: the fixtures below are written about the first
    ones; an exercise added later to the notebook takes the course's solution, so it is expected solved."""
    ids = COURSE.notebook(stem).ids
    return ids[ids.index(number) + 1:]


def expected_rows() -> list[tuple]:
    course = grade.load_course()
    numbers = {stem: nb.ids for stem, nb in course.items()}
    nb1 = numbers[NB1]
    expected: list[tuple] = []
    expected += rows_of("borrowed", NB1, *solved("1.1", "1.2"),
                        ("1.3", 0, "the course's own code", Has("this one_shot is the course's own (looplab.loop.one_shot)")),
                        *solved(*after(NB1, "1.3")))
    for path in sorted(SOLUTIONS.glob("*.ipynb")):
        expected += rows_of("complete", path.stem, *solved(*numbers[path.stem]))
    expected.append(("empty", "", "", "0", "", "no notebook found", "this folder holds no .ipynb file",
                     "submissions/empty", "", "", ""))

    loop, later = f"endless_loop/{NB1}.ipynb", after(NB1, "1.3")
    # The loop's cell is stopped at the cell limit. Its check cell, under the shorter limit after a stop
    # (AFTER_A_STOP), ends first by the check's own (CHECK_SECONDS); the cell that tries the function once
    # more is stopped at the shorter limit, and reported on the first exercise graded after it. The stop is not
    # graded again: the limits count CPU seconds (looplab/grade/shared/limits.py).
    after_a_stop, check_seconds = f"{AFTER_A_STOP * LIMIT_SCALE:g}", f"{CHECK_SECONDS * LIMIT_SCALE:g}"
    first = f"cell {exercise_cell(loop, '1.3')} ran past the {CELL_TIMEOUT:g} s limit"
    again = fixture_cell(loop, lambda cell: cell.get("id") == "fixture-again")
    timeout = ("1.3", 0, f"stopped: {first}" + ("" if later else f", cell {again} past the {after_a_stop} s limit"),
               Has(f"your code was still running after {check_seconds} seconds"))
    noted = [(later[0], COURSE.exercise(later[0]).points, "solved",
              f"note: cell {again} ran past the {after_a_stop} s limit and was stopped")
             ] if later else []
    expected += rows_of("endless_loop", NB1, *solved("1.1", "1.2"), timeout, *noted, *solved(*later[1:]))
    # The loop that catches the interrupt too: the notebook is stopped at that cell, what came before counts.
    swallowed = f"swallowed_interrupt/{NB1}.ipynb"
    expected += rows_of("swallowed_interrupt", NB1, *solved("1.1", "1.2"),
                        *[(number, 0, f"stopped: cell {exercise_cell(swallowed, '1.3')} ran past the "
                           f"{CELL_TIMEOUT:g} s limit and would not stop", Has("so the notebook was stopped there, before this exercise was graded"))
                          for number in ["1.3", *after(NB1, "1.3")]])
    # The list that grows is stopped by the memory watch, with the check's words; the kernel lives on.
    expected += rows_of("growing_loop", NB1, ("1.1", 0, "not solved", Has("your code ran out of memory")),
                        *solved(*after(NB1, "1.1")))
    # A check that stalls (waits, swallowing every interrupt): its judge gives up; the cell is then given up as soon
    # as the grace after the judge passes, not at the check cell's whole limit, and the notebook stops there.
    expected += rows_of(STALLED, NB1, *solved("1.1", "1.2"),
                        *[(number, 0, f"stopped: the check of exercise 1.3 ran past the {CHECK_SECONDS * LIMIT_SCALE:g} "
                           "s limit and would not stop", Has("so the notebook was stopped there"))
                          for number in ["1.3", *after(NB1, "1.3")]])

    stub = [("1.1", 0, "not written yet", Has("not written yet: the code still raises NotImplementedError")),
            ("1.2", 0, "not written yet", "not written yet: CALCULATOR_TOOL is still an empty dict"),
            ("1.3", 0, "not written yet", Has("not written yet: the code still raises NotImplementedError")),
            *[(n, 0, "not written yet", Has("not written yet")) for n in after(NB1, "1.3")]]
    expected += rows_of("forged", NB1, *stub)
    expected.append(("invalid_json", NB1, "", "0", "", "invalid JSON",
                     Starts("Expecting property name enclosed in double quotes"),
                     f"submissions/invalid_json-{NB1}.ipynb", "", "", ""))

    exit_cell = fixture_cell(f"kernel_dies/{NB1}.ipynb", lambda cell: "os._exit" in cell.source)
    expected += rows_of("kernel_dies", NB1, *solved("1.1", "1.2"),
                        *[(n, 0, f"the kernel died (in cell {exit_cell})",
                           "the kernel exited before this exercise was graded") for n in ["1.3", *after(NB1, "1.3")]])
    expected.append(("not_a_notebook", "", "", "0", "", "not a notebook",
                     "the JSON has no nbformat version and list of cells", "submissions/not_a_notebook.ipynb", "", "", ""))
    expected.append(("other_course", "", "", "0", "", "not a notebook of this course",
                     "exercises found: " + ", ".join("99." + n.split(".")[1] for n in nb1),
                     f"submissions/other_course/{NB1}.ipynb", "", "", ""))

    expected += rows_of("partial", NB1, *solved("1.1"),
                        ("1.2", 0, "not solved", Starts("its name is 'calc'")),
                        ("1.3", 0, "not written yet", Has("not written yet")), *solved(*after(NB1, "1.3")))
    if (SOLUTIONS / f"{NB2}.ipynb").exists():
        # agent_turn is 2.2 and, redefined in a later cell, 2.3: each is graded where its check cell is.
        expected += rows_of("partial", NB2, *solved("2.1", "2.2"),
                            ("2.3", 0, "not written yet", Has("not written yet")), *solved(*after(NB2, "2.3")))
    expected += rows_of("stub", NB1, *stub)

    broken = exercise_cell(f"syntax_error/{NB1}.ipynb", "1.1")
    source = nbformat.read(SUBMISSIONS / f"syntax_error/{NB1}.ipynb", as_version=4).cells[broken - 1].source
    line = next(n for n, text in enumerate(source.splitlines(), start=1) if text.startswith("def calculator("))
    expected += rows_of("syntax_error", NB1,
                        ("1.1", 0, "syntax error",
                         f"cell {broken} does not parse (expected ':', line {line}), so calculator was never defined"),
                        *solved(*after(NB1, "1.1")))
    # Patching the checks in the kernel changes nothing: they run in the grader's process.
    expected += rows_of("tampered", NB1, *stub)
    expected += rows_of("tampered_code", NB1, *solved(*nb1))
    expected += forgery_rows(stub)
    expected += course_code_rows()
    return sorted(expected, key=lambda row: row[0].lower())  # the gradebook's order: by learner, then file


def course_code_rows() -> list[tuple]:
    """Issue 33's fixtures: a graded kernel holds no course version of any exercise (looplab/withheld.py), so every
    path to one ends at a stand-in the grader refuses to run while the exercise is judged, or at a value it has not
    handed over yet; and the file handed in steers nothing of the run (its skip tag is a tag like any other)."""
    def course_code(number: str, reference: str) -> tuple:
        return (number, 0, "the course's own code", Has(f"the course's own ({reference})"))

    expected = []
    if (SOLUTIONS / "03_matching_ids.ipynb").exists():
        nb2, nb3, nb5 = NB2, "03_matching_ids", "05_toolbox"
        expected += rows_of("imported_elsewhere", nb2, *solved("2.1"), course_code("2.2", "looplab.toolbox.agent_turn"),
                            *solved(*after(nb2, "2.2")))
        expected += rows_of("reached", nb3, course_code("3.1", "looplab.loop.run_tools"),
                            course_code("3.2", "looplab.loop.unanswered_tool_uses"),
                            course_code("3.3", "looplab.loop.agent_turn"), *solved(*after(nb3, "3.3")))
        expected += rows_of("other_loop", nb5, *solved(*COURSE.notebook(nb5).ids[:4]),
                            course_code("5.5", "looplab.loop.agent_turn"), *solved(*after(nb5, "5.5")))
        expected += rows_of("copied_code", nb2, *solved("2.1"), course_code("2.2", "looplab.loop.agent_turn"),
                            *solved(*after(nb2, "2.2")))
        expected += rows_of("skip_tag", nb2, *solved("2.1"), ("2.2", 0, "not solved", Has("agent_turn returned 'mine'")),
                            *solved(*after(nb2, "2.2")))
        expected += rows_of("honest_constant", nb3, *solved(*COURSE.notebook(nb3).ids))
        pasted = rows_of("pasted_below", nb3, *solved(*COURSE.notebook(nb3).ids))
        expected += [row[:-1] + (Has("to review: exercise 3.3's cell holds the course's reference code"),)
                     if row[2] == "3.3" else row for row in pasted]
    withheld = Has("raised Withheld: looplab.tools.CALCULATOR_TOOL is the course's answer to exercise 1.2")
    expected += rows_of("value_early", NB1, *solved("1.1"), ("1.2", 0, "not defined", withheld),
                        *solved(*after(NB1, "1.2")))
    expected += rows_of("recorded_value", NB1, *solved("1.1"),
                        ("1.2", 0, "not defined", Has("raised FileNotFoundError")), *solved(*after(NB1, "1.2")))
    expected.append(("deep_json", NB1, "", "0", "", "invalid JSON",
                     Starts("its JSON nests lists and objects more than 64 levels deep"),
                     f"submissions/deep_json/{NB1}.ipynb", "", "", ""))
    expected.append(("large_code", NB1, "", "0", "", "too large",
                     Starts("cell 3 holds 3,200,013 characters of code; the grader reads code cells of up to 64,000"),
                     f"submissions/large_code/{NB1}.ipynb", "", "", ""))
    return expected


def forgery_rows(stub: list[tuple]) -> list[tuple]:
    """The forgeries of the old grader's report and the attacks of issue 19 (make_fixtures.py), each in the stub:
    nothing the kernel shows or says is a verdict, so each is without effect (the stub's own rows) or its
    answers are judged as the wrong answers they are."""
    ids = COURSE.notebook(NB1).ids
    expected = rows_of("honest_append", NB1, *solved(*ids))  # changes looplab.tools.TOOLS after the last check
    for learner in ("shadowed_exec", "hidden_report", "hijacked_display", "shadowed_import", "transformed",
                    "ast_transformed", "globals_patch", "gc_key"):
        expected += rows_of(learner, NB1, *stub)
    wrong = "calculator('4823 * 1979') returned {}; expected '9544717'"
    no_request = Has("one_shot made 0 requests; it should make exactly one")
    expected += rows_of("setprofile", NB1, ("1.1", 0, "not solved", wrong.format("'solved'")), stub[1],
                        ("1.3", 0, "not solved", no_request), *stub[3:])
    expected += rows_of("stack_walk", NB1, ("1.1", 0, "not solved", wrong.format("'0'")), *stub[1:])
    expected += rows_of("oracle", NB1, ("1.1", 0, "not solved", wrong.format("'no oracle here'")), *stub[1:])
    expected += rows_of("eq_str", NB1, ("1.1", 0, "not solved", wrong.format("'anything'")), stub[1],
                        ("1.3", 0, "not solved", no_request), *stub[3:])
    silent = Has("the learner's code did not answer the grader")
    expected += rows_of("hostile_serve", NB1, ("1.1", 0, "not solved", silent), ("1.2", 0, "not solved", silent),
                        ("1.3", 0, "not solved", no_request), *stub[3:])
    # json.dumps replaced in the kernel: its messages cannot be read from that cell on; what was graded counts.
    # Its own status, not "grader error" (jupyter_client raised KeyError: 'msg_id' on such a message).
    garble = fixture_cell(f"garbled_messages/{NB1}.ipynb", lambda cell: cell.get("id") == "fixture-garble")
    expected += rows_of("garbled_messages", NB1, *solved("1.1"),
                        *[(n, 0, f"the kernel sent messages the grader cannot read (in cell {garble})",
                           Has("broke the messages the kernel sends the grader")) for n in after(NB1, "1.1")])
    return expected


# --- the fixtures --------------------------------------------------------------------------------------


def test_the_fixtures_are_built_the_same_every_time(tmp_path):
    """Built twice, byte for byte the same: the expected rows below never depend on when they were made."""
    made = make_fixtures.build(tmp_path / "submissions")
    assert {str(p.relative_to(tmp_path / "submissions")) for p in made} == set(digest_tree(SUBMISSIONS))
    for path in made:
        assert filecmp.cmp(path, SUBMISSIONS / path.relative_to(tmp_path / "submissions"), shallow=False), path


# --- grading the whole set --------------------------------------------------------------------------------


def test_the_gradebook_has_exactly_the_expected_rows(graded):
    assert graded.header == grade.CSV_COLUMNS
    expected = expected_for()
    assert [tuple(row) for row in graded.rows] == expected, (
        "the gradebook differs from expected_rows() in tests/test_grade.py (the fixtures are built from the "
        "solutions as they are now): if grading changed on purpose, update expected_rows()")


COURSE_CODE_FIXTURES = ("imported_elsewhere", "reached", "other_loop", "copied_code", "skip_tag", "value_early",
                        "recorded_value", "honest_constant", "pasted_below", "large_code", "deep_json")


def test_issue_33_s_fixtures_grade_the_same_without_the_class(tmp_path):
    """The class's run grades them among honest learners; graded without them, side by side at --jobs 2, each
    gets the same rows: what a graded kernel withholds, and when, depends on the notebook alone."""
    learners = [learner for learner in COURSE_CODE_FIXTURES if (SUBMISSIONS / learner).exists()]
    out = tmp_path / "grades.csv"
    run = run_grader(*[f"submissions/{learner}" for learner in learners], "--jobs", "2", "--cell-timeout",
                     str(GENEROUS_CELL_TIMEOUT), "--out", str(out), "--quiet")
    assert run.returncode == 0, run.stderr
    assert [tuple(row) for row in read_csv(out)[1]] == given_below(expected_for(*learners))


def test_the_check_s_hint_reaches_the_gradebook_and_the_feedback(graded):
    """The hint column holds the words the check gave the learner with its message, and so does their
    feedback notebook; a failure the check gave no hint for has none."""
    hint = grade.CSV_COLUMNS.index("hint")
    [empty_tool] = [row for row in graded.rows if row[0] == "stub" and row[2] == "1.2"]
    assert empty_tool[hint] == run_check("1.2", {}).hint == "Fill in the three keys: name, description and input_schema."
    [calc] = [row for row in graded.rows if row[0] == "partial" and row[2] == "1.2"]
    assert calc[hint] == ""  # "its name is 'calc'...": the check says what to fix, no hint beside it
    feedback = (graded.feedback / "stub" / f"{NB1}.ipynb").read_text(encoding="utf-8")
    assert "(hint: Fill in the three keys: name, description and input_schema.)" in feedback


def test_submissions_are_never_modified(graded):
    assert digest_tree(SUBMISSIONS) == graded.before


def test_the_terminal_shows_progress_and_a_table(graded):
    count = len({row[FILE] for row in graded.rows})
    assert f"graded {count}/{count}: " in graded.run.stderr
    table = graded.run.stdout
    assert table.startswith("learner")
    assert "submission(s) graded in" in table
    total = sum(e.points for e in COURSE.notebook(NB1).exercises)
    partial = sum(int(row[3]) for row in graded.rows if row[0] == "partial" and row[1] == NB1)
    for learner, notebook, points in [("complete", NB1, f"{total}/{total}"), ("partial", NB1, f"{partial}/{total}"),
                                      ("tampered", NB1, f"0/{total}"), ("tampered_code", NB1, f"{total}/{total}")]:
        assert any(line.split()[:3] == [learner, notebook, points] for line in table.splitlines()), table


def test_feedback_copies_are_the_executed_notebooks_with_their_grade(graded):
    executed = sorted({(row[0], Path(row[FILE]).name) for row in graded.rows if row[2]})
    written = sorted((p.parent.name, p.name) for p in graded.feedback.rglob("*.ipynb"))
    assert written == executed
    notebook = nbformat.read(graded.feedback / "partial" / f"{NB1}.ipynb", as_version=4)
    nbformat.validate(notebook)
    assert "widgets" not in notebook.metadata
    assert not any(grade.GRADER_MARK in cell.metadata or "Added by the looplab grader" in cell.source
                   for cell in notebook.cells)
    last = notebook.cells[-1]
    total = sum(e.points for e in COURSE.notebook(NB1).exercises)
    partial = sum(int(row[3]) for row in graded.rows if row[0] == "partial" and row[1] == NB1)
    assert last.cell_type == "markdown" and f"**partial · 01_one_tool_call: {partial}/{total} points**" in last.source
    assert "| 1.2 CALCULATOR_TOOL | 0/1 | not solved | its name is 'calc'" in last.source
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    assert code[0].outputs and code[0].execution_count == 1  # the learner's cells ran, numbered as theirs


def test_usage_errors_stop_before_grading(tmp_path):
    assert "no such file or folder: no-such-folder" in refused("no-such-folder", "--out", str(tmp_path / "g.csv"))
    # Found before any notebook runs or any slot is made (tests/test_grade_limits.py): one slot of plain kernels
    # all the same, the least this process would start if that ever changed.
    said = refused("submissions", "--feedback", "submissions/feedback", "--jobs", "1", "--plain-kernels",
                   "--out", str(tmp_path / "g.csv"))
    assert "--feedback must be outside the submissions" in said
    assert not (SUBMISSIONS / "feedback").exists() and not (tmp_path / "g.csv").exists()


# --- the pieces, without a kernel --------------------------------------------------------------------------


STEMS = COURSE.stems


@pytest.mark.parametrize("name, learner", [
    ("submissions/alice-01_one_tool_call.ipynb", "alice"),
    ("submissions/01_one_tool_call_Bob.ipynb", "Bob"),
    ("submissions/carol.ipynb", "carol"),
    ("submissions/dave/02_closing_the_loop.ipynb", "dave"),
])
def test_learner_names_come_from_the_file_or_its_folder(name, learner):
    assert grade.learner_from_file(Path(name), STEMS) == learner


def test_folders_hold_one_learner_per_subfolder_and_loose_notebooks():
    submissions = grade.collect([str(SUBMISSIONS)], STEMS)
    by_file = {s.path.relative_to(SUBMISSIONS).as_posix(): s for s in submissions}
    assert by_file[f"partial/{NB1}.ipynb"].learner == "partial"
    assert by_file[f"invalid_json-{NB1}.ipynb"].learner == "invalid_json"
    assert by_file["empty"].missing and by_file["empty"].learner == "empty"
    assert "empty/README.md" not in by_file


@pytest.mark.parametrize("stem", [p.stem for p in sorted(SOLUTIONS.glob("*.ipynb"))])
def test_each_exercise_is_graded_right_before_its_check_cell(stem):
    course = grade.load_course()
    notebook = nbformat.read(SOLUTIONS / f"{stem}.ipynb", as_version=4)
    points = grade.grading_points(notebook, course[stem])
    for index, exercises in points.items():
        for exercise in exercises:
            assert notebook.cells[index].source.startswith(f'check("{exercise.id}", {exercise.name})')


def test_exercise_names_come_from_the_manifest():
    course = grade.load_course()
    assert [(e.id, e.name, e.points) for e in course[NB1].exercises][:3] == [
        ("1.1", "calculator", 2), ("1.2", "CALCULATOR_TOOL", 1), ("1.3", "one_shot", 2)]
    assert {e.id for e in COURSE.exercises} == {e.id for nb in course.values() for e in nb.exercises}


def test_syntax_errors_lose_the_kernels_file_name():
    assert grade.plain_syntax_error("invalid syntax (1063758517.py, line 1)") == "invalid syntax, line 1"
    assert grade.plain_syntax_error("expected ':' (3782203738.py, line 5)") == "expected ':', line 5"


def test_the_grader_cells_are_python():
    source = grade.start_cell_source({"memory": 123})
    compile(source, "<grader cell>", "exec")
    assert source.startswith("# Added by the looplab grader")


# --- the statuses -----------------------------------------------------------------------------------------


def readme_status_table() -> str:
    lines = (Path(__file__).resolve().parent.parent / "docs" / "GRADING.md").read_text(encoding="utf-8").splitlines()
    first = lines.index("| status | what happened |")
    end = next(i for i in range(first, len(lines)) if not lines[i].startswith("|"))
    return "\n".join(lines[first:end])


def test_the_readme_status_table_is_the_status_enum():
    assert readme_status_table() == grade.Status.readme_table(), (
        "docs/GRADING.md's status table differs from looplab/grade/shared/status.py: paste Status.readme_table()")


def test_every_status_in_the_gradebook_is_a_status(graded):
    import re

    patterns = [re.compile(re.escape(s.template).replace(r"\{cells\}", r"cells? [\d, and]+")
                           .replace(r"\{seconds\}", r"[\d.]+").replace(r"\{where\}", r"(in|during) .+") + "$")
                for s in grade.Status]
    for row in graded.rows:
        assert any(p.match(row[5]) for p in patterns), row


def test_an_ungradable_submission_raises_with_its_status(tmp_path):
    course = grade.load_course()
    broken = tmp_path / f"{NB1}.ipynb"
    broken.write_text('{"cells": [')
    with pytest.raises(grade.Ungradable) as raised:
        grade.read_submission(grade.Submission(broken, "zoe"), course)
    assert raised.value.status is grade.Status.INVALID_JSON and raised.value.notebook == NB1
    with pytest.raises(grade.Ungradable) as raised:
        grade.read_submission(grade.Submission(tmp_path, "zoe", missing=True), course)
    assert raised.value.status is grade.Status.NO_NOTEBOOK
    row = grade.one_row(grade.Submission(broken, "zoe"), raised.value.status, raised.value.message)
    assert row.as_csv()[2:6] == ["", 0, "", "no notebook found"]
