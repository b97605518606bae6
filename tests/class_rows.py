"""A made-up class as gradebook rows, for the exports and the class report (no kernel needed).

Eight learners on notebooks 1 and 2, with the statuses and messages the grader really writes
(tests/grading_fixtures' gradebook), so the report's screenshot looks like a real class:
- 1.2 is where the class is stuck: three learners named the tool "calc", one left it empty;
- tina handed in the course's own code, ravi's notebook 1 is broken JSON, `=2+3` is a learner name a spreadsheet would run;
- quinn handed notebook 1 in twice (the last one counts: class_results.py).
"""

from __future__ import annotations

from dataclasses import replace

from looplab.course import COURSE, Course
from looplab.grade import Row

NB1, NB2 = "01_one_tool_call", "02_closing_the_loop"
MAX = {"1.1": 2, "1.2": 1, "1.3": 2, "2.1": 1, "2.2": 3, "2.3": 2}
# The course as this class took it (notebooks 1 and 2, exercises 1.1 to 2.3): an exercise added to the course
# later is not one these learners skipped, so the exports of this class are read against this course.
CLASS_COURSE = Course(versions=COURSE.versions, notebooks=tuple(
    replace(notebook, exercises=tuple(exercise for exercise in notebook.exercises if exercise.id in MAX))
    for notebook in COURSE.notebooks[:2]))
STUB = "not written yet: the code still raises NotImplementedError"
CALC = "its name is 'calc'; the model will ask for it by name, and run_tool expects 'calculator'"
EMPTY_TOOL = "not written yet: CALCULATOR_TOOL is still an empty dict"
NOT_STR = "calculator('2 + 3') returned 5, a int, not a str"
COURSE_OWN = "this {name} is the course's own ({reference}), not yours"
ID_MISMATCH = "one call: \"tool_use_id\" is 'toolu_01'; it should be the tool_use block's id, 'toolu_02'"


def notebook_rows(learner: str, stem: str, *results: tuple, file: str | None = None) -> list[Row]:
    """Rows of one submission: results are (exercise, status, message); solved gets full points."""
    file = file or f"submissions/{learner}/{stem}.ipynb"
    return [Row(learner, stem, exercise, MAX[exercise] if status == "solved" else 0, MAX[exercise], status, message,
                file) for exercise, status, message in results]


def solved(*exercises: str) -> list[tuple]:
    return [(exercise, "solved", "") for exercise in exercises]


def class_rows() -> list[Row]:
    rows = []
    rows += notebook_rows("=2+3", NB1, *solved("1.1"), ("1.2", "not solved", CALC), ("1.3", "not written yet", STUB))
    rows += notebook_rows("alice", NB1, *solved("1.1", "1.2", "1.3"))
    rows += notebook_rows("alice", NB2, *solved("2.1", "2.2", "2.3"))
    rows += notebook_rows("bob", NB1, *solved("1.1"), ("1.2", "not solved", CALC), *solved("1.3"))
    rows += notebook_rows("bob", NB2, *solved("2.1"), ("2.2", "not solved", ID_MISMATCH),
                          ("2.3", "not written yet", STUB))
    rows += notebook_rows("chen", NB1, ("1.1", "not solved", NOT_STR), ("1.2", "not written yet", EMPTY_TOOL),
                          ("1.3", "not written yet", STUB))
    rows += notebook_rows("dana", NB1, ("1.1", "syntax error",
                                        "cell 4 does not parse (expected ':', line 5), so calculator was never defined"),
                          *solved("1.2", "1.3"))
    rows += notebook_rows("dana", NB2, *solved("2.1"), ("2.2", "not solved", ID_MISMATCH), *solved("2.3"))
    rows += notebook_rows("quinn", NB1, ("1.1", "not written yet", STUB), ("1.2", "not written yet", EMPTY_TOOL),
                          ("1.3", "not written yet", STUB), file=f"submissions/quinn-{NB1}.ipynb")
    rows += notebook_rows("quinn", NB1, *solved("1.1"), ("1.2", "not solved", CALC),
                          ("1.3", "the kernel died (in cell 16)", "the kernel exited before this exercise was graded"))
    rows.append(Row("ravi", NB1, "", 0, None, "invalid JSON",
                    "Expecting property name enclosed in double quotes: line 4 column 4 (char 21)",
                    f"submissions/ravi-{NB1}.ipynb"))
    rows += notebook_rows("tina", NB1, *[(exercise, "the course's own code", COURSE_OWN.format(
        name=COURSE.exercise(exercise).name, reference=COURSE.exercise(exercise).reference.replace(":", ".")))
        for exercise in ("1.1", "1.2", "1.3")])
    rows.append(Row("uma", "", "", 0, None, "no notebook found", "this folder holds no .ipynb file",
                    "submissions/uma"))
    return rows


# The same class as a roster of sixteen students, names in several scripts, seven of them not in `class_rows`
# (two hand in notebook 1 under their own names, five hand nothing in), and one learner's 1.1 flagged for review
# (the course's reference code typed in): the class report's two questions, answered on a laptop's first screen.
CLASS_LIST = [("s01", "Ada Lovelace", "=2+3"), ("s02", "Alice Smith", "alice"), ("s03", "Bob Brown", "bob"),
              ("s04", "Chen Li", "chen"), ("s05", "Dana Díaz", "dana"), ("s06", "Quinn Quirke", "quinn"),
              ("s07", "Ravi Rao", "ravi"), ("s08", "Tina Tan", "tina"), ("s09", "Uma Ueda", "uma"),
              ("s10", "José Núñez", "jose"), ("s11", "Νίκος Παπαδάκης", "nikos"), ("s12", "Иван Петров", "ivan"),
              ("s13", "王小明", "wang"), ("s14", "محمد علي", "mohammed"), ("s15", "Zoë O'Brien", "zoe"),
              ("s16", "Lea Lind", "lea")]
REVIEW_NOTE = "to review: exercise 1.1's cell holds the course's reference code (looplab/tools.py), ..."


def roster_text() -> str:
    return "id,name,email\n" + "".join(f"{i},{name},{login}@school.edu\n" for i, name, login in CLASS_LIST)


def sixteen_students_rows() -> list[Row]:
    """class_rows() and two more learners, under their LMS names (Canvas's `núñezjosé`, Moodle's Greek folder)."""
    rows = class_rows()
    rows += notebook_rows("núñezjosé", NB1, *solved("1.1", "1.2", "1.3"))
    rows += notebook_rows("Νίκος Παπαδάκης", NB1, *solved("1.1", "1.3"), ("1.2", "not solved", CALC))
    for row in rows:
        if row.learner == "alice" and row.exercise == "1.1":
            row.review = REVIEW_NOTE
    return rows
