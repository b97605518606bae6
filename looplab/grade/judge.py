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

import builtins
import io
import json
import secrets
import socket
import threading
import time
from pathlib import Path
from typing import Any, Callable

from ..channel import Channel, ChannelBroken, Identities, at_path, decode, encode
from ..checks import run_check
from ..checks.core import COURSE_CODE, NOT_SOLVED, CheckTimeout, Claims, Session
from ..course import Exercise
from ..scripted import TooManyCalls, transport_of

UNDEFINED, CRASHED = "undefined", "crashed"  # beyond the check's own kinds: no such name; the grader's own error
CONNECT_SECONDS = 60  # for the kernel to run the cell's import and connect (a template kernel takes well under 1 s)
GRACE = 2.0  # seconds the grader waits past the check's limit for the kernel's own "out of time"
NO_ANSWER = "the learner's code did not answer the grader ({why})"
STREAM_METHODS = frozenset({"read", "readline", "readlines", "write", "writelines", "getvalue"})
HEADER = "# Added by the looplab grader (python -m looplab.grade): not part of the submission.\n"


class NoAnswer(BaseException):
    """The kernel stopped answering, or answered what is not a message: the exercise is not solved.

    A BaseException, so that no checker and no `play` takes it for the learner's own error."""


def learner_cells(sources: list[str]) -> list[str]:
    """The cells as IPython runs them (its `In`): magics turned into Python, so the source readers parse them."""
    from IPython.core.inputtransformer2 import TransformerManager

    manager = TransformerManager()
    cells = []
    for source in sources:
        try:
            cells.append(manager.transform_cell(source))
        except Exception:  # a cell IPython cannot read: it ran as far as its error
            cells.append(source)
    return cells


class Judge:
    """One check point: a listening socket, the cell that connects to it, the checks of its exercises."""

    def __init__(self, exercises: list[Exercise], cells: list[str], folder: Path, seconds: float,
                 interrupt: Callable[[], None] | None = None, wall_factor: float = 1):
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
        self.broken = self.broken or "the notebook was stopped"
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
        raise NoAnswer("the grader's cell never connected")

    def no_answer(self, why: str) -> dict:
        return {"kind": NOT_SOLVED, "message": NO_ANSWER.format(why=why), "hint": ""}

    def judge(self, exercise: Exercise) -> dict:
        if self.broken is not None:
            return self.no_answer(self.broken)
        deadline = time.monotonic() + self.budget
        try:
            described = self.ask({"op": "describe", "name": exercise.name, "number": exercise.id}, deadline)
            if described.get("exists") is not True:
                return {"kind": UNDEFINED, "message": None}
            claims = Claims(course_code=described.get("course_code") is True)
            if described.get("callable") is True:
                obj: Any = RemoteFunction(self, exercise, claims, self.budget)
            else:
                obj = decode(described.get("value"), Proxies(self).tagged)
            result = run_check(exercise.id, obj, session=Session(self.cells, {}), claims=claims).as_dict()
            return {"kind": result["kind"], "message": result["failed"], "hint": result["hint"]}
        except NoAnswer as error:
            self.broken = str(error)
            return self.no_answer(self.broken)
        except CheckTimeout:  # out of time outside the checker (describing the object): no answer
            return self.no_answer(self.broken or "no answer in time")
        except BaseException as error:  # the grader's own failure, on this exercise only
            return {"kind": CRASHED, "message": f"{type(error).__name__}: {error}"}

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
            if "in time" in str(error):
                self.broken = "it ran past the check's time limit and would not stop"
                if self.interrupt is not None:
                    self.interrupt()
                raise CheckTimeout(self.seconds) from None
            raise NoAnswer(str(error)) from None


class Proxies:
    """The grader's objects handed to the kernel for one call (clients, streams, callables), by id."""

    def __init__(self, judge: Judge, kept: Identities | None = None):
        self.judge = judge
        self.kept = kept or Identities(-1)
        self.objects: list[Any] = []
        self.stopped: TooManyCalls | None = None  # the scripted model refused a call past its limit
        self.rejected: Any = None  # the API error of the last request the rules refused (a 400)
        self.failures: dict[int, BaseException] = {}  # a check's failure raised by one of its objects

    def ref(self, value: Any) -> int:
        for index, known in enumerate(self.objects):
            if known is value:
                return index
        self.objects.append(value)
        return len(self.objects) - 1

    def other(self, value: Any) -> dict:
        """How a grader object is handed to the kernel: by what the learner's code may do with it."""
        import anthropic

        if isinstance(value, anthropic.Anthropic):
            return {"$client": self.ref(value)}
        if isinstance(value, io.IOBase):
            return {"$stream": self.ref(value)}
        if callable(getattr(getattr(value, "messages", None), "create", None)):
            return {"$client_like": self.ref(value)}
        if callable(value):
            return {"$callable": self.ref(value)}
        raise TypeError(f"the grader has no way to hand a {type(value).__name__} to the kernel")

    def tagged(self, tag: str, data: dict) -> Any:
        """The kernel's tags: one of our own objects handed back, or an object of the learner's."""
        if tag == "$kept":
            return self.kept.resolve(data, self.tagged)
        ref = data.get(tag)
        if tag == "$ref" and isinstance(ref, int) and 0 <= ref < len(self.objects):
            return self.objects[ref]
        return opaque_object(str(data.get("$object", "object")), str(data.get("repr", "")))

    def answer(self, message: dict) -> dict:
        """A request the learner's code made of one of our objects while it ran."""
        op = message.get("op")
        if op == "model":
            return self.model(message)
        ref, method = message.get("ref"), message.get("method")
        if not (isinstance(ref, int) and 0 <= ref < len(self.objects)):
            return {"stop": "failure", "message": "no such object"}
        target = self.objects[ref]
        if isinstance(target, io.IOBase) and method in STREAM_METHODS:
            function = getattr(target, method)
        elif method == "messages.create" and not isinstance(target, io.IOBase):
            function = target.messages.create
        elif method == "__call__" and callable(target) and not isinstance(target, io.IOBase):
            function = target
        else:
            return {"stop": "failure", "message": f"{method} is not offered"}
        args, kwargs = decode(message.get("args", []), self.tagged), decode(message.get("kwargs", {}), self.tagged)
        try:
            value = function(*(args if isinstance(args, list) else []), **(kwargs if isinstance(kwargs, dict) else {}))
        except TooManyCalls as error:
            self.stopped = error
            return {"stop": "too_many_calls", "message": str(error)}
        except Exception as error:  # the check's own failure, or the stream's error: on through the learner's code
            self.failures[id(error)] = error
            return {"stop": "failure", "message": str(error), "failure": id(error)}
        self.kept.message()
        return {"value": encode(value, self.other, kept=self.kept)}

    def model(self, message: dict) -> dict:
        """The scripted model answers the SDK's request, through the grader's transport (its rules, its record)."""
        import anthropic
        import httpx2

        ref = message.get("client")
        client = self.objects[ref] if isinstance(ref, int) and 0 <= ref < len(self.objects) else None
        if not isinstance(client, anthropic.Anthropic):
            return {"status": 404, "body": "{}"}
        try:
            transport = transport_of(client)  # its rules, its record of the exchanges, its scripted model
            request = httpx2.Request(str(message.get("method", "POST")), f"{client.base_url}".rstrip("/") +
                                     "/" + str(message.get("path", "")).lstrip("/"),
                                     content=str(message.get("content", "")).encode(),
                                     headers={"content-type": "application/json"})
            response = transport.handle_request(request)
            response.read()
            response.request = request  # as the SDK's client binds it: its API errors read the request back
        except TooManyCalls as error:
            self.stopped = error
            return {"stop": "too_many_calls", "message": str(error)}
        except Exception as error:  # a request no SDK would send
            return {"status": 400, "body": json.dumps({"type": "error", "error": {
                "type": "invalid_request_error", "message": f"{type(error).__name__}: {error}"}})}
        if response.status_code == 400:  # the API's error, as the SDK raises it in the learner's code
            body = response.json()
            self.rejected = anthropic.BadRequestError(f"Error code: 400 - {body}", response=response, body=body)
        return {"status": response.status_code, "body": response.text, "headers": dict(response.headers)}


class RemoteFunction:
    """The learner's function in the kernel, as the checker calls it."""

    def __init__(self, judge: Judge, exercise: Exercise, claims: Claims, seconds: float):
        # The check's time budget counts the time the learner's code runs (each call, from the grader's side),
        # not the grader's own comparisons between calls: a busy grader costs the learner nothing.
        self.judge, self.exercise, self.claims, self.left = judge, exercise, claims, seconds
        self.redirect: dict = {}
        self.kept = Identities(-1)  # the lists and dicts it was handed and gave back, one object each on both ends
        self.__name__ = exercise.name

    def redirected(self, **objects) -> "Redirected":
        """While the context lasts, the kernel runs each call with input / stdin / stdout set to these objects."""
        return Redirected(self, objects)

    def __call__(self, *args, **kwargs):
        started = time.monotonic()
        try:
            return self._call(started + self.left, args, kwargs)
        finally:
            self.left = max(0.0, self.left - (time.monotonic() - started))

    def _call(self, deadline: float, args: tuple, kwargs: dict):
        judge = self.judge
        if judge.broken is not None:
            raise NoAnswer(judge.broken)
        proxies = Proxies(judge, self.kept)
        self.kept.message()
        request = {"op": "call", "name": self.exercise.name, "number": self.exercise.id,
                   "args": [encode(arg, proxies.other, kept=self.kept) for arg in args],
                   "kwargs": {key: encode(value, proxies.other, kept=self.kept) for key, value in kwargs.items()},
                   "redirect": encode(self.redirect, proxies.other),
                   "seconds": max(0.01, deadline - time.monotonic())}
        answer = judge.ask(request, deadline)
        while answer.get("op") in ("model", "invoke"):
            try:
                judge.channel.send(proxies.answer(answer))
            except ChannelBroken as error:
                raise NoAnswer(str(error)) from None
            answer = judge.receive(deadline)
        borrowed = answer.get("borrowed")
        if isinstance(borrowed, list):
            self.claims.borrowed.extend(str(name) for name in borrowed)
        if answer.get("op") in ("returned", "raised"):  # the lists and dicts it was handed, updated in place
            decode(answer.get("after"), proxies.tagged)
        if answer.get("op") == "returned":
            return decode(answer.get("value"), proxies.tagged)
        if answer.get("op") == "raised":
            raise rebuilt(answer, proxies, judge.seconds)
        raise NoAnswer(f"an answer the grader does not know: {str(answer.get('op'))[:40]}")


class Redirected:
    def __init__(self, function: RemoteFunction, objects: dict):
        self.function, self.objects = function, objects

    def __enter__(self):
        self.saved, self.function.redirect = self.function.redirect, self.objects
        return self

    def __exit__(self, *exc):
        self.function.redirect = self.saved
        return False


def rebuilt(answer: dict, proxies: Proxies, seconds: float) -> BaseException:
    """What the learner's code raised, as an exception here: the grader's own where it has one, else by name."""
    if answer.get("timed_out") is True:
        return CheckTimeout(seconds)  # a claim that explains a failure
    name = str(answer.get("type", "Exception"))[:100]
    failure = proxies.failures.get(answer.get("failure")) if isinstance(answer.get("failure"), int) else None
    if failure is not None:
        return failure
    if name == "TooManyCalls" and proxies.stopped is not None:
        return proxies.stopped
    if name == "BadRequestError" and proxies.rejected is not None:
        return proxies.rejected
    base = _builtin_base(answer.get("bases"))
    kind = base if base.__name__ == name else type(name, (base,), {"__module__": "learner"})
    message = str(answer.get("message", ""))
    args = answer.get("args")
    try:
        if isinstance(args, list) and all(item is None or type(item) in (str, int, float, bool) for item in args):
            error = kind(*args)  # as it was raised: str(KeyError('x')) is "'x'"
            if str(error) != message:
                error = kind(message)
        else:
            error = kind(message) if message else kind()
    except Exception:
        error = kind.__new__(kind)
        error.args = (message,)
    line = answer.get("line")
    error.learner_line = line if isinstance(line, str) else None
    return error


def _builtin_base(bases: Any) -> type:
    """The nearest built-in exception class the kernel named; one that no check takes for its own (an Exception)."""
    for name in bases if isinstance(bases, list) else []:
        kind = getattr(builtins, str(name), None)
        if isinstance(kind, type) and issubclass(kind, (Exception, SystemExit)):
            return kind
    return Exception


_OPAQUE: dict[str, type] = {}


class Opaque:
    """An object of the learner's, as the grader sees it: its type's name and repr, equal to nothing but itself."""

    def __init__(self, text: str):
        self.text = text

    def __eq__(self, other):
        return other is self

    def __hash__(self):
        return id(self)

    def __repr__(self):
        return self.text


def opaque_object(name: str, text: str) -> Opaque:
    """An Opaque whose type carries the learner's type name, so messages name it as they would in-process."""
    name = name[:100].replace("\0", "") or "object"
    if name not in _OPAQUE and len(_OPAQUE) < 1000:
        _OPAQUE[name] = type(name, (Opaque,), {"__module__": "learner"})
    return _OPAQUE.get(name, Opaque)(text)


__all__ = ["Judge", "RemoteFunction", "NoAnswer", "UNDEFINED", "CRASHED", "COURSE_CODE", "learner_cells"]
