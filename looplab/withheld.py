"""The course's answers in a kernel the grader runs: not there. What stands in their place, and the line to the grader.

A learner's notebook imports the course's own version of earlier exercises from this package, so that each
notebook stands on its own. Under the grader (`python -m looplab.grade`) that would hand out points for one
import: so every notebook it grades runs on the package's *graded edition* (looplab/grade/kernels/edition.py),
in which, following looplab/grade/shared/withholding.py's plan:
- each function that is an exercise's reference (`agent_turn`, `run_tool`, `calculator`...) has its signature
  and a body of one line, `call(target, ...)`: calling it asks the grader, over the notebook's course line
  (the socket LOOPLAB_COURSE_LINE names), to run the course's function in the grader's own process, with these
  arguments. Its value comes back, and the lists and dicts it was handed come back changed as it changed them,
  so a story cell that runs the course's loop shows what it always shows. The function's code is never here;
  and while an exercise is judged the grader runs only what that exercise may lean on (its earlier pieces):
  any other course function the learner's code calls makes the exercise "the course's own code";
- each value that is an exercise's reference (`CALCULATOR_TOOL`, `TOOL_REGISTRY`, `FORCE_WEATHER`), and what
  the course makes of one (`TOOLS`), is left out of its module: `left_out` gives the module a `__getattr__`
  that asks the grader for it on first use, which hands it over once the notebook's exercises it answers are
  judged, and says until when otherwise (`Withheld`);
- an offline client replays its recording through the grader (`RemoteReplay`): the recordings hold the requests
  the course's own code sent, answers included, so they are not in the edition either.
While the grader's code runs a course function for the kernel, it may use the kernel's own objects (a client, a
stream, a function): those stay here, and the grader asks this end for each use (looplab/object_table.py).

Outside the grader nothing here is used: the package's own modules hold the real thing.
"""

from __future__ import annotations

import os
import socket
import threading
from typing import Any

from .catalogue import words
from .channel import Channel, ChannelBroken, Identities, at_path, decode, encode
from .object_table import ObjectTable

LINE = "LOOPLAB_COURSE_LINE"  # the course line's socket, set in the environment of every kernel the grader runs
WORDS = words(__file__)


class Withheld(Exception):
    """The grader does not hand this over now: the message says what, why, and when it will."""


class KernelObjects(ObjectTable):
    """This kernel's objects, as the course's code run in the grader uses them; the course's objects it sends back."""

    def tagged(self, tag: str, data: dict) -> Any:
        if tag == "$course":  # a function or value of the course: what this kernel's package holds for it
            return course_object(data.get(tag))
        return super().tagged(tag, data)

    def other(self, value: Any) -> dict:
        """A function of this package's reference modules goes by its name (the grader runs its own, whose exceptions
        are real ones: a registry's calculator raising ZeroDivisionError); anything else as ObjectTable hands it."""
        from .course import reference_function_target

        target = reference_function_target(value)
        return {"$course": target} if target is not None else super().other(value)

    def answer(self, message: dict) -> dict:
        """The course's code calls one of our functions (a registry's tool, a delegate that runs another agent):
        our lists and dicts take the state the course's code left them in first (`before`), and go back as the
        function left them (`after`). A list handed to the course's function and to a nested call of another (the
        trace a subagent's turn appends to in the middle of its parent's) is then one list, in the order of events."""
        called = message.get("method") == "__call__"
        if called:
            decode(message.get("before"), self.tagged)
        answer = super().answer(message)
        if called and "stop" not in answer:
            answer["after"] = [encode(value, self.other, kept=self.kept) for value in self.kept.ours()]
        return answer


def course_object(target: Any) -> Any:
    """The course's object `target` names ("looplab.tools:calculator"), as this package holds it; None for another."""
    from .course import resolve

    if not isinstance(target, str) or ":" not in target:
        return None
    try:
        return resolve(target)
    except Exception:  # not there, or a value not handed over yet (Withheld)
        return None


class _Line:
    """This thread's connection to the grader's course line (one a thread: each asks and waits in turn)."""

    def __init__(self, path: str):
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            at_path(sock, path, "connect")
        except OSError:
            sock.close()
            raise Withheld(WORDS("no_line")) from None
        self.channel = Channel(sock)

    def ask(self, message: dict, objects: KernelObjects) -> dict:
        """Send a request; answer the grader's requests on our objects meanwhile; return its answer."""
        try:
            self.channel.send(message)
            while True:
                answer = self.channel.receive()
                if answer.get("op") != "invoke":
                    return answer
                self.channel.send(objects.answer(answer))
        except ChannelBroken:
            raise Withheld(WORDS("no_line")) from None


_lines = threading.local()


def _line() -> _Line:
    path = os.environ.get(LINE)
    if not path:
        raise Withheld(WORDS("not_graded"))
    line = getattr(_lines, "line", None)
    if line is None or getattr(_lines, "pid", None) != os.getpid():  # a forked process makes its own
        line = _lines.line = _Line(path)
        _lines.pid = os.getpid()
    return line


def call(target: str, args: tuple, kwargs: dict) -> Any:
    """Run the course's function `target` in the grader with these arguments; its value, or what it raised."""
    objects = KernelObjects(Identities(+1))
    objects.kept.message()
    answer = _line().ask({"op": "course", "target": target,
                          "args": [encode(arg, objects.other, kept=objects.kept) for arg in args],
                          "kwargs": {key: encode(value, objects.other, kept=objects.kept)
                                     for key, value in kwargs.items()}}, objects)
    decode(answer.get("after"), objects.tagged)  # the lists and dicts it was handed, as it left them
    if answer.get("op") == "returned":
        return decode(answer.get("value"), objects.tagged)
    raise _raised(answer, objects)


def _raised(answer: dict, objects: KernelObjects) -> BaseException:
    """What the course's function raised, as an exception here: ours when one of our objects raised it."""
    failure = objects.failures.get(answer.get("failure")) if isinstance(answer.get("failure"), int) else None
    if failure is not None:
        return failure
    message = str(answer.get("message", ""))
    if answer.get("op") == "refused":
        return Withheld(message)
    import builtins

    kind = getattr(builtins, str(answer.get("type")), None)
    if not (isinstance(kind, type) and issubclass(kind, Exception)):
        kind = RuntimeError
    try:
        return kind(message)
    except Exception:
        return RuntimeError(message)


_values: dict[str, Any] = {}  # the values the grader handed over, by target: one object for every name of it


def value(target: str) -> Any:
    """The course's value `target`, once the grader hands it over (Withheld until then)."""
    if target not in _values:
        objects = KernelObjects(Identities(+1))
        answer = _line().ask({"op": "value", "target": target}, objects)
        if "value" not in answer:
            raise Withheld(str(answer.get("message", "")))
        _values[target] = decode(answer["value"], objects.tagged)
    return _values[target]


def left_out(module: str, names: dict[str, str]):
    """The `__getattr__` of a module of the graded edition whose `names` (local name -> target) are left out."""
    import sys

    def __getattr__(name: str) -> Any:
        if name not in names:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        found = value(names[name])
        setattr(sys.modules[module], name, found)  # read once: the module holds it from now on
        return found

    return __getattr__


class RemoteReplay:
    """An httpx2.MockTransport handler that answers an offline client from its recording, in the grader."""

    def __init__(self, recording: str):
        self.recording = recording

    def __call__(self, request):
        from .stand_ins import response_from
        from .transport import NotRecordedError

        answer = _line().ask({"op": "replay", "recording": self.recording, "method": request.method,
                              "path": request.url.path, "content": request.read().decode("utf-8", "replace")},
                             KernelObjects(Identities(+1)))
        if "not_recorded" in answer:
            raise NotRecordedError(str(answer["not_recorded"]), str(answer.get("summary") or "") or None)
        return response_from(answer)


def replays_remotely(recording: Any) -> bool:
    """Does an offline client of this recording replay through the grader? Under the grader, for a recording of
    the course's, named (a path is the learner's own file, read here)."""
    from pathlib import Path

    return bool(os.environ.get(LINE)) and isinstance(recording, str) and len(Path(recording).parts) == 1 \
        and not recording.endswith(".json")
