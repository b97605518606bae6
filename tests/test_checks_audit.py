"""The audit of the checks covers every exercise, names only what exists, and its page is current.

The audit maps each instruction of an exercise's prose to the sentence that teaches it, the
catalogue key of the scenario that fails when it is ignored, and a test showing a wrong answer fail.
Its rows are data beside the checks (looplab/checks/audit/<module>.toml, read by authoring/audit.py);
docs/CHECKS_AUDIT.md is generated from them. A row that names a key or a test that is gone would
vouch for a check that no longer holds, so this test reads the rows: every exercise of the manifest
has some, every identifier in backticks in the scenario column is a row of some catalogue
(looplab/checks/texts/*.toml), every identifier in backticks in the wrong-answer column a `def` of
the soundness tests; and the page says what the rows say.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import replace
from pathlib import Path

import pytest

from authoring import audit, course_pages
from looplab.course import COURSE, Course, Exercise

ROOT = Path(__file__).resolve().parent.parent

CATALOGUES = sorted((ROOT / "looplab" / "checks" / "texts").glob("*.toml"))
SOUNDNESS_TESTS = sorted((ROOT / "tests").glob("test_checks_notebook*.py")) + [ROOT / "tests" / "test_course_code.py"]
IDENTIFIER = audit.KEY  # `key` or `test_name`; `4823 * 1979` is not one


def rows() -> list[tuple[str, audit.Row]]:
    return audit.every_row()


def catalogue_keys() -> set[str]:
    keys: set[str] = set()
    for path in CATALOGUES:
        keys |= set(tomllib.loads(path.read_text(encoding="utf-8")))
    return keys


def defined_names() -> set[str]:
    return {name for path in SOUNDNESS_TESTS
            for name in re.findall(r"\bdef ([A-Za-z_][A-Za-z0-9_]*)\(", path.read_text(encoding="utf-8"))}


@pytest.mark.parametrize("exercise", COURSE.exercises, ids=[exercise.id for exercise in COURSE.exercises])
def test_every_exercise_has_rows(exercise):
    assert audit.audit_rows(exercise), f"no audit rows for {exercise.id}"


def test_no_audit_table_is_left_for_an_exercise_that_is_gone():
    assert audit.stray_tables() == []


def test_every_key_named_exists_in_a_catalogue():
    keys = catalogue_keys()
    unknown = sorted({f"{heading}: {name}" for heading, row in rows()
                      for name in IDENTIFIER.findall(row.scenario) if name not in keys})
    assert not unknown, "keys of no catalogue (looplab/checks/texts/*.toml):\n" + "\n".join(unknown)


def test_every_test_and_wrong_answer_named_exists():
    names = defined_names()
    unknown = sorted({f"{heading}: {name}" for heading, row in rows()
                      for name in IDENTIFIER.findall(row.wrong_answer) if name not in names})
    assert not unknown, "no `def` of that name in the soundness tests:\n" + "\n".join(unknown)


def test_the_reading_sees_the_rows():
    """Guards the reading itself: rows it could not see would make the tests above pass on nothing."""
    assert len(rows()) >= 4 * len(COURSE.exercises)
    assert sum(len(IDENTIFIER.findall(row.scenario)) for _, row in rows()) > 100
    assert "test_a_typical_mistake_fails_with_the_right_message" in defined_names()
    assert {"not_refused", "two_calls", "lost_earlier_turns", "course_code"} <= catalogue_keys()


def test_the_page_is_what_the_rows_say():
    page = ROOT / "docs" / "CHECKS_AUDIT.md"
    _, changed = course_pages.updated(page, page.read_text(encoding="utf-8"))
    assert changed == [], "docs/CHECKS_AUDIT.md is out of date: run `make notebooks`"
    text = page.read_text(encoding="utf-8")
    for exercise in COURSE.exercises:
        assert f"\n## {exercise.id} {exercise.title}\n" in text


def test_an_exercise_without_rows_is_named_in_one_line():
    """What `make notebooks` says when a new exercise has no audit rows (it once crashed with a bare StopIteration)."""
    first = COURSE.notebooks[0]
    added = Exercise(f"{first.number}.9", "extra", "an extra", 1, first.exercises[0].reference)
    course = Course(COURSE.versions, (replace(first, exercises=first.exercises + (added,)),) + COURSE.notebooks[1:])
    with pytest.raises(audit.Incomplete) as failure:
        audit.page_body(course)
    message = str(failure.value)
    assert "\n" not in message
    assert f"no rows for exercise {added.id} (an extra)" in message and "audit/notebook1.toml" in message


def test_a_row_missing_a_field_is_named(tmp_path):
    path = tmp_path / "notebook9.toml"
    path.write_text('[["9.1"]]\ninstruction = "do it"\ntaught = "09 §x"\nscenario = "`k`"\n', encoding="utf-8")
    with pytest.raises(audit.Incomplete, match=r'row 1 of \[\["9.1"\]\] lacks wrong_answer'):
        audit.read_table(path)
