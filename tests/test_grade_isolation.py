"""Grading a class safely: a hostile submission harms no one else, reaches nothing, and leaves nothing behind.

The hostile class is built here from the course's first solution notebook, each with one cell of
its own that reports what it managed on its output (read back from the feedback notebook), graded
together with honest learners:

    a_startup   writes an IPython startup file that makes every check pass, into its own IPython
                directory and any other it can find (once, all kernels shared one)
    b_killer    kills its kernel's parent: the template (once, every kernel running then) or, with
                plain kernels, the grader itself
    c_snoop     reads other submissions, the grader's command line, the instructor's home; writes
                into the submissions, the course, the venv, the home; connects to a loopback port;
                signals the grader; leaves a `setsid` child behind
    d_stub      an honest learner who solved nothing: a startup file that made checks pass would show
    e_honest    an honest learner who solved everything

Under bubblewrap every honest row is what it is when graded alone, and none of the snoop's attempts
succeeds. Without isolation the grader still writes its gradebook, removes its temporary folder and
keeps honest rows intact when a kernel kills its parent.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import nbformat
import pytest

import looplab
from looplab import grade
from looplab.grade.kernels import sandbox
from looplab.grade.kernels.outputs import OUTPUT_LIMIT, output_size
from looplab.grade.shared.limits import SHM_LIMIT, SUBMISSION_LIMIT
from tests.test_grade import NB1, make_fixtures, read_csv, refused

CELL_TIMEOUT = 5
WHY_NOT = sandbox.probe()
needs_bwrap = pytest.mark.skipif(WHY_NOT is not None, reason=f"bubblewrap cannot sandbox here: {WHY_NOT}")

STARTUP = '''
import glob, os
evil = "import looplab.checks.core as c\\nc.run_check = lambda *a, **k: (_ for _ in ()).throw(SystemExit)\\n" \\
       "import looplab.checks\\nlooplab.checks.run_check = lambda n, o: looplab.checks.core.CheckResult(" \\
       "n, 'x', 9, 9, ['startup'])\\n"
targets = [os.environ["IPYTHONDIR"]]
if REACH_OTHERS:
    targets += glob.glob(os.path.join(os.getcwd(), "../../../*/scratch/ipython")) \\
               + glob.glob("/tmp/looplab-grade-*/*/scratch/ipython") + glob.glob("/tmp/looplab-grade-*/ipython")
for folder in sorted({os.path.realpath(folder) for folder in targets}):
    try:
        os.makedirs(os.path.join(folder, "profile_default", "startup"), exist_ok=True)
        with open(os.path.join(folder, "profile_default", "startup", "00-evil.py"), "w") as f:
            f.write(evil)
        print("STARTUP written", folder)
    except OSError as error:
        print("STARTUP blocked", folder, type(error).__name__)
'''

KILLER = "import os\nos.kill(os.getppid(), 9)"

SNOOP = '''
import glob, os, signal, socket, subprocess, sys
def attempt(name, action):
    try:
        action()
        print("RESULT", name, "succeeded")
    except Exception as error:
        print("RESULT", name, "blocked", type(error).__name__)
def found(paths):
    if not paths:
        raise FileNotFoundError("nothing found")
def read(path):
    with open(path, "rb") as handle:
        handle.read()
def write(folder):
    with open(os.path.join(folder, "pwned-{token}"), "w") as handle:
        handle.write("pwned")
def walk_up():
    seen, folder, skip = [], os.getcwd(), {skip!r}
    while True:
        for root, dirs, files in os.walk(folder):
            dirs[:] = [d for d in dirs if os.path.join(root, d) not in skip]
            seen += [os.path.join(root, f) for f in files if f.endswith(".ipynb") and root != os.getcwd()]
        if folder == "/":
            break
        folder = os.path.dirname(folder)
    found(seen)
def grader_command_line():
    found([p for p in glob.glob("/proc/[0-9]*/cmdline")
           if any(secret in open(p, "rb").read().decode(errors="replace") for secret in {secrets!r})])
def connect():
    socket.create_connection(("127.0.0.1", {port}), timeout=2).close()
def signal_grader():
    os.kill({grader_pid}, 0)
def leave_a_child():
    code = "import time\\nfor _ in range(300):\\n    time.sleep(0.1)\\n    try: open({marker!r}, 'w').write('alive')\\n    except OSError: pass"
    subprocess.Popen([sys.executable, "-c", code, "{token}"], start_new_session=True)
attempt("read-sibling", lambda: read({sibling!r}))
attempt("list-submissions", lambda: found(os.listdir({submissions!r})))
attempt("walk-up-finds-notebooks", walk_up)
attempt("grader-command-line", grader_command_line)
attempt("list-home", lambda: found([e for e in os.listdir({home!r}) if e not in {bound_in_home!r}]))
for name, folder in {targets!r}:
    attempt("write-" + name, lambda: write(folder))
attempt("connect-loopback", connect)
attempt("signal-grader", signal_grader)
leave_a_child()
'''


def startup(reach_others: bool) -> str:
    return f"REACH_OTHERS = {reach_others}\n" + STARTUP


def with_cell(source: str, cell_id: str):
    notebook = make_fixtures.solution(NB1)
    notebook.cells.insert(1, make_fixtures.code_cell(source, cell_id))
    return notebook


def write(notebook, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    notebook.metadata.pop("widgets", None)
    nbformat.write(notebook, path)


def honest(submissions: Path) -> None:
    stub = make_fixtures.solution(NB1)
    for number in ("1.1", "1.2", "1.3"):
        make_fixtures.stub_exercise(stub, number)
    write(stub, submissions / "d_stub" / f"{NB1}.ipynb")
    write(make_fixtures.solution(NB1), submissions / "e_honest" / f"{NB1}.ipynb")


def graded(submissions: Path, out: Path, *options: str, env: dict | None = None) -> dict[str, list[tuple]]:
    """Grade with the command line (its command line is one a learner could look for); the rows by learner."""
    run = subprocess.run([sys.executable, "-m", "looplab.grade", str(submissions), "--out", str(out), "--cell-timeout",
                          str(CELL_TIMEOUT), "--quiet", *options], capture_output=True, text=True, timeout=240, env=env)
    assert run.returncode == 0, run.stderr
    _, table = read_csv(out)
    file = grade.CSV_COLUMNS.index("file")
    by_learner: dict[str, list[tuple]] = {}
    for row in table:  # each run grades its own copy: the file named from the learner's folder on
        row[file] = row[file][row[file].index(row[0]):]
        by_learner.setdefault(row[0], []).append(tuple(row))
    return by_learner


def outputs_of(feedback: Path, learner: str) -> str:
    notebook = nbformat.read(next(p for p in feedback.rglob("*.ipynb") if learner in str(p)), as_version=4)
    return "".join(output.get("text", "") for cell in notebook.cells if cell.cell_type == "code"
                   for output in cell.get("outputs", []))


def leftover_processes(token: str) -> list[str]:
    found = []
    for path in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            if token in path.read_bytes().decode(errors="replace"):
                found.append(path.parent.name)
        except OSError:
            pass
    return found


@pytest.fixture(scope="module")
def alone(tmp_path_factory):
    """The honest learners' rows graded without the hostile ones, in one slot: one kernel template to start
    (seconds of CPU); the hostile classes are graded side by side."""
    submissions = tmp_path_factory.mktemp("alone") / "submissions"
    honest(submissions)
    return graded(submissions, submissions.parent / "grades.csv", "--jobs", "1")


@needs_bwrap
def test_a_hostile_class_under_bubblewrap_reaches_nothing_and_changes_no_honest_row(tmp_path, alone):
    token = uuid.uuid4().hex
    submissions, feedback, home = tmp_path / "submissions", tmp_path / "feedback", Path.home()
    marker = tmp_path / "leftover-child-was-here"
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    listener.setblocking(False)
    honest(submissions)
    targets = [("submissions", str(submissions)), ("course", str(Path(looplab.__file__).parent)),
               ("venv", sys.prefix), ("home", str(home))]
    read_only = sandbox.read_only_paths()
    skip = sorted({"/usr", "/proc", "/sys", "/dev", "/etc"} | {str(path) for path in read_only})
    bound_in_home = sorted({path.relative_to(home).parts[0] for path in read_only if path.is_relative_to(home)})
    # `grader_pid` is this process, the grader's parent (the grader's own pid is not known before it starts).
    snoop = SNOOP.format(token=token, skip=skip, bound_in_home=bound_in_home, secrets=[str(submissions), str(feedback)], port=listener.getsockname()[1],
                         grader_pid=os.getpid(), marker=str(marker), sibling=str(submissions / "e_honest" / f"{NB1}.ipynb"),
                         submissions=str(submissions), home=str(home), targets=targets)
    write(with_cell(startup(reach_others=True), "hostile-startup"), submissions / "a_startup" / f"{NB1}.ipynb")
    write(with_cell(KILLER, "hostile-killer"), submissions / "b_killer" / f"{NB1}.ipynb")
    write(with_cell(snoop, "hostile-snoop"), submissions / "c_snoop" / f"{NB1}.ipynb")
    try:
        result = graded(submissions, tmp_path / "grades.csv", "--jobs", "2", "--isolation", "bwrap",
                        "--feedback", str(feedback))
        time.sleep(0.3)  # a child that outlived its sandbox would write its marker by now
        leftovers = leftover_processes(token)
        written = [folder for _, folder in targets if (Path(folder) / f"pwned-{token}").exists()]
        connected = True
        try:
            listener.accept()[0].close()
        except BlockingIOError:
            connected = False
    finally:
        listener.close()
        for _, folder in targets:
            (Path(folder) / f"pwned-{token}").unlink(missing_ok=True)
        for pid in leftover_processes(token):
            os.kill(int(pid), 9)

    assert {learner: result[learner] for learner in alone} == alone
    report = outputs_of(feedback, "c_snoop")
    attempts = [line for line in report.splitlines() if line.startswith("RESULT")]
    assert len(attempts) == 7 + len(targets), report
    assert all(" blocked " in line for line in attempts), report
    assert not written and not connected and not leftovers and not marker.exists()
    startup_report = outputs_of(feedback, "a_startup")
    # Only into its own IPython directory (emptied before the next notebook): no other kernel's is visible.
    assert startup_report.count("STARTUP written") == 1, startup_report
    killer = result["b_killer"]
    assert killer and all(row[5] != "solved" for row in killer)  # it killed its own kernel, and only that


def test_without_isolation_a_kernel_that_kills_its_parent_harms_no_one_else(tmp_path, alone):
    """Forked kernels: each slot has its own template; plain kernels: a small parent, not the grader."""
    submissions = tmp_path / "submissions"
    honest(submissions)
    write(with_cell(KILLER, "hostile-killer"), submissions / "b_killer" / f"{NB1}.ipynb")
    # Only into its own IPython directory: without isolation the other slots' are there to write into.
    write(with_cell(startup(reach_others=False), "hostile-startup"), submissions / "a_startup" / f"{NB1}.ipynb")
    for plain in (False, True):
        temp = tmp_path / f"temp-{plain}"
        temp.mkdir()
        result = graded(submissions, tmp_path / f"grades-{plain}.csv", "--isolation", "none", "--jobs", "2",
                        *(["--plain-kernels"] if plain else []), env={**os.environ, "TMPDIR": str(temp)})
        assert {learner: result[learner] for learner in alone} == alone, plain
        assert "b_killer" in result
        assert list(temp.iterdir()) == []  # its temporary folders removed


# Litter for the next notebook of the slot: a tree too deep for shutil.rmtree (it ended the run without a
# gradebook), a folder made unreadable, then files in /dev, /dev/shm and a System V segment (memory no limit
# counted, kept into the next notebook).
DEEP = """
import os
fd = os.open(".", os.O_RDONLY)
for level in range(3000):
    os.mkdir("d", dir_fd=fd)
    inner = os.open("d", os.O_RDONLY, dir_fd=fd)
    os.close(fd)
    fd = inner
os.close(fd)
os.chmod("d", 0)
print("LITTER deep tree made")
"""
DEV_LITTER = """
import ctypes
def attempt(name, path, size):
    try:
        with open(path, "wb") as handle:
            for _ in range(size >> 20):
                handle.write(bytes(1 << 20))
        print("LITTER", name, "succeeded")
    except OSError as error:
        print("LITTER", name, "blocked", type(error).__name__)
attempt("dev", "/dev/looplab-litter", 1 << 20)
attempt("shm-small", "/dev/shm/looplab-litter", 1 << 20)
attempt("shm-big", "/dev/shm/looplab-big", 256 << 20)
print("LITTER sysv", ctypes.CDLL(None).shmget(0, 1 << 20, 0o1000 | 0o600) >= 0)  # IPC_PRIVATE, IPC_CREAT
"""
READER = """
import os
print("READER work", sorted(os.listdir(".")))
print("READER dev", sorted(entry for entry in os.listdir("/dev") if "looplab" in entry))
print("READER shm", sorted(os.listdir("/dev/shm")))
print("READER sysv", len(open("/proc/sysvipc/shm").read().splitlines()) - 1)
"""
FILLER = """
import os, time
for number in range(2):  # blocks taken on the grader's disk at once, without writing them
    with open(f"filler-{number}", "wb") as handle:
        os.posix_fallocate(handle.fileno(), 0, 600 << 20)
time.sleep(30)  # the grader stops it (it looks every second) before the cell limit (5 s)
"""
FLOOD = """
line = "x" * 99_999
for _ in range(100):  # 10 MB, fifty times what a cell keeps: a flood, without seconds of CPU on both sides
    print(line, flush=True)
"""


def litter_class(submissions: Path, isolated: bool) -> None:
    """Honest learners graded after hostile ones in one slot (`--jobs 1`); links and an oversized file beside them."""
    honest(submissions)
    write(with_cell(DEEP + (DEV_LITTER if isolated else ""), "hostile-litter"), submissions / "a_litter" / f"{NB1}.ipynb")
    write(with_cell(FILLER, "hostile-filler"), submissions / "b_filler" / f"{NB1}.ipynb")
    write(with_cell(FLOOD, "hostile-flood"), submissions / "b_flood" / f"{NB1}.ipynb")
    write(with_cell(READER if isolated else READER.split('print("READER dev"')[0], "hostile-reader"),
          submissions / "c_reader" / f"{NB1}.ipynb")
    (submissions / "f_link").mkdir()
    (submissions / "f_link" / f"{NB1}.ipynb").symlink_to(Path("..") / "e_honest" / f"{NB1}.ipynb")
    (submissions / "g_linked_folder").symlink_to(submissions / "e_honest")
    huge = make_fixtures.solution(NB1)
    huge.cells[0]["attachments"] = {"big.png": {"image/png": "A" * (SUBMISSION_LIMIT + 1)}}
    write(huge, submissions / "h_huge" / f"{NB1}.ipynb")


@pytest.mark.parametrize("isolation", [
    pytest.param("bwrap", marks=needs_bwrap), "none"])
def test_what_a_notebook_leaves_behind_never_reaches_the_next_and_the_gradebook_is_always_written(
        tmp_path, alone, isolation):
    isolated = isolation == "bwrap"
    submissions, feedback = tmp_path / "submissions", tmp_path / "feedback"
    temp = Path(tempfile.mkdtemp(prefix="lg-"))  # short: a kernel's IPC socket path must fit in 108 bytes
    litter_class(submissions, isolated)
    try:
        result = graded(submissions, tmp_path / "grades.csv", "--jobs", "1", "--isolation", isolation, "--feedback",
                        str(feedback), env={**os.environ, "TMPDIR": str(temp)})
        left = list(temp.iterdir())
    finally:
        shutil.rmtree(temp, ignore_errors=True)

    assert {learner: result[learner] for learner in alone} == alone
    for hostile in ("a_litter", "b_flood", "c_reader"):  # each still graded: nothing it left made a "grader error"
        assert [row[5] for row in result[hostile]] == ["solved"] * len(result[hostile]), result[hostile]
    assert [row[5] for row in result["f_link"] + result["g_linked_folder"]] == ["a link, not read"] * 2
    assert [row[5] for row in result["h_huge"]] == ["too large"]
    assert {row[5] for row in result["b_filler"]} == {"stopped: the notebook wrote more than 1024 MB into its folders"}
    assert left == []  # its temporary folder removed, the deep tree with it

    litter = outputs_of(feedback, "a_litter")
    assert "LITTER deep tree made" in litter
    reader = outputs_of(feedback, "c_reader")
    assert f"READER work ['{NB1}.ipynb']" in reader, reader
    if isolated:
        assert "LITTER dev blocked" in litter and "LITTER shm-small succeeded" in litter, litter
        assert "LITTER shm-big blocked" in litter and "LITTER sysv True" in litter  # /dev/shm holds SHM_LIMIT at most
        assert "READER dev []" in reader and "READER shm []" in reader and "READER sysv 0" in reader, reader

    flood = nbformat.read(next(feedback.rglob(f"b_flood/{NB1}.ipynb")), as_version=4)
    [cell] = [cell for cell in flood.cells if cell.get("id") == "hostile-flood"]
    assert sum(map(output_size, cell.outputs)) < OUTPUT_LIMIT + 1000
    assert "characters of this cell's output cut by the looplab grader" in "".join(o.get("text", "") for o in cell.outputs)


def test_the_bwrap_command_line_isolates_and_binds_what_a_kernel_needs(tmp_path):
    slot = tmp_path / "slot"
    course = tmp_path / "course"
    inside, outside = course / "submissions", tmp_path / "elsewhere"
    for folder in (inside, outside):
        folder.mkdir(parents=True)
    argv = sandbox.bwrap_argv([slot / "scratch", slot / "ipc"], [Path(sys.base_prefix), course], [inside, outside])
    assert argv[0] == sandbox.BWRAP and argv[-1] == "--"
    for flag in ("--unshare-all", "--unshare-pid", "--die-with-parent", "--new-session"):
        assert flag in argv
    assert argv[argv.index("--cap-drop") + 1] == "ALL"
    assert argv[argv.index("--proc") + 1] == "/proc"

    def pairs(option):
        return [(argv[i + 1], argv[i + 2]) for i, value in enumerate(argv) if value == option]

    assert (sys.base_prefix, sys.base_prefix) in pairs("--ro-bind")
    assert (str(course), str(course)) in pairs("--ro-bind")
    assert pairs("--bind") == [(str(slot / "scratch"),) * 2, (str(slot / "ipc"),) * 2]  # nothing else writable
    tmpfs = [argv[i + 1] for i, value in enumerate(argv) if value == "--tmpfs"]
    # /dev/shm a tmpfs of its own; a hidden folder where it lies inside a bound folder (elsewhere it is simply absent)
    assert tmpfs == ["/dev/shm", str(inside)]
    dev = argv.index("--dev")
    assert argv[dev:dev + 2] == ["--dev", "/dev"] and ["--remount-ro", "/dev"] == argv[argv.index("/dev/shm") + 1:][:2]
    if "--size" in argv:  # where bwrap can size a tmpfs (0.8 and later), /dev/shm holds at most SHM_LIMIT
        assert argv[argv.index("--size"):argv.index("--size") + 4] == ["--size", str(SHM_LIMIT), "--tmpfs", "/dev/shm"]
    assert str(Path.home()) not in [source for source, _ in pairs("--ro-bind") + pairs("--bind")]
    assert argv[-3:] == ["--remount-ro", "/", "--"]


def test_the_read_only_paths_include_the_interpreter_the_venv_and_the_package():
    paths = sandbox.read_only_paths()
    for needed in (Path(sys.base_prefix), Path(sys.prefix), Path(looplab.__file__).parent):
        assert any(needed == path or path in needed.parents for path in paths), (needed, paths)


@pytest.fixture
def failing_bwrap(tmp_path):
    fake = tmp_path / "bin" / "bwrap"
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\necho 'bwrap: setting up uid map: Permission denied' >&2\nexit 1\n")
    fake.chmod(0o755)
    return fake


def test_auto_falls_back_to_no_isolation_and_says_why(failing_bwrap):
    chosen = sandbox.choose("auto", bwrap=str(failing_bwrap))
    assert not chosen.sandboxed
    assert "NOT isolated" in chosen.note and "setting up uid map: Permission denied" in chosen.note
    with pytest.raises(sandbox.IsolationUnavailable, match="setting up uid map"):
        sandbox.choose("bwrap", bwrap=str(failing_bwrap))
    assert sandbox.choose("none", bwrap=str(failing_bwrap)) == sandbox.Isolation(False)


def test_the_command_line_says_first_that_kernels_are_not_isolated(tmp_path, failing_bwrap, monkeypatch):
    notebook = tmp_path / "not_a_notebook.ipynb"
    notebook.write_text(json.dumps({"answers": {}}))
    monkeypatch.setenv("PATH", f"{failing_bwrap.parent}{os.pathsep}{os.environ['PATH']}")
    arguments = [str(notebook), "--out", str(tmp_path / "g.csv"), "--jobs", "1",
                 "--plain-kernels"]  # no template to start: nothing here needs a kernel
    results = tmp_path / "results.json"
    run = subprocess.run([sys.executable, "-m", "looplab.grade", *arguments, "--gradescope", str(results)],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    first = run.stderr.splitlines()[0]
    assert first.startswith("looplab.grade: kernels are NOT isolated") and "uid map" in first, run.stderr
    assert run.stderr.count("NOT isolated") == 2  # and again with the notes at the end
    # Said to Gradescope too, in the results themselves: a learner's code could have written them.
    said = json.loads(results.read_text())["output"]
    assert "graded WITHOUT isolation (bwrap cannot make a sandbox here: setting up uid map: Permission denied)" in said
    strict = refused(*arguments, "--isolation", "bwrap", cwd=tmp_path)  # the command line's main, in this process
    assert "--isolation bwrap" in strict and "uid map" in strict, strict
