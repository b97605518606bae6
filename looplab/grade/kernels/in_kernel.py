"""The grader's first cell, in the fresh kernel before the learner's first cell: the memory watch.

The grader never imports this module into a kernel: its first cell runs this file's source in a
namespace of its own (kernel_cells.start_cell_source), followed by `start(STEP)`. So it may only use
the standard library, and must never import the grader.

Nothing else of the grader runs in the kernel: the checks run in the grader's own process and reach
the learner's objects over a channel (looplab/grade/judgement/judge.py, looplab/serve.py). So nothing in the
kernel is a secret or a verdict, and this cell holds no key.
"""

from __future__ import annotations

import os


def watch_memory(limit: int) -> None:
    """Raise MemoryError in the main thread each time the kernel's data grows past `limit` bytes.

    The hard limit (setrlimit RLIMIT_DATA, shared/limits.py) makes any allocation fail once reached, in any
    thread: the kernel's own threads then die, and the kernel with them, so every later exercise
    would be lost. Raised below it, in the thread running the learner's code, the error ends the
    loop that grows, what the loop held is freed, and the kernel lives on. Data size as setrlimit
    counts it: /proc/self/statm's sixth field (Linux; elsewhere this does nothing).
    """
    if not limit or not os.path.exists("/proc/self/statm"):
        return
    import ctypes
    import threading
    import time

    page, main = os.sysconf("SC_PAGE_SIZE"), threading.main_thread().ident
    raise_in = ctypes.pythonapi.PyThreadState_SetAsyncExc

    def data_size() -> int:
        with open("/proc/self/statm", "rb") as statm:
            return int(statm.read().split()[5]) * page

    def watch() -> None:
        threshold = limit
        while True:
            time.sleep(0.02)
            size = data_size()
            if size > threshold:
                raise_in(ctypes.c_ulong(main), ctypes.py_object(MemoryError))
                threshold = size + limit // 8  # once more only if it goes on growing
            elif size < limit:
                threshold = limit

    threading.Thread(target=watch, name="looplab-memory-watch", daemon=True).start()


def start(step: dict) -> None:
    """The first grader cell: start the memory watch (limits.MEMORY_WATCH bytes)."""
    watch_memory(step.get("memory", 0))
