"""The grader's own cells, as source text that runs inside the learner's kernel.

Kept apart because this code runs in another process, next to the learner's code: it may only use
what the kernel has (no imports from the grader), and what it fingerprints decides "tampered".
"""

from __future__ import annotations

MIME = "application/vnd.looplab.grader+json"
GRADER_MARK = "looplab_grader"  # cell metadata key of the grader's own cells

# Module state the course changes legitimately while a notebook runs: not part of the fingerprint.
MUTABLE_STATE = ("looplab.checks._best", "looplab.checks._hints_shown", "looplab.client._traffic_by_client")
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


KERNEL_CODE = r'''
import builtins, hashlib, json, sys, types
from IPython.core.getipython import get_ipython
from IPython.display import publish_display_data


def _ours(kind):
    name = f"{getattr(kind, '__module__', '')}.{getattr(kind, '__qualname__', '')}"
    return name.startswith("looplab") or name in DEEP


_MEMO = {}  # (id, depth) -> (value, digest), for one fingerprint: the same object shows up in many modules


def _describe(value, depth=0):
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
    digest = hash(_parts(value, kind, depth))
    _MEMO[(id(value), depth)] = (value, digest)
    return digest


def _parts(value, kind, depth):
    if isinstance(value, types.ModuleType):
        return ("module", value.__name__, id(value))
    if isinstance(value, types.FunctionType):
        # A code object hashes its bytecode, constants (nested code too), names and signature.
        parts = ("function", id(value), hash(value.__code__))
        if depth < 4:
            cells = []
            for cell in value.__closure__ or ():
                try:
                    cells.append(_describe(cell.cell_contents, depth + 1))
                except ValueError:
                    cells.append(0)
            parts += (_describe(value.__defaults__, depth + 1), _describe(value.__kwdefaults__, depth + 1),
                      tuple(cells))
        return parts
    if isinstance(value, types.MethodType):  # a new object at each access: what it binds is what counts
        return ("method", _describe(value.__func__, depth + 1), id(value.__self__))
    if isinstance(value, (staticmethod, classmethod)):
        return (kind.__name__, _describe(value.__func__, depth + 1))
    if isinstance(value, property):
        return ("property",) + tuple(_describe(f, depth + 1) for f in (value.fget, value.fset, value.fdel))
    if isinstance(value, type):
        parts = ("class", id(value))
        if depth < 2 and _ours(value):
            parts += tuple((key, _describe(item, depth + 1)) for key, item in list(vars(value).items())
                           if key not in ("__dict__", "__weakref__", "__doc__"))
        return parts
    if depth >= 5:
        return ("object", id(value))
    if kind in (list, tuple):
        return (kind.__name__,) + tuple(_describe(item, depth + 1) for item in value)
    if kind in (set, frozenset):
        return (kind.__name__, frozenset(_describe(item, depth + 1) for item in value))
    if kind is dict:
        return ("dict",) + tuple((_describe(k, depth + 1), _describe(v, depth + 1)) for k, v in list(value.items()))
    if _ours(kind) and hasattr(value, "__dict__"):
        return ("object", id(value), _describe(dict(vars(value)), depth + 1))
    return ("object", id(value))


def _resolve(dotted):
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


def _fingerprint(modules, builtin_names):
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
            if attr.startswith("__") or key in SKIP:
                continue
            if isinstance(value, types.ModuleType):
                prints[key] = f"module {value.__name__} {id(value)}"
            else:
                prints[key] = f"{_describe(value) & 0xFFFFFFFFFFFFFFFF:x}"
    namespace = vars(builtins)
    for attr in builtin_names:
        value = namespace.get(attr, _MISSING)
        if isinstance(value, types.MethodType):
            prints[f"builtins.{attr}"] = f"method {id(value.__func__)} of {id(value.__self__)}"
        else:
            prints[f"builtins.{attr}"] = "missing" if value is _MISSING else str(id(value))
    for dotted in EXTRA:
        try:
            prints[dotted] = f"{_describe(_resolve(dotted), 1) & 0xFFFFFFFFFFFFFFFF:x}"
        except Exception:
            prints[dotted] = "missing"
    return prints


def _pack(prints):
    """One line per name: a single string is far cheaper to send and store than a dict of hundreds."""
    return "\n".join(f"{name}\t{value}" for name, value in sorted(prints.items()))


def _report(prints, expected):
    """The fingerprint's digest; the whole fingerprint only when it differs from the first one."""
    packed = _pack(prints)
    digest = hashlib.sha256(packed.encode()).hexdigest()
    return {"digest": digest} if digest == expected else {"digest": digest, "prints": packed}


def _run_checks(exercises):
    run_check = sys.modules["looplab.checks"].run_check
    namespace = get_ipython().user_ns
    results = {}
    for number, name in exercises:
        if name not in namespace:
            results[number] = {"missing": True}
            continue
        try:
            result = run_check(number, namespace[name])
            failed = result.failed
            results[number] = {"ok": failed is None, "failed": None if failed is None else str(failed)}
        except BaseException as error:  # the learner's code can raise anything, KeyboardInterrupt too
            results[number] = {"error": f"{type(error).__name__}: {error}"}
    return results


def _main(step):
    payload = {"nonce": step["nonce"], "step": step["step"]}
    try:
        if step["step"] == "start":
            import looplab.checks  # noqa: F401 - the official checks, imported before any learner code
            modules = sorted(name for name in sys.modules
                             if (name == "looplab" or name.startswith("looplab."))
                             and name != "looplab.grade" and not name.startswith("looplab.grade."))
            names = sorted(name for name in vars(builtins) if name != "_")
            packed = _pack(_fingerprint(modules, names))
            payload.update(modules=modules, builtins=names, fingerprint=packed,
                           digest=hashlib.sha256(packed.encode()).hexdigest())
        else:
            modules, names, expected = step["modules"], step["builtins"], step["expected"]
            payload["before"] = _report(_fingerprint(modules, names), expected)
            if step["exercises"]:
                payload["results"] = _run_checks(step["exercises"])
                payload["after"] = _report(_fingerprint(modules, names), expected)
    except BaseException as error:
        payload["error"] = f"{type(error).__name__}: {error}"
    publish_display_data({MIME: json.loads(json.dumps(payload, default=str))})


_main(STEP)
'''


def grader_cell_source(step: dict) -> str:
    globals_ = {"__name__": "looplab_grader", "STEP": step, "MIME": MIME, "SKIP": set(MUTABLE_STATE),
                "DEEP": set(SDK_CLASSES), "EXTRA": list(SDK_CLASSES + GRADER_FUNCTIONS)}
    return ("# Added by the looplab grader (python -m looplab.grade): not part of the submission.\n"
            f"exec(compile({KERNEL_CODE!r}, '<looplab grader>', 'exec'), {globals_!r})\n")
