"""Control groups: one per job slot, holding a notebook's kernel and every process it starts.

Why: a learner's notebook is a tree of processes (the kernel, what its cells start, what those
start with `setsid` or a double fork). Per-process limits (setrlimit) let eight children of one
kernel hold eight times the memory, CPU time counted on the kernel alone misses its subprocesses,
and killing the kernel's process group misses whatever left it. A cgroup holds the whole tree
whatever it does: the kernel's CPU time is read from one file, its memory and its number of tasks
are capped by the kernel of the operating system, and every process in it is killed at once.

Both versions of cgroups are used, whichever this machine lets us write to:
- v2 (one hierarchy, `cgroup2` in /proc/mounts): `cpu.stat` (always there), `memory.max` and
  `pids.max` when those controllers can be enabled for our subtree, and `cgroup.kill` (Linux 5.14);
- v1 (a hierarchy per controller): `cpuacct.usage`, `memory.limit_in_bytes`, `pids.max`, and the
  freezer, which stops the tree from forking while it is killed.
On a hybrid machine (v1 controllers beside an empty v2 hierarchy) each need takes the first place that
serves it. A slot's groups are made under the grader's own (so the limits of whatever runs the grader
still hold), named after the grader's pid. Where none can be made (not root, no delegation: a learner's
laptop, most containers), `make` says None and process_tree.py polls /proc instead.
`LOOPLAB_GRADE_CGROUPS=0` forces that fallback (the tests grade both ways); `v1` or `v2` uses that
version only (the tests try each where the machine has it).
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

from ..shared.limits import NOTEBOOK_MEMORY, NOTEBOOK_TASKS

V1_CONTROLLERS = ("cpuacct", "memory", "pids", "freezer")


def _mounts() -> list[tuple[str, str, set[str]]]:
    """(mount point, type, options) of every cgroup hierarchy mounted here."""
    found = []
    try:
        lines = Path("/proc/self/mounts").read_text().splitlines()
    except OSError:
        return []
    for line in lines:
        fields = line.split()
        if len(fields) >= 4 and fields[2] in ("cgroup", "cgroup2"):
            found.append((fields[1], fields[2], set(fields[3].split(","))))
    return found


def _own_paths() -> dict[str, str]:
    """This process's cgroup in each hierarchy: {"": v2 path, "memory": v1 path, ...}."""
    paths: dict[str, str] = {}
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return paths
    for line in lines:
        _, controllers, path = line.split(":", 2)
        for name in controllers.split(",") if controllers else [""]:
            paths[name] = path
    return paths


def _write(path: Path, value: str) -> bool:
    try:
        path.write_text(value)
        return True
    except OSError:
        return False


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""


class Cgroup:
    """A slot's groups: `cpu`, `memory`, `pids`, `kill` each a folder (or None where no place serves it)."""

    def __init__(self, folders: dict[str, Path], version: dict[str, int]):
        self.folders = folders  # need -> its folder
        self.version = version  # need -> 1 or 2
        self.cpu = folders.get("cpu")
        self.memory = folders.get("memory")
        self.pids = folders.get("pids")
        self.freezer = folders.get("freezer")  # v1 only: stops forks while the tree is killed
        self.unified = folders.get("kill")  # v2: cgroup.kill

    def describe(self) -> str:
        """Which limits the groups hold, for the instructor (e.g. "cgroup v1: cpu, memory, pids")."""
        needs = [need for need in ("cpu", "memory", "pids") if need in self.folders]
        versions = sorted({f"v{self.version[need]}" for need in self.folders})
        return f"cgroup {'+'.join(versions)}: {', '.join(needs)}"

    def add(self, pids: list[int]) -> None:
        """Move these processes into every group of the slot (their later children are born there)."""
        for folder in {str(path): path for path in self.folders.values()}.values():
            for pid in pids:
                _write(folder / "cgroup.procs", str(pid))

    def cpu_seconds(self) -> float:
        """CPU time every process that was ever in the group used (the dead ones' too)."""
        if self.cpu is None:
            return 0.0
        if self.version["cpu"] == 1:
            text = _read(self.cpu / "cpuacct.usage").strip()
            return int(text) / 1e9 if text else 0.0
        for line in _read(self.cpu / "cpu.stat").splitlines():
            if line.startswith("usage_usec "):
                return int(line.split()[1]) / 1e6
        return 0.0

    def memory_bytes(self) -> int | None:
        if self.memory is None:
            return None
        name = "memory.usage_in_bytes" if self.version["memory"] == 1 else "memory.current"
        text = _read(self.memory / name).strip()
        return int(text) if text.isdigit() else None

    def processes(self) -> list[int]:
        """Every process in the group now (any folder lists them all: each holds the same tree)."""
        folder = next(iter(self.folders.values()), None)
        text = _read(folder / "cgroup.procs") if folder else ""
        return [int(pid) for pid in text.split()]

    def kill(self, within: float = 5) -> bool:
        """Kill every process in the group and wait until none is left; False if some still are."""
        deadline = time.monotonic() + within
        if self.unified is not None and _write(self.unified / "cgroup.kill", "1"):
            pass
        frozen = self.freezer is not None and _write(self.freezer / "freezer.state", "FROZEN")
        try:
            while True:
                left = self.processes()
                if not left:
                    return True
                for pid in left:
                    try:
                        os.kill(pid, signal.SIGKILL)  # a frozen process dies once thawed, and forks no more
                    except OSError:
                        pass
                if frozen:
                    _write(self.freezer / "freezer.state", "THAWED")
                    frozen = _write(self.freezer / "freezer.state", "FROZEN")
                if time.monotonic() > deadline:
                    return False
                time.sleep(0.005)
        finally:
            if self.freezer is not None:
                _write(self.freezer / "freezer.state", "THAWED")

    def remove(self) -> None:
        """The groups removed (after `kill`: a group with processes cannot be)."""
        for folder in sorted({str(path) for path in self.folders.values()}, key=len, reverse=True):
            try:
                os.rmdir(folder)
            except OSError:
                pass


def _make_folder(base: Path, name: str) -> Path | None:
    folder = base / name
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    return folder if (folder / "cgroup.procs").exists() else None


def make(name: str, memory: int = NOTEBOOK_MEMORY, tasks: int = NOTEBOOK_TASKS) -> Cgroup | None:
    """A slot's groups, `<grader's group>/looplab-grade-<pid>/<name>` in each hierarchy that lets us, with
    the notebook's memory and task limits set; None where no group can be made (or LOOPLAB_GRADE_CGROUPS=0)."""
    only = os.environ.get("LOOPLAB_GRADE_CGROUPS", "")  # "0": none; "v1" or "v2": that version only (tests)
    if only == "0" or not Path("/proc/self/cgroup").exists():
        return None
    own = _own_paths()
    folders: dict[str, Path] = {}
    version: dict[str, int] = {}
    parent = f"looplab-grade-{os.getpid()}"
    for mount, kind, options in _mounts():
        if kind == "cgroup" and only != "v2":
            for controller in V1_CONTROLLERS:
                need = "cpu" if controller == "cpuacct" else controller
                if controller in options and need not in folders and controller in own:
                    base = Path(mount) / own[controller].lstrip("/") / parent
                    folder = _make_folder(base, name)
                    if folder is not None:
                        folders[need], version[need] = folder, 1
    for mount, kind, options in _mounts():
        if kind == "cgroup2" and "" in own and only != "v1":
            base = Path(mount) / own[""].lstrip("/")
            top = _make_folder(base, parent)
            if top is None:
                continue
            wanted = [c for c in ("memory", "pids") if c not in folders]
            enabled = _read(base / "cgroup.controllers").split()
            for controller in wanted:  # fails where our own group holds processes ("no internal processes")
                if controller in enabled:
                    _write(base / "cgroup.subtree_control", f"+{controller}")
                    _write(top / "cgroup.subtree_control", f"+{controller}")
            folder = _make_folder(top, name)
            if folder is None:
                continue
            for need, file in (("cpu", "cpu.stat"), ("memory", "memory.max"), ("pids", "pids.max"),
                               ("kill", "cgroup.kill")):
                if need not in folders and (folder / file).exists():
                    folders[need], version[need] = folder, 2
            break
    if "cpu" not in folders:  # without CPU accounting the group would not serve the limits that decide a grade
        Cgroup(folders, version).remove()
        return None
    group = Cgroup(folders, version)
    if group.memory is not None:
        _write(group.memory / ("memory.limit_in_bytes" if version["memory"] == 1 else "memory.max"), str(memory))
        if version["memory"] == 2:
            _write(group.memory / "memory.swap.max", "0")
    if group.pids is not None:
        _write(group.pids / "pids.max", str(tasks))
    return group


def remove_parents() -> None:
    """The grader's `looplab-grade-<pid>` folders, once every slot's group is gone."""
    own = _own_paths()
    parent = f"looplab-grade-{os.getpid()}"
    for mount, kind, options in _mounts():
        keys = [""] if kind == "cgroup2" else [c for c in V1_CONTROLLERS if c in options]
        for key in keys:
            if key in own:
                try:
                    os.rmdir(Path(mount) / own[key].lstrip("/") / parent)
                except OSError:
                    pass
