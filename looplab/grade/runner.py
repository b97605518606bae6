"""Running one notebook: a fresh, offline kernel, the learner's cells and the grader's, within limits.

The one place that talks to kernels through nbclient; what the run means is decided in rows.py.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .course import CourseNotebook
from .gradebook import Row, _one_row
from .kernel_cells import MIME, grader_cell_source
from .kernels import ForkServer, _provisioner_classes
from .outcome import Outcome
from .plan import (
    DEFAULT_CELL_TIMEOUT,
    DEFAULT_TIMEOUT,
    Plan,
    Step,
    plan_run,
    read_submission,
)
from .report import Progress, write_feedback
from .rows import rows_for
from .submissions import Submission, _sort_key

CHECK_MARGIN = 5  # seconds per exercise on top of the check's own time limit, for the grader's cells

DEAD_PORT_PROXY = "http://127.0.0.1:9"  # the discard port: nothing answers, so the network fails fast



@dataclass
class Session:
    km: Any
    kc: Any
    client: Any
    count: int = 0  # the learner's cells run so far: their execution counts


def _grader_client_class():
    from nbclient import NotebookClient

    class GraderClient(NotebookClient):
        current_index = -1

        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.timeouts_seen: list[int] = []

        async def _async_handle_timeout(self, timeout, cell=None):
            if self.current_index not in self.timeouts_seen:
                self.timeouts_seen.append(self.current_index)
            return await super()._async_handle_timeout(timeout, cell)

    return GraderClient


async def _wait_ready(kc, km, timeout: float) -> None:
    """The kernel answers on shell and publishes on IOPub (no fixed waits, unlike wait_for_ready)."""
    from queue import Empty

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


def _payload(cell, nonce: str) -> tuple[dict | None, int]:
    found = []
    for output in cell.get("outputs", []):
        data = output.get("data", {}) if output.get("output_type") == "display_data" else {}
        value = data.get(MIME)
        if isinstance(value, str):
            try:
                value = json.loads(value)
            except ValueError:
                value = None
        if isinstance(value, dict) and value.get("nonce") == nonce:
            found.append(value)
    return (found[0] if len(found) == 1 else None), len(found)


def _cell_error(cell) -> str | None:
    for output in cell.get("outputs", []):
        if output.get("output_type") == "error":
            return f"{output.get('ename')}: {output.get('evalue')}"
    return None


class Grader:
    def __init__(self, *, jobs: int, cell_timeout: float, timeout: float, forked: bool, feedback: Path | None,
                 progress: Progress | None = None):
        self.jobs, self.cell_timeout, self.timeout = jobs, cell_timeout, timeout
        self.forked, self.feedback, self.progress = forked, feedback, progress
        self.notes: list[str] = []
        self.tmp = Path(tempfile.mkdtemp(prefix="looplab-grade-"))
        (self.tmp / "ipython").mkdir()  # one IPython directory (no config, no startup files) for every kernel
        self.server: ForkServer | None = None
        self.slots = asyncio.Semaphore(jobs)  # kernels alive at once
        self.debug = os.environ.get("LOOPLAB_GRADE_DEBUG")
        self.taken: set[Path] = set()  # feedback files written

    @property
    def check_limit(self) -> float:
        from ..checks.core import TIME_LIMIT_SECONDS
        return TIME_LIMIT_SECONDS

    def kernel_env(self, ipython_dir: Path) -> dict:
        env = {key: value for key, value in os.environ.items()
               if not key.startswith("ANTHROPIC_") and key.upper() not in ("NO_PROXY", "JPY_PARENT_PID")}
        env["LOOPLAB_MODE"] = "offline"
        for key in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"):
            env[key] = env[key.lower()] = DEAD_PORT_PROXY
        env["IPYTHONDIR"] = str(ipython_dir)
        env["PYDEVD_DISABLE_FILE_VALIDATION"] = "1"
        return env

    def spawn_template(self) -> None:
        """Start the kernel template now, before the event loop (see ForkServer.spawn)."""
        if self.forked and self.server is None:
            self.server = ForkServer(self.kernel_env(self.tmp / "ipython"), str(self.tmp), bool(self.debug))
            self.server.spawn()

    async def start(self) -> None:
        if not self.forked:
            return
        try:
            if self.server is None:
                self.server = ForkServer(self.kernel_env(self.tmp / "ipython"), str(self.tmp), bool(self.debug))
            await self.server.start()
        except Exception as error:
            self.server = None
            self.forked = False
            self.notes.append(f"kernels are started the plain way: the kernel template failed ({error})")

    async def grade(self, submissions: list[Submission], course: dict[str, CourseNotebook]) -> list[Row]:
        submissions = sorted(submissions, key=_sort_key)
        results: dict[int, list[Row]] = {}

        async def one(position: int, submission: Submission) -> None:
            try:
                read = read_submission(submission, course)
                if isinstance(read, list):
                    rows = read
                else:
                    notebook, identified = read
                    plan = plan_run(submission, notebook, identified)
                    plan.cell_limit, plan.total_limit = self.cell_timeout, self.timeout
                    outcome = await self.run(plan)
                    rows = rows_for(plan, outcome)
                    if self.feedback is not None:
                        write_feedback(self.feedback, plan, outcome, rows, self.taken)
            except Exception as error:  # every submission gets its rows, even when the grader fails
                rows = _one_row(submission, "grader error", f"{type(error).__name__}: {error}")
            results[position] = rows
            if self.progress:
                self.progress.update(f"{submission.learner}: {submission.file}")

        await asyncio.gather(*(one(i, s) for i, s in enumerate(submissions)))
        return [row for i in range(len(submissions)) for row in results[i]]

    async def close(self) -> None:
        if self.server:
            await self.server.close()
        shutil.rmtree(self.tmp, ignore_errors=True)

    def _cell_limit(self, plan: Plan, index: int) -> float:
        origin = plan.origin[index] if 0 <= index < len(plan.origin) else None
        if isinstance(origin, Step):
            return len(origin.exercises) * (self.check_limit + CHECK_MARGIN) + 60
        return plan.cell_limit

    async def run(self, plan: Plan) -> Outcome:
        """Run one notebook in a fresh kernel, once one of the --jobs slots is free."""
        outcome = Outcome()
        workdir = Path(tempfile.mkdtemp(dir=self.tmp))
        session = None
        try:
            async with self.slots:
                started = time.perf_counter()
                try:
                    session = await self._start(plan, outcome, workdir)
                    if 0 not in outcome.failures and outcome.died_at is None:
                        await self._run_with_limit(plan, outcome, session)
                except Exception as error:
                    outcome.error = f"{type(error).__name__}: {error}"
                finally:
                    if session is not None:
                        await self._shutdown(session.km, session.kc)
                    self._log_time(plan, time.perf_counter() - started)
        finally:
            shutil.rmtree(workdir, ignore_errors=True)
        return outcome

    @staticmethod
    def _log_time(plan: Plan, seconds: float) -> None:
        """For benchmarks/grading.py: LOOPLAB_GRADE_TIMINGS=FILE gets one JSON line per notebook run."""
        target = os.environ.get("LOOPLAB_GRADE_TIMINGS")
        if target:
            with open(target, "a", encoding="utf-8") as handle:
                handle.write(json.dumps({"notebook": plan.course.stem, "file": plan.submission.file,
                                         "seconds": round(seconds, 4)}) + "\n")

    async def _run_with_limit(self, plan: Plan, outcome: Outcome, session: Session) -> None:
        task = asyncio.create_task(self._run_cells(plan, outcome, session, first=1))
        expired = False

        def expire():
            nonlocal expired
            expired = True
            task.cancel()

        timer = asyncio.get_running_loop().call_later(self.timeout, expire)
        try:
            await task
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

    async def _start(self, plan: Plan, outcome: Outcome, workdir: Path) -> Session:
        """A fresh kernel in its own folder, ready, with the grader's first cell run."""
        import zmq
        from jupyter_client import AsyncKernelManager

        work = workdir / "work"
        work.mkdir()
        (work / plan.submission.path.name).write_bytes(plan.submission.path.read_bytes())
        env = self.kernel_env(self.tmp / "ipython")
        plain, forked = _provisioner_classes()
        km = AsyncKernelManager(kernel_name="python3")
        km.kernel_id = str(uuid.uuid4())
        if self.server is not None:
            km.provisioner = forked(kernel_id=km.kernel_id, kernel_spec=km.kernel_spec, parent=km)
            km.provisioner.server = self.server
            extra = {}
        else:
            km.provisioner = plain(kernel_id=km.kernel_id, kernel_spec=km.kernel_spec, parent=km)
            log = None if self.debug else asyncio.subprocess.DEVNULL
            extra = {"stdout": log, "stderr": log}
        client = _grader_client_class()(
            plan.notebook, km=km, timeout=self.cell_timeout, allow_errors=True, interrupt_on_timeout=True,
            record_timing=False, skip_cells_with_tag="looplab-grader-never-skips", kernel_name="python3",
        )
        client.timeout_func = lambda cell: self._cell_limit(plan, client.current_index)
        outcome.executed = plan.notebook
        session = Session(km, None, client)
        try:
            await km.start_kernel(env=env, cwd=str(work), **extra)
            kc = session.kc = km.client()
            # The kernel binds its ports ~50 ms after the fork; zmq's default is to retry a refused
            # connection every 100 ms, which costs up to that much per notebook.
            kc.context.setsockopt(zmq.RECONNECT_IVL, 5)
            kc.start_channels()
            await _wait_ready(kc, km, 60)
            kc.allow_stdin = False
            client.kc = kc
            client.reset_execution_trackers()
            await self._run_cells(plan, outcome, session, first=0, last=0)
        except BaseException:
            await self._shutdown(km, session.kc)
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
            client.current_index = index
            step = plan.origin[index]
            if isinstance(step, Step):
                cell.source = grader_cell_source(self._step_args(plan, outcome, step))
            elif cell.source.strip():
                session.count += 1
            try:
                await client.async_execute_cell(cell, index, execution_count=None if isinstance(step, Step)
                                                else session.count, store_history=not isinstance(step, Step))
            except DeadKernelError:
                outcome.died_at = index
                return
            finally:
                outcome.timed_out = list(client.timeouts_seen)
            if isinstance(step, Step):
                payload, seen = _payload(cell, plan.nonce)
                if seen > 1:
                    outcome.forged.add(index)
                elif payload is None or "error" in payload:
                    outcome.failures[index] = payload["error"] if payload else (_cell_error(cell) or
                                                                                "it showed no result")
                    if step.kind == "start":
                        return
                else:
                    outcome.payloads[index] = payload

    def _step_args(self, plan: Plan, outcome: Outcome, step: Step) -> dict:
        args: dict = {"nonce": plan.nonce, "step": step.kind}
        if step.kind != "start":
            start = next((p for p in outcome.payloads.values() if p.get("step") == "start"), {})
            args.update(modules=start.get("modules", []), builtins=start.get("builtins", []),
                        expected=start.get("digest"), exercises=[[e.number, e.name] for e in step.exercises])
        return args

    async def _shutdown(self, km, kc) -> None:
        try:
            if kc is not None:
                kc.stop_channels()
            if km.provisioner is not None and km.provisioner.has_process:
                try:
                    await km.provisioner.kill()
                except OSError:
                    pass
                try:
                    await asyncio.wait_for(km.provisioner.wait(), 10)
                except TimeoutError:
                    pass
            await km.cleanup_resources()
        except Exception:
            pass


async def grade_all(submissions: list[Submission], course: dict[str, CourseNotebook], *, jobs: int,
                    cell_timeout: float = DEFAULT_CELL_TIMEOUT, timeout: float = DEFAULT_TIMEOUT,
                    forked: bool = True, feedback: Path | None = None, progress: Progress | None = None,
                    notes: list[str] | None = None) -> list[Row]:
    """Grade these submissions: the rows of the gradebook, in order (learner, then file)."""
    grader = Grader(jobs=jobs, cell_timeout=cell_timeout, timeout=timeout, forked=forked, feedback=feedback,
                    progress=progress)
    try:
        await grader.start()
        return await grader.grade(submissions, course)
    finally:
        await grader.close()
        if notes is not None:
            notes.extend(grader.notes)
