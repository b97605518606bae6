"""A notebook's processes: the CPU time they used, the memory they hold, and killing every one of them.

Why: the limits that decide a grade count what the learner's code did, not how busy the machine was.
Wall-clock limits stopped a correct notebook on a loaded machine; per-process limits let a kernel's
children hold memory no limit counted; a `setsid`, double-forked child outlived its kernel and rewrote
the gradebook after the grader wrote it. So the grader follows the whole tree of a notebook:

- in a cgroup (cgroups.py), where one can be made: the operating system counts and caps the tree;
- else by polling /proc (a learner's laptop, a container): the kernel and its descendants found by their
  parent pid, plus, outside a sandbox, the orphans the grader adopts as a child subreaper (a detached
  child's parent dies, and Linux hands it to the nearest subreaper ancestor instead of init): the
  grader's children it did not start. Inside a sandbox the slot's PID namespace already holds them all
  (orphans go to its template, which kills them when the kernel exits).

`NotebookTree` is what the runner asks: `cpu_seconds()` (never decreasing), `enforce()` (the fallback's
memory and process limits, where no cgroup caps them) and `kill()` (every process gone before the grader
writes any result).
"""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path

from .cgroups import Cgroup
from ..shared.limits import NOTEBOOK_MEMORY, NOTEBOOK_TASKS

TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def become_subreaper() -> bool:
    """Linux: orphans of our descendants are re-parented to this process (not init), so none escapes."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes
        return ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0) == 0  # PR_SET_CHILD_SUBREAPER
    except Exception:
        return False


def _stat(pid: int) -> list[str] | None:
    """/proc/<pid>/stat's fields after the command name (field 3 on: state, ppid, ...)."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return text[text.rfind(")") + 2:].split()


def children(pid: int) -> list[int]:
    """The direct children of a process (every thread's), from /proc/<pid>/task/*/children."""
    found: list[int] = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return found
    for task in tasks:
        try:
            found += [int(child) for child in Path(f"/proc/{pid}/task/{task}/children").read_text().split()]
        except OSError:
            return _children_by_scan(pid)  # a kernel built without CONFIG_PROC_CHILDREN
    return found


def _children_by_scan(pid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            fields = _stat(int(entry))
            if fields and int(fields[1]) == pid:
                found.append(int(entry))
    return found


def descendants(pid: int) -> list[int]:
    """Every process below `pid` (not itself), parents before their children."""
    found, queue = [], [pid]
    while queue:
        for child in children(queue.pop()):
            if child not in found:
                found.append(child)
                queue.append(child)
    return found


def cpu_of(pid: int) -> float:
    """Seconds of CPU a process used, with those of the children it waited for (utime+stime+cutime+cstime)."""
    fields = _stat(pid)
    return sum(int(value) for value in fields[11:15]) / TICK if fields else 0.0


def parent_of(pid: int) -> int:
    fields = _stat(pid)
    return int(fields[1]) if fields else 0


def running(pid: int) -> bool:
    """Not ended: a zombie (ended, its exit not yet collected by its parent) holds nothing and runs nothing."""
    fields = _stat(pid)
    return bool(fields) and fields[0] not in ("Z", "X")


def tasks_of(pid: int) -> int:
    fields = _stat(pid)
    return int(fields[17]) if fields else 0  # num_threads: the pids controller counts threads too


def memory_of(pid: int) -> int:
    """Bytes a process holds, shared pages split between their sharers (Pss; Rss where smaps_rollup is missing)."""
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * PAGE
    except (OSError, IndexError, ValueError):
        return 0


def outer_pid(root: int, inner: int) -> int | None:
    """The pid, as this process sees it, of the process below `root` that is `inner` in its own PID namespace."""
    for pid in descendants(root):
        try:
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("NSpid:") and int(line.split()[-1]) == inner and len(line.split()) > 2:
                    return pid
        except OSError:
            continue
    return None


class NotebookTree:
    """The processes of the notebook running in one slot, from its kernel's start to its last kill.

    `root`: the process the tree hangs from (the kernel, or what started it: a plain kernel's launcher, a
    sandbox's bwrap), itself counted. `adopted()`: the orphans the grader adopted (its children it did not
    start); outside a sandbox they belong to some notebook, and, as nothing says which, to every running one.
    """

    def __init__(self, root: int, cgroup: Cgroup | None, *, adopted=lambda: []):
        self.root, self.cgroup = root, cgroup
        self.adopted = adopted
        self._cpu = 0.0  # the most the /proc reading has said: processes that exit take their time with them
        self.protected = {root}  # never killed by `enforce`: the kernel, and what started it (`protect`)
        self._base = cgroup.cpu_seconds() if cgroup is not None else 0.0
        if cgroup is not None:
            cgroup.add(self.members())  # before the learner's first cell: nothing it starts is born outside

    def protect(self) -> None:
        """Once the kernel answers, before the learner's first cell: every process there now is the kernel's
        own (a plain kernel's launcher, a sandbox's init), never one `enforce` may kill."""
        self.protected |= set(self.members())

    def members(self) -> list[int]:
        """Every live process of the notebook, found in /proc."""
        own = [self.root] + descendants(self.root)
        orphans = [pid for orphan in self.adopted() for pid in [orphan] + descendants(orphan)]
        return own + [pid for pid in orphans if pid not in own]

    def cpu_seconds(self) -> float:
        """CPU seconds the notebook's processes used since its kernel started (never decreasing)."""
        if self.cgroup is not None:
            return self.cgroup.cpu_seconds() - self._base
        self._cpu = max(self._cpu, sum(cpu_of(pid) for pid in self.members()))
        return self._cpu

    def enforce(self, memory: int = NOTEBOOK_MEMORY, tasks: int = NOTEBOOK_TASKS) -> None:
        """Without a cgroup to cap them: the notebook's tasks and memory over their limits, its newest (then
        biggest) processes killed, never the kernel's own (`protect`), as the OOM killer would in a memory cgroup."""
        capped = self.cgroup is not None
        if capped and self.cgroup.memory is not None and self.cgroup.pids is not None:
            return
        members = self.members()
        others = [pid for pid in members if pid not in self.protected]
        if not (capped and self.cgroup.pids is not None):
            while others and sum(tasks_of(pid) for pid in members) > tasks:
                newest = others.pop()
                members.remove(newest)
                kill(newest)
        if not (capped and self.cgroup.memory is not None):
            sizes = {pid: memory_of(pid) for pid in members}
            while others and sum(sizes.values()) > memory:
                biggest = max(others, key=sizes.get)
                others.remove(biggest)
                sizes.pop(biggest)
                kill(biggest)

    def kill(self, within: float = 5) -> bool:
        """Every process of the notebook but the root killed and gone (a cgroup's at once; else those found
        in /proc, the adopted orphans too, reaped). The root is its kernel manager's to end. False if one is
        left after `within` seconds."""
        deadline = time.monotonic() + within
        if self.cgroup is not None:
            self.cgroup.kill(within)
        while True:
            left = [pid for pid in self.members() if pid != self.root and running(pid)]
            if not left:
                return True
            for pid in left:
                kill(pid)
            reap(self.adopted())
            if time.monotonic() > deadline:
                return False
            time.sleep(0.005)


def kill(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except OSError:
        pass


def reap(pids: list[int]) -> None:
    """Collect the exit of these children of the grader (adopted orphans) that ended."""
    for pid in pids:
        try:
            os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            pass


def adopted(known: set[int]) -> list[int]:
    """The grader's children it did not start: orphans re-parented to it as a subreaper."""
    return [pid for pid in children(os.getpid()) if pid not in known]
