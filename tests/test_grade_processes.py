"""A notebook's processes: limits that count CPU time, not the clock; limits that hold for the whole tree of
processes a notebook starts; and nothing of a submission left running once the grader has written its results.

Each runs the cgroup way (where this machine lets the grader make one, as root on CI) and the /proc way
(LOOPLAB_GRADE_CGROUPS=0, as on a learner's laptop or in a container)."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import nbformat
import pytest

from looplab.course import COURSE
from looplab.grade.kernels import cgroups, process_tree, sandbox
from tests.test_grade import (CELL_TIMEOUT, ENDLESS, NB1, RUNAWAY_ENV, WORKDIR, expected_for, given_below,
                              read_csv)

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "grading_fixtures"))
import make_fixtures  # noqa: E402

WAYS = [pytest.param("", id="cgroup"), pytest.param("0", id="proc")]


def cgroup_made(way: str | None) -> bool:
    """Whether the grader can make a cgroup here, asked for `way` ("" either version, "v1" or "v2"; None: as
    this process's environment asks, which is what a grader run with it gets)."""
    previous = os.environ.get("LOOPLAB_GRADE_CGROUPS")
    if way is not None:
        os.environ["LOOPLAB_GRADE_CGROUPS"] = way
    try:
        group = cgroups.make("probe")
    finally:
        os.environ.pop("LOOPLAB_GRADE_CGROUPS", None)
        if previous is not None:
            os.environ["LOOPLAB_GRADE_CGROUPS"] = previous
    if group is None:
        return False
    group.remove()
    cgroups.remove_parents()
    return True


def needs(way: str) -> None:
    if not sys.platform.startswith("linux"):
        pytest.skip("the grader follows processes on Linux only")
    if way != "0" and not cgroup_made(way):
        pytest.skip(f"no cgroup {way or ''} can be made here (not root, no delegation)")


# It waits for a line first, as a kernel waits for its first cell: the test makes the tree (which puts the root in
# the cgroup) before anything is started, as the grader does. Without the wait, on a loaded machine the child could
# be born before the root was moved, outside the cgroup, and its second of CPU was never counted.
SPINS_THEN_DETACHES = """import os, subprocess, sys, time
sys.stdin.readline()
child = subprocess.Popen([sys.executable, "-c", "import time\\nt = time.process_time()\\n"
                          "while time.process_time() - t < 1: pass\\n"
                          "import os\\nif os.fork() == 0:\\n    os.setsid()\\n    time.sleep(60)\\n"])
child.wait()
time.sleep(30)
"""


@pytest.mark.parametrize("way", [*WAYS, pytest.param("v1", id="cgroup-v1"), pytest.param("v2", id="cgroup-v2")])
def test_the_tree_counts_its_subprocesses_cpu_and_every_process_is_killed(way, monkeypatch):
    needs(way)
    monkeypatch.setenv("LOOPLAB_GRADE_CGROUPS", way)
    group = cgroups.make("test-tree")
    assert (group is not None) == (way != "0")
    if group is not None and way in ("v1", "v2"):
        assert set(group.version.values()) == {int(way[1])}, group.describe()
    process_tree.become_subreaper()  # the detached grandchild comes back to this process, not to init
    # This worker's children from earlier tests (the browser tests' Playwright driver) are not orphans to kill,
    # as the grader keeps its own (runner.Grader.before).
    before = set(process_tree.children(os.getpid()))
    root = subprocess.Popen([sys.executable, "-c", SPINS_THEN_DETACHES], stdin=subprocess.PIPE, text=True)
    try:
        tree = process_tree.NotebookTree(root.pid, group, adopted=lambda: process_tree.adopted(before | {root.pid}))
        root.stdin.write("go\n")
        root.stdin.close()
        deadline = time.monotonic() + 60
        while tree.cpu_seconds() < 1 and time.monotonic() < deadline:  # the subprocess's second, not the root's
            time.sleep(0.05)
        assert tree.cpu_seconds() >= 1
        members = tree.members()
        assert len(members) >= 2, members  # the root and the setsid grandchild (its parent has ended)
        assert tree.kill()
        assert [pid for pid in tree.members() if pid != root.pid and process_tree.running(pid)] == []
    finally:
        root.kill()
        root.wait()
        if group is not None:
            group.kill()
            group.remove()
            cgroups.remove_parents()


BUDGET = """
import os, time
from looplab.checks.core import CheckTimeout, time_limit, time_limit_seconds
os.environ["LOOPLAB_CHECK_SECONDS"], os.environ["LOOPLAB_CHECK_WALL_SECONDS"] = "1", "3"
assert time_limit_seconds() == (1, 3)
with time_limit(*time_limit_seconds()):
    time.sleep(1.5)  # past the limit by the clock, no CPU: a busy machine's wait is not the learner's
try:
    with time_limit(*time_limit_seconds()):
        while True:  # CPU time
            pass
except CheckTimeout:
    pass
else:
    raise AssertionError("a loop of CPU was not stopped")
begun = time.monotonic()
try:
    with time_limit(*time_limit_seconds()):
        time.sleep(10)  # code that waits: the wall-clock bound
except CheckTimeout:
    assert time.monotonic() - begun < 5
else:
    raise AssertionError("a wait was not stopped")
del os.environ["LOOPLAB_CHECK_SECONDS"]
assert time_limit_seconds() == (10, None)  # the learner's own notebook: 10 s by the clock
print("ok")
"""


def test_the_check_budget_under_the_grader_is_cpu_time_with_a_wall_clock_bound():
    # ITIMER_PROF counts the CPU of the whole process: in a process of its own, as a kernel is, not in a
    # test worker whose other threads (left by earlier tests) spend CPU during the sleep.
    done = subprocess.run([sys.executable, "-c", BUDGET], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr


def notebook_with(cells: list[tuple[str, str]]) -> nbformat.NotebookNode:
    """The first notebook's solution with these cells (source, id) added before its first exercise."""
    notebook = make_fixtures.solution(NB1)
    at = make_fixtures.exercise_index(notebook, "1.1")
    for offset, (source, cell_id) in enumerate(cells):
        notebook.cells.insert(at + offset, make_fixtures.code_cell(source, cell_id))
    return notebook


FORKS = """import os, time
children = []
for _ in range(8):  # each holds 300 MB: 2.4 GB together, each far below the kernel's own 1 GB
    pid = os.fork()
    if pid == 0:
        try:
            block = bytearray(300 << 20)
            for at in range(0, len(block), 4096):
                block[at] = 1
            time.sleep(6)
        finally:
            os._exit(0)
    children.append(pid)
killed = sum(os.WIFSIGNALED(os.waitpid(pid, 0)[1]) for pid in children)
print("children killed:", killed)
"""


@pytest.mark.parametrize("way", WAYS)
def test_a_kernel_s_children_share_the_notebook_s_memory_limit_and_the_next_notebook_is_unaffected(
        way, tmp_path, monkeypatch):
    needs(way)
    learners = tmp_path / "submissions"
    for learner, notebook in (("a_forks", notebook_with([(FORKS, "fixture-forks")])),
                              ("b_honest", make_fixtures.solution(NB1))):
        (learners / learner).mkdir(parents=True)
        nbformat.write(notebook, learners / learner / f"{NB1}.ipynb")
    out, feedback = tmp_path / "grades.csv", tmp_path / "feedback"
    env = dict(os.environ, LOOPLAB_GRADE_CGROUPS=way)
    run = subprocess.run([sys.executable, "-m", "looplab.grade", "submissions", "--jobs", "1", "--isolation", "none",
                          "--cell-timeout", "60", "--out", str(out), "--feedback", str(feedback), "--quiet"],
                         cwd=tmp_path, capture_output=True, text=True, timeout=300, env=env)
    assert run.returncode == 0, run.stderr
    _, rows = read_csv(out)
    solved = [[e.id, str(e.points), "solved"] for e in COURSE.notebook(NB1).exercises]
    assert [row[2:4] + row[5:6] for row in rows if row[0] == "b_honest"] == solved  # the next one, in the same slot
    executed = nbformat.read(feedback / "a_forks" / f"{NB1}.ipynb", as_version=4)
    printed = "".join(output.get("text", "") for cell in executed.cells if cell.get("id") == "fixture-forks"
                      for output in cell.get("outputs", []))
    assert "children killed:" in printed, printed
    # 1.25 GB for the whole notebook: beside the kernel, at most four of the children (1.2 GB) fit.
    assert int(printed.split("children killed:")[1].split()[0]) >= 4, printed


# The daemon sleeps far longer than the grading of its notebook takes, even on a loaded machine, so a daemon
# that survived the grader would still be asleep when the test looks; if it ever woke (grading slower than its
# sleep), it says so in `woke` first, a file the grader never writes: survival shows whatever the timing.
DETACHES = """import os, time
if os.fork() == 0:  # a daemon: a new session, its parent gone, so neither the kernel's group nor its tree holds it
    os.setsid()
    if os.fork() == 0:
        with open({pidfile!r}, "w") as handle:
            handle.write(str(os.getpid()))
        time.sleep(120)
        open({woke!r}, "w").close()
        with open({target!r}, "w") as handle:
            handle.write("learner,notebook,exercise,points\\nme,01_one_tool_call,1.1,1000\\n")
        with open({results!r}, "w") as handle:
            handle.write('{{"score": 1000, "tests": []}}')
    os._exit(0)
os.wait()
"""


@pytest.mark.parametrize("way", WAYS)
def test_a_detached_child_is_gone_before_the_gradebook_is_written_and_sleeping_costs_nothing(
        way, tmp_path, monkeypatch):
    """Without isolation (a Gradescope container): the grader, a child subreaper or the cgroup's kill, gets
    the double-forked daemon back and kills it; the cell that sleeps 4 s under a 2 s limit is not stopped:
    the limit is CPU time, its wall-clock bound three times that.

    No waiting for the daemon: looked at once the grader has returned, a daemon that outlived it is either
    still running or has woken, and then `woke` exists; the gradebook and the results read after that look
    are the grader's, as written when it returned."""
    needs(way)
    out, results, pidfile, woke = (tmp_path / name for name in ("grades.csv", "results.json", "daemon.pid", "woke"))
    notebook = notebook_with([(DETACHES.format(pidfile=str(pidfile), woke=str(woke), target=str(out),
                                               results=str(results)), "fixture-daemon"),
                              ("import time\n\ntime.sleep(4)", "fixture-sleeps")])
    (tmp_path / "submissions" / "learner").mkdir(parents=True)
    nbformat.write(notebook, tmp_path / "submissions" / "learner" / f"{NB1}.ipynb")
    env = dict(os.environ, LOOPLAB_GRADE_CGROUPS=way)
    run = subprocess.run([sys.executable, "-m", "looplab.grade", "submissions", "--isolation", "none",
                          "--cell-timeout", "2", "--out", str(out), "--gradescope", str(results), "--quiet"],
                         cwd=tmp_path, capture_output=True, text=True, timeout=300, env=env)
    assert run.returncode == 0, run.stderr
    written = out.read_bytes(), results.read_bytes()
    daemon = int(pidfile.read_text())
    assert not process_tree.running(daemon), f"the daemon {daemon} outlived the grader"
    assert not woke.exists(), "the daemon woke: it was not killed"
    assert (out.read_bytes(), results.read_bytes()) == written
    _, rows = read_csv(out)
    assert [row[2:4] + row[5:7] for row in rows] == [[e.id, str(e.points), "solved", ""]
                                                    for e in COURSE.notebook(NB1).exercises]


def test_without_a_cgroup_an_endless_loop_is_stopped_by_its_cpu_time_read_from_proc(tmp_path):
    """The /proc way, graded under the same short limits: the same rows as the cgroup way (tests/test_grade_limits.py).

    Where no cgroup can be made and bubblewrap cannot run (a learner's laptop, a container), the runaways of
    tests/test_grade_limits.py, graded with the grader's defaults, are graded this very way: /proc, no isolation.
    Their run proves these rows there; this one runs where they take the cgroup way or a sandbox (as root on CI)."""
    needs("0")
    if not cgroup_made(None) and not sandbox.choose("auto").sandboxed:
        pytest.skip("no cgroup and no bubblewrap here: tests/test_grade_limits.py's runaways grade the endless loop "
                    "the /proc way without isolation")
    out = tmp_path / "grades.csv"
    run = subprocess.run([sys.executable, "-m", "looplab.grade", f"submissions/{ENDLESS}", "--isolation", "none",
                          "--cell-timeout", str(CELL_TIMEOUT), "--out", str(out), "--quiet"], cwd=WORKDIR,
                         capture_output=True, text=True, timeout=600, env=dict(RUNAWAY_ENV, LOOPLAB_GRADE_CGROUPS="0"))
    assert run.returncode == 0, run.stderr
    assert [tuple(row) for row in read_csv(out)[1]] == given_below(expected_for(ENDLESS))


def test_the_limits_of_a_notebook_fit_together():
    """The limits fit together: a wall-clock bound above each CPU limit, the notebook's memory above a kernel's."""
    from looplab.grade.shared import limits
    assert limits.WALL_FACTOR > 1
    assert limits.NOTEBOOK_MEMORY > limits.KERNEL_MEMORY
    assert limits.POLL_SECONDS < limits.STUCK_GRACE
