"""How many kernels this machine holds at once: the default `--jobs`.

One job per core, but no more than the free memory holds at one kernel's cap each (KERNEL_MEMORY), so a
class whose every notebook loops filling memory stays within the machine, on a laptop too.
"""

from __future__ import annotations

import os

from ..shared.limits import KERNEL_MEMORY


def available_memory() -> int | None:
    """Bytes of memory free for new work (Linux: MemAvailable), else the machine's memory, else None."""
    try:
        with open("/proc/meminfo", encoding="ascii") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError):
        pass
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):
        return None


def default_jobs(cores: int | None = None, memory: int | None = None) -> int:
    """One job per core (those this process may run on), at most one per KERNEL_MEMORY of free memory; at least one."""
    if cores is None:
        try:
            cores = len(os.sched_getaffinity(0))
        except AttributeError:
            cores = os.cpu_count() or 1
    memory = available_memory() if memory is None else memory
    by_memory = max(1, memory // KERNEL_MEMORY) if memory else cores
    return max(1, min(cores, by_memory))
