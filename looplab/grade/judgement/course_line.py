"""One notebook's course line: the grader's end of looplab/withheld.py, where the course's own code runs for a kernel.

A kernel the grader runs holds none of the course's answers (shared/withholding.py says which, kernels/edition.py
writes the package it runs on). What a notebook's story cells need of them, they ask for here, over a Unix socket in
the slot's IPC folder (LOOPLAB_COURSE_LINE in the kernel's environment):
- `course`: run one of the course's functions that are exercises' references, with the kernel's arguments; the
  kernel's own objects among them (its client, a stream, a function) are used through stand-ins that ask the
  kernel (looplab/stand_ins.py), and its lists and dicts go back changed as the function changed them;
- `value`: a value left out of the edition (`CALCULATOR_TOOL`...), handed over once every exercise of this notebook
  it answers has been judged (`judged`);
- `replay`: an offline client's request answered from the course's recording (the kernel has none).

While an exercise is judged (`judging`), the line runs only the course functions that exercise may lean on, its
earlier pieces (course.py's `earlier_pieces`: the check swaps them in, as in the learner's own notebook); a call of
any other is refused, and noted: the judge then makes the exercise "the course's own code" (`borrowed`). That is a
fact the grader saw, not a claim of the kernel's: there is no other way to the course's code from the kernel.

What it costs is bounded and the learner's alone: each request is at most MESSAGE_BYTES, a notebook has at most
CONNECTIONS at once (a thread each), and the grader's CPU time spent on its requests at most CPU_SECONDS (then
each is refused, saying so). The course's functions are the course's own, on inputs of that size: they end.
"""

from __future__ import annotations

import contextlib
import contextvars
import re
import socket
import threading
import time
from pathlib import Path
from typing import Any, Iterator

from ...catalogue import words
from ...channel import Channel, ChannelBroken, Identities, at_path, decode, encode, opaque
from ...course import COURSE, Course, Exercise, Notebook, reference_function, resolve
from ...stand_ins import RemoteFailure, StandIns, answer_from
from ..shared.withholding import plan, target_of
from .proxies import opaque_object

SOCKET_NAME = "course-line.sock"
MESSAGE_BYTES = 4 * 1024 * 1024  # one request or answer: far above a story's history, far below the grader's memory
CONNECTIONS = 8  # at once, per notebook: a thread of the grader each
CPU_SECONDS = 20.0  # of the grader's CPU a notebook's requests may use in all (the course's six notebooks: under 1 s)
RECORDING_NAME = re.compile(r"[a-z0-9_]{1,80}")
WORDS = words(__file__)
_answering = threading.local()  # how deep in requests this connection's thread is


class CourseLine:
    """The course line of one notebook run: its socket, the policy while an exercise is judged, what it handed over."""

    def __init__(self, notebook: Notebook, folder: Path, course: Course = COURSE):
        self.notebook, self.course = notebook, course
        self.withholding = plan(course)
        self.path = Path(folder) / SOCKET_NAME
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        at_path(self.listener, str(self.path), "bind")
        self.listener.listen(CONNECTIONS)
        ids = set(notebook.ids)
        # Each value left out, with the exercises of this notebook it waits for (none: handed over at once).
        self.waiting = {value: self.withholding.answered_by(value, course) & ids for value in self.withholding.values}
        self.judging: Exercise | None = None
        self.allowed: set[int] = set()  # ids of the course functions the exercise judged now may lean on
        self.borrowed: dict[str, list[str]] = {}  # exercise id -> the course functions its code called, refused
        self.cpu_used = 0.0
        self.opaque_types: dict[str, type] = {}
        self.lock = threading.Lock()
        self.connections: list[socket.socket] = []
        self.context = contextvars.copy_context()  # the notebook's language: its recordings, its words
        self.closed = False
        self.thread = threading.Thread(target=self.context.copy().run, args=(self._accept,), daemon=True,
                                       name="looplab-course-line")
        self.thread.start()

    # --- the judge's side ---

    @contextlib.contextmanager
    def judging_exercise(self, exercise: Exercise) -> Iterator[list[str]]:
        """While the block runs, `exercise` is judged: the line runs only the course functions it may lean on. The
        block gets the list of the others its code called (refused), filled as they come."""
        allowed: set[int] = set()
        for target in self.course.earlier_pieces(exercise.id).values():
            for found in _functions_in(resolve(target)):
                allowed.add(id(found))
        called = self.borrowed.setdefault(exercise.id, [])
        with self.lock:
            self.judging, self.allowed = exercise, allowed
        try:
            yield called
        finally:
            with self.lock:
                self.judging, self.allowed = None, set()

    def judged(self, exercises: list[Exercise]) -> None:
        """These exercises have been judged: the values that waited only for them are handed over from now on."""
        with self.lock:
            for value, waits in self.waiting.items():
                waits.difference_update(exercise.id for exercise in exercises)

    def called(self, exercise: Exercise) -> list[str]:
        """The course functions the exercise's code called while it was judged (refused)."""
        with self.lock:
            return list(self.borrowed.get(exercise.id, []))

    def close(self) -> None:
        """Stop listening and end every connection (their threads end with them)."""
        with self.lock:
            self.closed = True
            connections = list(self.connections)
        for sock in connections + [self.listener]:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            with contextlib.suppress(OSError):
                sock.close()
        self.path.unlink(missing_ok=True)

    # --- the kernel's side ---

    def _accept(self) -> None:
        while True:
            try:
                sock, _ = self.listener.accept()
            except OSError:
                return  # closed
            with self.lock:
                if self.closed or len(self.connections) >= CONNECTIONS:
                    sock.close()
                    continue
                self.connections.append(sock)
            threading.Thread(target=self.context.copy().run, args=(self._serve, sock), daemon=True,
                             name="looplab-course-line-connection").start()

    def _serve(self, sock: socket.socket) -> None:
        channel = Channel(sock, MESSAGE_BYTES)
        try:
            while True:
                channel.send(self.answer(channel, channel.receive()))
        except ChannelBroken:
            pass
        finally:
            with self.lock:
                if sock in self.connections:
                    self.connections.remove(sock)
            channel.close()

    def answer(self, channel: Channel, request: dict) -> dict:
        """One request of the kernel's, answered within the notebook's budget of the grader's CPU."""
        with self.lock:
            spent = self.cpu_used
        if spent > CPU_SECONDS:
            return refused(WORDS("spent", seconds=f"{CPU_SECONDS:g}"))
        outermost = not getattr(_answering, "depth", 0)  # a request made inside another's callback is counted in it
        _answering.depth = getattr(_answering, "depth", 0) + 1
        started = time.thread_time()
        try:
            op = request.get("op")
            if op == "course":
                return Call(self, channel).run(request)
            if op == "value":
                return self.value(request.get("target"))
            if op == "replay":
                return self.replay(request)
            return refused(WORDS("unknown_request"))
        finally:
            _answering.depth -= 1
            if outermost:
                with self.lock:
                    self.cpu_used += time.thread_time() - started

    def allows(self, function: Any, target: str) -> str | None:
        """None if the course function may run now; else why not (and, while an exercise is judged, noted)."""
        with self.lock:
            exercise = self.judging
            if exercise is None or id(function) in self.allowed:
                return None
            self.borrowed.setdefault(exercise.id, []).append(target)
        return WORDS("not_while_judged", target=target.replace(":", "."), exercise=exercise.id)

    def value(self, target: Any) -> dict:
        if target not in self.withholding.values:
            return refused(WORDS("not_left_out", target=str(target)[:80]))
        with self.lock:
            waits = sorted(self.waiting.get(target, ()))
        if waits:
            return refused(WORDS("not_yet", target=target.replace(":", "."), exercises=", ".join(waits)))
        return {"value": course_value(resolve(target))}

    def replay(self, request: dict) -> dict:
        """The recording's answer to an offline client's request, or why it has none (NotRecordedError's words)."""
        import httpx2

        from ...recordings import Recording, recording_path
        from ...transport import NotRecordedError, Replay

        name = request.get("recording")
        if not (isinstance(name, str) and RECORDING_NAME.fullmatch(name) and recording_path(name).exists()):
            return {"not_recorded": WORDS("no_recording", name=str(name)[:80])}
        http = httpx2.Request(str(request.get("method", "POST")), "https://api.anthropic.com" + str(
            request.get("path", "")), content=str(request.get("content", "")).encode())
        try:
            response = Replay(Recording.load(name))(http)
        except NotRecordedError as error:
            return {"not_recorded": str(error), "summary": error.summary}
        return answer_from(response)


def refused(message: str) -> dict:
    return {"op": "refused", "message": message}


def _functions_in(value: Any, depth: int = 0) -> Iterator[Any]:
    """The functions a course object is, or holds (a registry's tools)."""
    if callable(value):
        yield value
    elif depth < 8 and isinstance(value, dict):
        for item in value.values():
            yield from _functions_in(item, depth + 1)
    elif depth < 8 and isinstance(value, (list, tuple)):
        for item in value:
            yield from _functions_in(item, depth + 1)


def course_value(value: Any) -> Any:
    """A course value as the kernel gets it: fresh data, the course's functions inside it by their targets."""
    return encode(value, _course_function)


def _course_function(value: Any) -> dict:
    target = target_of(value) if callable(value) else None
    return {"$course": target} if target is not None else opaque(value)


def pieces(exercise: Exercise, course: Course = COURSE) -> dict:
    """The earlier pieces of an exercise as its check names them to the kernel, by target: the kernel's package holds
    each (a stand-in for a function withheld; a value left out it asks this line for, handed over by now since its
    exercise was judged before), and serve.py swaps in a fresh copy of each value for every call. From the kernel's
    own package because some are words read in the notebook's language (SYSTEM_PROMPT)."""
    return {name: {"$course": target} for name, target in course.earlier_pieces(exercise.id).items()}


class Call:
    """One course function run for the kernel: its arguments read (the kernel's objects as stand-ins), the call."""

    def __init__(self, line: CourseLine, channel: Channel):
        self.line, self.channel = line, channel
        self.kept = Identities(-1)
        self.made = StandIns(self)  # the kernel's objects this call was handed, each a stand-in here

    def tagged(self, tag: str, data: dict) -> Any:
        if tag == "$kept":
            return self.kept.resolve(data, self.tagged)
        if tag == "$object":
            return opaque_object(str(data.get("$object", "object")), str(data.get("repr", "")), self.line.opaque_types)
        if tag == "$course":  # a function of the kernel's package (a registry's tool): ours, a reference module's only
            return reference_function(data.get(tag))
        return self.made.of(tag, data.get(tag))

    def other(self, value: Any) -> dict:
        """What goes back to the kernel: its own objects by number, the course's functions by target, else opaque."""
        return self.made.handed_back(value) or _course_function(value)

    def run(self, request: dict) -> dict:
        target = request.get("target")
        function = self.line.withholding.functions.get(target) if isinstance(target, str) else None
        if function is None:
            return refused(WORDS("not_a_course_function", target=str(target)[:80]))
        why_not = self.line.allows(function, target)
        if why_not is not None:
            return refused(why_not)
        args = decode(request.get("args", []), self.tagged)
        kwargs = decode(request.get("kwargs", {}), self.tagged)
        if not (isinstance(args, list) and isinstance(kwargs, dict) and all(isinstance(key, str) for key in kwargs)):
            return refused(WORDS("unknown_request"))
        try:
            value = function(*args, **kwargs)
            self.kept.message()
            answer = {"op": "returned", "value": encode(value, self.other, kept=self.kept)}
        except RemoteFailure as error:  # the kernel's own object failed: its exception goes on there
            answer = {"op": "raised", "failure": getattr(error, "failure", None), "message": str(error)}
        except Exception as error:
            answer = {"op": "raised", "type": type(error).__name__, "message": str(error)}
        self.kept.message()
        # every list and dict it was handed, by place or by name (the edition's stand-ins pass parameters by name):
        # the kernel finds each of its own objects by number, whatever the order
        answer["after"] = [encode(arg, self.other, kept=self.kept) if isinstance(arg, (list, dict)) else None
                           for arg in [*args, *kwargs.values()]]
        return answer

    # --- what the stand-ins of the kernel's objects ask (looplab/stand_ins.py) ---

    def invoke(self, ref: int, method: str, args: tuple, kwargs: dict) -> Any:
        self.kept.message()
        message = {"op": "invoke", "ref": ref, "method": method,
                   "args": [encode(arg, self.other, kept=self.kept) for arg in args],
                   "kwargs": {str(key): encode(value, self.other, kept=self.kept) for key, value in kwargs.items()}}
        if method == "__call__":  # one of the kernel's functions: its lists as we hold them now, and back as it left them
            message["before"] = [encode(value, self.other, kept=self.kept) for value in self.kept.theirs()]
        answer = self.ask(message)
        decode(answer.get("after"), self.tagged)
        return decode(answer.get("value"), self.tagged)

    def ask(self, message: dict) -> dict:
        """Ask the kernel; answer its own requests meanwhile (a callback of its that runs the course's code again)."""
        self.channel.send(message)
        while True:
            answer = self.channel.receive()
            if answer.get("op") in ("course", "value", "replay"):
                self.channel.send(self.line.answer(self.channel, answer))
                continue
            if answer.get("stop") is not None:
                error = RemoteFailure(str(answer.get("message", "")))
                error.failure = answer.get("failure")
                raise error
            return answer


__all__ = ["CONNECTIONS", "CPU_SECONDS", "CourseLine", "course_value", "pieces", "refused"]
