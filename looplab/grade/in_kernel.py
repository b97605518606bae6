"""The code of the grader's own cells: it runs inside the learner's kernel, next to the learner's code.

The grader never imports this module into a kernel: it reads this file's source and puts it in each
of its cells, run in a namespace of its own (kernel_cells.grader_cell_source), followed by
`main(STEP)`. So it may only use what the kernel has: the standard library, IPython and, looked up
in `sys.modules`, the looplab modules the course has imported. It must never import the grader.

What it does, for one grader cell (`STEP`, a dict):
- "start", before the learner's first cell: imports the official checks and records a fingerprint
  of the check machinery (every function, class and constant of the looplab modules, their code,
  and the builtins);
- "check", before an exercise's check cell: fingerprints again, runs `looplab.checks.run_check` on
  the learner's objects as they are now, fingerprints once more;
- "end", after the last cell: fingerprints.
It publishes one display output under MIME carrying the run's nonce; the grader reads only that.

The same functions run in-process in tests/test_grade_in_kernel.py.
"""

from __future__ import annotations

import builtins
import hashlib
import json
import sys
import types

from IPython.core.getipython import get_ipython
from IPython.display import publish_display_data

MIME = "application/vnd.looplab.grader+json"

# Module state the course changes legitimately while a notebook runs: not part of the fingerprint.
MUTABLE_STATE = frozenset({"looplab.checks._best", "looplab.checks._hints_shown", "looplab.client._traffic_by_client"})
# Classes outside looplab whose methods the checks go through; their methods are fingerprinted too.
SDK_CLASSES = (
    "anthropic.Anthropic", "anthropic.resources.messages.messages.Messages", "anthropic._base_client.SyncAPIClient",
    "httpx2.Client", "httpx2.MockTransport",
)
# Functions the grader's own cells use.
GRADER_FUNCTIONS = (
    "json.dumps", "hashlib.sha256", "IPython.display.publish_display_data",
    "IPython.core.getipython.get_ipython",
)
DEEP = frozenset(SDK_CLASSES)  # classes described member by member, like looplab's own
EXTRA = SDK_CLASSES + GRADER_FUNCTIONS  # fingerprinted on their own, wherever they live

# What became of one exercise's check, beyond the check's own kinds (looplab.checks.core: solved,
# not_written, not_solved): its object did not exist, or the check itself raised.
UNDEFINED, CRASHED = "undefined", "crashed"


def ours(kind) -> bool:
    name = f"{getattr(kind, '__module__', '')}.{getattr(kind, '__qualname__', '')}"
    return name.startswith("looplab") or name in DEEP


_MEMO: dict = {}  # (id, depth) -> (value, digest), for one fingerprint: the same object shows up in many modules


def describe(value, depth: int = 0) -> int:
    """An int that changes when the value, or anything it holds (to some depth), is replaced or changed.

    Built from ids and Python's own hashes, which are stable within one process: that is all a
    fingerprint compared within one kernel needs, and far cheaper than formatting text.
    """
    kind = type(value)
    if value is None or kind in (bool, int, float, complex, str, bytes):
        return hash((kind, value))
    known = _MEMO.get((id(value), depth))
    if known is not None and known[0] is value:
        return known[1]
    digest = hash(parts_of(value, kind, depth))
    _MEMO[(id(value), depth)] = (value, digest)
    return digest


def parts_of(value, kind, depth: int) -> tuple:
    if isinstance(value, types.ModuleType):
        return ("module", value.__name__, id(value))
    if isinstance(value, types.FunctionType):
        # A code object hashes its bytecode, constants (nested code too), names and signature.
        parts: tuple = ("function", id(value), hash(value.__code__))
        if depth < 4:
            cells = []
            for cell in value.__closure__ or ():
                try:
                    cells.append(describe(cell.cell_contents, depth + 1))
                except ValueError:
                    cells.append(0)
            parts += (describe(value.__defaults__, depth + 1), describe(value.__kwdefaults__, depth + 1),
                      tuple(cells))
        return parts
    if isinstance(value, types.MethodType):  # a new object at each access: what it binds is what counts
        return ("method", describe(value.__func__, depth + 1), id(value.__self__))
    if isinstance(value, (staticmethod, classmethod)):
        return (kind.__name__, describe(value.__func__, depth + 1))
    if isinstance(value, property):
        return ("property",) + tuple(describe(f, depth + 1) for f in (value.fget, value.fset, value.fdel))
    if isinstance(value, type):
        parts = ("class", id(value))
        if depth < 2 and ours(value):
            parts += tuple((key, describe(item, depth + 1)) for key, item in list(vars(value).items())
                           if key not in ("__dict__", "__weakref__", "__doc__"))
        return parts
    if depth >= 5:
        return ("object", id(value))
    if kind in (list, tuple):
        return (kind.__name__,) + tuple(describe(item, depth + 1) for item in value)
    if kind in (set, frozenset):
        return (kind.__name__, frozenset(describe(item, depth + 1) for item in value))
    if kind is dict:
        return ("dict",) + tuple((describe(k, depth + 1), describe(v, depth + 1)) for k, v in list(value.items()))
    if ours(kind) and hasattr(value, "__dict__"):
        return ("object", id(value), describe(dict(vars(value)), depth + 1))
    return ("object", id(value))


def resolve(dotted: str):
    """'anthropic.Anthropic' -> the object, looked up from modules already imported (never imports)."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        module = sys.modules.get(".".join(parts[:cut]))
        if module is not None:
            value = module
            for part in parts[cut:]:
                value = getattr(value, part)
            return value
    raise LookupError(dotted)


_MISSING = object()


def fingerprint(modules: list[str], builtin_names: list[str]) -> dict[str, str]:
    """name -> a short description of what it holds, for every name of these modules and builtins."""
    _MEMO.clear()
    prints = {}
    for name in modules:
        module = sys.modules.get(name)
        if module is None:
            prints[name] = "missing"
            continue
        prints[name] = f"module {name} {id(module)}"
        for attr, value in list(vars(module).items()):
            key = f"{name}.{attr}"
            if attr.startswith("__") or key in MUTABLE_STATE:
                continue
            if isinstance(value, types.ModuleType):
                prints[key] = f"module {value.__name__} {id(value)}"
            else:
                prints[key] = f"{describe(value) & 0xFFFFFFFFFFFFFFFF:x}"
    namespace = vars(builtins)
    for attr in builtin_names:
        value = namespace.get(attr, _MISSING)
        if isinstance(value, types.MethodType):
            prints[f"builtins.{attr}"] = f"method {id(value.__func__)} of {id(value.__self__)}"
        else:
            prints[f"builtins.{attr}"] = "missing" if value is _MISSING else str(id(value))
    for dotted in EXTRA:
        try:
            prints[dotted] = f"{describe(resolve(dotted), 1) & 0xFFFFFFFFFFFFFFFF:x}"
        except Exception:
            prints[dotted] = "missing"
    return prints


def pack(prints: dict[str, str]) -> str:
    """One line per name: a single string is far cheaper to send and store than a dict of hundreds."""
    return "\n".join(f"{name}\t{value}" for name, value in sorted(prints.items()))


def compare(prints: dict[str, str], expected: str) -> dict:
    """The fingerprint's digest; the whole fingerprint only when it differs from the first one."""
    packed = pack(prints)
    digest = hashlib.sha256(packed.encode()).hexdigest()
    return {"digest": digest} if digest == expected else {"digest": digest, "prints": packed}


def run_checks(exercises: list[list[str]], namespace: dict) -> dict[str, dict]:
    """Exercise number -> {"kind", "message"}: the official check of each [number, name] in `namespace`."""
    run_check = sys.modules["looplab.checks"].run_check
    results = {}
    for number, name in exercises:
        if name not in namespace:
            results[number] = {"kind": UNDEFINED, "message": None}
            continue
        try:
            result = run_check(number, namespace[name]).as_dict()
            results[number] = {"kind": result["kind"], "message": result["failed"]}
        except BaseException as error:  # the learner's code can raise anything, KeyboardInterrupt too
            results[number] = {"kind": CRASHED, "message": f"{type(error).__name__}: {error}"}
    return results


def looplab_modules() -> list[str]:
    """The looplab modules imported now, except the grader's own."""
    return sorted(name for name in sys.modules
                  if (name == "looplab" or name.startswith("looplab."))
                  and name != "looplab.grade" and not name.startswith("looplab.grade."))


def payload_for(step: dict, namespace: dict) -> dict:
    """What this grader cell reports; never raises (a failure is reported under "error")."""
    payload = {"nonce": step["nonce"], "step": step["step"]}
    try:
        if step["step"] == "start":
            import looplab.checks  # noqa: F401 - the official checks, imported before any learner code
            modules = looplab_modules()
            names = sorted(name for name in vars(builtins) if name != "_")
            packed = pack(fingerprint(modules, names))
            payload.update(modules=modules, builtins=names, fingerprint=packed,
                           digest=hashlib.sha256(packed.encode()).hexdigest())
        else:
            modules, names, expected = step["modules"], step["builtins"], step["expected"]
            payload["before"] = compare(fingerprint(modules, names), expected)
            if step["exercises"]:
                payload["results"] = run_checks(step["exercises"], namespace)
                payload["after"] = compare(fingerprint(modules, names), expected)
    except BaseException as error:
        payload["error"] = f"{type(error).__name__}: {error}"
    return payload


def main(step: dict) -> None:
    """Run in the kernel: report on the learner's namespace, as one display output."""
    payload = payload_for(step, get_ipython().user_ns)
    publish_display_data({MIME: json.loads(json.dumps(payload, default=str))})
