"""The course has versions, and the grader knows them: an exercise added after the version a notebook
was made with is "not in this version" (0 of 0 points), not "not defined".

The course is extended as tests/test_adding_a_notebook.py extends it (its throwaway notebook, "Doubling",
numbered after the course's last, in a temporary folder, selected with LOOPLAB_COURSE), then published
again in a later version that adds a second exercise (ID2 below) to that notebook: what a maintainer does to a course learners already hold.
"""

from __future__ import annotations

import csv
import os
import subprocess
import sys
import textwrap
from dataclasses import replace
from pathlib import Path

import nbformat
import pytest
from hypothesis import given
from hypothesis import strategies as st

from looplab import grade
from looplab.course import COURSE, Course, Exercise, made_with
from authoring.learner_notebooks import BEGIN, END, generate
from tests.test_adding_a_notebook import FORK_MODULES, ID, NUMBER, STEM, solution_notebook, write_fork

ROOT = Path(__file__).resolve().parent.parent
LATER = "2099.01"
ID2 = f"{NUMBER}.2"  # the exercise the later version adds

# The later version: the notebook gains exercise ID2 (checked like ID), and the course a version.
LATER_MODULE = f'''
from dataclasses import replace

from course_doubling import EXTENDED, FIVE
from looplab.course import Course, Exercise

TWICE = Exercise("{ID2}", "twice", "double, once more", 1, "reference_doubling:double", since="{LATER}")
LATER = Course(EXTENDED.versions + ("{LATER}",),
               EXTENDED.notebooks[:-1] + (replace(FIVE, checks="checks_twice", exercises=FIVE.exercises + (TWICE,)),))
'''
LATER_CHECKS_MODULE = f'''
from checks_doubling import CHECKERS, HINTS, TEXTS, check_double

CHECKERS = {{**CHECKERS, "{ID2}": check_double}}
HINTS = {{**HINTS, "{ID2}": ["Double it, as in {ID}."]}}
'''


def saying(version: str | None, notebook: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """The notebook, its metadata saying it was made with `version` (None: saying nothing)."""
    if version is None:
        notebook.metadata.pop("looplab", None)
    else:
        notebook.metadata["looplab"] = {"course_version": version}
    return notebook


def made_before(version: str | None = COURSE.version) -> nbformat.NotebookNode:
    """The notebook's solution as the earlier version had it: exercise ID only, saying `version`."""
    return saying(version, solution_notebook())


def made_with_later(version: str | None = LATER) -> nbformat.NotebookNode:
    """The notebook's solution in the later version: ID2's exercise and check cells added."""
    notebook = made_before(version)
    notebook.cells += [
        nbformat.v4.new_code_cell(f"def twice(number):\n    {BEGIN}\n    return 2 * number\n    {END}",
                                  metadata={"tags": ["exercise"], "looplab": {"exercise": ID2}}),
        nbformat.v4.new_code_cell(f'check("{ID2}", twice)', metadata={"tags": ["check"]}),
    ]
    return notebook


@pytest.fixture(scope="module")
def later(tmp_path_factory):
    """A temporary folder holding the extended course and its later version; the later course."""
    folder = tmp_path_factory.mktemp("later")
    write_fork(folder)
    modules = {"course_later": LATER_MODULE, "checks_twice": LATER_CHECKS_MODULE}
    for name, source in modules.items():
        (folder / f"{name}.py").write_text(textwrap.dedent(source))
    sys.path.insert(0, str(folder))
    try:
        import course_later
        yield folder, course_later.LATER
    finally:
        sys.path.remove(str(folder))
        for name in (*FORK_MODULES, *modules):
            sys.modules.pop(name, None)


# --- comparing versions --------------------------------------------------------------------------------


def small_course(versions: tuple[str, ...], since: str | None) -> Course:
    """Notebook 1 alone, with an exercise 1.9 added in version `since`."""
    first = COURSE.notebooks[0]
    added = Exercise("1.9", "extra", "an exercise added later", 1, "looplab.tools:calculator", since=since)
    return Course(versions, (replace(first, exercises=first.exercises + (added,)),))


def test_versions_are_compared_by_their_place_in_the_course_not_their_spelling():
    course = small_course(("2026.9", "2026.10", "2027.1b"), since="2026.10")
    assert course.version == "2027.1b"
    assert [course.version_order(v) for v in course.versions] == [0, 1, 2]  # "2026.10" < "2026.9" as text
    added, first = course.exercise("1.9"), course.exercise("1.1")
    assert course.since(first) == "2026.9" and course.since(added) == "2026.10"
    assert [course.exists_in(added, v) for v in course.versions] == [False, True, True]
    assert all(course.exists_in(first, v) for v in course.versions)
    assert course.first_version_with([first]) == "2026.9"
    assert course.first_version_with([first, added]) == "2026.10"
    assert course.first_version_with([]) == "2026.9"
    with pytest.raises(ValueError, match="'2026.11' is not a version of this course"):
        course.version_order("2026.11")


@given(st.lists(st.text(min_size=1, max_size=6), min_size=1, max_size=6, unique=True), st.data())
def test_an_exercise_exists_from_its_version_on(versions, data):
    since = data.draw(st.sampled_from(versions))
    course = small_course(tuple(versions), since)
    existing = [v for v in versions if course.exists_in(course.exercise("1.9"), v)]
    assert existing == versions[versions.index(since):]


@pytest.mark.parametrize("versions, since, error", [
    ("2026.12", None, TypeError),  # a string, not a tuple: Course(COURSE.version, ...) from before versions
    ((), None, TypeError),
    (("2026.12", "2026.12"), None, ValueError),
    (("2026.12",), "2027.03", ValueError),  # since a version the course does not list
])
def test_a_course_with_versions_it_cannot_order_is_refused(versions, since, error):
    with pytest.raises(error):
        small_course(versions, since)


def test_the_course_lists_its_versions_and_every_exercise_exists_in_the_current_one():
    assert COURSE.versions[-1] == COURSE.version
    assert all(COURSE.exists_in(exercise, COURSE.version) for exercise in COURSE.exercises)


# --- what the notebooks carry ----------------------------------------------------------------------------


def test_the_generator_stamps_the_course_version_it_generates_for(later, tmp_path):
    folder, course = later
    (tmp_path / "solutions").mkdir()
    nbformat.write(made_with_later(), tmp_path / "solutions" / f"{STEM}.ipynb")
    written = generate([STEM], course=course, solutions=tmp_path / "solutions", notebooks=tmp_path / "notebooks")
    assert made_with(nbformat.read(written[0], as_version=4)) == LATER


# --- which version a submission is graded as (no kernel) ---------------------------------------------------


@pytest.mark.parametrize("notebook, graded_as, column, why", [
    (made_before(), COURSE.version, COURSE.version, ""),
    (made_with_later(), LATER, LATER, ""),
    (made_before(LATER), LATER, LATER, ""),  # says the later version, lacks ID2: graded as it says
    (made_before(None), COURSE.version, "", "names no course version"),
    (made_before("1999.01"), COURSE.version, "", "names course version '1999.01', which this course does not have"),
    # an exercise cell of the later version in a notebook saying the earlier one: graded, not skipped
    (made_with_later(COURSE.version), LATER, "",
     f"names course version {COURSE.version} but holds exercise cells added later"),
], ids=["earlier", "later", "later-without-the-second", "none", "unknown", "earlier-with-the-second"])
def test_a_submission_is_graded_as_the_version_it_names_or_its_cells(later, notebook, graded_as, column, why):
    _, course = later
    version = grade.submission_version(notebook, course.notebook(STEM), course)
    assert (version.graded_as, version.column, version.why) == (graded_as, column, why)
    absent = grade.not_in_version(course.notebook(STEM), version.graded_as, course)
    assert [e.id for e in absent] == ([] if graded_as == LATER else [ID2])


def test_an_exercise_not_in_the_version_gets_no_grader_check(later):
    _, course = later
    entry = course.notebook(STEM)
    points = grade.grading_points(made_before(), entry, grade.not_in_version(entry, COURSE.version, course))
    assert [e.id for exercises in points.values() for e in exercises] == [ID]
    assert [e.id for exercises in grade.grading_points(made_before(), entry).values() for e in exercises] == [ID, ID2]


# --- grading, in real kernels --------------------------------------------------------------------------


def test_the_grader_grades_each_notebook_as_the_version_it_was_made_with(later, tmp_path):
    folder, _ = later
    submissions = tmp_path / "submissions"
    for learner, notebook in [("ada", made_before()), ("bob", made_before(LATER)), ("cy", made_before(None)),
                              ("dee", made_with_later())]:
        (submissions / learner).mkdir(parents=True)
        nbformat.write(notebook, submissions / learner / f"{STEM}.ipynb")
    env = dict(os.environ, LOOPLAB_COURSE="course_later:LATER",
               PYTHONPATH=os.pathsep.join([str(folder), str(ROOT), os.environ.get("PYTHONPATH", "")]))
    out = tmp_path / "grades.csv"
    # one slot: one kernel template to start (seconds of CPU); notebooks graded side by side are tests/test_grade.py's
    run = subprocess.run([sys.executable, "-m", "looplab.grade", str(submissions), "--out", str(out),
                          "--jobs", "1", "--cell-timeout", "10"],
                         cwd=tmp_path, env=env, capture_output=True, text=True, timeout=180)
    assert run.returncode == 0, run.stderr
    with open(out, newline="", encoding="utf-8") as handle:
        rows = [(r["learner"], r["exercise"], r["points"], r["max_points"], r["status"], r["message"],
                 r["course_version"]) for r in csv.DictReader(handle)]
    earlier = COURSE.version
    assert rows == [
        ("ada", ID, "1", "1", "solved", "", earlier),
        ("ada", ID2, "0", "0", "not in this version",
         f"exercise {ID2} was added in course version {LATER}; this notebook was made with course version {earlier}",
         earlier),
        ("bob", ID, "1", "1", "solved", "", LATER),
        ("bob", ID2, "0", "1", "not defined", f"twice is not defined where exercise {ID2} is graded", LATER),
        ("cy", ID, "1", "1", "solved", "", ""),
        ("cy", ID2, "0", "0", "not in this version",
         f"exercise {ID2} was added in course version {LATER}; this notebook names no course version; "
         f"graded as {earlier}, the oldest version holding all its exercise cells", ""),
        ("dee", ID, "1", "1", "solved", "", LATER),
        ("dee", ID2, "1", "1", "solved", "", LATER),
    ]
    # the table's totals: a notebook made before ID2 existed is complete
    assert any(line.split()[:3] == ["ada", STEM, "1/1"] for line in run.stdout.splitlines()), run.stdout
    assert any(line.split()[:3] == ["bob", STEM, "1/2"] for line in run.stdout.splitlines()), run.stdout


def test_a_notebook_of_a_version_the_grader_does_not_know_says_so(tmp_path):
    """A learner's notebook newer than the instructor's looplab: its new exercise is unknown here."""
    from authoring.learner_notebooks import SOLUTIONS

    notebook = nbformat.read(SOLUTIONS / f"{COURSE.stems[0]}.ipynb", as_version=4)
    notebook.cells.append(nbformat.v4.new_code_cell("def extra(): ...", metadata={"looplab": {"exercise": "1.9"}}))
    notebook.metadata["looplab"]["course_version"] = LATER
    path = tmp_path / f"{COURSE.stems[0]}.ipynb"
    nbformat.write(notebook, path)
    with pytest.raises(grade.Ungradable) as raised:
        grade.read_submission(grade.Submission(path, "zoe"), grade.load_course())
    assert raised.value.status is grade.Status.OTHER_COURSE
    assert raised.value.message.endswith(f", 1.9 (it names course version '{LATER}', which this course does not "
                                         f"have: is this looplab older than the notebook?)")
