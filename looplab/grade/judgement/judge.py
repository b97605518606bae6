"""The judgement, in the grader's process: the official checks run here on proxies of the learner's objects.

A check point of a notebook is one cell in the kernel (`looplab.serve.serve(path)`) while, in a
thread of the grader, `Judge.run` plays each exercise's checker (looplab/checks, unchanged) with a
proxy for the learner's object: calling a `RemoteFunction` sends its arguments to the kernel over a
Unix socket in the slot's IPC folder (looplab/channel.py), answers the SDK's requests from the
grader's own scripted model while the learner's code runs, and returns what the code returned (or
raises what it raised), the lists it was handed updated in place to what the code left in them.

The scenarios, the scripted model, the expected values and every comparison stay here; what the
kernel sends is an answer, judged like any other, or a claim that can only cost points or explain a
failure (that the object is, or called, the course's own code; that it ran out of time). What the
checks read from the learner's source (an `eval`, an import of the course's code, the stub's line
left in) is read here from the notebook's own cells.
"""

from __future__ import annotations

import contextlib
import secrets
import socket
import threading
import time
from pathlib import Path
from typing import Any, Callable

from ...catalogue import words
from ...channel import Channel, ChannelBroken, at_path, decode
from ...checks import run_check
from ...checks.core import NOT_SOLVED, CheckTimeout, Claims, Session
from ...course import COURSE, Exercise
from ...notebook_source import as_ipython_runs
from ..kernels.kernel_cells import HEADER
from ..shared.status import CRASHED, UNDEFINED
from . import one_parse_at_a_time
from .course_line import CourseLine, pieces
from .proxies import NoAnswer, Proxies, RemoteFunction

CONNECT_SECONDS = 60  # for the kernel to run the cell's import and connect (a template kernel takes well under 1 s)
GRACE = 2.0  # seconds the grader waits past the check's limit for the kernel's own "out of time"
# The judge's own words (texts/judge.toml), in the language of the notebook it judges: its checks run inside
# `language.using(<the notebook's language>)` (grading.py), and this thread copies that context.
WORDS = words(__file__)
NO_ANSWER = WORDS.rows["no_answer"]["en"]  # the English, as tests read it


def check_point(exercises: list[Exercise], sources: list[str], folder: Path, seconds: float,
                interrupt: Callable[[], None] | None = None, wall_factor: float = 1,
                line: CourseLine | None = None) -> "Judge":
    """The judge of one check point of a run (what kernels/runner.py's Grader is handed): the learner's code
    cells before it read as IPython ran them, so the checks' source readers see what the notebook's `In` holds;
    `line`, the notebook's course line (course_line.py). Judges run side by side, a thread each: on the CPython
    releases that need it, they parse in turn."""
    one_parse_at_a_time.install()
    return Judge(exercises, as_ipython_runs(sources), folder, seconds, interrupt, wall_factor=wall_factor, line=line)


COURSE_REFERENCES = frozenset(exercise.reference for exercise in COURSE.exercises)  # what a kernel may name


class Judge:
    """One check point: a listening socket, the cell that connects to it, the checks of its exercises."""

    def __init__(self, exercises: list[Exercise], cells: list[str], folder: Path, seconds: float,
                 interrupt: Callable[[], None] | None = None, wall_factor: float = 1, line: CourseLine | None = None):
        # `seconds`: the check's limit, as the learner reads it (CPU seconds under the grader: the kernel counts
        # them, checks/core.py time_limit); the grader's own clock allows `wall_factor` times that in real time.
        self.exercises, self.cells, self.seconds, self.interrupt = exercises, cells, seconds, interrupt
        self.budget = seconds * wall_factor
        self.path = Path(folder) / f"judge-{secrets.token_hex(4)}.sock"
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        at_path(self.listener, str(self.path), "bind")
        self.listener.listen(1)
        self.channel: Channel | None = None
        self.broken: str | None = None
        self.opaque_types: dict[str, type] = {}  # the learner's type names this check point met (proxies.opaque_object)
        self.line = line

    def cell_source(self) -> str:
        return f"{HEADER}import looplab.serve\nlooplab.serve.serve({str(self.path)!r})\n"

    def run(self, cell_ended: threading.Event | None = None) -> dict[str, dict]:
        """Each exercise's result, {"kind", "message", "hint"}; never raises."""
        try:
            try:
                self.channel = self._connect(cell_ended or threading.Event())
            except NoAnswer as error:
                self.broken = str(error)
            results = {exercise.id: self.judge(exercise) for exercise in self.exercises}
            if self.line is not None:  # the values that waited for these exercises may now go to the kernel
                self.line.judged(self.exercises)
            if self.channel is not None and self.broken is None:
                try:
                    self.channel.send({"op": "done"})
                except ChannelBroken:
                    pass
            return results
        finally:
            self.close()  # the serve cell ends with the channel, whatever happened here

    def abandon(self) -> None:
        """From another thread: stop waiting for the kernel (its answers, or its connection)."""
        self.broken = self.broken or WORDS("stopped")
        for sock in ([self.channel.sock] if self.channel is not None else []) + [self.listener]:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def close(self) -> None:
        if self.channel is not None:
            self.channel.close()
        self.listener.close()
        self.path.unlink(missing_ok=True)

    def _connect(self, cell_ended: threading.Event) -> Channel:
        """The first connection: whoever makes it speaks for the kernel (any code there is the learner's anyway)."""
        self.listener.settimeout(0.05)
        deadline = time.monotonic() + CONNECT_SECONDS
        while time.monotonic() < deadline and not cell_ended.is_set():
            try:
                sock, _ = self.listener.accept()
            except TimeoutError:
                continue
            return Channel(sock)
        raise NoAnswer(WORDS("never_connected"))

    def no_answer(self, why: str) -> dict:
        return {"kind": NOT_SOLVED, "message": WORDS("no_answer", why=why), "hint": ""}

    def judge(self, exercise: Exercise) -> dict:
        if self.broken is not None:
            return self.no_answer(self.broken)
        deadline = time.monotonic() + self.budget
        try:
            described = self.ask({"op": "describe", "name": exercise.name, "number": exercise.id}, deadline)
            if described.get("exists") is not True:
                return {"kind": UNDEFINED, "message": None}
            with self.course_calls(exercise) as called:  # the course functions its code called, refused (course_line.py)
                named = described.get("course_version")  # which exercise's: a name of the course's, or none at all
                claims = Claims(course_code=described.get("course_code") is True, borrowed=called,
                                course_version=named if named in COURSE_REFERENCES else None)
                if described.get("callable") is True:
                    obj: Any = RemoteFunction(self, exercise, claims, self.budget)
                else:  # a value; a function inside it (notebook 5's registry) is called in the kernel, like the exercise's
                    obj = decode(described.get("value"), self.functions_inside(exercise, claims, Proxies(self)))
                result = run_check(exercise.id, obj, session=Session(self.cells, {}), claims=claims).as_dict()
            return {"kind": result["kind"], "message": result["failed"], "hint": result["hint"]}
        except NoAnswer as error:
            self.broken = str(error)
            return self.no_answer(self.broken)
        except CheckTimeout:  # out of time outside the checker (describing the object): no answer
            return self.no_answer(self.broken or WORDS("no_answer_in_time"))
        except BaseException as error:  # the grader's own failure, on this exercise only
            return {"kind": CRASHED, "message": f"{type(error).__name__}: {error}"}

    def course_calls(self, exercise: Exercise):
        """While the exercise is judged, the course line runs only the course functions it may lean on; the context
        gives the list of those its code called anyway (refused), which the line fills as it happens."""
        if self.line is None:
            return contextlib.nullcontext([])
        return self.line.judging_exercise(exercise)

    def pieces(self, exercise: Exercise) -> dict:
        """The exercise's earlier pieces, made anew for one call (course_line.pieces)."""
        return pieces(exercise)

    def functions_inside(self, exercise: Exercise, claims: Claims, proxies: Proxies) -> Callable[[str, dict], Any]:
        """How a value's tags are read: a function the kernel holds under a name of its own becomes a RemoteFunction
        (sharing the exercise's claims), anything else as Proxies reads it."""
        def tagged(tag: str, data: dict) -> Any:
            key = data.get(tag)
            if tag == "$function" and isinstance(key, str) and key.startswith(f"{exercise.name}#"):
                return RemoteFunction(self, exercise, claims, self.budget, name=key)
            return proxies.tagged("$object" if tag == "$function" else tag, data)
        return tagged

    def ask(self, message: dict, deadline: float) -> dict:
        """Send a request, wait for the kernel's answer until the check's deadline (and a grace)."""
        try:
            self.channel.send(message)
            return self.receive(deadline)
        except ChannelBroken as error:
            raise NoAnswer(str(error)) from None

    def receive(self, deadline: float) -> dict:
        try:
            return self.channel.receive(max(0.0, deadline - time.monotonic()) + GRACE)
        except ChannelBroken as error:
            if "in time" in str(error):  # channel.py's words for its own timeout
                self.broken = WORDS("would_not_stop")
                if self.interrupt is not None:
                    self.interrupt()
                raise CheckTimeout(self.seconds) from None
            raise NoAnswer(str(error)) from None


__all__ = ["Judge", "NoAnswer", "check_point"]
