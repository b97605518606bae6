"""Adding a notebook is: a manifest entry, its solution notebook, its checks module. Nothing else.

This test builds a throwaway sixth notebook in a temporary folder, exactly as
docs/WRITING_NOTEBOOKS.md says a maintainer would, and shows every part of the course taking it in
without a change to any file of the repository: the manifest agreement test, the learner-notebook
generator, `check`/`hint`/`progress`, and the grader, which runs it in a real kernel and grades it;
and the soundness coverage, which wants the new check shown failing on two wrong answers.
The extended course is selected with LOOPLAB_COURSE (see looplab.course), as a fork would.
"""

from __future__ import annotations

import csv
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import nbformat
import pytest

from looplab.course import COURSE, Course
from authoring.learner_notebooks import BEGIN, END, generate, manifest_disagreements

ROOT = Path(__file__).resolve().parent.parent
STEM = "05_doubling"

# 1. The manifest entry: the course as it is, plus one notebook (what a maintainer adds to looplab/course.py).
COURSE_MODULE = '''
from looplab.course import COURSE, Course, Exercise, Notebook

FIVE = Notebook(
    "05_doubling", "Doubling", "checks_doubling",
    exercises=(Exercise("5.1", "double", "double", 1, "checks_doubling:double"),),
)
EXTENDED = Course(COURSE.versions, COURSE.notebooks + (FIVE,))
'''

# 2. Its checks module: scenarios, checker, texts and hints (what looplab/checks/notebook5.py would hold).
CHECKS_MODULE = '''
from looplab.checks.core import Report

CASES = [(2, 4), (-3, -6), (0.5, 1.0)]


def double(number):
    """The course's own version (the manifest's reference)."""
    return 2 * number


def check_double(double, report: Report) -> None:
    for number, expected in CASES:
        report.expect(double(number) == expected, None, f"double({number!r}) returned {double(number)!r}; expected {expected!r}")
    report.note("doubles whole, negative and decimal numbers")


CHECKERS = {"5.1": check_double}
HINTS = {"5.1": ["Multiply by two.", "return 2 * number"]}
'''


def solution_notebook() -> nbformat.NotebookNode:
    """3. Its solution notebook, with the cells a course notebook has."""
    cells = [
        nbformat.v4.new_markdown_cell("# Doubling\n\nA throwaway notebook: one exercise, one check."),
        nbformat.v4.new_code_cell("import looplab\nfrom looplab import check", metadata={"tags": ["setup"]}),
        nbformat.v4.new_code_cell(
            f"def double(number):\n    {BEGIN}\n    return 2 * number\n    {END}\n\n\ndouble(21)",
            metadata={"tags": ["exercise"], "looplab": {"exercise": "5.1"}}),
        nbformat.v4.new_code_cell('check("5.1", double)', metadata={"tags": ["check"]}),
    ]
    return nbformat.v4.new_notebook(cells=cells, metadata={
        "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
        "looplab": {"course_version": COURSE.version}})


@pytest.fixture(scope="module")
def fork(tmp_path_factory):
    """A temporary folder holding the three new things, and the course that includes them."""
    folder = tmp_path_factory.mktemp("fork")
    (folder / "course_doubling.py").write_text(textwrap.dedent(COURSE_MODULE))
    (folder / "checks_doubling.py").write_text(textwrap.dedent(CHECKS_MODULE))
    (folder / "solutions").mkdir()
    nbformat.write(solution_notebook(), folder / "solutions" / f"{STEM}.ipynb")
    sys.path.insert(0, str(folder))
    try:
        import course_doubling
        yield folder, course_doubling.EXTENDED
    finally:
        sys.path.remove(str(folder))
        for name in ("course_doubling", "checks_doubling"):
            sys.modules.pop(name, None)


def test_the_extended_course_lists_the_new_notebook_last(fork):
    _, course = fork
    assert course.stems == COURSE.stems + [STEM]
    assert course.exercise("5.1").points == 1
    # what 5.1 may lean on comes from the course's order: every earlier piece, derived
    assert set(course.earlier_pieces("5.1")) >= set(course.earlier_pieces("4.1")) | {"run"}


def test_the_solution_notebook_agrees_with_its_manifest_entry(fork):
    folder, course = fork
    solution = nbformat.read(folder / "solutions" / f"{STEM}.ipynb", as_version=4)
    assert manifest_disagreements(solution, course.notebook(STEM), course) == []


def test_the_generator_makes_its_learner_notebook(fork):
    folder, course = fork
    written = generate([STEM], course=course, solutions=folder / "solutions", notebooks=folder / "notebooks")
    assert written == [folder / "notebooks" / f"{STEM}.ipynb"]
    learner = nbformat.read(written[0], as_version=4)
    assert 'raise NotImplementedError("Exercise 5.1' in learner.cells[2].source
    assert BEGIN not in learner.cells[2].source


def test_its_check_passes_the_solution_and_fails_the_stub_and_a_wrong_answer(fork):
    from looplab.checks import run_check
    from looplab.checks.core import NOT_SOLVED, NOT_WRITTEN

    _, course = fork
    assert run_check("5.1", lambda number: 2 * number, course=course).points == 1

    def stub(number):
        raise NotImplementedError("Exercise 5.1: replace this line with your code")

    assert run_check("5.1", stub, course=course).kind == NOT_WRITTEN
    wrong = run_check("5.1", lambda number: number + number if number > 0 else number, course=course)
    assert wrong.kind == NOT_SOLVED and "double(-3) returned -3; expected -6" in wrong.failed
    assert course.hints("5.1") == ["Multiply by two.", "return 2 * number"]


def test_the_grader_grades_it_in_a_real_kernel(fork, tmp_path):
    """The whole extended course in another process, chosen with LOOPLAB_COURSE, as a fork would ship it."""
    folder, _ = fork
    submissions = tmp_path / "submissions"
    (submissions / "ada").mkdir(parents=True)
    (submissions / "bob").mkdir()
    solution = nbformat.read(folder / "solutions" / f"{STEM}.ipynb", as_version=4)
    nbformat.write(solution, submissions / "ada" / f"{STEM}.ipynb")
    generate([STEM], course=fork[1], solutions=folder / "solutions", notebooks=submissions / "bob")
    env = dict(os.environ, LOOPLAB_COURSE="course_doubling:EXTENDED",
               PYTHONPATH=os.pathsep.join([str(folder), str(ROOT), os.environ.get("PYTHONPATH", "")]))
    out = tmp_path / "grades.csv"
    run = subprocess.run([sys.executable, "-m", "looplab.grade", str(submissions), "--out", str(out), "--quiet",
                          "--jobs", "2", "--cell-timeout", "10"],
                         cwd=tmp_path, env=env, capture_output=True, text=True, timeout=180)
    assert run.returncode == 0, run.stderr
    with open(out, newline="", encoding="utf-8") as handle:
        rows = [(row["learner"], row["notebook"], row["exercise"], row["points"], row["status"])
                for row in csv.DictReader(handle)]
    assert rows == [("ada", STEM, "5.1", "1", "solved"), ("bob", STEM, "5.1", "0", "not written yet")]


# 4. Its soundness tests: the check shown failing on typical wrong answers (what tests/test_checks_notebook5.py would hold).
SOUNDNESS_TESTS_WITH_ONE_WRONG_ANSWER = '''
import pytest

from tests.check_helpers import fails, stub


def test_the_stub_is_not_written_yet():
    fails("5.1", stub, "not written yet")


def test_adding_instead_of_doubling_fails():
    fails("5.1", lambda number: number + 2, "double(-3) returned -1")

# fails("5.1", lambda number: number * 3)   a comment is not a test
'''

SECOND_WRONG_ANSWER = '''

@pytest.mark.parametrize("wrong", [lambda number: abs(2 * number)])
def test_more_wrong_answers_fail(wrong):
    fails("5.1", wrong, "expected -6")
'''


def test_a_new_exercise_needs_two_wrong_answers_shown_failing(fork):
    """tests/test_soundness_coverage.py fails for an exercise of the manifest without soundness tests."""
    from tests.check_helpers import soundness_file, soundness_gaps

    folder, course = fork
    five = Course(course.versions, (course.notebook(STEM),))
    tests = folder / "tests"
    tests.mkdir()
    soundness = soundness_file(course.notebook(STEM), tests)
    assert soundness_gaps(five, tests) == [
        f"exercise 5.1 has 0 wrong answers shown failing in {soundness} (no such file): add at least 2, "
        "each a test calling fails(\"5.1\", <a typical wrong answer>, <words its message must say>)"]

    soundness.write_text(SOUNDNESS_TESTS_WITH_ONE_WRONG_ANSWER)
    [gap] = soundness_gaps(five, tests)
    assert gap.startswith(f"exercise 5.1 has 1 wrong answer shown failing in {soundness}: add at least 2")

    soundness.write_text(SOUNDNESS_TESTS_WITH_ONE_WRONG_ANSWER + SECOND_WRONG_ANSWER)
    assert soundness_gaps(five, tests) == []
