"""Running one notebook: a fresh, offline kernel, the learner's cells and the grader's, within limits.

The one place that talks to kernels, through the public interfaces of nbclient (its NotebookClient,
whose `output` method is wrapped to cap what is kept: outputs.py; its timeout settings and cell hooks)
and jupyter_client (a kernel spec, a registered provisioner, the kernel manager and client). What happens
at a check point is the judgement's: the Grader is handed a `judge` that makes one (grading.py hands it
judgement/judge.py's `check_point`), so this stage never imports a later one. What the run means is
decided in rows/from_run.py.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from queue import Empty
from typing import Any, Callable, Protocol

from ...catalogue import words
from ...client import offline_environment
from ...course import Exercise, Notebook
from ...withheld import LINE
from ..shared.limits import (AFTER_A_STOP, CHECK_SECONDS, DEFAULT_CELL_TIMEOUT, DEFAULT_TIMEOUT,
                             MEMORY_WATCH, POLL_SECONDS, STUCK_GRACE, WALL_FACTOR, WRITE_ENTRIES, WRITE_LIMIT,
                             WRITE_WATCH)
from ..submissions.plan import GraderCell, Plan
from . import process_tree
from .edition import build, outside_the_package, package_folder
from .emptying import disk_use, remove_tree
from .fork_server import KERNEL_NAME
from .kernel_cells import start_cell_source
from .messages import StrictSession, UnreadableMessage
from .outcome import Outcome
from .outputs import capped_client
from .process_tree import NotebookTree
from .sandbox import Isolation, bwrap_argv, read_only_paths
from ...language import OVERRIDE, SOURCE
from .slots import Slot

WORDS = words(__file__)  # texts/runner.toml: the grader's notes on its kernels, in the report's language

CHECK_MARGIN = 5  # seconds per exercise on top of the check's own time limit, for the grader's cells

DEAD_PORT_PROXY = "http://127.0.0.1:9"  # the discard port: nothing answers, so the network fails fast

# What nbclient reports, instead of the kernel's reply, for a cell it interrupted at its time limit
# (its `error_on_timeout`): how the grader tells a timeout from the learner's own KeyboardInterrupt.
TIMEOUT_ERROR = {"ename": "looplab-grader-timeout", "evalue": "the cell ran past its time limit", "traceback": []}


class CheckPoint(Protocol):
    """What the runner needs of the judge of one check point (judgement/judge.py's Judge)."""

    def cell_source(self) -> str:
        """The grader's cell the kernel runs there (it connects the kernel to the judge)."""

    def run(self, cell_ended: threading.Event) -> dict[str, dict]:
        """Judge the check point's exercises while the cell runs (in a thread); each one's result."""

    def abandon(self) -> None:
        """From another thread: stop waiting for the kernel."""


class Line(Protocol):
    """What the runner needs of a notebook's course line (judgement/course_line.py's CourseLine)."""

    path: Path  # its socket, which the kernel's environment names (looplab/withheld.py's LINE)

    def close(self) -> None:
        """Stop it: nothing of the course's code runs for this notebook any more."""


# Makes the judge of a check point: (its exercises, the learner's code cells before it as written, the folder
# of the kernel's sockets, the check's CPU seconds, a function that interrupts the kernel, the wall-clock factor,
# the notebook's course line).
MakeJudge = Callable[[list[Exercise], list[str], Path, float, Callable[[], None], float, Line | None], CheckPoint]
# Makes a notebook's course line: (the course's notebook it is, the folder of the kernel's sockets).
MakeLine = Callable[[Notebook, Path], Line]


def can_fork() -> bool:
    """Kernels can be forked from a template on Linux only (fork, and a parent-death signal)."""
    return sys.platform.startswith("linux") and hasattr(os, "fork")


@dataclass
class Session:
    km: Any
    kc: Any
    client: Any
    ipc: Path  # the slot's IPC folder: the judge's sockets (the kernel sees it, sandboxed or not)
    count: int = 0  # the learner's cells run so far: their execution counts
    tree: NotebookTree | None = None  # the notebook's processes: their CPU time, their limits, their end
    limits: dict = None  # cell index -> its limit in CPU seconds
    line: Line | None = None  # the notebook's course line: the course's code, run in the grader for the kernel


async def _answers(kc, within: float) -> bool:
    """Does the kernel answer a request now? After a stopped cell, no means the interrupt did not end
    it: code that catches every exception (a bare `except:` in a loop) catches KeyboardInterrupt too.
    (A kernel runs one shell request at a time, so its kernel_info reply waits for the cell to end.)"""
    msg_id = kc.kernel_info()
    deadline = time.monotonic() + within
    while (left := deadline - time.monotonic()) > 0:
        try:
            reply = await kc.shell_channel.get_msg(timeout=left)
        except Empty:
            return False
        if reply.get("parent_header", {}).get("msg_id") == msg_id:
            return True
    return False


async def _wait_ready(kc, km, timeout: float) -> None:
    """The kernel answers on shell and publishes on IOPub (no fixed waits, unlike wait_for_ready)."""
    deadline = time.monotonic() + timeout
    while True:
        if time.monotonic() > deadline:
            raise RuntimeError(f"the kernel did not start within {timeout:.0f} s")
        if not await km.is_alive():
            raise RuntimeError("the kernel exited while starting")
        msg_id = kc.kernel_info()
        try:
            while True:
                reply = await kc.shell_channel.get_msg(timeout=1)
                if reply["parent_header"].get("msg_id") == msg_id:
                    break
        except Empty:
            continue
        try:
            while True:
                message = await kc.iopub_channel.get_msg(timeout=0.1)
                if message["parent_header"].get("msg_id") == msg_id:
                    return
        except Empty:
            continue


def cell_error(cell) -> str | None:
    for output in cell.get("outputs", []):
        if output.get("output_type") == "error":
            return f"{output.get('ename')}: {output.get('evalue')}"
    return None


class Grader:
    """Kernels for notebooks: at most `jobs` at once, each in a job slot of its own (slots.py), forked from
    the slot's template unless `forked` is False, in a bubblewrap sandbox if `isolation` says so.

    `hidden` are folders no sandbox may show (the submissions, the feedback folder) even where they
    lie inside one it must show (such as the course's folder). `judge` makes the judge of each check point
    (MakeJudge). `language` is the class's: the one the templates speak first (a slot starts another before a
    notebook in another language: slots.py)."""

    def __init__(self, *, jobs: int, judge: MakeJudge, cell_timeout: float = DEFAULT_CELL_TIMEOUT,
                 timeout: float = DEFAULT_TIMEOUT, forked: bool = True, isolation: Isolation = Isolation(False),
                 hidden: list[Path] = (), language: str = SOURCE, line: MakeLine | None = None):
        self.jobs, self.judge, self.cell_timeout, self.timeout = jobs, judge, cell_timeout, timeout
        self.language, self.line = language, line
        self.forked = forked and can_fork()
        self.isolation = isolation
        self.notes: list[str] = [isolation.note] if isolation.note else []
        self.tmp = Path(tempfile.mkdtemp(prefix="looplab-grade-"))
        self.debug = os.environ.get("LOOPLAB_GRADE_DEBUG")
        # The package every kernel imports: its graded edition, with none of the course's answers (edition.py).
        self.edition = build(self.tmp / "edition")
        read_only = read_only_paths(outside_the_package()) if isolation.sandboxed else []
        self.slots = []
        for number in range(jobs):
            folder = self.tmp / f"slot-{number}"
            sandbox = None
            if isolation.sandboxed:
                sandbox = bwrap_argv([folder / "scratch", folder / "ipc"], read_only,
                                     [Path(path).resolve() for path in hidden],
                                     edition=(self.edition, package_folder()))
            self.slots.append(Slot(folder, sandbox, self.forked, bool(self.debug)))
        self.free: asyncio.Queue | None = None  # the slots no notebook runs in
        # Orphans of the notebooks' processes come to the grader, not to init, to be killed (process_tree.py).
        self.subreaper = process_tree.become_subreaper()
        self.before = set(process_tree.children(os.getpid()))  # children not the grader's to kill (in-process use)
        self.roots: set[int] = set()  # the running notebooks' root processes (the grader's children among them)
        self.starting = asyncio.Lock()  # held while a kernel starts: its process is not yet in `roots`

    def known(self) -> set[int]:
        """The grader's children it started (templates, sandboxes, plain kernels): never taken for orphans."""
        return self.before | self.roots | {slot.server.process_id for slot in self.slots if slot.server}

    def adopted(self) -> list[int]:
        """Orphans adopted as a subreaper (none while a kernel starts: its process could look like one)."""
        return [] if self.starting.locked() else process_tree.adopted(self.known())

    def kernel_env(self) -> dict:
        """What every kernel's environment starts from (each slot adds its own folders: Slot.env); the
        check's own limit in CPU seconds, CHECK_SECONDS, with its wall-clock bound. Offline
        (client.offline_environment), HTTP proxies pointed at a closed port."""
        env = {key: value for key, value in offline_environment().items()
               if key.upper() not in ("NO_PROXY", "JPY_PARENT_PID")}
        env["LOOPLAB_CHECK_SECONDS"] = f"{CHECK_SECONDS:g}"
        env["LOOPLAB_CHECK_WALL_SECONDS"] = f"{CHECK_SECONDS * WALL_FACTOR:g}"
        for key in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"):
            env[key] = env[key.lower()] = DEAD_PORT_PROXY
        env["PYDEVD_DISABLE_FILE_VALIDATION"] = "1"
        # The graded edition first on the path (in a sandbox the package is bound where the real one is: sandbox.py).
        env["PYTHONPATH"] = os.pathsep.join(self.edition.path(self.isolation.sandboxed) + [
            entry for entry in env.get("PYTHONPATH", "").split(os.pathsep) if entry])
        return env

    def spawn_template(self) -> None:
        """Start the slots' templates now, before the event loop (see ForkServer.spawn)."""
        if self.forked:
            for slot in self.slots:
                slot.spawn(self.kernel_env(), self.language)

    async def start(self) -> None:
        """Every slot ready; a slot whose template failed starts plain kernels, and a note says why."""
        self.free = asyncio.Queue()

        async def ready(slot: Slot) -> None:  # a notebook can start in it while the other slots still start
            await slot.start(self.kernel_env(), self.language)
            self.free.put_nowait(slot)

        await asyncio.gather(*(ready(slot) for slot in self.slots))
        failures = sorted({slot.failure for slot in self.slots if slot.failure})
        if failures:
            self.forked = any(slot.forked for slot in self.slots)
            self.notes.append(WORDS("plain_kernels", failures="; ".join(failures)))

    async def close(self) -> None:
        """Every slot stopped and every process of every notebook gone (orphans adopted and killed), so that
        nothing of a submission is left to write after the grader writes its results; the temporary folder
        removed (a failure is a note: the gradebook comes first)."""
        await asyncio.gather(*(slot.stop() for slot in self.slots), return_exceptions=True)
        for slot in self.slots:
            slot.remove_cgroup()
        self.kill_adopted()
        try:
            remove_tree(self.tmp)
        except OSError as error:
            self.notes.append(WORDS("not_removed", folder=self.tmp, error=error))
        from .cgroups import remove_parents
        remove_parents()

    def kill_adopted(self, within: float = 5) -> None:
        deadline = time.monotonic() + within
        while (orphans := process_tree.adopted(self.known())) and time.monotonic() < deadline:
            for pid in orphans + [pid for orphan in orphans for pid in process_tree.descendants(orphan)]:
                process_tree.kill(pid)
            time.sleep(0.005)
            process_tree.reap(orphans)

    @staticmethod
    def _cell_limit(plan: Plan, outcome: Outcome) -> float:
        """The current cell's limit, in CPU seconds: a grader's cell outlasts its checks (and ends when its judge
        is done: `_watch`); a learner's cell gets the cell limit, or AFTER_A_STOP once a cell before it was
        stopped (it most likely calls the same loop)."""
        index = outcome.current
        origin = plan.origin[index] if index is not None and 0 <= index < len(plan.origin) else None
        if isinstance(origin, GraderCell):
            return len(origin.exercises) * (CHECK_SECONDS + CHECK_MARGIN) + 10
        return min(plan.cell_limit, AFTER_A_STOP) if outcome.timed_out else plan.cell_limit

    async def run(self, plan: Plan) -> Outcome:
        """Run one notebook in a fresh kernel, once one of the --jobs slots is free.

        A notebook whose template was lost while it ran (a kernel killed it: its own, or in a run
        without isolation perhaps another's) runs once more in a new one, so that only a notebook
        that kills its own template gets the rows of a dead kernel, as it would graded alone.
        A stop is not graded again: every limit counts CPU seconds, which a busy machine does not use up
        for a correct cell (shared/limits.py)."""
        if self.free is None:
            await self.start()
        slot = await self.free.get()
        try:
            for attempt in (1, 2):
                await slot.prepare(self.kernel_env(), plan.language)
                outcome = await self._run_in(slot, plan)
                if not (slot.server is not None and slot.server.lost):
                    break
            return outcome
        finally:
            self.free.put_nowait(slot)

    async def _run_in(self, slot: Slot, plan: Plan) -> Outcome:
        outcome = Outcome()
        session = None
        started = time.perf_counter()
        try:
            session = await self._start(plan, outcome, slot)
            if 0 not in outcome.failures and outcome.died_at is None:
                watch = asyncio.create_task(self._watch_writes(slot, outcome, session))
                try:
                    await self._run_with_limit(plan, outcome, session)
                finally:
                    watch.cancel()
        except Exception as error:
            outcome.error = f"{type(error).__name__}: {error}"
        finally:
            if session is not None and not await self._shutdown(session.km, session.kc) and slot.server:
                await slot.stop()  # its template did not report the kernel's end: a new one for the next notebook
            if session is not None and session.tree is not None:
                await self._end_tree(session.tree)
            if session is not None and session.line is not None:
                session.line.close()
            self._log_time(plan, time.perf_counter() - started)
        return outcome

    async def _end_tree(self, tree: NotebookTree) -> None:
        """Every process the notebook started gone (a detached one too) before its results are written."""
        async with self.starting:  # no kernel is starting: every child of the grader not known is an orphan
            self.roots.discard(tree.root)
            tree.adopted = lambda: process_tree.adopted(self.known())
            await asyncio.get_running_loop().run_in_executor(None, tree.kill)

    def _tree(self, slot: Slot, km) -> NotebookTree:
        """The notebook's processes, from the kernel just started: its process (a forked kernel in a sandbox:
        found by its pid in there), or the plain kernel's launcher or sandbox; orphans outside a sandbox."""
        pid = km.provisioner.pid
        adopted = self.adopted if slot.sandbox is None else (lambda: [])
        if slot.server is not None and slot.sandbox is not None:
            inner, pid = pid, process_tree.outer_pid(slot.server.process_id, pid)
            if pid is None:
                raise RuntimeError(f"the kernel's process (pid {inner} in its sandbox) was not found")
            template = process_tree.parent_of(pid)  # in there, orphans go to the template: its other children
            adopted = lambda: [child for child in process_tree.children(template) if child != pid]  # noqa: E731
        tree = NotebookTree(pid, slot.cgroup, adopted=adopted)
        self.roots.add(pid)
        return tree

    @staticmethod
    async def _watch_writes(slot: Slot, outcome: Outcome, session: Session) -> None:
        """Kill the kernel once its folders hold more than WRITE_LIMIT bytes or WRITE_ENTRIES files and folders.

        Why here: what a notebook writes is on the grader's disk, which the whole class is graded on, and a
        file-size limit (RLIMIT_FSIZE) bounds each file, not how many there are. The kernel then dies where it
        was, and rows/from_run.py says why."""
        while True:
            await asyncio.sleep(WRITE_WATCH)
            used, entries = disk_use([slot.scratch, slot.ipc], WRITE_LIMIT, WRITE_ENTRIES)
            if used > WRITE_LIMIT or entries > WRITE_ENTRIES:
                outcome.wrote_too_much = "bytes" if used > WRITE_LIMIT else "entries"
                try:
                    await session.km.provisioner.kill()
                except Exception:
                    pass
                return

    @staticmethod
    def _log_time(plan: Plan, seconds: float) -> None:
        """For benchmarks/grading.py: LOOPLAB_GRADE_TIMINGS=FILE gets one JSON line per notebook run."""
        target = os.environ.get("LOOPLAB_GRADE_TIMINGS")
        if target:
            with open(target, "a", encoding="utf-8") as handle:
                handle.write(json.dumps({"notebook": plan.course.stem, "file": plan.submission.file,
                                         "seconds": round(seconds, 4)}) + "\n")

    async def _run_with_limit(self, plan: Plan, outcome: Outcome, session: Session) -> None:
        """The learner's cells, within the total limit: the notebook's CPU seconds, or WALL_FACTOR times
        that by the clock."""
        task = asyncio.create_task(self._run_cells(plan, outcome, session, first=1))
        limit = plan.total_limit
        expired = False

        async def expire():
            nonlocal expired
            begun, used = time.monotonic(), session.tree.cpu_seconds()
            while not task.done():
                await asyncio.sleep(POLL_SECONDS)
                if session.tree.cpu_seconds() - used > limit or time.monotonic() - begun > limit * WALL_FACTOR:
                    expired = True
                    task.cancel()
                    return

        timer = asyncio.create_task(expire())
        try:
            await task
        except UnreadableMessage:  # the learner's code broke the kernel's messages: nothing more can be run
            outcome.garbled_at = outcome.current
        except asyncio.CancelledError:
            if not expired:
                raise
        except Exception:
            if not expired:
                raise
        finally:
            timer.cancel()
        if expired:
            outcome.stopped_at = outcome.current
            outcome.died_at = None

    def _client(self, plan: Plan, outcome: Outcome, km, limits: dict[int, float]):
        """nbclient's NotebookClient, its outputs capped as they arrive (outputs.py): cells interrupted at their
        wall-clock bound (WALL_FACTOR times their CPU limit: `_watch` watches the CPU), timeouts recorded from
        its hook."""

        def record_timeout(cell, cell_index: int, execute_reply: dict) -> None:
            content = (execute_reply or {}).get("content", {})
            if content.get("ename") == TIMEOUT_ERROR["ename"] and cell_index not in outcome.timed_out:
                outcome.timed_out[cell_index] = limits.get(cell_index, plan.cell_limit)

        def cell_limit(cell) -> float:
            return limits[outcome.current] * WALL_FACTOR

        return capped_client()(
            plan.notebook, km=km, kernel_name=KERNEL_NAME, timeout=self.cell_timeout,
            timeout_func=cell_limit,
            interrupt_on_timeout=True, error_on_timeout=TIMEOUT_ERROR, on_cell_executed=record_timeout,
            allow_errors=True, record_timing=False, skip_cells_with_tag="looplab-grader-never-skips",
        )

    async def _start(self, plan: Plan, outcome: Outcome, slot: Slot) -> Session:
        """A fresh kernel in its slot's work folder, ready, with the grader's first cell run."""
        import zmq
        from jupyter_client import AsyncKernelManager

        work = slot.work
        (work / plan.submission.path.name).write_bytes(plan.submission.path.read_bytes())
        # The kernel speaks the notebook's language (the client's mode line, the viewer): LOOPLAB_LANG, which the
        # sandbox keeps (slots.py); JPY_SESSION_NAME would name a notebook the sandboxed kernel cannot read.
        env = slot.env({**self.kernel_env(), OVERRIDE: plan.language})
        if self.line is not None:  # the course's code the notebook asks for runs in the grader (looplab/withheld.py)
            session_line = self.line(plan.course, slot.ipc)
            env[LINE] = str(session_line.path)
        else:
            session_line = None
        channels = {}
        if slot.sandbox is not None:  # no network in the sandbox: IPC sockets in the slot's own folder
            channels = {"transport": "ipc", "connection_file": str(slot.ipc / "kernel.json")}
        # StrictSession: a message the learner's code garbled is their status (messages.py), not a grader error
        km = AsyncKernelManager(kernel_name=KERNEL_NAME, kernel_spec_manager=slot.specs, session=StrictSession(),
                                **channels)
        extra = {}
        if slot.server is None:
            log = None if self.debug else asyncio.subprocess.DEVNULL
            extra = {"stdout": log, "stderr": log}
        limits: dict[int, float] = {}  # each cell's limit in CPU seconds, set as it starts
        client = self._client(plan, outcome, km, limits)
        outcome.executed = plan.notebook
        session = Session(km, None, client, slot.ipc, limits=limits, line=session_line)
        try:
            async with self.starting:
                await km.start_kernel(env=env, cwd=str(work), **extra)
                session.tree = self._tree(slot, km)
            kc = session.kc = km.client()
            # The kernel binds its ports ~50 ms after the fork; zmq's default is to retry a refused
            # connection every 100 ms, which costs up to that much per notebook.
            kc.context.setsockopt(zmq.RECONNECT_IVL, 5)
            kc.start_channels()
            await _wait_ready(kc, km, 60)
            session.tree.protect()
            kc.allow_stdin = False
            client.kc = kc
            client.reset_execution_trackers()
            await self._run_cells(plan, outcome, session, first=0, last=0)
        except BaseException:
            await self._shutdown(km, session.kc)
            if session.tree is not None:
                await self._end_tree(session.tree)
            if session.line is not None:
                session.line.close()
            raise
        return session

    async def _run_cells(self, plan: Plan, outcome: Outcome, session: Session, first: int,
                         last: int | None = None) -> None:
        from nbclient.exceptions import DeadKernelError

        client = session.client
        cells = plan.notebook.cells
        for index in range(first, len(cells) if last is None else last + 1):
            cell = cells[index]
            if cell.cell_type != "code":
                continue
            outcome.current = index
            grader_cell = plan.origin[index] if isinstance(plan.origin[index], GraderCell) else None
            if grader_cell is not None and grader_cell.step == "end":
                continue  # nothing to run after the last check: a grade is decided at its check point
            judge = None
            if grader_cell is not None and grader_cell.step == "check":
                judge = self._judge(plan, session, index, grader_cell)
                cell.source = judge.cell_source()
            elif grader_cell is not None:
                cell.source = start_cell_source({"memory": MEMORY_WATCH})  # in_kernel.watch_memory
            elif cell.source.strip():
                session.count += 1
            session.limits[index] = self._cell_limit(plan, outcome)
            execution = asyncio.create_task(client.async_execute_cell(
                cell, index, execution_count=None if grader_cell else session.count, store_history=grader_cell is None))
            watch = asyncio.create_task(self._watch(session, outcome, execution, index, judge))
            execution.add_done_callback(lambda task: task.cancelled() or task.exception())  # retrieved, not logged
            try:
                await execution
            except (DeadKernelError, asyncio.CancelledError) as error:
                if asyncio.current_task().cancelling():
                    raise  # the total limit, or the run stopped: theirs to say
                if outcome.stuck_at == index:
                    return  # `_watch` gave up on it
                if isinstance(error, DeadKernelError):
                    outcome.died_at = index
                    return
                raise
            finally:
                watch.cancel()
                if judge is not None:
                    await self._judged(judge, outcome, index, aborted=sys.exc_info()[0] is not None)
            if grader_cell is not None and grader_cell.step == "start" and (
                    cell_error(cell) or index in outcome.timed_out):
                outcome.failures[index] = cell_error(cell) or "it ran past its time limit"
                return  # the first cell ran before any learner code: the grader's own failure
            if index in outcome.timed_out and outcome.stuck_at is None and not await _answers(
                    session.kc, STUCK_GRACE * WALL_FACTOR):
                outcome.stuck_at = index  # every later cell would only wait for it, each to its own limit
            if outcome.stuck_at is not None:
                return

    async def _watch(self, session: Session, outcome: Outcome, execution: asyncio.Task, index: int,
                     judge: CheckPoint | None = None) -> None:
        """A cell within its limit of CPU seconds (every process of the notebook: a subprocess's too): past
        it, the kernel is interrupted, as nbclient does at the wall-clock bound; a cell that goes on after
        the interrupt (it caught it) for STUCK_GRACE more CPU seconds, or WALL_FACTOR times that by the
        clock, is given up, and the notebook stopped there. Without a cgroup, also the notebook's memory
        and tasks kept within their limits (NotebookTree.enforce).

        A check point's cell is also bounded by its judge: once the judge is done (it has every result, or gave
        up on learner code that would not stop), the cell ends as soon as the kernel reads so; one still running
        STUCK_GRACE CPU seconds later (WALL_FACTOR times that by the clock) is the learner's code going on: the
        check's own limit passed, it is interrupted and given up the same way. So a stalled check costs its
        judge's wait and that grace, not the cell's whole limit."""
        tree, limit = session.tree, session.limits[index]
        used = tree.cpu_seconds()
        judged: tuple[float, float] | None = None  # when the judge was done: (the clock, the notebook's CPU)
        while not execution.done():
            await asyncio.sleep(POLL_SECONDS)
            if not self.starting.locked():
                tree.enforce()
            if tree.cpu_seconds() - used > limit:
                break
            if judge is not None and judge.judging.done():
                judged = judged or (time.monotonic(), tree.cpu_seconds())
                if (tree.cpu_seconds() - judged[1] > STUCK_GRACE
                        or time.monotonic() - judged[0] > STUCK_GRACE * WALL_FACTOR):
                    limit = CHECK_SECONDS  # the limit it went past: the check's
                    break
        else:
            return
        outcome.timed_out.setdefault(index, limit)
        await session.km.interrupt_kernel()
        grace, begun, used = STUCK_GRACE, time.monotonic(), tree.cpu_seconds()
        while not execution.done():
            await asyncio.sleep(POLL_SECONDS)
            if tree.cpu_seconds() - used > grace or time.monotonic() - begun > grace * WALL_FACTOR:
                outcome.stuck_at = index
                execution.cancel()
                return

    def _judge(self, plan: Plan, session: Session, index: int, grader_cell: GraderCell) -> CheckPoint:
        """A check point: its cell connects the kernel to a judge whose thread runs the checks (`self.judge`)."""
        sources = [c.source for c, origin in zip(plan.notebook.cells[:index], plan.origin[:index])
                   if not isinstance(origin, GraderCell) and c.cell_type == "code"]
        loop = asyncio.get_running_loop()

        def interrupt() -> None:  # the judge's own clock ran out: stop the learner's code now
            asyncio.run_coroutine_threadsafe(session.km.interrupt_kernel(), loop)

        judge = self.judge(grader_cell.exercises, sources, session.ipc, CHECK_SECONDS, interrupt,
                           WALL_FACTOR, session.line)
        judge.ended = threading.Event()
        judge.judging = asyncio.ensure_future(asyncio.to_thread(judge.run, judge.ended))
        return judge

    @staticmethod
    async def _judged(judge: CheckPoint, outcome: Outcome, index: int, aborted: bool) -> None:
        """The check point's cell ended: the judge's results, unless the kernel died or would not stop there."""
        if aborted:
            judge.abandon()  # the run was cancelled (the total limit): stop waiting for the kernel
        judge.ended.set()
        results = await judge.judging
        if not aborted and outcome.died_at is None and outcome.stuck_at != index:
            outcome.payloads[index] = {"step": "check", "results": results}

    async def _shutdown(self, km, kc) -> bool:
        """Kill the kernel now (nothing of it is kept) and wait for its exit, polling quickly; False if it did not end."""
        ended = True
        try:
            if kc is not None:
                kc.stop_channels()
            provisioner = km.provisioner
            if provisioner is not None and provisioner.has_process:
                try:
                    await provisioner.kill()
                except OSError:
                    pass
                try:
                    await asyncio.wait_for(self._exit_of(provisioner), 10)
                except TimeoutError:
                    ended = False
            await km.cleanup_resources()
        except Exception:
            pass
        return ended

    @staticmethod
    async def _exit_of(provisioner) -> None:
        while await provisioner.poll() is None:
            await asyncio.sleep(0.01)
        await provisioner.wait()
