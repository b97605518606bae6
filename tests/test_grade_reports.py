"""From what the grader's cells reported to rows, without a kernel: which changes and which reports are tampering.

Only what can change a grade counts: the check machinery as each check finds it and leaves it, and
every grader cell's report. A change seen only by the last cell (after the last check) is not
tampering; a report that is missing, forged or without its fingerprint is.
"""

from __future__ import annotations

import pytest

from looplab import grade
from looplab.course import COURSE
from looplab.grade.grader_reports import FORGED, MISSING
from tests.test_grade import NB1, SUBMISSIONS

REFERENCE = "looplab.checks.run_check\tA\nlooplab.tools.TOOLS\tB"
CHANGED_TOOLS = {"digest": "changed", "prints": "looplab.checks.run_check\tA\nlooplab.tools.TOOLS\tC"}


def planned():
    course = grade.load_course()
    submission = grade.Submission(SUBMISSIONS / "complete" / f"{NB1}.ipynb", "alice")
    notebook, identified = grade.read_submission(submission, course)
    return grade.plan_run(submission, notebook, identified)


def reported(plan, **changes) -> grade.Outcome:
    """Every grader cell reporting the run of the complete notebook; `changes` replace a report's parts
    (keyword: `check_before`, `check_after` for the first check cell, `end` for the last cell)."""
    outcome = grade.Outcome()
    same = {"digest": "start"}
    checks = [i for i, o in enumerate(plan.origin) if isinstance(o, grade.GraderCell) and o.exercises]
    for index, origin in enumerate(plan.origin):
        if not isinstance(origin, grade.GraderCell):
            continue
        if origin.step == "start":
            outcome.payloads[index] = {"step": "start", "fingerprint": REFERENCE, "digest": "start"}
        elif origin.exercises:
            results = {e.id: {"kind": "solved", "message": None} for e in origin.exercises}
            outcome.payloads[index] = {"step": "check", "results": results, "before": same, "after": same}
        else:
            outcome.payloads[index] = {"step": "end", "before": changes.get("end", same)}
    first = outcome.payloads[checks[0]]
    for part in ("before", "after"):
        if f"check_{part}" in changes:
            if changes[f"check_{part}"] is None:
                del first[part]
            else:
                first[part] = changes[f"check_{part}"]
    return outcome


def statuses(plan, outcome) -> set[tuple[str, str]]:
    return {(row.status, row.message) for row in grade.rows_for(plan, outcome)}


def test_a_change_after_the_last_check_is_not_tampering():
    plan = planned()
    assert statuses(plan, reported(plan, end=CHANGED_TOOLS)) == {("solved", "")}


@pytest.mark.parametrize("part", ["check_before", "check_after"])
def test_the_same_change_when_a_check_runs_is_tampering(part):
    plan = planned()
    assert statuses(plan, reported(plan, **{part: CHANGED_TOOLS})) == {
        ("tampered with the checks", "changed while the notebook ran: looplab.tools.TOOLS")}


@pytest.mark.parametrize("part", ["check_before", "check_after"])
def test_a_check_report_without_its_fingerprint_is_tampering(part):
    plan = planned()
    for report in (None, {"digest": "changed"}, "garbled"):
        assert statuses(plan, reported(plan, **{part: report})) == {
            ("tampered with the checks", "changed while the notebook ran: the grader's fingerprint")}


def test_a_report_that_never_arrived_or_was_forged_is_tampering():
    plan = planned()
    first_check = next(i for i, o in enumerate(plan.origin) if isinstance(o, grade.GraderCell) and o.exercises)
    ids = ", ".join(e.id for e in plan.origin[first_check].exercises)
    for problem, message in [
        (MISSING, f"the grader's report from the check of exercise {ids} never arrived "
                  "(hidden, or the cell was kept from running)"),
        (FORGED, f"an output imitated the grader's own results (the check of exercise {ids}: forged)"),
    ]:
        outcome = reported(plan)
        del outcome.payloads[first_check]
        outcome.forged[first_check] = problem
        rows = grade.rows_for(plan, outcome)
        assert {(row.points, row.status, row.message) for row in rows} == {(0, "tampered with the checks", message)}
        assert len(rows) == len(COURSE.notebook(NB1).exercises)


def test_the_last_cells_report_counts_too():
    plan = planned()
    outcome = reported(plan)
    last = len(plan.origin) - 1
    del outcome.payloads[last]
    outcome.forged[last] = MISSING
    assert statuses(plan, outcome) == {("tampered with the checks", "the grader's report from the grader's last "
                                        "cell never arrived (hidden, or the cell was kept from running)")}
