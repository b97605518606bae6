"""The grader's limits and kernels: the endless loop under the short cell limit, the total limit, plain
kernels and a missing provisioner, each graded on its own and compared with tests/test_grade.py's
expected rows. (A file of their own, so that the suite's workers run them beside the big gradebook.)"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from types import SimpleNamespace

import pytest

from looplab import grade
from looplab.course import COURSE
from tests.test_grade import (CELL_TIMEOUT, ENDLESS, GENEROUS_CELL_TIMEOUT, NB1, RUNAWAY_ENV, STALLED, SWALLOWED,
                              WORKDIR, expected_for, given_below, read_csv, run_grader)


@pytest.fixture(scope="module")
def runaways(tmp_path_factory):
    """The endless loop, the loop that swallows the interrupt and the stalled check, graded together in one run under the short
    limits (test_grade.py's CELL_TIMEOUT and RUNAWAY_ENV); each test below reads its own learner's rows.
    The grader's defaults: the cgroup way and bubblewrap where they work; where neither does, this run is the
    /proc way without isolation, and tests/test_grade_processes.py leaves its own run of the endless loop to it."""
    out = tmp_path_factory.mktemp("runaways") / "grades.csv"
    run = run_grader(f"submissions/{ENDLESS}", f"submissions/{SWALLOWED}", f"submissions/{STALLED}", "--jobs", "2",
                     "--cell-timeout", str(CELL_TIMEOUT), "--out", str(out), "--quiet", env=RUNAWAY_ENV)
    assert run.returncode == 0, run.stderr
    return [tuple(row) for row in read_csv(out)[1]]


def test_an_endless_loop_is_stopped_at_the_cell_limit_and_the_rest_still_counts(runaways):
    assert [row for row in runaways if row[0] == ENDLESS] == given_below(expected_for(ENDLESS))


def test_a_stalled_check_stops_the_notebook_once_its_judge_gave_up(runaways):
    """The judge gives up on a check that waits and swallows every interrupt; the check's cell is then given up a
    grace later (not at its whole limit), and the notebook stopped there: what came before counts."""
    assert [row for row in runaways if row[0] == STALLED] == given_below(expected_for(STALLED))


def test_a_loop_that_catches_the_interrupt_stops_the_notebook_at_its_cell(runaways):
    """Every later cell would wait behind it, each to its own limit: the grader stops the notebook there."""
    assert [row for row in runaways if row[0] == SWALLOWED] == given_below(expected_for(SWALLOWED))


def test_a_notebook_past_the_total_limit_is_stopped_and_the_rest_still_counts(tmp_path):
    """The cell limit above the total: the total stops the endless loop's cell (1.5 s).

    The loop spins to the total limit once: a short one, well above the honest cells before it (the whole first
    notebook, solved, costs its kernel under half a second of CPU; the wall-clock bound, three times the limit,
    leaves them room on a loaded machine)."""
    out = tmp_path / "grades.csv"
    run = run_grader(f"submissions/endless_loop/{NB1}.ipynb", "--cell-timeout", "10",
                     "--timeout", "1.5", "--out", str(out), "--quiet")
    assert run.returncode == 0, run.stderr
    _, rows = read_csv(out)
    stopped = "stopped: the notebook ran past the total limit (1.5 s)"
    assert [row[2:6] for row in rows] == [["1.1", "2", "2", "solved"], ["1.2", "1", "1", "solved"]] + [
        [e.id, "0", str(e.points), stopped] for e in COURSE.notebook(NB1).exercises[2:]]
    assert rows[0][0] == "endless_loop"  # a file given alone: named after its folder


def test_plain_kernels_grade_the_same(tmp_path):
    out = tmp_path / "grades.csv"
    run = run_grader("submissions/partial", "submissions/tampered", "--plain-kernels", "--jobs", "2",
                     "--out", str(out), "--quiet")
    assert run.returncode == 0, run.stderr
    _, rows = read_csv(out)
    assert [tuple(row) for row in rows] == given_below(expected_for("partial", "tampered"))


def test_without_its_provisioner_the_grader_starts_kernels_the_plain_way(monkeypatch):
    """The one orchestrator, called in-process as the command line calls it; the fork provisioner unknown."""
    from looplab.grade.kernels import fork_server

    monkeypatch.setattr(fork_server, "PROVISIONER_NAME", "looplab-not-registered")
    monkeypatch.chdir(WORKDIR)
    options = grade.GradingOptions(jobs=1, cell_timeout=GENEROUS_CELL_TIMEOUT)  # no runaway here
    with ThreadPoolExecutor(1) as thread:  # its own thread: an earlier test may leave this one's event loop running
        result = thread.submit(grade.grade, [f"submissions/partial/{NB1}.ipynb"], options).result()
    assert any("provisioner is not registered" in note for note in result.notes), result.notes
    assert [tuple(str(value) for value in row.as_csv()) for row in result.rows] == given_below(
        [row for row in expected_for("partial") if row[1] == NB1])


def test_the_default_jobs_fit_the_cores_and_the_memory():
    from looplab.grade.kernels.capacity import default_jobs
    from looplab.grade.shared.limits import KERNEL_MEMORY
    assert default_jobs(cores=8, memory=64 * KERNEL_MEMORY) == 8  # a big machine: one per core
    assert default_jobs(cores=8, memory=2 * KERNEL_MEMORY + 1) == 2  # a laptop: what the memory holds
    assert default_jobs(cores=8, memory=KERNEL_MEMORY // 2) == 1  # never none
    assert default_jobs() >= 1


def test_a_slot_is_started_per_submission_at_most_and_a_usage_error_starts_none(monkeypatch):
    """Each --jobs slot starts a kernel template: one notebook graded starts one, whatever --jobs says; a path that is
    not there is refused before any slot is made."""
    from looplab.grade import grading

    class Made(Exception):
        pass

    slots = []

    def grader_made(**options):  # stands in for the runner's Grader: records its slots, starts nothing
        slots.append(options["jobs"])
        raise Made

    monkeypatch.setattr(grading, "Grader", grader_made)
    monkeypatch.chdir(WORKDIR)
    for paths, jobs in (([f"submissions/partial/{NB1}.ipynb"], 8), (["submissions"], 2)):
        with pytest.raises(Made):
            grading.grade(paths, grading.GradingOptions(jobs=jobs, isolation="none"))
    assert slots == [1, 2]  # one notebook: one slot; a class: every slot works
    with pytest.raises(grading.UsageError, match="no-such-learner"):
        grading.grade(["submissions/no-such-learner"], grading.GradingOptions(jobs=3, isolation="none"))
    assert slots == [1, 2]


def test_stopped_cells_name_each_limit_and_read_back_as_their_status():
    from looplab.grade.exports.class_report import status_of
    from looplab.grade.shared.status import Status, stops_text
    assert stops_text([(16, 10)]) == "cell 16 ran past the 10 s limit"
    assert stops_text([(16, 5), (17, 5)]) == "cells 16 and 17 ran past the 5 s limit"
    mixed = stops_text([(16, 10), (18, 3), (20, 3)])
    assert mixed == "cell 16 ran past the 10 s limit, cells 18 and 20 past the 3 s limit"
    assert status_of(Status.CELL_STOPPED.text(stops=mixed)) is Status.CELL_STOPPED
    # "stopped: {stops}" matches any "stopped: ...": the longer template wins.
    assert status_of(Status.NOTEBOOK_STOPPED.text(seconds="6")) is Status.NOTEBOOK_STOPPED


def test_a_cell_after_a_stopped_one_gets_the_shorter_limit_and_a_grader_s_cell_outlasts_its_checks():
    from looplab.grade.shared.limits import AFTER_A_STOP, CHECK_SECONDS
    from looplab.grade.kernels.outcome import Outcome
    from looplab.grade.submissions.plan import GraderCell
    from looplab.grade.kernels.runner import Grader
    plan = SimpleNamespace(origin=[GraderCell("start"), 1, 2, GraderCell("check", ["1.1"]), 3], cell_limit=10)
    outcome = Outcome(current=1)
    assert Grader._cell_limit(plan, outcome) == 10
    outcome.timed_out[1] = 10
    outcome.current = 2
    assert Grader._cell_limit(plan, outcome) == AFTER_A_STOP
    outcome.current = 3
    assert Grader._cell_limit(plan, outcome) > CHECK_SECONDS  # the check's own limit ends it first
    plan.cell_limit = 1
    outcome.current = 4
    assert Grader._cell_limit(plan, outcome) == 1  # never longer than the cell limit


def test_the_limits_fit_together():
    """A learner's check cell after a stop must end by the check's own limit (its words), not the cell's."""
    from looplab.grade.shared import limits
    assert limits.CHECK_SECONDS < limits.AFTER_A_STOP < limits.DEFAULT_CELL_TIMEOUT
    assert limits.MEMORY_WATCH < limits.KERNEL_MEMORY < limits.ADDRESS_SPACE
