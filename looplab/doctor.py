"""`python -m looplab doctor`: is this laptop ready for the course? One line per item, with the fix.

Sent to learners before a workshop, so that a missing kernel or a broken widget shows up at home, not
in the first ten minutes of the session. Every finding is a `Finding`: what was checked, whether it is
fine, what was seen, and (when it is not fine) the one thing to do. Nothing here talks to the network.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from . import language
from .catalogue import words

NEEDED_PYTHON = (3, 11)
SET_UP = "python3 scripts/bootstrap.py lab"  # the README's first command, which repairs most of this
WIDGETS_EXTENSION = ("@jupyter-widgets", "jupyterlab-manager")  # what ipywidgets needs inside JupyterLab
WORDS = words(__file__)  # every line it prints, in the course's language (texts/doctor.toml)
ITEM_WIDTH = 11  # the items' column, wider when a language names an item at more length


def set_up() -> str:
    """SET_UP in the language the doctor speaks: a French learner is told `... lab --lang fr`."""
    spoken = language.current()
    return SET_UP if spoken == language.SOURCE else f"{SET_UP} --lang {spoken}"


@dataclass(frozen=True)
class Finding:
    item: str  # what was checked: "python", "kernel", ... (its name in the lines: the row item_<item>)
    ok: bool
    seen: str  # what the check found, in a few words
    fix: str = ""  # what to do when not ok

    @property
    def name(self) -> str:
        """The item as the lines name it, in the course's language."""
        return WORDS(f"item_{self.item}") if f"item_{self.item}" in WORDS else self.item

    def line(self) -> str:
        mark = WORDS("mark_ok" if self.ok else "mark_fix")
        width = max([ITEM_WIDTH] + [len(WORDS(key)) + 1 for key in WORDS.rows if key.startswith("item_")])
        text = f"{mark} {self.name:<{width}} {self.seen}"
        return text if self.ok else f"{text}\n       -> {self.fix}"


def check_python(version_info=sys.version_info) -> Finding:
    found = ".".join(map(str, version_info[:3]))
    if tuple(version_info[:2]) >= NEEDED_PYTHON:
        return Finding("python", True, WORDS("python_ok", found=found))
    return Finding("python", False, WORDS("python_old", found=found),
                   WORDS("python_fix", needed=f"{NEEDED_PYTHON[0]}.{NEEDED_PYTHON[1]}", set_up=set_up()))


def check_venv(prefix: str = sys.prefix, base_prefix: str = sys.base_prefix) -> Finding:
    if prefix != base_prefix:
        return Finding("venv", True, WORDS("venv_ok", prefix=prefix))
    return Finding("venv", False, WORDS("venv_none", prefix=prefix), WORDS("venv_fix", set_up=set_up()))


def check_kernel() -> Finding:
    """The kernel JupyterLab starts for a notebook must be this environment's Python."""
    try:
        from jupyter_client.kernelspec import KernelSpecManager, NoSuchKernel
    except ImportError:
        return Finding("kernel", False, WORDS("not_installed", package="jupyter_client"),
                       WORDS("run_set_up", set_up=set_up()))
    try:
        spec = KernelSpecManager().get_kernel_spec("python3")
    except NoSuchKernel:
        return Finding("kernel", False, WORDS("no_kernel"), WORDS("install_kernel"))
    command = spec.argv[0]
    same = command in ("python", "python3", "{python}") or Path(command).resolve() == Path(sys.executable).resolve()
    if not same:
        return Finding("kernel", False, WORDS("other_kernel", command=command), WORDS("reinstall_kernel"))
    return Finding("kernel", True, WORDS("kernel_ok", folder=spec.resource_dir))


def labextension_folders() -> list[Path]:
    from jupyter_core.paths import jupyter_path
    return [Path(folder) for folder in jupyter_path("labextensions")]


def check_widgets(folders: list[Path] | None = None) -> Finding:
    """ipywidgets in the kernel and its JupyterLab extension, or the viewer shows text only."""
    try:
        import ipywidgets
    except ImportError:
        return Finding("widgets", False, WORDS("not_installed", package="ipywidgets"),
                       WORDS("run_set_up", set_up=set_up()))
    for folder in folders if folders is not None else labextension_folders():
        if (folder.joinpath(*WIDGETS_EXTENSION) / "package.json").exists():
            return Finding("widgets", True, WORDS("widgets_ok", version=ipywidgets.__version__))
    return Finding("widgets", False, WORDS("widgets_missing"), WORDS("widgets_fix", set_up=set_up()))


def check_mode() -> Finding:
    """Offline is the default; a key in the environment means real calls, which cost money."""
    from .client import current_mode
    try:
        mode = current_mode()
    except ValueError as error:
        return Finding("mode", False, str(error), WORDS("mode_fix"))
    if mode == "offline":
        return Finding("mode", True, WORDS("mode_offline"))
    return Finding("mode", True, WORDS("mode_live", mode=mode))


def check_recordings(folder: Path | None = None) -> Finding:
    """Every notebook's recording is there and every response is a valid API message for the SDK."""
    from anthropic.types import Message

    from .course import COURSE
    from .recordings import recording_path
    problems, count = [], 0
    for notebook in COURSE.notebooks:
        path = folder / f"{notebook.stem}.json" if folder else recording_path(notebook.stem)  # the course's language
        try:
            exchanges = json.loads(path.read_text(encoding="utf-8"))["exchanges"]
            for exchange in exchanges:
                Message.model_validate(exchange["response"])
            count += len(exchanges)
        except FileNotFoundError:
            problems.append(WORDS("recording_missing", name=path.name))
        except Exception as error:  # noqa: BLE001 - any way a file is broken is reported the same way
            problems.append(WORDS("recording_broken", name=path.name, error=type(error).__name__))
    if problems:
        return Finding("recordings", False, "; ".join(problems), WORDS("recordings_fix"))
    return Finding("recordings", True, WORDS("recordings_ok", count=len(COURSE.notebooks), answers=count))


CHECKS: list[Callable[[], Finding]] = [check_python, check_venv, check_kernel, check_widgets, check_mode,
                                       check_recordings]


def diagnose() -> list[Finding]:
    return [check() for check in CHECKS]


def main() -> int:
    findings = diagnose()
    for finding in findings:
        print(finding.line())
    broken = [finding.name for finding in findings if not finding.ok]
    print(WORDS("ready") if not broken else WORDS("to_fix", count=len(broken), items=", ".join(broken)))
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
