"""The kernel's end of the grader's channel: run the learner's code when asked, send back what it did.

Under the grader (`python -m looplab.grade`) each check point of a notebook is one cell:

    import looplab.serve
    looplab.serve.serve("/the/slot/ipc/judge-1a2b.sock")

It connects to the grader and answers its requests until told "done". The checks, their scenarios,
the scripted model and every comparison stay in the grader's process (looplab/grade/judgement/judge.py): here,
the learner's objects are only described, read (a value such as CALCULATOR_TOOL) or called with the
arguments the grader sends, and what came of it goes back as plain data (looplab/channel.py). A
scripted client the grader hands over is a real `anthropic.Anthropic` here whose transport asks the
grader for each reply; a stream, the minimal client of notebook 4 or a callable are stand-ins whose
methods the grader runs (looplab/stand_ins.py). The earlier pieces a check swaps in come with each call,
made for it alone: the course's values as data, its functions as this kernel's package holds them, which
under the grader are stand-ins the grader runs (looplab/withheld.py): the kernel holds no course version of
any exercise.

Everything said here (what the function returned, what it raised, that it ran out of time) is the
learner's answer or a claim: the grader judges the one and lets the other only explain a failure. So
nothing in this module is a secret, and learner code that rewrites it changes only the answers it sends.
It never imports the grader.
"""

from __future__ import annotations

import builtins
import contextlib
import copy
import socket
import sys
import types
from typing import Any

from .channel import Channel, ChannelBroken, Identities, at_path, decode, encode, opaque
from .stand_ins import RemoteFailure, StandIns
from .withheld import course_object


def serve(path: str, namespace: dict | None = None) -> None:
    """Answer the grader on the socket at `path` until it says "done" (or the channel breaks), about the names
    of `namespace` (the notebook's own by default)."""
    if namespace is None:
        from IPython import get_ipython

        shell = get_ipython()
        namespace = shell.user_ns if shell is not None else vars(sys.modules["__main__"])
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        at_path(sock, path, "connect")
    except OSError:  # the grader is gone already (another connection spoke for this kernel)
        sock.close()
        return
    channel = Channel(sock)
    held: dict[str, Any] = {}  # the objects described, as the checks hold them: later rebinding changes nothing
    kept = Identities(+1)  # the lists and dicts the grader and the learner's code handed each other, by number
    try:
        while True:
            request = channel.receive()
            op = request.get("op")
            if op == "done":
                return
            if op == "describe":  # a new exercise
                kept = Identities(+1)
                channel.send(describe(namespace, held, request))
            elif op == "call":
                channel.send(Call(channel, held, request, kept).run())
            else:
                return
    except ChannelBroken:
        return
    finally:
        channel.close()


def describe(namespace: dict, held: dict, request: dict) -> dict:
    """Does the exercise's name exist, is it callable, is it the course's own version (a claim: under the grader, the
    graded edition's stand-in for it); its value if not callable (as data, the functions inside it by a name of
    their own)."""
    from .course import COURSE
    from .learner_calls import course_version_of

    name = str(request.get("name"))
    if name not in namespace:
        return {"exists": False}
    obj = held[name] = namespace[name]
    # read from the modules' namespaces: a value the edition left out is not asked for here; the course's version
    # of any exercise counts, not only this one's
    version = course_version_of(obj, COURSE) if callable(obj) else None
    answer = {"exists": True, "callable": callable(obj), "course_code": version is not None, "course_version": version}
    if not answer["callable"]:
        answer["value"] = encode(obj, lambda value: _function_inside(held, name, value))
    return answer


def _function_inside(held: dict, name: str, value: Any) -> dict:
    """A function inside a value the grader reads (notebook 5's registry holds its tools' functions): held under a
    name of its own, "TOOL_REGISTRY#1", so that the grader can call it like an exercise's function; anything
    else of the kernel's stays opaque."""
    if not callable(value):
        return opaque(value)
    key = next((key for key, known in held.items() if known is value and key.startswith(f"{name}#")), None)
    if key is None:
        key = f"{name}#{sum(1 for known in held if known.startswith(f'{name}#')) + 1}"
        held[key] = value
    return {"$function": key, **opaque(value)}


class Call:
    """One call of the learner's function: its arguments made from the grader's data, the call, what came of it."""

    def __init__(self, channel: Channel, held: dict, request: dict, kept: Identities):
        self.channel, self.request, self.kept, self.held = channel, request, kept, held
        self.obj = held.get(str(request.get("name")))
        self.made = StandIns(self)  # the grader's objects this call was handed, each a stand-in here
        self.course_targets: dict[int, str] = {}  # id -> target of each course function the grader named

    # --- the grader's objects, as the learner's code gets them ---

    def tagged(self, tag: str, data: dict) -> Any:
        if tag == "$kept":
            return self.kept.resolve(data, self.tagged)
        if tag == "$course":  # a piece of the course the check names: what this kernel's package holds for it
            found = course_object(data.get(tag))
            if found is not None:
                self.course_targets[id(found)] = data.get(tag)
            return found
        return self.made.of(tag, data.get(tag))

    def other(self, value: Any) -> dict:
        """What the learner's code hands back: a stand-in as the grader's own object, a course function it was handed
        by its target again (a registry comes back as it went), anything else opaque."""
        if id(value) in self.course_targets:
            return {"$course": self.course_targets[id(value)]}
        handed = self.made.handed_back(value)
        if handed is not None:
            return handed
        if isinstance(value, types.FunctionType):  # a function the learner's code made and returned (notebook 10's
            # expectations): held under a name of its own, for the grader to call like the exercise's
            return _function_inside(self.held, str(self.request.get("name")).split("#")[0], value)
        return opaque(value)

    def ask(self, message: dict) -> dict:
        """Ask the grader (a model reply, a method of its object) and wait; its refusals are raised here."""
        self.channel.send(message)
        answer = self.channel.receive()
        stop = answer.get("stop")
        if stop == "too_many_calls":
            from .scripted import TooManyCalls
            raise TooManyCalls(str(answer.get("message", "")))
        if stop is not None:
            error = RemoteFailure(str(answer.get("message", "")))
            error.failure = answer.get("failure")
            raise error
        return answer

    def invoke(self, ref: int, method: str, args: tuple, kwargs: dict) -> Any:
        self.kept.message()
        answer = self.ask({"op": "invoke", "ref": ref, "method": method, "args": [
            encode(arg, self.other, kept=self.kept) for arg in args], "kwargs": {
            str(key): encode(value, self.other, kept=self.kept) for key, value in kwargs.items()}})
        return decode(answer.get("value"), self.tagged)

    # --- the call ---

    def run(self) -> dict:
        from .learner_calls import CheckTimeout, isolated, learner_line, time_limit, time_limit_seconds

        args = decode(self.request.get("args", []), self.tagged)
        kwargs = decode(self.request.get("kwargs", {}), self.tagged)
        # The earlier pieces: the course's functions as this kernel's package holds them (under the grader, stand-ins
        # the grader runs: looplab/withheld.py), its values copied for this call alone; one this kernel cannot have
        # now (a value not handed over yet) is not swapped in.
        named = decode(self.request.get("pieces") or {}, self.tagged)
        pieces = {str(name): value if callable(value) else copy.deepcopy(value)
                  for name, value in (named.items() if isinstance(named, dict) else ()) if value is not None}
        seconds = float(self.request.get("seconds", 1))  # what is left of the check's budget, by the grader's clock
        cpu, wall = time_limit_seconds()
        limit = (seconds,) if wall is None else (min(cpu, seconds), seconds)  # under the grader: CPU seconds
        try:
            with time_limit(*limit), isolated(self.obj, pieces), self.redirected():
                value = self.obj(*args, **kwargs)
                self.kept.message()
                answer = {"op": "returned", "value": encode(value, self.other, kept=self.kept)}
        except CheckTimeout:
            answer = {"op": "raised", "timed_out": True}
        except (KeyboardInterrupt, ChannelBroken):
            raise  # the grader stopped the cell, or is gone: nothing to answer
        except BaseException as error:
            self.kept.message()
            answer = self.raised(error, learner_line(error))
        # What the call left in the lists and dicts it was handed (the history agent_turn appends to).
        answer["after"] = [encode(arg, self.other, kept=self.kept) if isinstance(arg, (list, dict)) else None
                           for arg in args]
        return answer

    @staticmethod
    def raised(error: BaseException, line: str | None) -> dict:
        kind = type(error)
        try:
            message = str(error)
            message = str.__str__(message) if isinstance(message, str) else ""
        except Exception:
            message = ""
        args = encode(list(error.args))
        plain = all(item is None or type(item) in (str, int, float, bool) for item in args)
        return {"op": "raised", "type": str.__str__(kind.__name__), "module": str(kind.__module__),
                "args": args if plain else None,
                "bases": [base.__name__ for base in kind.__mro__ if base.__module__ == "builtins"],
                "message": message, "line": line, "failure": getattr(error, "failure", None)
                if isinstance(error, RemoteFailure) else None}

    @contextlib.contextmanager
    def redirected(self):
        """input(), sys.stdin and sys.stdout as the check asked (notebook 4: the keyboard refuses, print is noticed)."""
        redirect = decode(self.request.get("redirect") or {}, self.tagged)
        with contextlib.ExitStack() as stack:
            if redirect.get("input") is not None:
                stack.enter_context(_swapped(builtins, "input", redirect["input"]))
            if redirect.get("stdin") is not None:
                stack.enter_context(_swapped(sys, "stdin", redirect["stdin"]))
            if redirect.get("stdout") is not None:
                stack.enter_context(contextlib.redirect_stdout(redirect["stdout"]))
            yield


@contextlib.contextmanager
def _swapped(owner, name: str, value):
    saved = getattr(owner, name)
    setattr(owner, name, value)
    try:
        yield
    finally:
        setattr(owner, name, saved)
