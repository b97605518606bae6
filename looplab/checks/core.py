"""How a graded check runs: the learner's code against scenarios, bounded, isolated, explained.

A checker `checker(obj, report)` plays the learner's object against a scripted model and calls
`report.require(condition, "key", ...)` for each thing it verifies; each key's words sit in its
module's catalogue, texts/<module>.toml. The first unmet expectation stops the check. Fair because
isolated (the learner's earlier pieces are swapped for the course's), bounded (a call limit and a
wall clock) and explained (an exception or the API's 400 becomes plain words, not a traceback).
"""

import ast
import contextlib
import copy
import functools
import html
import importlib
import inspect
import json
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any, Callable, Mapping

import anthropic
from IPython import get_ipython

from .. import scripted
from ..catalogue import Text, catalogue, fill
from ..learner_calls import (  # noqa: F401 (re-exported) how a call into the learner's code is bounded and isolated
    CPU_SECONDS_VARIABLE, TIME_LIMIT_SECONDS, WALL_SECONDS_VARIABLE, CheckTimeout, course_version_of,
    is_the_course_version, isolated, learner_line, time_limit, time_limit_seconds,
)
from ..rules import check_request
from ..scripted import TooManyCalls
from .source import COURSE_PACKAGE, names_imported_from_the_course, names_read_with, parsed

PACKAGE_DIR = Path(__file__).resolve().parent.parent

MIME_TYPE = "application/vnd.looplab.check+json"

# What a check found, as a word the grader carries to the gradebook (never read from the English message).
SOLVED, NOT_WRITTEN, NOT_SOLVED = "solved", "not_written", "not_solved"
COURSE_CODE = "course_code"  # the exercise handed in (or only wrapped) the course's own version


class Failure(Exception):
    """The first unmet expectation of a check: what went wrong, and a hint."""

    def __init__(self, message: str, hint: str = "", kind: str = NOT_SOLVED):
        super().__init__(message)
        self.message, self.hint, self.kind = message, hint, kind
        # Set by a checker on a failure the course's own version would meet too, called from the learner's code
        # (notebook 6's run_tool cannot see the tools the check adds to the learner's registry): when the course's
        # version was called, that is the verdict instead (checks/__init__.py).
        self.course_code_blind = False


@dataclass
class Claims:
    """What the grader knows of the learner's object besides what it does (looplab/grade/judgement/judge.py): the
    kernel's claim that it IS the course's own version (a stand-in of the graded edition: looplab/withheld.py), and the
    course functions the learner's code called while the exercise was judged, which the course line saw and refused
    (judgement/course_line.py). They can only cost points, never award one."""

    course_code: bool = False
    borrowed: list[str] = field(default_factory=list)
    course_version: str | None = None  # which exercise's course version it is ("module:attribute"), when it is one


@dataclass
class Report:
    """What a checker has verified, the situation it is testing, and its texts (a tiny module may use `expect`)."""

    passed: list[str] = field(default_factory=list)
    situation: str | None = None
    situation_key: str | None = None  # its row: a hint for this situation, if the row has one
    texts: Mapping[str, Text] = field(default_factory=dict)
    cell: str | None = None  # the cell that defined the exercise's name, where the check can read it (source.py)
    cells: list[str] | None = None  # every cell run before the check, in order (reaching.py reads them)

    def text(self, key: str) -> Text:
        """The row `key` of the checker's table, or of the rows every check shares (TEXTS below)."""
        return (self.texts[key] if key in self.texts else TEXTS[key]).said()

    def words(self, key: str, **values) -> str:
        """A row's words (its `passed`, or its `failed` when it has no `passed`), filled in."""
        text = self.text(key)
        return fill(text.passed or text.failed, situation=self.situation, **values)

    def expect(self, condition: bool, passed: str | None, failed: str, hint: str = "") -> None:
        """Stop the check with `failed` unless `condition` holds; `passed` (if any) is listed."""
        if not condition:
            raise Failure(failed, hint)
        if passed:
            self.passed.append(passed)

    def failure(self, key: str, hint: str | None = None, **values) -> Failure:
        """The row `key` as a Failure; `hint` replaces the row's own (one that depends on the case), and so does the
        situation's, for a row that says so (Text.situation_hint)."""
        text = self.text(key)
        if hint is None and self.situation_key and (self.texts.get(key) or TEXTS[key]).situation_hint:
            hint = self.text(self.situation_key).hint or None
        return Failure(fill(text.failed, situation=self.situation, **values), text.hint if hint is None else hint)

    def require(self, condition: bool, key: str, hint: str | None = None, **values) -> None:
        """Stop the check with the row's `failed` unless `condition` holds; list its `passed`, if any."""
        if not condition:
            raise self.failure(key, hint, **values)
        if self.text(key).passed:
            self.passed.append(self.words(key, **values))

    def enter(self, key: str, **values) -> None:
        """Start testing the situation named by the row `key`; failures of learner code name it."""
        self.situation, self.situation_key = None, key
        self.situation = self.words(key, **values)

    def require_function(self, obj: Any, name: str) -> None:
        self.require(callable(obj), "not_callable", name=name, kind=type(obj).__name__)

    def note(self, key: str, **values) -> None:
        """List a group of expectations met: a row's words, or (the plain form, no table) the words themselves."""
        known = key in self.texts or key in TEXTS
        self.passed.append(self.words(key, **values) if known else key)


@dataclass
class CheckResult:
    """A check's outcome, shown as a small panel and kept as machine-readable data."""

    exercise: str
    title: str
    points: int
    max_points: int
    passed: list[str]
    failed: str | None = None
    hint: str | None = None
    kind: str = SOLVED  # SOLVED, NOT_WRITTEN or NOT_SOLVED

    @property
    def ok(self) -> bool:
        return self.failed is None

    def as_dict(self) -> dict:
        return {name: value for name, value in asdict(self).items() if name != "title"}

    def headline(self) -> str:
        return SAY.words("headline", mark=MARKS[self.ok], exercise=self.exercise, title=self.title,
                         points=self.points, max_points=self.max_points)

    def __repr__(self) -> str:
        lines = [self.headline()] + [SAY.words("passed_line", item=item) for item in self.passed]
        if not self.ok:
            lines.append(SAY.words("failed_line", failed=self.failed))
            if self.hint:
                lines.append(SAY.words("hint_line", hint=self.hint))
            lines.append(SAY.words("more_hints_line", exercise=self.exercise))
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        items = "".join(f"<li>{MARKS[True]} {html.escape(item)}</li>" for item in self.passed)
        if not self.ok:
            items += f"<li><b>{MARKS[False]} {html.escape(self.failed)}</b></li>"
        hint = (SAY.words("hint_html", hint=html.escape(self.hint), exercise=html.escape(self.exercise))
                if not self.ok and self.hint else "")
        return PANEL_HTML.format(colour=COLOURS[self.ok], headline=html.escape(self.headline()), items=items,
                                 hint=hint)

    def _repr_mimebundle_(self, include=None, exclude=None):
        return {"text/plain": repr(self), "text/html": self._repr_html_(), MIME_TYPE: self.as_dict()}


MARKS = {True: "✓", False: "✗"}
COLOURS = {True: "#2ca02c", False: "#d62728"}
PANEL_HTML = ('<div class="looplab-check" style="border-left:4px solid {colour};padding:2px 8px">'
              "<b>{headline}</b><ul>{items}</ul>{hint}</div>")


class CheckFailed(Exception):
    """Ends a check cell with one short line pointing up at the panel; the message is for the grader and nbclient."""

    def __init__(self, result: CheckResult):
        super().__init__(SAY.words("not_solved", exercise=result.exercise, failed=result.failed))
        self.result = result

    def _render_traceback_(self) -> list[str]:
        return [f"{type(self).__name__}: {SAY.words('not_solved_above', exercise=self.result.exercise)}"]


@dataclass(frozen=True)
class Scenario:
    """One row of a scenario table, whatever the notebook: `key` names its row in TEXTS (words, maybe a hint).

    Its data (`given`, `expected`, `options`) is read anew at every read: a deep copy. The checks hand it to the
    learner's code, which may change what it is handed at will (a history popped while read, a list appended to
    after the answer), and under the grader the kernel's changes come back onto the grader's objects: a table
    shared by every learner would carry one learner's changes into the next one's check. So every call gets
    data of its own, and what a check expects is computed from data no learner's code ever held. Its words
    (`scripted.said`) come in the language the check speaks."""

    key: str
    replies: Any = ()  # the scripted model's replies, or a function that makes a model that never stops
    given: Any = None  # what the code is handed besides a client: a history, the lines run reads...
    expected: Any = None  # what it should return, where the replies do not say it
    options: dict = field(default_factory=dict)  # its keyword arguments (max_iterations, system)
    call_limit: int | None = None  # how many calls the model answers; None: one a reply
    then: Callable | None = None  # more to verify once it has run: then(report, output, play)
    note: str | None = None  # a row listed as passed once the scenario has passed
    # For the agent_turn harness (turns.py), what its default rules do not say: the tool names every request must
    # offer, exactly (None: the calculator, or the toolbox's), and the history expected after the turn, made from
    # what it was handed and the replies (None: kept word for word, each reply followed by its results). A loop with
    # another toolbox (a subagent's), or one that folds old turns into a summary, says its own.
    tools: tuple[str, ...] | None = None
    history: Callable[[list, list], list] | None = None

    def __getattribute__(self, name: str) -> Any:
        value = object.__getattribute__(self, name)
        return scripted.spoken(copy.deepcopy(value)) if name in FRESH_FIELDS else value


FRESH_FIELDS = frozenset({"given", "expected", "options"})  # a Scenario's data: a copy at every read


@dataclass
class Play:
    """What the learner's code did against a scripted model: what it returned or raised, and each exchange."""

    answer: Any
    error: BaseException | None
    requests: list[dict]  # every request it sent, in wire form
    responses: list[dict]  # every reply the model gave

    @property
    def calls(self) -> int:
        return len(self.requests)

    @property
    def last(self) -> dict | None:
        return self.responses[-1] if self.responses else None

    def reraise(self) -> None:
        """An error no checker turned into words: explain() will."""
        if self.error is not None:
            raise self.error


def play(call, scenario: Scenario) -> Play:
    """Hand `call` a real SDK client whose model plays the scenario's replies (within the API's rules and a call
    limit); keep what it returned or raised, for the checker to word in its scenario's terms."""
    replies = scenario.replies() if callable(scenario.replies) else scenario.replies
    limit = len(replies) if scenario.call_limit is None else scenario.call_limit
    client, traffic = scripted.scripted_client(replies, call_limit=limit)
    try:
        answer, error = call(client), None
    except Failure:
        raise
    except (Exception, TooManyCalls) as raised:
        answer, error = None, raised
    return Play(answer, error, [exchange["request"] for exchange in traffic.exchanges],
                [exchange["response"] for exchange in traffic.exchanges if exchange.get("response") is not None])


INPUT_HISTORY = "In"  # IPython's list of the cells run, by execution count


@dataclass
class Session:
    """What the notebook has run so far: its cells' text in the order they ran, and its namespace."""

    cells: list[str]
    namespace: dict


def session() -> Session | None:
    """The notebook's session when the check runs in IPython (IPython's input history `In`); None elsewhere
    (plain tests, scripts): there is no cell to read, and the checks judge the object alone."""
    shell = get_ipython()
    cells = getattr(shell, "user_ns", {}).get(INPUT_HISTORY)
    if not isinstance(cells, list):
        return None
    return Session([cell for cell in cells if isinstance(cell, str)], shell.user_ns)


def is_a_copy_of_the_course(obj: Any, reference: Any, name: str, found: Session, cell: str) -> bool:
    """Is the dict `obj` a copy of the course's (deepcopy, a JSON round trip, `dict(...)`, `{**...}`)?

    Equal by value is not enough: the prose asks the learner to write the definition, and a dict typed
    by hand may be the very same. So a copy is a dict equal to the course's that the exercise cell made
    from something the course gave: its statements that mention `name` read a name that holds the course's
    object, a list or dict holding it, a dict or list inside it, or a course module. A name counts by what it
    holds now, or by what an import from looplab bound it to (in any cell run), so that a name imported from the
    course and then deleted or rebound still counts; a name imported from the course that is none of those (the
    tool `get_weather`, read as `get_weather.__name__`) is the learner's own expression, not a copy.
    """
    if callable(reference) or not isinstance(obj, dict):
        return False
    try:
        if obj != reference:
            return False
    except Exception:  # a learner's dict subclass may compare in any way
        return False
    read = names_read_with(cell, name)
    imported = _imported_from_the_course(found.cells, read & names_imported_from_the_course(found.cells))
    return any(_holds_the_course(value, reference)
               for each in read for value in [found.namespace.get(each), *imported.get(each, [])])


def _holds_the_course(value: Any, reference: Any) -> bool:
    """The course's object itself, a list or dict holding it (`TOOLS`), a dict or list inside it (a schema of the
    course's registry), or a module of the course."""
    if isinstance(value, ModuleType):
        return value.__name__.split(".")[0] == COURSE_PACKAGE
    if value is reference:
        return True
    items = value.values() if isinstance(value, dict) else value if isinstance(value, (list, tuple)) else [value]
    try:
        if any(item is reference for item in items):
            return True
    except Exception:  # a learner's container may iterate in any way
        return False
    return isinstance(value, (dict, list)) and any(part is value for part in _parts(reference))


def _parts(value: Any, depth: int = 0) -> list:
    """The dicts and lists inside a course value (its data, never its functions), at any depth."""
    if depth > 20 or not isinstance(value, (dict, list, tuple)):
        return []
    items = list(value.values()) if isinstance(value, dict) else list(value)
    found = [item for item in items if isinstance(item, (dict, list))]
    for item in items:
        found += _parts(item, depth + 1)
    return found


def _imported_from_the_course(cells: list[str], names: set[str]) -> dict[str, list]:
    """What each of `names` was bound to by an import from the course in these cells (`from looplab.toolbox import
    FORCE_WEATHER as F` binds F to that dict; `import looplab.toolbox` binds `looplab`, the package): read from the
    course's modules, whatever the namespace holds now. An import the course cannot answer binds nothing."""
    bound: dict[str, list] = {}
    for tree in (parsed(cell) for cell in cells if isinstance(cell, str)):
        for node in ast.walk(tree) if tree is not None else ():
            if isinstance(node, ast.Import):
                pairs = [(alias.asname or alias.name.split(".")[0], alias.name if alias.asname else
                          alias.name.split(".")[0], None) for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
                pairs = [(alias.asname or alias.name, node.module, alias.name) for alias in node.names]
            else:
                continue
            for local, module, attribute in pairs:
                if local in names and module.split(".")[0] == COURSE_PACKAGE:
                    value = _course_attribute(module, attribute)
                    if value is not _NOTHING:
                        bound.setdefault(local, []).append(value)
    return bound


_NOTHING = object()


def _course_attribute(module: str, attribute: str | None) -> Any:
    """A module of the course, or one of its attributes (a submodule too); _NOTHING for what it does not have."""
    try:
        found = importlib.import_module(module)
    except Exception:
        return _NOTHING
    if attribute is None:
        return found
    try:
        return getattr(found, attribute)
    except Exception:  # an attribute of the graded edition withheld, or none
        pass
    try:
        return importlib.import_module(f"{module}.{attribute}")
    except Exception:
        return _NOTHING


@contextlib.contextmanager
def borrowing(obj: Any, reference: Any):
    """While a check runs, every name the learner's code reaches the course's version by points to a tripwire
    that notes each call from outside the package and hands it on; all is put back after."""
    calls: list[str] = []
    module = sys.modules.get(getattr(reference, "__module__", None) or "")
    name = getattr(reference, "__name__", None)
    if not callable(reference) or module is None or name is None:
        yield calls
        return
    package = str(PACKAGE_DIR)

    @functools.wraps(reference)
    def tripwire(*args, **kwargs):
        caller = inspect.currentframe().f_back
        if caller is not None and not caller.f_code.co_filename.startswith(package):
            calls.append(caller.f_code.co_name)
        return reference(*args, **kwargs)

    spaces = [getattr(obj, "__globals__", {}), vars(module)]
    swapped = [(space, key) for space in spaces for key, value in list(space.items()) if value is reference]
    for space, key in swapped:
        space[key] = tripwire
    try:
        yield calls
    finally:
        for space, key in swapped:
            space[key] = reference


TEXTS, _ = catalogue(__file__)  # the rows every check shares: the panel, the score, errors in plain words
SAY = Report(texts=TEXTS)


def explain(error: BaseException) -> Failure:
    """An exception from the learner's code, in plain words."""
    if isinstance(error, Failure):
        return error
    if isinstance(error, NotImplementedError):
        failure = SAY.failure("not_written")
        failure.kind = NOT_WRITTEN
        return failure
    if isinstance(error, anthropic.BadRequestError):
        return SAY.failure("rejected", _rule_hint(error), message=error.api_message)
    if isinstance(error, TooManyCalls):
        return SAY.failure("too_many_calls", error=error)
    if isinstance(error, CheckTimeout):
        seconds = error.args[0] if error.args and isinstance(error.args[0], (int, float)) else time_limit_seconds()[0]
        return SAY.failure("timeout", seconds=f"{seconds:g}")
    if isinstance(error, MemoryError):  # only the grader limits memory (looplab/grade/shared/limits.py)
        return SAY.failure("memory", where=learner_frame(error))
    return SAY.failure("raised", error=f"{type(error).__name__}: {error}", where=learner_frame(error))


def _rule_hint(error: anthropic.BadRequestError) -> str:
    """The same hint the rules give for that request."""
    try:
        violation = check_request(json.loads(error.request.content))
    except (ValueError, AttributeError):
        violation = None
    return SAY.text("no_rule").hint if violation is None else violation.hint


def learner_frame(error: BaseException) -> str:
    """Where in the learner's code the error was raised, in words: its line (the kernel's, under the grader)."""
    line = getattr(error, "learner_line", None)
    line = line if isinstance(line, str) else learner_line(error)
    return SAY.words("at_line", line=line) if line else ""
