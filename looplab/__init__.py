"""looplab: the parts of the course the notebooks should not have to show.

The notebooks tell the story (a tool call, the loop, id matching, a whole agent); this package
holds the machinery around it: offline replay of the real SDK, the reference calculator, the
history viewer, the checks and the grader.

`import looplab` is light: each name below is imported the first time it is read (a module
`__getattr__`, PEP 562). A notebook reads them in its first cell and sees no difference; a process
that only needs the tools (notebook 5's MCP server imports `looplab.tools` and `looplab.toolbox`) or
the words (`python -m authoring translations|catalogues`) never imports the SDK, IPython or the
widgets, about 1.3 s of CPU it would not use. tests/test_packaging.py proves both: the light import,
and every name there on first read.
"""

import importlib
import sys
import types

# Each name the package gives -> the module of the package that defines it, imported on first read.
_HOMES = {
    "MODEL": "model_id",
    "client": "client", "current_mode": "client", "traffic": "client",
    "NotRecordedError": "transport",
    "HistoryViewer": "viewer", "show_history": "viewer",
    "check": "checks", "hint": "checks", "progress": "checks",
    "speak": "language",
    "typed": "typed",
}

__all__ = [
    "MODEL", "HistoryViewer", "NotRecordedError", "check", "client", "current_mode", "hint", "progress",
    "show_history", "speak", "tools", "traffic", "typed",
]


def __getattr__(name: str):
    """A name read for the first time: one of _HOMES, kept once found, or a module of the package (`looplab.tools`,
    `looplab.loop`), as when the package imported every module at once."""
    if name in _HOMES:
        value = getattr(_imported(f"{__name__}.{_HOMES[name]}"), name)
        globals()[name] = value  # the next read finds it without this function
        return value
    if not name.startswith("_"):  # dunders and IPython's _repr_* probes are never modules
        try:
            return _imported(f"{__name__}.{name}")
        except ModuleNotFoundError as error:
            if error.name != f"{__name__}.{name}":
                raise  # the module exists but something it imports is missing: say so
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _imported(module: str) -> types.ModuleType:
    """A module of the package. Until the SDK is in this process, each first read imports inside
    looplab/long_lived.py's `imported_for_good`, so the one that brings the SDK brings it frozen (a kernel's first
    cell, an agent program's first question: 0.8 s of CPU less here); after that, a plain import."""
    if "anthropic" in sys.modules:
        return importlib.import_module(module)
    from .long_lived import imported_for_good

    with imported_for_good():
        return importlib.import_module(module)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


class _Package(types.ModuleType):
    """The package's own module type, for one reason: `looplab.client` is the function the notebooks call.

    It is also the name of a module, looplab/client.py, and when that module is first imported (by
    `from looplab.client import offline_environ`, or by a module of the package that needs it) Python sets
    the package's attribute `client` to it, and `looplab.client("01_one_tool_call")` would call a module.
    That one assignment is refused, so the name is read through `__getattr__` above: the function,
    whatever was imported first (tests/test_packaging.py imports them in the awkward order).
    """

    def __setattr__(self, name, value):
        if name in _HOMES and isinstance(value, types.ModuleType):
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
