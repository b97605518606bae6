"""Isolation: the bubblewrap command line a grading kernel runs in, the probe that says whether it
can run here, and the resource limits every kernel gets.

Why: a learner's notebook is code, and the grader runs it. Without a sandbox that code runs as the
instructor: it can read every other submission, write into the course and the instructor's home,
signal the grader and the other kernels, open sockets, and leave processes behind. bubblewrap
(`bwrap`, Debian's package `bubblewrap`) puts each kernel in its own mount, PID, network, IPC and
user namespaces without root, in a few milliseconds, so every notebook can have one:

- the file system is a fresh, read-only root holding only the system (/usr, /etc, ...), the
  Python interpreter (`sys.base_prefix`: under the home folder with pyenv, never assumed to be
  /usr), the virtual environment (`sys.prefix`) and, at the looplab package's own path, its graded
  edition (edition.py: none of the course's answers), all read-only. Everything else does not exist
  in there: the package's own files, the course's checkout around it (solutions, tests, history), the
  submissions, the instructor's home, the grader's temporary folder with the other kernels' folders. The only writable folders are the ones the grader binds
  for this kernel (its work folder, home, temp, IPython dir, and the folder of its IPC sockets);
- no network at all, not even the grader's loopback: jupyter_client talks to the kernel over
  `transport="ipc"` sockets in a folder bound into that one sandbox;
- its own PID namespace: the grader, the other kernels and their templates are invisible and
  cannot be signalled; bwrap's init kills everything in there when the sandbox ends, so nothing
  started with `setsid` outlives it;
- no capabilities, no new privileges (bwrap sets PR_SET_NO_NEW_PRIVS);
- /dev read-only but for /dev/shm, a tmpfs of its own of at most SHM_LIMIT bytes (`device_folder`),
  emptied before the next notebook, as are the System V IPC objects of its IPC namespace
  (fork_server._clear_namespace) and the slot's folders (slots.py, emptying.py).

Hosts that forbid unprivileged user namespaces (AppArmor's
`kernel.apparmor_restrict_unprivileged_userns=1` on Ubuntu 24.04, many CI runners) make `bwrap`
fail with "setting up uid map: Permission denied": `probe()` finds that out once, at start, and
`choose()` turns `--isolation auto` into "not isolated, because ...". The resource limits
(`limit_resources`, setrlimit) apply with or without bubblewrap.

Not covered: /etc is readable as a whole (as root that includes /etc/shadow); bwrap's own command
line, in the sandbox's /proc/1/cmdline, shows which folders are bound (not what they hold). What a
notebook writes into its folders (on disk, in the grader's temporary folder) is bounded per file by
RLIMIT_FSIZE and in all by the grader's watch (runner.Grader._watch_writes, once a second), not by the
file system: that would need one of its own per slot (a sized tmpfs mounted outside the sandbox needs
root; one inside it would hide the kernel's IPC sockets from the grader). It is all removed before the
next notebook. System V IPC objects are removed after each notebook; while it runs, the memory of one
that is no longer attached is counted by no setrlimit.
"""

from __future__ import annotations

import functools
import os
import resource
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ...catalogue import words
from ..shared.limits import ADDRESS_SPACE, KERNEL_MEMORY, SHM_LIMIT

# Why kernels cannot be isolated, said to the instructor (texts/sandbox.toml), in the command line's language.
WORDS = words(__file__)

if TYPE_CHECKING:
    from .edition import Edition

ISOLATIONS = ("auto", "bwrap", "none")
BWRAP = "bwrap"

# The system, read-only: what the interpreter and its libraries need. Symlinks (merged /usr) stay symlinks.
SYSTEM_PATHS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc")

# setrlimit per kernel: (resource name, limit). Data and address space bound memory (limits.py);
# processes stop a fork bomb (counted per user: generous, as a desktop's own processes count too
# without a sandbox); file size and open files stop a notebook filling the disk.
LIMITS = (
    ("RLIMIT_DATA", KERNEL_MEMORY),
    ("RLIMIT_AS", ADDRESS_SPACE),
    ("RLIMIT_NPROC", 4096),
    ("RLIMIT_FSIZE", 1 << 30),
    ("RLIMIT_NOFILE", 1024),
    ("RLIMIT_CORE", 0),
)


def limit_resources() -> None:
    """Lower this process's limits (soft and hard: the learner's code cannot raise them again)."""
    for name, value in LIMITS:
        which = getattr(resource, name, None)
        if which is None:
            continue
        soft, hard = resource.getrlimit(which)
        limit = value if hard == resource.RLIM_INFINITY else min(value, hard)
        try:
            resource.setrlimit(which, (limit, limit))
        except (ValueError, OSError):
            pass


def limits_source() -> str:
    """`limit_resources` as a line of Python, for a kernel started by a command line (a plain kernel)."""
    return ("import resource as r\n"
            f"for n, v in {LIMITS!r}:\n"
            "    w = getattr(r, n, None)\n"
            "    if w is None: continue\n"
            "    s, h = r.getrlimit(w); v = v if h == r.RLIM_INFINITY else min(v, h)\n"
            "    try: r.setrlimit(w, (v, v))\n"
            "    except (ValueError, OSError): pass\n")


def read_only_paths(withheld: list[Path] = ()) -> list[Path]:
    """What a kernel must read besides the system: the interpreter, the venv, the looplab package (where the
    graded edition is bound over it) and the folders on this interpreter's path (PYTHONPATH, and folders .pth
    files add, such as other editable installs). Not the folder `python -m` puts first on the path: that is
    only where the grader was started from. Not `withheld`, the folders of the modules the graded edition
    replaces outside the package (a course's own reference module: edition.outside_the_package)."""
    import looplab

    paths = [Path(sys.base_prefix), Path(sys.prefix), Path(sys.exec_prefix), Path(looplab.__file__).parent]
    paths += [Path(entry).absolute() for entry in os.environ.get("PYTHONPATH", "").split(os.pathsep) if entry]
    started_from = sys.path[0] if sys.path and sys.path[0] in ("", os.getcwd()) else None
    paths += [Path(entry) for entry in sys.path if entry and entry != started_from and os.path.isabs(entry)]
    found: list[Path] = []
    for path in paths:
        for candidate in (path, path.resolve()):
            if candidate.exists() and candidate not in found:
                found.append(candidate)
    # A folder on the path that holds the package (the course's checkout, on a test run's path) would show the
    # solutions, the tests and the history beside it: only the interpreter and the venv may hold it (an install).
    # Likewise a folder holding a module the edition replaces outside the package.
    package = Path(looplab.__file__).resolve().parent
    interpreter = {Path(p).resolve() for p in (sys.base_prefix, sys.prefix, sys.exec_prefix)}
    hidden = [package] + [Path(folder).resolve() for folder in withheld]
    found = [path for path in found if path.resolve() in interpreter or path.resolve() == package
             or not any(_inside(each, path.resolve()) for each in hidden)]
    return [path for path in found if not any(other != path and _inside(path, other) for other in found)]


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def bwrap_argv(writable: list[Path], read_only: list[Path], hidden: list[Path] = (), bwrap: str = BWRAP,
               edition: tuple["Edition", Path] | None = None) -> list[str]:
    """The bwrap command line (ending in `--`) of one sandbox.

    `edition`, (the graded edition, the package's folder): the edition's package is bound read-only where the
    package is, over it, so the kernel never sees the package's files, and its folder of a course's modules
    outside the package at its own path (the kernel's PYTHONPATH names it first) (edition.py).

    `writable` folders are bound read-write at their own paths (the same path inside and out, so
    connection files and IPC socket paths need no translation); `read_only` ones read-only;
    `hidden` ones (the submissions, the feedback folder) are covered with an empty read-only folder
    wherever they fall inside a read-only one (but for the read-only folders inside them). The root itself is a read-only tmpfs: nothing is
    writable but `writable`.
    """
    argv = [bwrap, "--unshare-all", "--unshare-pid", "--die-with-parent", "--new-session", "--cap-drop", "ALL",
            "--proc", "/proc", *device_folder(bwrap)]
    for name in SYSTEM_PATHS:
        path = Path(name)
        if path.is_symlink():
            argv += ["--symlink", os.readlink(path), name]
        elif path.exists():
            argv += ["--ro-bind", name, name]
    for path in read_only:
        argv += ["--ro-bind", str(path), str(path)]
    if edition is not None:
        argv += ["--ro-bind", str(edition[0].package), str(edition[1]),
                 "--ro-bind", str(edition[0].modules), str(edition[0].modules)]
    for path in hidden:
        if any(_inside(path, folder) for folder in read_only) and path.exists():
            argv += ["--tmpfs", str(path)]
            for folder in read_only:  # what must stay visible inside it (the course graded from its own folder)
                if folder != path and _inside(folder, path):
                    argv += ["--ro-bind", str(folder), str(folder)]
            argv += ["--remount-ro", str(path)]
    for path in writable:
        argv += ["--bind", str(path), str(path)]
    return argv + ["--remount-ro", "/", "--"]


def device_folder(bwrap: str = BWRAP) -> list[str]:
    """/dev as bwrap makes it (the device nodes), read-only, and /dev/shm a tmpfs of its own, at most SHM_LIMIT bytes
    where this bwrap can size one (`--size`, bubblewrap 0.8 and later).

    Why: bwrap's /dev is a writable tmpfs that lives as long as the sandbox, which for a slot's template is
    the whole run: files written there would reach the next notebook and hold memory no limit counts.
    Read-only, only /dev/shm (which POSIX shared memory and multiprocessing need) is writable, and it is
    emptied before the next notebook (fork_server._clear_namespace)."""
    size = ["--size", str(SHM_LIMIT)] if _can_size(shutil.which(bwrap) or bwrap) else []
    return ["--dev", "/dev", *size, "--tmpfs", "/dev/shm", "--remount-ro", "/dev"]


@functools.cache
def _can_size(bwrap: str) -> bool:
    """Whether this bwrap has `--size` (its --help lists it)."""
    try:
        shown = subprocess.run([bwrap, "--help"], stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return "--size" in shown.stdout + shown.stderr


@dataclass(frozen=True)
class Isolation:
    """What `--isolation` resolved to: whether kernels run in bubblewrap, and if not, why (for the instructor)."""
    sandboxed: bool
    note: str | None = None  # said first and in the summary when kernels are NOT isolated
    problem: str | None = None  # why bubblewrap could not run (`auto`), in bwrap's words


class IsolationUnavailable(Exception):
    """`--isolation bwrap` was asked for and bubblewrap cannot run here."""


def probe(bwrap: str = BWRAP) -> str | None:
    """None if a sandbox like a kernel's starts here (`bwrap ... true`); else why not, in bwrap's words."""
    executable = shutil.which(bwrap)
    if executable is None:
        return WORDS("not_installed", bwrap=bwrap)
    argv = bwrap_argv([], read_only_paths(), bwrap=executable) + ["true"]
    try:
        run = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as error:
        return WORDS("did_not_run", bwrap=bwrap, error=error)
    if run.returncode != 0:
        said = (run.stderr.strip().splitlines() or [f"exit status {run.returncode}"])[-1]
        return WORDS("cannot_sandbox", bwrap=bwrap, said=said.removeprefix('bwrap: '))
    return None


def choose(isolation: str, bwrap: str = BWRAP) -> Isolation:
    """Resolve `--isolation`: `auto` falls back to none with a note saying why; `bwrap` raises where it can't work."""
    if isolation not in ISOLATIONS:
        raise ValueError(f"--isolation must be one of {', '.join(ISOLATIONS)}")
    if isolation == "none":
        return Isolation(False, None)
    if not sys.platform.startswith("linux"):
        problem = WORDS("needs_linux")
    else:
        problem = probe(bwrap)
    if problem is None:
        return Isolation(True)
    if isolation == "bwrap":
        raise IsolationUnavailable(f"--isolation bwrap: {problem}")
    return Isolation(False, WORDS("not_isolated", problem=problem), problem)
