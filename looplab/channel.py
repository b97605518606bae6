"""The narrow channel between the grader and a kernel: JSON lines over a Unix socket, values as plain JSON.

Under the grader, the kernel only runs the learner's code; the checks run in the grader's process
(looplab/grade/judgement/judge.py) and reach the learner's objects through this channel (looplab/serve.py is
the kernel's end). Both ends import this module, which imports neither of them.

One message is one line of JSON, a dict. What crosses is data only: never pickle, never an object of
the learner's classes. A value is plain JSON where it can be; what JSON has no word for is a
one-key dict whose key starts with `$` (a plain dict with such a key is sent as `$dict` pairs):

    {"$tuple": [...]}                         a tuple
    {"$dict": [[key, value], ...]}            a dict whose keys are not all plain strings
    {"$namespace": {...}}                     a types.SimpleNamespace (what a client that is not the SDK's returns)
    {"$sdk": "ToolUseBlock", "data": {...}}   an SDK object of anthropic.types, as the SDK sends it
    {"$ndarray": [...], "dtype": "float64"}   a numpy array of numbers or booleans, as nested lists (notebook 7's
                                              vectors); a copy: what the other end does to it stays there.
                                              A numpy number of those types (np.int64(2), what argsort's
                                              positions hold) crosses as the plain Python number it equals
    {"$object": "Name", "repr": "..."}        anything else of the kernel's: its type's name and a short repr
    {"$kept": 3, "value": [...]}              a list or dict by number, so each end keeps one object for it (Identities)
    {"$client": 1} {"$stream": 2} ...         a grader-side object the kernel may use (judge.py, serve.py)
    {"$function": "TOOL_REGISTRY#1", ...}     a function inside a value the grader reads, which it may call (serve.py)

Only exact built-in types are encoded as themselves: a subclass of str (or int, float, list, dict)
is sent as the plain value it holds, so no `__eq__` of the learner's crosses.
"""

from __future__ import annotations

import json
import os
import socket
import time
from types import SimpleNamespace
from typing import Any, Callable

MAX_LINE = 16 * 1024 * 1024  # bytes in one message: far above any answer, well below the grader's memory
MAX_DEPTH = 40  # nesting of a value; deeper (or a list holding itself) is sent as an opaque object
REPR_LENGTH = 200
# The numpy arrays that cross as numbers (by dtype): anything else, an array of objects or strings, is opaque.
ARRAY_TYPES = frozenset({"float64", "float32", "int64", "int32", "bool"})
NO_SIGNAL = getattr(socket, "MSG_NOSIGNAL", 0)  # a closed other end is an error to handle, never a SIGPIPE that kills


class ChannelBroken(Exception):
    """The other end closed the channel, sent what is not a message, or did not answer in time."""


class Channel:
    """One end of the socket: send a message, receive the next one (within a time, on the grader's end)."""

    def __init__(self, sock: socket.socket, max_line: int = MAX_LINE):
        self.sock = sock
        self.buffer = bytearray()
        self.max_line = max_line  # bytes of one message this end reads at most

    def send(self, message: dict) -> None:
        try:
            self.sock.sendall(json.dumps(message, separators=(",", ":")).encode() + b"\n", NO_SIGNAL)
        except (OSError, ValueError, TypeError, RecursionError) as error:
            raise ChannelBroken(f"could not send: {error}") from None

    def receive(self, timeout: float | None = None) -> dict:
        deadline = None if timeout is None else time.monotonic() + timeout
        end = self.buffer.find(b"\n")
        while end < 0:
            if len(self.buffer) > self.max_line:
                raise ChannelBroken("a message longer than the channel takes")
            if deadline is not None:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise ChannelBroken("no answer in time")
                self.sock.settimeout(left)
            try:
                chunk = self.sock.recv(1 << 20)
            except TimeoutError:
                raise ChannelBroken("no answer in time") from None
            except OSError as error:
                raise ChannelBroken(f"could not read: {error}") from None
            if not chunk:
                raise ChannelBroken("the other end closed the channel")
            found = chunk.find(b"\n")
            end = len(self.buffer) + found if found >= 0 else -1
            self.buffer += chunk
        line = bytes(self.buffer[:end])
        del self.buffer[:end + 1]
        try:
            message = json.loads(line)
        except (ValueError, RecursionError):
            raise ChannelBroken("a message that is not JSON") from None
        if not isinstance(message, dict):
            raise ChannelBroken("a message that is not a JSON object")
        return message

    def close(self) -> None:
        try:
            self.sock.close()
        except OSError:
            pass


def at_path(sock: socket.socket, path: str, how: str) -> None:
    """`sock.bind(path)` or `sock.connect(path)` (`how`), also for a path longer than a Unix socket's address
    takes (about 107 bytes; a deep TMPDIR): then through the folder opened, as /proc/self/fd/N/name (Linux)."""
    if len(str(path).encode()) < 100 or not os.path.isdir("/proc/self/fd"):
        getattr(sock, how)(str(path))
        return
    folder = os.open(os.path.dirname(str(path)), os.O_RDONLY)
    try:
        getattr(sock, how)(f"/proc/self/fd/{folder}/{os.path.basename(str(path))}")
    finally:
        os.close(folder)


# --- values ------------------------------------------------------------------------------------------------

def sdk_class(name: Any):
    """The SDK's class of that name in anthropic.types (a pydantic model), or None: nothing else is ever built."""
    if not isinstance(name, str):
        return None
    import anthropic.types
    from pydantic import BaseModel

    kind = getattr(anthropic.types, name, None)
    return kind if isinstance(kind, type) and issubclass(kind, BaseModel) else None


def opaque(value: Any) -> dict:
    """Anything the encoding has no word for: its type's name and a short repr (the learner's code may run here)."""
    try:
        text = repr(value)
        text = str.__str__(text) if isinstance(text, str) else "?"
    except Exception:
        text = "?"
    name = type(value).__name__
    return {"$object": str.__str__(name) if isinstance(name, str) else "?", "repr": text[:REPR_LENGTH]}


def encode(value: Any, other: Callable[[Any], dict] = opaque, depth: int = 0,
           kept: "Identities | None" = None) -> Any:
    """The value as JSON data; `other` encodes what is neither plain data nor an SDK object. With `kept`, each list
    and dict goes by a number as well, so the other end keeps one object for it (Identities)."""
    kind = type(value)
    if value is None or kind in (bool, int, float, str):
        return value
    if depth > MAX_DEPTH:
        return {"$object": kind.__name__, "repr": "(nested too deep)"}
    if isinstance(value, str):  # subclasses: the text they hold, exactly a str
        return str.__str__(value)
    if isinstance(value, int) and not isinstance(value, bool):
        return int.__int__(value)
    if isinstance(value, float):
        return float.__float__(value)
    if isinstance(value, (list, dict)) and kept is not None:
        number, again = kept.number(value)
        if again:  # met before in this message: the same object
            return {"$kept": number}
        sent = {"$kept": number, "value": _container(value, other, depth, kept)}
        if isinstance(value, list) and type(value) is not list:  # a list that watches its removals (checks/turns.py)
            sent["watched"] = True
        if getattr(value, "removed", False) is True and isinstance(value, Watching):
            sent["removed"] = True  # a claim: it only changes the words of a failure
        return sent
    if isinstance(value, (list, dict)):
        return _container(value, other, depth, kept)
    if isinstance(value, tuple):
        return {"$tuple": [encode(item, other, depth + 1, kept) for item in tuple.__iter__(value)]}
    if isinstance(value, SimpleNamespace):
        return {"$namespace": encode(dict(vars(value)), other, depth + 1)}
    name = kind.__name__
    if name == "ndarray" and kind.__module__ == "numpy" and str(value.dtype) in ARRAY_TYPES:
        return {"$ndarray": value.tolist(), "dtype": str(value.dtype)}
    if kind.__module__ == "numpy" and str(getattr(value, "dtype", "")) in ARRAY_TYPES and getattr(value, "shape", 0) == ():
        return value.item()  # a numpy scalar: np.float64 is a float already; np.int64 and np.bool_ are not
    if sdk_class(name) is kind:
        return {"$sdk": name, "data": encode(value.model_dump(mode="json", exclude_unset=True, by_alias=True),
                                             other, depth + 1)}
    return other(value)


def _container(value: list | dict, other: Callable[[Any], dict], depth: int, kept: "Identities | None") -> Any:
    if isinstance(value, list):
        return [encode(item, other, depth + 1, kept) for item in list.__iter__(value)]
    pairs = [(encode(key, other, depth + 1), encode(item, other, depth + 1, kept)) for key, item in dict.items(value)]
    if all(type(key) is str and not key.startswith("$") for key, _ in pairs):
        return dict(pairs)
    return {"$dict": [[key, item] for key, item in pairs]}


class Identities:
    """Lists and dicts by number, on both ends of the channel: what the learner's code did to a list it was handed
    (appended to it, took a dict out of it) or to a dict it returned twice shows on the grader's own objects.

    Each end numbers the containers it sends first (the grader below zero, the kernel above); a container
    that comes back under a number this end knows updates that very object in place."""

    def __init__(self, sign: int):
        self.sign = sign
        self.objects: dict[int, Any] = {}
        self.numbers: dict[int, int] = {}  # id(object) -> its number, while `objects` keeps the object alive
        self.seen: set[int] = set()

    def message(self) -> None:
        """A new message starts: every container is sent whole again the first time it appears in it."""
        self.seen = set()

    def number(self, value: Any) -> tuple[int, bool]:
        number = self.numbers.get(id(value))
        if number is None or self.objects.get(number) is not value:
            number = self.sign * (len(self.objects) + 1)
            while number in self.objects:
                number += self.sign
            self._keep(number, value)
        again = number in self.seen
        self.seen.add(number)
        return number, again

    def _keep(self, number: int, value: Any) -> None:
        self.objects[number] = value
        self.numbers[id(value)] = number

    def ours(self) -> list:
        """The containers this end numbered (its own, handed to the other end), as they are now."""
        return [value for number, value in self.objects.items() if number * self.sign > 0]

    def theirs(self) -> list:
        """The containers the other end numbered (this end's copies of its objects), as they are now."""
        return [value for number, value in self.objects.items() if number * self.sign < 0]

    def resolve(self, data: dict, tagged: Callable[[str, dict], Any]) -> Any:
        """The object numbered `data["$kept"]`: updated in place to `data["value"]` when this end has it."""
        number = data.get("$kept")
        if not isinstance(number, int):
            return None
        if "value" not in data:
            return self.objects.get(number)
        new = decode(data["value"], tagged)
        old = self.objects.get(number)
        if isinstance(old, list) and isinstance(new, list):
            _update_list(old, new, data.get("removed") is True)
            return old
        if old is None and data.get("watched") is True and isinstance(new, list):
            new = Watching(new)
        if type(old) is dict and isinstance(new, dict):
            old.clear()
            old.update(new)
            return old
        if isinstance(new, (list, dict)):
            self._keep(number, new)
        return new


class Watching(list):
    """On the kernel's end, a list the grader watches for removals: it notes whether the code took an item out."""

    removed = False

    def pop(self, *args):
        self.removed = True
        return super().pop(*args)

    def remove(self, value) -> None:
        self.removed = True
        super().remove(value)

    def clear(self) -> None:
        self.removed = True
        super().clear()

    def __delitem__(self, key) -> None:
        self.removed = True
        super().__delitem__(key)

    def __setitem__(self, key, value) -> None:
        before = len(self)
        super().__setitem__(key, value)
        self.removed = self.removed or len(self) < before


def _update_list(old: list, new: list, removed: bool = False) -> None:
    """`old` holds what `new` holds. An item taken out shows as a removal (`clear`), so that a list watching
    its removals (the history agent_turn is handed: checks/turns.py) sees the code took one out."""
    if removed or any(all(item is not each for each in new) for item in list.__iter__(old)):
        old.clear()
        old.extend(new)
    else:
        list.__setitem__(old, slice(None), new)


def decode(data: Any, tagged: Callable[[str, dict], Any]) -> Any:
    """JSON data back to Python values; `tagged(tag, data)` makes what this end knows by a tag of its own."""
    if isinstance(data, list):
        return [decode(item, tagged) for item in data]
    if not isinstance(data, dict):
        return data
    tag = next(iter(data), None)
    if not (isinstance(tag, str) and tag.startswith("$")):
        return {key: decode(item, tagged) for key, item in data.items()}
    body = data[tag]
    if tag == "$tuple" and isinstance(body, list):
        return tuple(decode(item, tagged) for item in body)
    if tag == "$dict" and isinstance(body, list):
        try:
            return {decode(key, tagged): decode(item, tagged) for key, item in body}
        except (TypeError, ValueError):  # an unhashable key, or not pairs
            return tagged("$object", {"$object": "dict", "repr": "(a dict the grader cannot read)"})
    if tag == "$namespace" and isinstance(body, dict):
        fields = decode(body, tagged)
        if isinstance(fields, dict) and all(isinstance(key, str) for key in fields):
            return SimpleNamespace(**fields)
    if tag == "$ndarray" and data.get("dtype") in ARRAY_TYPES and isinstance(body, (list, int, float, bool)):
        import numpy  # only here: an end that never meets an array never imports it

        try:
            return numpy.array(body, dtype=data["dtype"])
        except (TypeError, ValueError):  # ragged, or not numbers
            return tagged("$object", {"$object": "ndarray", "repr": "(an array the grader cannot read)"})
    if tag == "$sdk":
        kind = sdk_class(body)
        try:
            return kind.model_validate(decode(data.get("data"), tagged))
        except Exception:  # not a class of anthropic.types, or data it does not take
            return tagged("$object", {"$object": str(body), "repr": "(an SDK object the grader cannot read)"})
    return tagged(tag, data)
