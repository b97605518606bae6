"""This end's objects as the other end of a channel uses them: each handed over by number, each request on it
answered here.

The counterpart of looplab/stand_ins.py. When one end hands the other an object that is not data (the grader,
a scripted client for the learner's code; a kernel, its own client for the course's code run in the grader),
it keeps the object in a table and sends a tag with its number (`other`); the other end's stand-in then sends
requests naming that number, which `answer` carries out here. Only a few methods are offered (a stream's reads
and writes, a client's `messages.create`, a call): a request for anything else is refused.

A failure raised by one of these objects while the other end's code used it is kept here by its id and sent as
a `stop`: when that code then fails because of it, the very exception comes back (`failures`), so it reads as
the failure it was, not as something the other end made up.
"""

from __future__ import annotations

import io
from typing import Any

from .channel import Identities, decode, encode, opaque

STREAM_METHODS = frozenset({"read", "readline", "readlines", "write", "writelines", "getvalue"})


class ObjectTable:
    """One conversation's objects of this end, by number; `kept`: its lists and dicts by number (channel.Identities)."""

    caught: tuple[type[BaseException], ...] = (Exception,)  # what an object's failure may be, to be sent back as one

    def __init__(self, kept: Identities):
        self.kept = kept
        self.objects: list[Any] = []
        self.failures: dict[int, BaseException] = {}  # a failure raised by one of our objects, by its id

    def ref(self, value: Any) -> int:
        for index, known in enumerate(self.objects):
            if known is value:
                return index
        self.objects.append(value)
        return len(self.objects) - 1

    def kind(self, value: Any) -> str | None:
        """The tag an object of this end is handed over under (what the other end's code may do with it), or None."""
        if isinstance(value, io.IOBase):
            return "$stream"
        if callable(getattr(getattr(value, "messages", None), "create", None)):
            return "$client_like"
        if callable(value):
            return "$callable"
        return None

    def other(self, value: Any) -> dict:
        """How an object of this end that is not data is handed over: its tag and number; else opaque."""
        tag = self.kind(value)
        return {tag: self.ref(value)} if tag is not None else opaque(value)

    def tagged(self, tag: str, data: dict) -> Any:
        """What the other end's tags mean here: one of our objects handed back, a list or dict by number; else None."""
        if tag == "$kept":
            return self.kept.resolve(data, self.tagged)
        ref = data.get(tag)
        if tag == "$ref" and isinstance(ref, int) and 0 <= ref < len(self.objects):
            return self.objects[ref]
        return None

    def target(self, message: dict) -> Any:
        """The method a request names, on the object it names; None when it is not one this table offers."""
        ref, method = message.get("ref"), message.get("method")
        if not (isinstance(ref, int) and 0 <= ref < len(self.objects)):
            return None
        obj = self.objects[ref]
        if isinstance(obj, io.IOBase):
            return getattr(obj, method) if method in STREAM_METHODS else None
        if method == "messages.create":
            return obj.messages.create
        if method == "__call__" and callable(obj):
            return obj
        return None

    def answer(self, message: dict) -> dict:
        """A request the other end's code made of one of our objects while it ran: its value, or a `stop`."""
        function = self.target(message)
        if function is None:
            return {"stop": "failure", "message": f"{str(message.get('method'))[:60]} is not offered"}
        args, kwargs = decode(message.get("args", []), self.tagged), decode(message.get("kwargs", {}), self.tagged)
        try:
            value = function(*(args if isinstance(args, list) else []), **(kwargs if isinstance(kwargs, dict) else {}))
        except self.caught as error:  # our object's own failure: on through the other end's code
            return self.failed(error)
        self.kept.message()
        return {"value": encode(value, self.other, kept=self.kept)}

    def failed(self, error: BaseException) -> dict:
        self.failures[id(error)] = error
        return {"stop": "failure", "message": str(error), "failure": id(error)}
