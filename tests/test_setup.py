"""Set-up on any laptop: scripts/bootstrap.py (the README's two commands, with or without make) and
`python -m looplab doctor` (the preflight). What can be tried on this machine is tried for real: the
bootstrap run without make, a too-old Python (faked), a venv built by another Python, and each broken
piece doctor claims to find."""

from __future__ import annotations

import json
import os
import runpy
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from looplab import doctor

ROOT = Path(__file__).resolve().parent.parent
BOOTSTRAP = ROOT / "scripts" / "bootstrap.py"
bootstrap = runpy.run_path(str(BOOTSTRAP))  # its functions, without running main


def test_an_old_python_gets_one_clear_line_and_nothing_is_installed(tmp_path):
    fake_old = ("import runpy, sys\n"
                "sys.version_info = (3, 9, 6, 'final', 0)\n"
                f"sys.argv = ['bootstrap.py', 'lab']\n"
                f"runpy.run_path({str(BOOTSTRAP)!r}, run_name='__main__')\n")
    run = subprocess.run([sys.executable, "-c", fake_old], capture_output=True, text=True, cwd=tmp_path)
    assert run.returncode == 1
    assert run.stdout == ""
    [line] = run.stderr.splitlines()
    assert line.startswith("looplab needs Python 3.11 or newer; this is Python 3.9.6 (")
    assert "python.org/downloads" in line


@pytest.mark.parametrize("system, advice", [("Windows", "py -3.12 scripts\\bootstrap.py lab"),
                                            ("Darwin", "brew install python@3.12"),
                                            ("Linux", "sudo apt install python3.12 python3.12-venv")])
def test_the_advice_fits_the_system(system, advice):
    assert advice in bootstrap["version_problem"]((3, 10, 12), "/usr/bin/python3", system)
    assert bootstrap["version_problem"]((3, 11, 0), "/usr/bin/python3", system) is None


def test_a_venv_built_by_another_python_is_rebuilt(tmp_path, capsys):
    venv = tmp_path / ".venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    config = venv / "pyvenv.cfg"
    config.write_text("home = /usr/bin\ninclude-system-site-packages = false\nversion = 3.9.6\n")
    assert bootstrap["stale_reason"](str(venv), sys.version_info) == (
        f"it was built with Python 3.9.6, this is Python {sys.version_info[0]}.{sys.version_info[1]}")
    (venv / "left-over").write_text("from the old venv")
    python = bootstrap["ensure_venv"](str(venv), sys.version_info)
    assert "removing" in capsys.readouterr().out
    assert not (venv / "left-over").exists()
    assert bootstrap["venv_version"](str(venv)).startswith(f"{sys.version_info[0]}.{sys.version_info[1]}.")
    assert subprocess.run([python, "-c", "print('ok')"], capture_output=True, text=True).stdout == "ok\n"
    assert bootstrap["stale_reason"](str(venv), sys.version_info) is None


def test_the_bootstrap_runs_without_make_and_installs_once(tmp_path):
    """The real script in a copy of the course whose requirement files are empty (the real install is
    what `make test` itself runs): it builds the venv, installs, and knows next time it has."""
    course = tmp_path / "course"
    (course / "scripts").mkdir(parents=True)
    shutil.copy(BOOTSTRAP, course / "scripts")
    shutil.copy(ROOT / "pyproject.toml", course)
    (course / "requirements.txt").write_text("# nothing to install in this test\n")
    (course / "requirements-dev.txt").write_text("-r requirements.txt\n")
    env = {**os.environ, "PIP_NO_INDEX": "1"}
    first = subprocess.run([sys.executable, "scripts/bootstrap.py", "setup"], cwd=course, env=env,
                           capture_output=True, text=True)
    assert first.returncode == 0, first.stdout + first.stderr
    assert "creating the virtual environment" in first.stdout
    assert "installing the course" in first.stdout
    again = subprocess.run([sys.executable, "scripts/bootstrap.py", "setup"], cwd=course, env=env,
                           capture_output=True, text=True)
    assert again.returncode == 0
    assert "packages already installed (requirements.txt)" in again.stdout
    assert "creating" not in again.stdout


def test_jupyterlab_is_told_to_fetch_no_news(tmp_path):
    bootstrap["quiet_jupyterlab"](str(tmp_path))
    overrides = json.loads((tmp_path / "share/jupyter/lab/settings/overrides.json").read_text())
    assert overrides["@jupyterlab/apputils-extension:notification"] == {"checkForUpdates": False,
                                                                         "fetchNews": "false"}


def test_learners_get_no_test_tools():
    learner = (ROOT / "requirements.txt").read_text()
    for tool in ("pytest", "nbval", "playwright", "hypothesis"):
        assert tool not in learner
        assert tool in (ROOT / "requirements-dev.txt").read_text()


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def listening(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


def session_processes(session: int) -> list[str]:
    """The command lines of the live processes of a session (read from /proc: no psutil needed)."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            stat = (entry / "stat").read_text()
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
        except (OSError, ValueError):
            continue  # not a process, or gone meanwhile
        state, _ppid, _group, its_session = stat.rpartition(")")[2].split()[:4]
        if entry.name.isdigit() and int(its_session) == session and state != "Z":
            found.append(command)
    return found


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc; exec is the Linux and macOS way")
@pytest.mark.parametrize("how", ["SIGTERM to the script", "Ctrl+C (SIGINT to the terminal's process group)"])
def test_stopping_the_lab_leaves_nothing_behind(tmp_path, how):
    """The real `bootstrap.py lab` (on a free port, no browser), stopped the two ways a terminal does: it is
    JupyterLab itself (exec), so the signal stops JupyterLab, no traceback is printed, no process of its
    session is left and the port is free."""
    port = free_port()
    log = tmp_path / "lab.log"
    env = {**os.environ, "JUPYTER_CONFIG_DIR": str(tmp_path / "config"), "JUPYTER_RUNTIME_DIR": str(tmp_path / "run"),
           "BROWSER": "true"}
    with log.open("w") as output:
        # As a terminal starts it: with Ctrl+C's default action. A test run started in the background of a script
        # (`cmd &`) ignores SIGINT, and an ignored signal stays ignored through exec: JupyterLab never stopped.
        as_in_a_terminal = ("import os, signal, sys\nsignal.signal(signal.SIGINT, signal.SIG_DFL)\n"
                            "os.execv(sys.executable, [sys.executable, *sys.argv[1:]])")
        lab = subprocess.Popen([sys.executable, "-c", as_in_a_terminal, str(BOOTSTRAP), "lab", "--no-browser",
                                f"--ServerApp.port={port}", "--ServerApp.port_retries=0", "--ServerApp.ip=127.0.0.1"],
                               stdin=subprocess.DEVNULL, stdout=output, stderr=subprocess.STDOUT, env=env, cwd=ROOT,
                               start_new_session=True)  # a session of its own, as a terminal gives it
    try:
        deadline = time.monotonic() + 60
        while not listening(port):
            assert lab.poll() is None, f"JupyterLab stopped before it listened:\n{log.read_text()}"
            assert time.monotonic() < deadline, f"JupyterLab did not listen on {port}:\n{log.read_text()}"
            time.sleep(0.1)
        command = (Path("/proc") / str(lab.pid) / "cmdline").read_bytes()  # `jupyter lab` execs jupyter-lab in turn
        assert b"bootstrap.py" not in command and b"jupyter" in command, "the script should have become JupyterLab"
        if how.startswith("SIGTERM"):
            lab.send_signal(signal.SIGTERM)
        else:
            os.killpg(lab.pid, signal.SIGINT)
        assert lab.wait(timeout=60) is not None  # a busy machine (the other test worker) slows the shutdown
    finally:
        if lab.poll() is None:
            os.killpg(lab.pid, signal.SIGKILL)
            lab.wait()
    said = log.read_text()
    assert "Traceback" not in said and "KeyboardInterrupt" not in said, said
    assert session_processes(lab.pid) == [], "processes left behind"
    assert not listening(port), f"port {port} still answers"


def test_on_windows_the_script_waits_through_ctrl_c_and_exits_with_jupyterlabs_status(monkeypatch):
    """Where exec would return the prompt (Windows), the script waits for JupyterLab; its own copy of a Ctrl+C
    (the console gives one to every process) must not kill it: JupyterLab answers it. Played here with a child
    that exits 3 after a Ctrl+C reached the script alone."""
    import threading

    monkeypatch.chdir(ROOT)  # hand_over runs the command from the course's folder
    child = [sys.executable, "-c", "import sys, time; time.sleep(1); sys.exit(3)"]
    threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGINT)).start()
    assert bootstrap["hand_over"](child, system="Windows") == 3


# doctor


def test_doctor_says_ready_on_this_machine():
    run = subprocess.run([sys.executable, "-m", "looplab", "doctor"], capture_output=True, text=True)
    assert run.returncode == 0, run.stdout
    assert run.stdout.splitlines()[-1] == "ready for the course"
    assert [line.split()[1] for line in run.stdout.splitlines()[:-1]] == [
        "python", "venv", "kernel", "widgets", "mode", "recordings"]


def test_doctor_finds_an_old_python():
    finding = doctor.check_python((3, 10, 12))
    assert not finding.ok and "3.10.12 is too old" in finding.seen and "3.11" in finding.fix


def test_doctor_finds_no_venv():
    finding = doctor.check_venv("/usr", "/usr")
    assert not finding.ok and "bootstrap.py" in finding.fix


def test_doctor_finds_a_kernel_of_another_python(tmp_path, monkeypatch):
    spec = tmp_path / "kernels" / "python3"
    spec.mkdir(parents=True)
    (spec / "kernel.json").write_text(json.dumps({"argv": ["/opt/old/bin/python3.9", "-m", "ipykernel_launcher",
                                                            "-f", "{connection_file}"],
                                                   "display_name": "Python 3", "language": "python"}))
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path))
    finding = doctor.check_kernel()
    assert not finding.ok and "/opt/old/bin/python3.9" in finding.seen and "ipykernel install" in finding.fix


def test_doctor_finds_widgets_missing_in_jupyterlab(tmp_path):
    finding = doctor.check_widgets([tmp_path])
    assert not finding.ok and "widgets extension" in finding.seen


def test_doctor_finds_a_bad_mode(monkeypatch):
    monkeypatch.setenv("LOOPLAB_MODE", "recorded")
    finding = doctor.check_mode()
    assert not finding.ok and "LOOPLAB_MODE" in finding.seen


def test_doctor_says_when_the_notebooks_would_call_the_real_api(monkeypatch):
    monkeypatch.delenv("LOOPLAB_MODE", raising=False)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    finding = doctor.check_mode()
    assert finding.ok and finding.seen.startswith("live:")


def test_doctor_finds_missing_and_broken_recordings(tmp_path):
    from looplab.course import COURSE
    from looplab.recordings import RECORDINGS_DIR
    first, second, *rest = COURSE.notebooks
    (tmp_path / f"{first.stem}.json").write_text("{not json")
    for notebook in rest:
        shutil.copy(RECORDINGS_DIR / f"{notebook.stem}.json", tmp_path)
    finding = doctor.check_recordings(tmp_path)
    assert not finding.ok
    assert finding.seen == f"{first.stem}.json is broken (JSONDecodeError); {second.stem}.json is missing"


def test_a_finding_to_fix_prints_its_fix_under_it():
    assert doctor.Finding("venv", False, "not in a virtual environment", "run it").line() == (
        "FIX  venv        not in a virtual environment\n       -> run it")
