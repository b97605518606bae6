"""`python -m authoring handout --verify`: does the handout in dist/ install on every laptop it claims?

What this machine can try for real, it tries: for each Python of this computer's platform that the
handout serves and that is installed here (python3.X on PATH, or pyenv's), a fresh copy of the zip is
set up with `scripts/bootstrap.py setup` with the network taken away (`unshare -rn`, else `bwrap
--unshare-net`, else pip pointed at a dead local port), and `.venv/bin/python -m looplab doctor` must
end "ready for the course". For every other platform and Python it serves, pip resolves the handout's
requirements from its wheelhouse alone, as that laptop would (`pip install --dry-run --no-index` with its
tags, Python and environment markers; authoring/wheelhouse.py says why the markers matter). Then the
two ways it may not serve a laptop: a copy whose platforms.json leaves this laptop out, and the small
handout, both offline, must stop with one line (never a traceback), and doctor must then say why.

Prints one line per check and returns 1 if any failed. On a 2-core machine: 10 minutes in all (15 dry
runs, 3 installs of about a minute), 30 when it is busy.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

from . import ROOT
from . import wheelhouse as wheels

READY = "ready for the course"


def isolated_environment() -> dict:
    """The learner's pip: none of this machine's pip settings (an index or find-links on its disk), and
    no PYTHONPATH (it would lend the venv this repository's looplab)."""
    env = {key: value for key, value in os.environ.items() if not key.startswith(("PIP_", "PYTHON"))}
    return {**env, "PIP_CONFIG_FILE": os.devnull, "PIP_DISABLE_PIP_VERSION_CHECK": "1"}


def offline_prefix() -> tuple[list[str], dict, str]:
    """How to run a command with no network: (command prefix, extra environment, what it is called)."""
    if shutil.which("unshare") and subprocess.run(["unshare", "-rn", "true"], capture_output=True).returncode == 0:
        return ["unshare", "-rn"], {}, "unshare -rn (no network device)"
    if shutil.which("bwrap"):
        prefix = ["bwrap", "--dev-bind", "/", "/", "--unshare-net"]
        if subprocess.run([*prefix, "true"], capture_output=True).returncode == 0:
            return prefix, {}, "bwrap --unshare-net (no network device)"
    dead = "http://127.0.0.1:9/simple"  # the discard port: nothing listens
    return [], {"PIP_INDEX_URL": dead}, f"PIP_INDEX_URL={dead} (a dead local port; weaker: the network is up)"


def interpreter(python: str) -> str | None:
    """An installed python3.X that runs: on PATH, else the newest of pyenv's (its shims may refuse to run)."""
    candidates = [shutil.which(f"python{python}"), *reversed(sorted(Path.home().glob(
        f".pyenv/versions/{python}.*/bin/python{python}")))]
    for candidate in filter(None, candidates):
        said = subprocess.run([str(candidate), "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                              capture_output=True, text=True)
        if said.returncode == 0 and said.stdout.strip() == python:
            return str(candidate)
    return None


def dry_run(handout: Path, entry: dict, python: str) -> tuple[bool, str]:
    """pip resolves the requirements from the wheelhouse alone, for that laptop: (resolved, what it said)."""
    platform_ = wheels.PLATFORMS[entry["name"]]
    with tempfile.TemporaryDirectory() as target:
        command = [*wheels.pip_runner(platform_, python), "install", "--dry-run", "--quiet", "--report", "-",
                   "--no-index", "--find-links", str(handout / "wheelhouse"), "--target", target,
                   *wheels.target_options(platform_, python), "-r", str(handout / "requirements.txt")]
        run = subprocess.run(command, capture_output=True, text=True, env=isolated_environment(), cwd=ROOT)
    if run.returncode != 0:
        errors = [line for line in run.stderr.splitlines() if line.startswith("ERROR")]
        return False, (errors or run.stderr.splitlines() or ["pip failed"])[0]
    names = sorted(item["metadata"]["name"].lower() for item in json.loads(run.stdout)["install"])
    only_there = [name for name in ("pywinpty", "colorama", "appnope", "pexpect") if name in names]
    return True, f"{len(names)} packages resolve offline ({', '.join(only_there) or 'no marker-only package'})"


def unzipped(zip_path: Path, into: Path) -> Path:
    with zipfile.ZipFile(zip_path) as archive:
        archive.extractall(into)
    return into / zip_path.stem


def set_up(folder: Path, python: str, offline: tuple) -> tuple[subprocess.CompletedProcess, subprocess.CompletedProcess]:
    """`pythonX scripts/bootstrap.py setup` then `.venv/bin/python -m looplab doctor`, both offline."""
    prefix, extra, _ = offline
    env = {**isolated_environment(), **extra}
    setup = subprocess.run([*prefix, python, "scripts/bootstrap.py", "setup"], cwd=folder, capture_output=True,
                           text=True, env=env, timeout=900)
    doctor = subprocess.run([*prefix, str(folder / ".venv" / "bin" / "python"), "-m", "looplab", "doctor"],
                            cwd=folder, capture_output=True, text=True, env=env, timeout=300)
    return setup, doctor


def last_line(text: str) -> str:
    lines = [line for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else ""


def real_installs(handout: Path, entries: list[dict], offline: tuple, work: Path) -> list[bool]:
    here = wheels.this_computer()
    served = next((entry for entry in entries if entry["name"] == here["name"]), None)
    results = []
    for python in served["pythons"] if served else []:
        found = interpreter(python)
        if not found:
            print(f"skip  {here['name']:<15} {python}  no python{python} on this machine")
            continue
        started = time.monotonic()
        folder = unzipped(handout.with_suffix(".zip"), work / f"py{python}")
        setup, doctor = set_up(folder, found, offline)
        seconds = time.monotonic() - started
        ok = (setup.returncode == 0 and "(no download)" in setup.stdout and "Traceback" not in setup.stderr
              and last_line(doctor.stdout) == READY)
        results.append(ok)
        said = last_line(doctor.stdout) if setup.returncode == 0 else last_line(setup.stdout + setup.stderr)
        print(f"{'ok  ' if ok else 'FAIL'}  {here['name']:<15} {python}  real offline install, {seconds:.0f} s; "
              f"doctor: {said}", flush=True)
    return results


def unserved(handout: Path, offline: tuple, work: Path) -> list[bool]:
    """A copy that leaves this laptop out, and the small handout: one line each, then doctor says why."""
    results = []
    here = wheels.this_computer()
    copy = unzipped(handout.with_suffix(".zip"), work / "unserved")
    others = [entry for entry in wheels.read_served(copy / "wheelhouse") if entry["name"] != here["name"]]
    wheels.write_served(copy / "wheelhouse", others)
    cases = [("not this laptop", copy, f"--for {here['name']}")]
    small = handout.parent / f"{handout.name}-small.zip"
    if small.exists():
        cases.append(("small handout", unzipped(small, work / "small"), "the full handout"))
    for what, folder, advice in cases:
        setup, doctor = set_up(folder, sys.executable, offline)
        said = [line for line in setup.stdout.splitlines() if line.startswith("bootstrap:")][-1:]
        ok = (setup.returncode == 1 and "Traceback" not in setup.stdout + setup.stderr and bool(said)
              and advice in said[0] and "Retrying" not in setup.stdout + setup.stderr
              and "is not installed in this .venv" in doctor.stderr)
        results.append(ok)
        print(f"{'ok  ' if ok else 'FAIL'}  {what:<15} offline: {said[0] if said else setup.stderr[-300:]}")
        print(f"      doctor then: {last_line(doctor.stderr or doctor.stdout)}", flush=True)
    return results


def verify(handout: Path, dry_runs_only: bool = False) -> int:
    if not (handout / "wheelhouse" / wheels.SERVED_FILE).exists():
        print(f"handout --verify: no handout at {handout} (build it first: python -m authoring handout)")
        return 1
    entries = wheels.read_served(handout / "wheelhouse")
    print(f"handout {handout} serves {wheels.describe(entries)}")
    results = []
    here = wheels.this_computer()["name"]
    for entry in entries:
        for python in entry["pythons"]:
            if entry["name"] not in wheels.PLATFORMS:
                continue
            ok, said = dry_run(handout, entry, python)
            results.append(ok)
            print(f"{'ok  ' if ok else 'FAIL'}  {entry['name']:<15} {python}  dry run: {said}", flush=True)
    if dry_runs_only:
        return 0 if all(results) else 1
    offline = offline_prefix()
    print(f"offline means: {offline[2]}")
    with tempfile.TemporaryDirectory() as folder:
        results += real_installs(handout, entries, offline, Path(folder))
        results += unserved(handout, offline, Path(folder))
    failed = results.count(False)
    print(f"handout --verify: {len(results) - failed} ok, {failed} failed ({here} installed for real)")
    return 1 if failed else 0
