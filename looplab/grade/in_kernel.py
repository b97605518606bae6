"""The code of the grader's own cells: it runs inside the learner's kernel, next to the learner's code.

The grader never imports this module into a kernel: its first cell runs this file's source in a
namespace of its own (kernel_cells.grader_cell_source), followed by `start(STEP)`, which leaves the
`run` of later cells in `sys.modules[RUNNER]`. So it may only use what the kernel has: the standard
library, IPython and, looked up in `sys.modules`, the looplab modules the course has imported. It
must never import the grader.

What it does, for one grader cell (`STEP`, a dict):
- "start", before the learner's first cell: imports the official checks and records a fingerprint
  of the check machinery (every function, class and constant of the looplab modules, their code,
  and the builtins);
- "check", before an exercise's check cell: fingerprints again, runs `looplab.checks.run_check` on
  the learner's objects as they are now, fingerprints once more;
- "end", after the last cell: fingerprints (reported; a change made after the last check cannot
  change any grade, so the grader's side does not count it: rows.py).
Each publishes one display output under MIME: its report, signed.

Why signed, and how. The learner's code runs in this process, before and between the grader's cells:
it can shadow any name a cell looks up (`exec`, even `__builtins__`), replace the display publisher,
or rewrite a cell before it runs (input and AST transformers). So nothing a cell shows is believed
for what it says; a report counts only if it carries the MAC of a key the grader's side learned when
no learner code had run yet:
- "start" runs in the fresh kernel, before the learner's first cell. It makes the key (random bytes,
  never in any cell's text, so never in a transformer's or a shadowed `exec`'s hands), leaves the
  signing function `run` in `sys.modules[RUNNER]`, and sends the key in its own report.
- every later cell only imports RUNNER and calls `run(STEP)`. Whatever the learner did to names,
  publishers or transformers, the worst it can achieve is that no correctly signed report arrives,
  and a grader cell that finished without exactly one correctly signed report answering its own
  STEP is tampering (grader_reports.py, on the grader's side).
- the report is built from built-in types only and serialized with `repr` (read back with
  `ast.literal_eval`), and signed with HMAC-SHA256 computed here from `hashlib`'s C hash captured at
  start: no Python-level library function (json, hmac) the learner could patch touches it between
  the checks and the signature. The module's functions see builtins through a copy made at start.
What this cannot stop: code written to read the grader's own objects out of the process (the key in
`run`'s closure, through frames or the garbage collector) or to patch the interpreter itself; and
code that ran before "start" (a startup file planted in the kernel's IPython directory by another
kernel: keeping kernels apart is the sandbox's job), which the first fingerprint takes as it finds.

The same functions run in-process in tests/test_grade_in_kernel.py.
"""

from __future__ import annotations

import builtins
import hashlib
import os
import sys
from types import FunctionType, MethodType, ModuleType

from IPython.core.getipython import get_ipython
from IPython.display import publish_display_data

MIME = "application/vnd.looplab.grader+json"
RUNNER = "__looplab_grader__"  # the module "start" leaves in sys.modules; later grader cells import it

# Captured when the start cell runs, before any learner code: later rebinding of these module
# attributes (hashlib.sha256 = ..., sys.modules = ...) changes nothing the grader's code uses.
SHA256 = hashlib.sha256
RANDOM_BYTES = os.urandom
MODULES = sys.modules

# Module state the course changes legitimately while a notebook runs: not part of the fingerprint.
MUTABLE_STATE = frozenset({"looplab.checks._best", "looplab.checks._hints_shown", "looplab.client._traffic_by_client"})
# Classes outside looplab whose methods the checks go through; their methods are fingerprinted too.
SDK_CLASSES = (
    "anthropic.Anthropic", "anthropic.resources.messages.messages.Messages", "anthropic._base_client.SyncAPIClient",
    "httpx2.Client", "httpx2.MockTransport",
)
# Functions the grader's own cells use.
GRADER_FUNCTIONS = (
    "os.urandom", "hashlib.sha256", "IPython.display.publish_display_data",
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
    if isinstance(value, ModuleType):
        return ("module", value.__name__, id(value))
    if isinstance(value, FunctionType):
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
    if isinstance(value, MethodType):  # a new object at each access: what it binds is what counts
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
        module = MODULES.get(".".join(parts[:cut]))
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
        module = MODULES.get(name)
        if module is None:
            prints[name] = "missing"
            continue
        prints[name] = f"module {name} {id(module)}"
        for attr, value in list(vars(module).items()):
            key = f"{name}.{attr}"
            if attr.startswith("__") or key in MUTABLE_STATE:
                continue
            if isinstance(value, ModuleType):
                prints[key] = f"module {value.__name__} {id(value)}"
            else:
                prints[key] = f"{describe(value) & 0xFFFFFFFFFFFFFFFF:x}"
    namespace = vars(builtins)
    for attr in builtin_names:
        value = namespace.get(attr, _MISSING)
        if isinstance(value, MethodType):
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
    digest = SHA256(packed.encode()).hexdigest()
    return {"digest": digest} if digest == expected else {"digest": digest, "prints": packed}


def run_checks(exercises: list[list[str]], namespace: dict) -> dict[str, dict]:
    """Exercise number -> {"kind", "message", "hint"}: the official check of each [number, name] in `namespace`."""
    run_check = MODULES["looplab.checks"].run_check
    results = {}
    for number, name in exercises:
        if name not in namespace:
            results[number] = {"kind": UNDEFINED, "message": None}
            continue
        try:
            result = run_check(number, namespace[name]).as_dict()
            results[number] = {"kind": result["kind"], "message": result["failed"], "hint": result["hint"]}
        except BaseException as error:  # the learner's code can raise anything, KeyboardInterrupt too
            results[number] = {"kind": CRASHED, "message": f"{type(error).__name__}: {error}"}
    return results


def looplab_modules() -> list[str]:
    """The looplab modules imported now, except the grader's own."""
    return sorted(name for name in MODULES
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
                           digest=SHA256(packed.encode()).hexdigest())
        else:
            modules, names, expected = step["modules"], step["builtins"], step["expected"]
            payload["before"] = compare(fingerprint(modules, names), expected)
            if step["exercises"]:
                payload["results"] = run_checks(step["exercises"], namespace)
                payload["after"] = compare(fingerprint(modules, names), expected)
    except BaseException as error:
        payload["error"] = f"{type(error).__name__}: {error}"
    return payload


def plain(value):
    """The value in built-in types only (dict with str keys, list, str, int, bool, None), exactly those types.

    Subclasses are turned into their base type first: the repr of a learner's str subclass could
    be any text, and the report's text is the repr of what this returns.
    """
    kind = type(value)
    if value is None or kind in (bool, int, str):
        return value
    if kind in (list, tuple):
        return [plain(item) for item in value]
    if kind is dict:
        return {plain_text(key): plain(item) for key, item in list(value.items())}
    return plain_text(value)


def plain_text(value) -> str:
    text = value if type(value) is str else str(value)
    return str.__str__(text)  # an exact str even when a __str__ returned a subclass


def hmac_sha256(key: bytes, text: str) -> str:
    """HMAC-SHA256 (RFC 2104) of the text, from the C hash alone: hmac.new(key, text, sha256).hexdigest()."""
    block = key.ljust(64, b"\0")
    inner = SHA256(bytes(byte ^ 0x36 for byte in block) + text.encode()).digest()
    return SHA256(bytes(byte ^ 0x5C for byte in block) + inner).hexdigest()


def signed(payload: dict, key: bytes) -> dict:
    """What a grader cell publishes: the report as text, and its MAC."""
    text = repr(plain(payload))
    return {"text": text, "mac": hmac_sha256(key, text)}


def report(step: dict, namespace: dict) -> dict:
    """The payload, answering this STEP (echoed whole, so a report can't be passed off for another cell's)."""
    payload = payload_for(step, namespace)
    payload["request"] = step
    return payload


def runner_module(key: bytes, shell) -> ModuleType:
    """What later grader cells import: `run(STEP)` reports on the learner's namespace, signed with `key`."""

    def run(step: dict) -> None:
        publish_display_data({MIME: signed(report(step, shell.user_ns), key)})

    module = ModuleType(RUNNER, "The looplab grader's signing runner (looplab/grade/in_kernel.py).")
    module.run = run
    return module


def watch_memory(limit: int) -> None:
    """Raise MemoryError in the main thread each time the kernel's data grows past `limit` bytes.

    The hard limit (setrlimit RLIMIT_DATA, limits.py) makes any allocation fail once reached, in any
    thread: the kernel's own threads then die, and the kernel with them, so every later exercise
    would be lost. Raised below it, in the thread running the learner's code, the error ends the
    loop that grows, what the loop held is freed, and the kernel lives on. Data size as setrlimit
    counts it: /proc/self/statm's sixth field (Linux; elsewhere this does nothing).
    """
    if not limit or not os.path.exists("/proc/self/statm"):
        return
    import ctypes
    import threading
    import time

    page, main = os.sysconf("SC_PAGE_SIZE"), threading.main_thread().ident
    raise_in = ctypes.pythonapi.PyThreadState_SetAsyncExc

    def data_size() -> int:
        with open("/proc/self/statm", "rb") as statm:
            return int(statm.read().split()[5]) * page

    def watch() -> None:
        threshold = limit
        while True:
            time.sleep(0.02)
            size = data_size()
            if size > threshold:
                raise_in(ctypes.c_ulong(main), ctypes.py_object(MemoryError))
                threshold = size + limit // 8  # once more only if it goes on growing
            elif size < limit:
                threshold = limit

    threading.Thread(target=watch, name="looplab-memory-watch", daemon=True).start()


def start(step: dict) -> None:
    """The first grader cell, in the fresh kernel: make the key, leave the runner, report with the key."""
    shell = get_ipython()
    watch_memory(step.get("memory", 0))
    key = RANDOM_BYTES(32)
    MODULES[RUNNER] = runner_module(key, shell)
    payload = report(step, shell.user_ns)
    payload["key"] = key.hex()
    publish_display_data({MIME: signed(payload, key)})
