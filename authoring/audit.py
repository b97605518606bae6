"""The audit of the checks: its rows are data beside the checks; docs/CHECKS_AUDIT.md is generated from them.

Each row says, for one instruction of an exercise's prose, where the notebook teaches it, the
catalogue key of the scenario or expectation that fails when it is ignored, and a test showing a
wrong answer fail. The rows of a checks module's exercises live in `audit/<module>.toml` beside it
(looplab/checks/audit/notebook1.toml for looplab.checks.notebook1), next to its words in
`texts/<module>.toml`; the rows that hold for every exercise live in audit/core.toml, under
"every exercise". One array of tables per exercise:

    [["1.1"]]
    instruction = "never `eval` (nor exec, compile): it runs any Python"
    taught = "01 §'The tool itself', \"The tempting one-liner is `eval(expression)`. Don't...\""
    scenario = "`no_eval`"
    wrong_answer = "`test_eval_fails_even_when_it_computes_right` (`calculator_with_eval`)"

Why data and not the page: the workshop guide and the tests read these rows, and reading them out of
a Markdown page made the page a build input that broke the build when it lacked a section. The page
is written by `make notebooks` (authoring/course_pages.py) below its mark; the text above the mark is
written by hand.
"""

from __future__ import annotations

import importlib.util
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from looplab import language
from looplab.course import COURSE, Course, Exercise

from .notebook_translations import fingerprint

EVERY_EXERCISE = "every exercise"  # the table of audit/core.toml whose rows hold for all exercises
COMMON = "looplab.checks.core"  # the module whose audit file holds them
FIELDS = ("instruction", "taught", "scenario", "wrong_answer")
HEADER = ("instruction", "where taught", "scenario / expectation", "wrong answer")
KEY = re.compile(r"`([A-Za-z_][A-Za-z0-9_]*)`")  # `key` or `test_name` in a cell; `4823 * 1979` is not one


class Incomplete(Exception):
    """The audit lacks rows for an exercise of the manifest, or a row is malformed: one line saying which."""


@dataclass(frozen=True)
class Row:
    instruction: str
    taught: str
    scenario: str
    wrong_answer: str
    # The instruction in another language, for the workshop guide in that language:
    # fr = { instruction = "...", of = "<fingerprint of the English instruction>" }
    fr: dict | None = field(default=None, compare=False)

    def instruction_in(self, spoken: str) -> str:
        """The instruction in `spoken`; Incomplete when its translation is missing or translates an older English."""
        if spoken == language.SOURCE:
            return self.instruction
        translated = getattr(self, spoken) or {}
        if translated.get("of") != fingerprint(self.instruction) or not translated.get("instruction"):
            state = "has no" if not translated else "has a stale (of = {!r})".format(translated.get("of"))
            raise Incomplete(f"the audit row {self.instruction!r} {state} {spoken} = {{ instruction = ..., "
                             f"of = {fingerprint(self.instruction)!r} }}")
        return translated["instruction"]

    @property
    def cells(self) -> tuple[str, str, str, str]:
        return (self.instruction, self.taught, self.scenario, self.wrong_answer)


def module_file(module: str) -> Path:
    """Where a module lives, found without importing it."""
    spec = importlib.util.find_spec(module)
    if spec is None or spec.origin is None:
        raise Incomplete(f"the checks module {module!r} cannot be found")
    return Path(spec.origin)


def audit_file(checks_module: str) -> Path:
    """audit/<module>.toml beside a checks module (as its words are texts/<module>.toml)."""
    source = module_file(checks_module)
    return source.parent / "audit" / f"{source.stem}.toml"


def read_table(path: Path) -> dict[str, list[Row]]:
    """Every array of tables of one audit file, by exercise id, as rows."""
    if not path.exists():
        return {}
    tables = tomllib.loads(path.read_text(encoding="utf-8"))
    found: dict[str, list[Row]] = {}
    for key, rows in tables.items():
        if not isinstance(rows, list):
            raise Incomplete(f"{path}: [{key}] should be rows, [[\"{key}\"]] tables")
        for number, row in enumerate(rows, 1):
            missing = [name for name in FIELDS if not isinstance(row.get(name), str) or not row[name].strip()]
            extra = sorted(set(row) - set(FIELDS) - set(language.LANGUAGES[1:]))
            if missing or extra:
                raise Incomplete(f"{path}: row {number} of [[\"{key}\"]] "
                                 + (f"lacks {', '.join(missing)}" if missing else f"has unknown {', '.join(extra)}"))
        found[key] = [Row(**row) for row in rows]
    return found


def audit_rows(exercise: Exercise, course: Course = COURSE) -> list[Row]:
    """The exercise's rows, from the audit file beside its notebook's checks module; Incomplete if none."""
    path = audit_file(course.notebook_of(exercise.id).checks)
    rows = read_table(path).get(exercise.id)
    if not rows:
        raise Incomplete(f"the audit has no rows for exercise {exercise.id} ({exercise.title}): add "
                         f"[[\"{exercise.id}\"]] tables with {', '.join(FIELDS)} and fr = {{ instruction = \"...\" }} "
                         f"to {path} "
                         "(docs/WRITING_NOTEBOOKS.md, 'Every instruction has its scenario')")
    return rows


def common_rows() -> list[Row]:
    path = audit_file(COMMON)
    rows = read_table(path).get(EVERY_EXERCISE)
    if not rows:
        raise Incomplete(f"{path} has no [[\"{EVERY_EXERCISE}\"]] rows")
    return rows


def stray_tables(course: Course = COURSE) -> list[str]:
    """Tables of an audit file that are no exercise of its module (a renumbered exercise left behind)."""
    stray = []
    for notebook in course.notebooks:
        path = audit_file(notebook.checks)
        stray += [f"{path}: [[\"{key}\"]] is no exercise of {notebook.stem}"
                  for key in read_table(path) if key not in notebook.ids]
    return stray


def every_row(course: Course = COURSE) -> list[tuple[str, Row]]:
    """(the section's heading, row) for the common rows, then each exercise's, in the course's order."""
    found = [(EVERY_EXERCISE, row) for row in common_rows()]
    for exercise in course.exercises:
        found += [(f"{exercise.id} {exercise.title}", row) for row in audit_rows(exercise, course)]
    return found


def table_cell(text: str) -> str:
    """Text that stays in its Markdown table cell: its `|` escaped, on one line."""
    return text.replace("\n", " ").replace("|", "\\|")


def table(rows: list[Row]) -> list[str]:
    return (["| " + " | ".join(HEADER) + " |", "|" + "---|" * len(HEADER)]
            + ["| " + " | ".join(table_cell(cell) for cell in row.cells) + " |" for row in rows])


def page_body(course: Course = COURSE) -> list[str]:
    """The generated half of docs/CHECKS_AUDIT.md: the common rows, then a section per exercise."""
    stray = stray_tables(course)
    if stray:
        raise Incomplete("; ".join(stray))
    lines = ["## Every exercise", ""] + table(common_rows()) + [""]
    for exercise in course.exercises:
        lines += [f"## {exercise.id} {exercise.title}", ""] + table(audit_rows(exercise, course)) + [""]
    return lines
