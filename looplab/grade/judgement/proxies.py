"""The two sides' objects for one call of the learner's code, as the judge sees them.

`RemoteFunction` is the learner's function in the kernel as the checker calls it: its arguments are
sent over the channel (plain JSON, the grader's own objects by id), the requests the learner's code makes
of those objects meanwhile are answered here (`Proxies`: the scripted model through the grader's own
transport, a stream, a callable), and what the code returned or raised comes back rebuilt: a value, the
grader's own error where it has one, else an exception by its built-in base, an `Opaque` object for
anything of the learner's classes. Nothing the kernel sends is ever unpickled or trusted as a verdict.
"""

from __future__ import annotations

import builtins
import json
import time
from typing import Any

from ...channel import ChannelBroken, Identities, decode, encode
from ...object_table import ObjectTable
from ...checks.core import CheckTimeout, Claims
from ...course import Exercise, reference_function, reference_function_target
from ...scripted import TooManyCalls, transport_of
from ...stand_ins import answer_from

class NoAnswer(BaseException):
    """The kernel stopped answering, or answered what is not a message: the exercise is not solved.

    A BaseException, so that no checker and no `play` takes it for the learner's own error."""


class Proxies(ObjectTable):
    """The grader's objects handed to the kernel for one call (clients, streams, callables), by id."""

    caught = (Exception, TooManyCalls)  # a scripted model's refusal past its limit too: it stops the learner's code

    def __init__(self, judge, kept: Identities | None = None):
        super().__init__(kept or Identities(-1))
        self.judge = judge
        self.stopped: TooManyCalls | None = None  # the scripted model refused a call past its limit
        self.rejected: Any = None  # the API error of the last request the rules refused (a 400)

    def kind(self, value: Any) -> str | None:
        """A scripted SDK client is handed over whole (its requests come back to its transport, `model`)."""
        import anthropic

        return "$client" if isinstance(value, anthropic.Anthropic) else super().kind(value)

    def other(self, value: Any) -> dict:
        """How a grader object is handed to the kernel: by what the learner's code may do with it. A function of the
        course (a tool in a registry the check hands over: looplab.robust's calculator) goes by its target, and the
        kernel takes its package's own: the learner's code meets its real signature and its real exceptions, as in
        the notebook (a stand-in calling back here would take any arguments, and raise RemoteFailure)."""
        course = reference_function_target(value)
        if course is not None:
            return {"$course": course}
        tag = self.kind(value)
        if tag is None:
            raise TypeError(f"the grader has no way to hand a {type(value).__name__} to the kernel")
        return {tag: self.ref(value)}

    def tagged(self, tag: str, data: dict) -> Any:
        """The kernel's tags: one of our objects handed back, or an object of the learner's."""
        if tag == "$course":  # a course function handed over, coming back: ours (only a reference module's)
            return reference_function(data.get(tag))
        known = super().tagged(tag, data)
        if known is not None or tag in ("$kept", "$ref"):
            return known
        return opaque_object(str(data.get("$object", "object")), str(data.get("repr", "")),
                             getattr(self.judge, "opaque_types", None))

    def answer(self, message: dict) -> dict:
        """A request the learner's code made of one of our objects while it ran."""
        if message.get("op") == "model":
            return self.model(message)
        return super().answer(message)

    def failed(self, error: BaseException) -> dict:
        if isinstance(error, TooManyCalls):
            self.stopped = error
            return {"stop": "too_many_calls", "message": str(error)}
        return super().failed(error)

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
        return answer_from(response)


class RemoteFunction:
    """The learner's function in the kernel, as the checker calls it."""

    def __init__(self, judge, exercise: Exercise, claims: Claims, seconds: float, name: str | None = None):
        # The check's time budget counts the time the learner's code runs (each call, from the grader's side),
        # not the grader's own comparisons between calls: a busy grader costs the learner nothing.
        self.judge, self.exercise, self.claims, self.left = judge, exercise, claims, seconds
        self.redirect: dict = {}
        self.kept = Identities(-1)  # the lists and dicts it was handed and gave back, one object each on both ends
        self.__name__ = exercise.name
        self.name = name or exercise.name  # what the kernel holds it under: a function inside the exercise's value

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
        request = {"op": "call", "name": self.name, "number": self.exercise.id,
                   "pieces": judge.pieces(self.exercise),  # the earlier pieces, made for this call alone
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
        if answer.get("op") in ("returned", "raised"):  # the lists and dicts it was handed, updated in place
            decode(answer.get("after"), proxies.tagged)
        if answer.get("op") == "returned":  # a function it returned (an expectation) is called in the kernel too
            return decode(answer.get("value"), judge.functions_inside(self.exercise, self.claims, proxies))
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


OPAQUE_TYPES = 1000  # type names one judge keeps: past them, an Opaque is named "Opaque"


def opaque_object(name: str, text: str, types: dict[str, type] | None = None) -> Opaque:
    """An Opaque whose type carries the learner's type name, so messages name it as they would in-process.

    The types made are kept in `types`, the judge's own (one learner's check point): a learner whose code returns
    thousands of classes fills their own judge's, never the next learner's (with no judge: none are kept)."""
    name = name[:100].replace("\0", "") or "object"
    types = {} if types is None else types
    if name not in types and len(types) < OPAQUE_TYPES:
        types[name] = type(name, (Opaque,), {"__module__": "learner"})
    return types.get(name, Opaque)(text)
