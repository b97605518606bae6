"""`python -m looplab doctor`: is this laptop ready for the course? One line per item, with the fix.

Sent to learners before a workshop, so that a missing kernel or a broken widget shows up at home, not
in the first ten minutes of the session. Every finding is a `Finding`: what was checked, whether it is
fine, what was seen, and (when it is not fine) the one thing to do. Nothing here talks to the network.
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

NEEDED_PYTHON = (3, 11)
SET_UP = "python3 scripts/bootstrap.py lab"  # the README's first command, which repairs most of this
WIDGETS_EXTENSION = ("@jupyter-widgets", "jupyterlab-manager")  # what ipywidgets needs inside JupyterLab


@dataclass(frozen=True)
class Finding:
    item: str  # what was checked: "python", "kernel", ...
    ok: bool
    seen: str  # what the check found, in a few words
    fix: str = ""  # what to do when not ok

    def line(self) -> str:
        mark = "ok  " if self.ok else "FIX "
        text = f"{mark} {self.item:<11} {self.seen}"
        return text if self.ok else f"{text}\n       -> {self.fix}"


def check_python(version_info=sys.version_info) -> Finding:
    found = ".".join(map(str, version_info[:3]))
    if tuple(version_info[:2]) >= NEEDED_PYTHON:
        return Finding("python", True, f"Python {found}")
    return Finding("python", False, f"Python {found} is too old",
                   f"install Python {NEEDED_PYTHON[0]}.{NEEDED_PYTHON[1]} or newer, then run `{SET_UP}` with it")


def check_venv(prefix: str = sys.prefix, base_prefix: str = sys.base_prefix) -> Finding:
    if prefix != base_prefix:
        return Finding("venv", True, f"virtual environment {prefix}")
    return Finding("venv", False, f"not in a virtual environment ({prefix})",
                   f"run `{SET_UP}`, or start this with .venv's python (.venv/bin/python -m looplab doctor)")


def check_kernel() -> Finding:
    """The kernel JupyterLab starts for a notebook must be this environment's Python."""
    try:
        from jupyter_client.kernelspec import KernelSpecManager, NoSuchKernel
    except ImportError:
        return Finding("kernel", False, "jupyter_client is not installed", f"run `{SET_UP}`")
    try:
        spec = KernelSpecManager().get_kernel_spec("python3")
    except NoSuchKernel:
        return Finding("kernel", False, "no python3 kernel", "run `python -m ipykernel install --sys-prefix` in .venv")
    command = spec.argv[0]
    same = command in ("python", "python3", "{python}") or Path(command).resolve() == Path(sys.executable).resolve()
    if not same:
        return Finding("kernel", False, f"the python3 kernel runs {command}, not this environment's Python",
                       "run `python -m ipykernel install --sys-prefix` with .venv's python")
    return Finding("kernel", True, f"python3 kernel ({spec.resource_dir})")


def labextension_folders() -> list[Path]:
    from jupyter_core.paths import jupyter_path
    return [Path(folder) for folder in jupyter_path("labextensions")]


def check_widgets(folders: list[Path] | None = None) -> Finding:
    """ipywidgets in the kernel and its JupyterLab extension, or the viewer shows text only."""
    try:
        import ipywidgets
    except ImportError:
        return Finding("widgets", False, "ipywidgets is not installed", f"run `{SET_UP}`")
    for folder in folders if folders is not None else labextension_folders():
        if (folder.joinpath(*WIDGETS_EXTENSION) / "package.json").exists():
            return Finding("widgets", True, f"ipywidgets {ipywidgets.__version__} and its JupyterLab extension")
    return Finding("widgets", False, "JupyterLab has no widgets extension (the viewer would show text only)",
                   f"run `{SET_UP}` (it installs jupyterlab_widgets with ipywidgets)")


def check_mode() -> Finding:
    """Offline is the default; a key in the environment means real calls, which cost money."""
    from .client import current_mode
    try:
        mode = current_mode()
    except ValueError as error:
        return Finding("mode", False, str(error), "unset LOOPLAB_MODE (or set it to offline)")
    if mode == "offline":
        return Finding("mode", True, "offline: answers come from the recordings, no key, no cost")
    return Finding("mode", True, f"{mode}: ANTHROPIC_API_KEY is set, the notebooks call the real API "
                   "(unset it, or set LOOPLAB_MODE=offline, to work offline)")


def check_recordings(folder: Path | None = None) -> Finding:
    """Every notebook's recording is there and every response is a valid API message for the SDK."""
    from anthropic.types import Message

    from .course import COURSE
    from .recordings import RECORDINGS_DIR
    folder = folder or RECORDINGS_DIR
    problems, count = [], 0
    for notebook in COURSE.notebooks:
        path = folder / f"{notebook.stem}.json"
        try:
            exchanges = json.loads(path.read_text(encoding="utf-8"))["exchanges"]
            for exchange in exchanges:
                Message.model_validate(exchange["response"])
            count += len(exchanges)
        except FileNotFoundError:
            problems.append(f"{path.name} is missing")
        except Exception as error:  # noqa: BLE001 - any way a file is broken is reported the same way
            problems.append(f"{path.name} is broken ({type(error).__name__})")
    if problems:
        return Finding("recordings", False, "; ".join(problems),
                       "get a fresh copy of the course (the recordings ship with it), then run the set-up again")
    return Finding("recordings", True, f"{len(COURSE.notebooks)} recordings, {count} answers, all valid")


CHECKS: list[Callable[[], Finding]] = [check_python, check_venv, check_kernel, check_widgets, check_mode,
                                       check_recordings]


def diagnose() -> list[Finding]:
    return [check() for check in CHECKS]


def main() -> int:
    findings = diagnose()
    for finding in findings:
        print(finding.line())
    broken = [finding.item for finding in findings if not finding.ok]
    print("ready for the course" if not broken else f"{len(broken)} to fix: {', '.join(broken)}")
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
