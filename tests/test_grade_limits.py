"""The grader's limits and kernels: the endless loop under the short cell limit, the total limit, plain
kernels and a missing provisioner, each graded on its own and compared with tests/test_grade.py's
expected rows. (A file of their own, so that the suite's workers run them beside the big gradebook.)"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from looplab import grade
from looplab.course import COURSE
from tests.test_grade import (CELL_TIMEOUT, ENDLESS, NB1, WORKDIR, expected_for, given_below, read_csv,
                               run_grader)


def test_an_endless_loop_is_stopped_at_the_cell_limit_and_the_rest_still_counts(tmp_path):
    out = tmp_path / "grades.csv"
    run = run_grader(f"submissions/{ENDLESS}", "--cell-timeout", str(CELL_TIMEOUT), "--out", str(out), "--quiet")
    assert run.returncode == 0, run.stderr
    assert [tuple(row) for row in read_csv(out)[1]] == given_below(expected_for(ENDLESS))


def test_a_notebook_past_the_total_limit_is_stopped_and_the_rest_still_counts(tmp_path):
    out = tmp_path / "grades.csv"
    run = run_grader(f"submissions/endless_loop/{NB1}.ipynb", "--cell-timeout", str(CELL_TIMEOUT),
                     "--timeout", "8", "--out", str(out), "--quiet")
    assert run.returncode == 0, run.stderr
    _, rows = read_csv(out)
    stopped = "stopped: the notebook ran past the total limit (8 s)"
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
    from looplab.grade import kernels

    monkeypatch.setattr(kernels, "PROVISIONER_NAME", "looplab-not-registered")
    monkeypatch.chdir(WORKDIR)
    options = grade.GradingOptions(jobs=1, cell_timeout=CELL_TIMEOUT)
    with ThreadPoolExecutor(1) as thread:  # its own thread: an earlier test may leave this one's event loop running
        result = thread.submit(grade.grade, [f"submissions/partial/{NB1}.ipynb"], options).result()
    assert any("provisioner is not registered" in note for note in result.notes), result.notes
    assert [tuple(str(value) for value in row.as_csv()) for row in result.rows] == given_below(
        [row for row in expected_for("partial") if row[1] == NB1])


def test_the_default_jobs_fit_the_cores_and_the_memory():
    from looplab.grade.__main__ import default_jobs
    from looplab.grade.sandbox import KERNEL_MEMORY
    assert default_jobs(cores=8, memory=64 * KERNEL_MEMORY) == 8  # a big machine: one per core
    assert default_jobs(cores=8, memory=2 * KERNEL_MEMORY + 1) == 2  # a laptop: what the memory holds
    assert default_jobs(cores=8, memory=KERNEL_MEMORY // 2) == 1  # never none
    assert default_jobs() >= 1
