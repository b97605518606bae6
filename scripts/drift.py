"""`make drift`: the test suite against the newest releases of the SDK and the Jupyter pieces.

SDK renames and retired models are the first cause of rotten courses. This creates a throwaway
venv (in a temporary folder, deleted afterwards), installs requirements.txt and
requirements-dev.txt with the six drifting packages unpinned, runs the suite as `make test` does, and prints which versions moved and which
tests failed. Exit status 1 if anything broke. Needs the network; `make test` stays pinned.
Standard library only: it runs before any venv exists.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
import venv
import xml.etree.ElementTree as ElementTree
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DRIFTING = ("anthropic", "httpx2", "ipywidgets", "nbclient", "nbval", "jupyterlab")


REQUIREMENTS = ("requirements.txt", "requirements-dev.txt")  # the learner's pins, then the test tools'


def pinned_lines() -> list[str]:
    """Every pin of both requirement files in one list (the dev file's `-r requirements.txt` left out)."""
    lines = []
    for name in REQUIREMENTS:
        lines += [line for line in (ROOT / name).read_text().splitlines() if not line.strip().startswith("-r ")]
    return lines


def pinned_versions() -> dict[str, str]:
    """The drifting packages' pins in the requirement files."""
    pins = {}
    for line in pinned_lines():
        match = re.match(r"([A-Za-z0-9_.-]+)==([^\s#]+)", line.strip())
        if match and match.group(1).lower() in DRIFTING:
            pins[match.group(1).lower()] = match.group(2)
    return pins


def unpinned_requirements(target: Path) -> None:
    """The requirement files as one, the drifting packages unpinned (and `-e .` made absolute)."""
    lines = []
    for line in pinned_lines():
        name = re.split(r"[=<>!~ #]", line.strip(), maxsplit=1)[0].lower()
        if name in DRIFTING:
            line = name
        elif line.strip() == "-e .":
            line = f"-e {ROOT}"
        lines.append(line)
    target.write_text("\n".join(lines) + "\n")


def installed_versions(python: Path) -> dict[str, str]:
    script = ("import importlib.metadata as m\n"
              f"for name in {DRIFTING!r}: print(name, m.version(name))")
    output = subprocess.run([python, "-c", script], capture_output=True, text=True, check=True).stdout
    return dict(line.split() for line in output.splitlines())


ANSI_COLOUR = re.compile(r"\x1b\[[0-9;]*m|#x1B\[[0-9;]*m")
# What nbval says when a cell ran but its output is not the stored one (nbval/plugin.py, compare_outputs).
OUTPUT_DIFFERS = re.compile(r"mismatch '[^']+'|dissimilar number of outputs for key \"[^\"]+\""
                            r"|(?:Missing|Unexpected) output fields from running code: .*")


def first_line(problem) -> str:
    """The error's first line; for nbval's generic message, what its details say went wrong.

    A cell whose output differs from the stored one is not a cell that raised, and says so: a release that
    only prints something differently (anthropic 2.17.0's API errors) shows as `stored output differs`.
    Read the difference in the log before moving the pin (docs/MAINTAINING.md says what that takes).
    A cell that raised shows its exception's line (nbval's message runs over several lines: only its first
    is kept, then the exception)."""
    lines = ANSI_COLOUR.sub("", problem.get("message") or "").strip().splitlines()
    message = lines[0] if lines else ""
    details = [ANSI_COLOUR.sub("", line).strip() for line in (problem.text or "").splitlines()]
    if message and "cell execution failed" not in message:
        return message
    differs = [found.group(0) for found in map(OUTPUT_DIFFERS.search, details) if found]
    if differs:
        return f"stored output differs: {differs[0]}"
    raised = [line for line in details if re.match(r"\w+(Error|Exception|Warning)\b", line)]
    if raised:
        return f"{message} ({raised[-1]})" if message else raised[-1]
    return message or next(filter(None, details), "?")


def failures(junit: Path) -> list[str]:
    """`test id: first line of the error` for every failed or erroring test."""
    found = []
    for case in ElementTree.parse(junit).getroot().iter("testcase"):
        for problem in list(case.findall("failure")) + list(case.findall("error")):
            found.append(f"{case.get('classname')}::{case.get('name')}: {first_line(problem)}"[:240])
    return found


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="looplab-drift-") as folder:
        tmp = Path(folder)
        venv.create(tmp / "venv", with_pip=True, symlinks=True)
        python = tmp / "venv" / "bin" / "python"
        requirements = tmp / "requirements.txt"
        unpinned_requirements(requirements)
        print(f"drift: installing the newest {', '.join(DRIFTING)} in {tmp / 'venv'} ...", flush=True)
        subprocess.run([python, "-m", "pip", "install", "--quiet", "--upgrade", "pip"], check=True)
        install = subprocess.run([python, "-m", "pip", "install", "--quiet", "-r", requirements])
        if install.returncode:
            print("drift: the newest releases do not install together with the other pins (see above)")
            return 1
        pins, now = pinned_versions(), installed_versions(python)
        print("\nversions (pinned -> newest installed):")
        for name in DRIFTING:
            mark = "" if pins.get(name) == now[name] else "   <- moved"
            print(f"  {name:<12} {pins.get(name, '?'):>10} -> {now[name]}{mark}")
        print("\nrunning the suite ...", flush=True)
        junit = tmp / "junit.xml"
        log = tmp / "pytest.log"
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        with open(log, "w") as handle:
            suite = subprocess.run([python, "-m", "pytest", "-q", f"--junitxml={junit}"], cwd=ROOT, env=env,
                                   stdout=handle, stderr=subprocess.STDOUT)
        summary = log.read_text().strip().splitlines()[-1:] or ["(no output)"]
        print(f"  {summary[0]}")
        broken = failures(junit) if junit.exists() else ["the suite did not run (no report)"]
        if broken:
            print(f"\n{len(broken)} test(s) broke:")
            for line in broken:
                print(f"  {line}")
        elif suite.returncode:
            print(f"\npytest exited with {suite.returncode}:\n" + "\n".join(log.read_text().splitlines()[-30:]))
        else:
            print("\nnothing broke.")
        return 1 if broken or suite.returncode else 0


if __name__ == "__main__":
    sys.exit(main())
