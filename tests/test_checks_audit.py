"""The audit table of the checks, docs/CHECKS_AUDIT.md, covers every exercise and names only what exists.

The table maps each instruction of an exercise's prose to the sentence that teaches it, the
catalogue key of the scenario that fails when it is ignored, and a test showing a wrong answer fail.
A table that names a key or a test that is gone would vouch for a check that no longer holds, so
this test reads it: a `## <id> ` section with rows for every exercise of the manifest, every
identifier in backticks in the scenario column a row of some catalogue (looplab/checks/texts/*.toml),
every identifier in backticks in the wrong-answer column a `def` of the soundness tests.
"""

from __future__ import annotations

import re
import sys
import tomllib
from pathlib import Path

import pytest

from looplab.course import COURSE

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
import workshop_guide as guide  # noqa: E402

CATALOGUES = sorted((ROOT / "looplab" / "checks" / "texts").glob("*.toml"))
SOUNDNESS_TESTS = sorted((ROOT / "tests").glob("test_checks_notebook*.py")) + [ROOT / "tests" / "test_course_code.py"]

COLUMNS = 4  # instruction | where taught | scenario / expectation | wrong answer
SCENARIO, WRONG_ANSWER = 2, 3
IDENTIFIER = guide.KEY  # `key` or `test_name`; `4823 * 1979` is not one
sections = guide.audit_sections  # each `## ` heading of the audit with its table rows, as the guide reads them


def rows() -> list[tuple[str, list[str]]]:
    return [(heading, cells) for heading, table in sections().items() for cells in table]


def catalogue_keys() -> set[str]:
    keys: set[str] = set()
    for path in CATALOGUES:
        keys |= set(tomllib.loads(path.read_text(encoding="utf-8")))
    return keys


def defined_names() -> set[str]:
    return {name for path in SOUNDNESS_TESTS
            for name in re.findall(r"\bdef ([A-Za-z_][A-Za-z0-9_]*)\(", path.read_text(encoding="utf-8"))}


@pytest.mark.parametrize("exercise", COURSE.exercises, ids=[exercise.id for exercise in COURSE.exercises])
def test_every_exercise_has_a_section_with_rows(exercise):
    headings = {heading.split(" ")[0]: heading for heading in sections()}
    assert exercise.id in headings, f"docs/CHECKS_AUDIT.md has no '## {exercise.id} {exercise.name}' section"
    assert sections()[headings[exercise.id]], f"the section '## {headings[exercise.id]}' has no table row"


def test_every_row_has_its_four_columns():
    """A `|` inside a cell would shift the columns and hide what the other tests read."""
    wrong = [f"{heading}: {' | '.join(cells)[:80]}" for heading, cells in rows() if len(cells) != COLUMNS]
    assert not wrong, "rows without exactly 4 cells:\n" + "\n".join(wrong)


def test_every_key_named_exists_in_a_catalogue():
    keys = catalogue_keys()
    unknown = sorted({f"{heading}: {name}" for heading, cells in rows() if len(cells) == COLUMNS
                      for name in IDENTIFIER.findall(cells[SCENARIO]) if name not in keys})
    assert not unknown, "keys of no catalogue (looplab/checks/texts/*.toml):\n" + "\n".join(unknown)


def test_every_test_and_wrong_answer_named_exists():
    names = defined_names()
    unknown = sorted({f"{heading}: {name}" for heading, cells in rows() if len(cells) == COLUMNS
                      for name in IDENTIFIER.findall(cells[WRONG_ANSWER]) if name not in names})
    assert not unknown, "no `def` of that name in the soundness tests:\n" + "\n".join(unknown)


def test_the_reading_sees_the_table():
    """Guards the parsing itself: a table the helpers could not read would make the tests above pass on nothing."""
    assert len(rows()) >= 4 * len(COURSE.exercises)
    assert sum(len(IDENTIFIER.findall(cells[SCENARIO])) for _, cells in rows()) > 100
    assert "test_a_typical_mistake_fails_with_the_right_message" in defined_names()
    assert {"not_refused", "two_calls", "lost_earlier_turns", "course_code"} <= catalogue_keys()
