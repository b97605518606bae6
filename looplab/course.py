"""The course in one place: its notebooks, their exercises, and what each exercise builds on.

Everything that needs to know the course reads it here: `check`, `hint` and `progress`, the
learner-notebook generator, the grader and the tests. Nothing else lists notebooks or exercises.

Adding a notebook is one `Notebook(...)` entry below, plus files of its own: the solution notebook,
its checks module with their words and audit rows, the module holding its reference code, its
scripted answers and its tests. docs/WRITING_NOTEBOOKS.md lists them (generated from
authoring/adding.py, which tests/test_adding_a_notebook.py holds to what adding one really takes).
The course refuses two notebooks with one stem or number, and two exercises with one id.

The course has versions (`Course.versions`, oldest first), and every notebook says in its metadata
which one it was made with. Adding an exercise to a published course is a new version and the
exercise's `since`: the grader then gives a notebook made before it "not in this version", 0 of 0
points, instead of failing it for an exercise it never had.

Why the earlier pieces are listed: a learner's bug in notebook 1 must never fail a check of
notebook 3. While an exercise is checked, every name an earlier exercise built, and every name the
notebooks' set-up provides, is swapped in the learner's namespace for the course's reference
object. That list is derived from the order of the course (`Course.earlier_pieces`), never kept by
hand. An exercise whose check needs a name to hold something the notebook does not (5.3's registry,
with tools the check adds) says so in its own `checked_with`, swapped in last.
"""

from __future__ import annotations

import importlib
import inspect
import re
from dataclasses import dataclass, field
from typing import Any, Callable

from .catalogue import words


def resolve(target: str) -> Any:
    """'looplab.loop:agent_turn' -> the object (imported when first needed)."""
    module, _, attribute = target.partition(":")
    value: Any = importlib.import_module(module)
    for part in attribute.split(".") if attribute else ():
        value = getattr(value, part)
    return value


TITLES = words(__file__)  # the titles in other languages (texts/course.toml) keyed by exercise id, and its words


@dataclass(frozen=True)
class Exercise:
    """One graded exercise: `check("<id>", <name>)` in its notebook."""

    id: str  # "2.2": its number in the notebook's prose, its check cell, its gradebook rows
    name: str  # the object its check cell passes: check("2.2", agent_turn)
    title: str
    points: int
    reference: str  # where the course's own version lives, "module:attribute"
    since: str | None = None  # the course version that added it (one of Course.versions); None: the first
    # Names swapped in while this exercise alone is checked, name -> the course's object ("module:attribute"), over
    # the earlier pieces: what its check needs a name of the learner's to hold that the notebook does not (5.3's
    # TOOL_REGISTRY holds two tools more: looplab.toolbox.CHECKED_REGISTRY). Never the exercise's own name.
    checked_with: dict[str, str] = field(default_factory=dict, hash=False)

    @property
    def said_title(self) -> str:
        """The title in the course's language, as a check's panel and progress() show it: texts/course.toml
        translates the titles that hold words; `title` (English, the source) is what files and the grader keep."""
        translated = self.id in TITLES and TITLES.rows[self.id]["en"] == self.title  # never another title's words
        return TITLES(self.id) if translated else self.title


# Where the course's own version of an exercise lives (Exercise.reference). Notebooks 1-4 came first and
# share these two modules (`loop.py`: the loop the notebooks build; `tools.py`: notebook 1's calculator and
# the `run_tool` notebooks 3 and 4 derive their outputs from): they take no new notebook's references.
# Every later notebook names a module of its own in its entry (`Notebook.references`), and all its
# exercises' references are in it, so no module grows into every notebook of the course.
SHARED_REFERENCES = ("looplab.loop", "looplab.tools")


def _reference_modules(course: "Course | None") -> set[str]:
    """The modules holding the course's versions of its exercises: the shared two, and one per later notebook."""
    return set(SHARED_REFERENCES) | {n.references for n in (course or COURSE).notebooks if n.references}


def reference_function_target(value: Any, course: "Course | None" = None) -> str | None:
    """ "module:name" of a function defined at the top of one of the course's reference modules (looplab.robust's
    calculator), else None: how a course function crosses the grader's channel, by name, to be taken from the other
    end's own package; and the only names the grader takes back from a kernel."""
    if not inspect.isfunction(value) or "." in value.__qualname__ or "<" in value.__qualname__:
        return None
    return f"{value.__module__}:{value.__qualname__}" if value.__module__ in _reference_modules(course) else None


def reference_function(target: Any, course: "Course | None" = None) -> Any:
    """The function a target names, only among the reference modules' own top-level functions; None for anything
    else (another module, a value, a name a hostile kernel made up): a kernel names, the grader never imports."""
    if not isinstance(target, str) or ":" not in target:
        return None
    module, _, name = target.partition(":")
    if module not in _reference_modules(course):
        return None
    value = vars(importlib.import_module(module)).get(name)
    return value if reference_function_target(value, course) == target else None
STEM = re.compile(r"(\d+)_[a-z0-9_]+")  # "05_toolbox": the notebook's number, then its name


@dataclass(frozen=True)
class Notebook:
    """One notebook of the series, in the order learners take them."""

    stem: str  # the file name without .ipynb, in solutions/ and notebooks/; also its recording's name
    title: str
    checks: str  # the module with its checkers and hints: CHECKERS and HINTS keyed by exercise id; TEXTS by key
    exercises: tuple[Exercise, ...]
    # Names its set-up cell defines that later exercises lean on, with the course's object for each.
    provides: dict[str, str] = field(default_factory=dict)
    # The module holding the course's version of its exercises (every Exercise.reference of it); None only
    # for notebooks 1-4, whose references are in SHARED_REFERENCES.
    references: str | None = None
    builds: str = ""  # what the learner builds, in a few words: the README's course table

    @property
    def said_title(self) -> str:
        """The title in the course's language (texts/course.toml, keyed by stem; `title` is the English source)."""
        translated = self.stem in TITLES and TITLES.rows[self.stem]["en"] == self.title
        return TITLES(self.stem) if translated else self.title

    @property
    def ids(self) -> list[str]:
        return [exercise.id for exercise in self.exercises]

    @property
    def number(self) -> int | None:
        """05_toolbox -> 5 (None for a stem that does not start with its number)."""
        match = STEM.fullmatch(self.stem)
        return int(match.group(1)) if match else None

    def reference_problems(self) -> list[str]:
        """Where its exercises' references break the rule above, in words; [] when they keep it."""
        allowed = (self.references,) if self.references else SHARED_REFERENCES
        where = f"its own module {self.references}" if self.references else ", ".join(SHARED_REFERENCES)
        return [f"exercise {exercise.id}'s reference {exercise.reference!r} is not in {where} "
                f"(notebook {self.stem}'s references; see docs/WRITING_NOTEBOOKS.md)"
                for exercise in self.exercises if exercise.reference.partition(":")[0] not in allowed]


@dataclass(frozen=True)
class Course:
    """The whole course. `versions` are its published versions, oldest first; the last is the current one.

    Why versions: learners hand in notebooks made months apart. An exercise added in a later
    version must not count against a notebook made before it existed (the grader marks it "not in
    this version", 0 of 0 points). Versions are compared by their place in this list, never by
    their spelling, so any label works ("2026.12", "2027.03b").
    """

    versions: tuple[str, ...]
    notebooks: tuple[Notebook, ...]

    def __post_init__(self):
        if (not isinstance(self.versions, tuple) or not self.versions
                or not all(isinstance(v, str) and v for v in self.versions)):
            hint = " (pass a course's versions, not its current version)" if isinstance(self.versions, str) else ""
            raise TypeError(f"Course.versions must be a non-empty tuple of version names, oldest first; "
                            f"got {self.versions!r}{hint}")
        if len(set(self.versions)) != len(self.versions):
            raise ValueError(f"Course.versions names a version twice: {self.versions!r}")
        twice = [f"{what} {value!r} ({', '.join(owners)})" for what, value, owners in self._duplicates()]
        if twice:
            raise ValueError("The course has two of one thing, which must be unique (grading, checks and files are "
                             "matched on it): " + "; ".join(twice))
        problems = [problem for notebook in self.notebooks for problem in notebook.reference_problems()]
        owners = [notebook.references for notebook in self.notebooks if notebook.references]
        problems += [f"{module} holds the references of more than one notebook" for module in sorted(set(owners))
                     if owners.count(module) > 1 or module in SHARED_REFERENCES]
        if problems:
            raise ValueError("; ".join(problems))
        for exercise in self.exercises:
            if exercise.name in exercise.checked_with:
                raise ValueError(f"Exercise {exercise.id} is checked with another object under its own name "
                                 f"{exercise.name!r} (checked_with): the object checked is the learner's")
            if exercise.since is not None and exercise.since not in self.versions:
                raise ValueError(f"Exercise {exercise.id} is since {exercise.since!r}, which is not one of the "
                                 f"course's versions ({', '.join(self.versions)})")

    def _duplicates(self) -> list[tuple[str, object, list[str]]]:
        """(what, value, its owners) for each stem, notebook number and exercise id held twice."""
        found: list[tuple[str, object, list[str]]] = []
        keys = (("notebook stem", lambda n: [n.stem]),
                ("notebook number", lambda n: [] if n.number is None else [n.number]),
                ("exercise id", lambda n: n.ids))
        for what, values_of in keys:
            owners: dict[object, list[str]] = {}
            for notebook in self.notebooks:
                for value in values_of(notebook):
                    owners.setdefault(value, []).append(notebook.stem)
            found += [(what, value, stems) for value, stems in owners.items() if len(stems) > 1]
        return found

    @property
    def next_number(self) -> int:
        """The number a new notebook takes: one past the highest."""
        return max((n.number for n in self.notebooks if n.number is not None), default=0) + 1

    # --- versions ---------------------------------------------------------------------------------

    @property
    def version(self) -> str:
        """The current version: the one the learner notebooks are generated with."""
        return self.versions[-1]

    def version_order(self, version: str) -> int:
        """Where a version stands among the course's (0: the first); ValueError for one it never had."""
        try:
            return self.versions.index(version)
        except ValueError:
            raise ValueError(f"{version!r} is not a version of this course; its versions are "
                             f"{', '.join(self.versions)}") from None

    def since(self, exercise: Exercise) -> str:
        """The version that added the exercise (the first one unless it says otherwise)."""
        return exercise.since or self.versions[0]

    def exists_in(self, exercise: Exercise, version: str) -> bool:
        """Was the exercise part of the course in that version? Yes in every version from its `since` on."""
        return self.version_order(self.since(exercise)) <= self.version_order(version)

    def first_version_with(self, exercises) -> str:
        """The oldest version holding every one of these exercises (the first version for none)."""
        return max((self.since(e) for e in exercises), key=self.version_order, default=self.versions[0])

    # --- looking things up ------------------------------------------------------------------------

    @property
    def exercises(self) -> list[Exercise]:
        return [exercise for notebook in self.notebooks for exercise in notebook.exercises]

    def exercise(self, exercise_id: str) -> Exercise:
        for exercise in self.exercises:
            if exercise.id == exercise_id:
                return exercise
        raise KeyError(TITLES("no_exercise", exercise=exercise_id, exercises=", ".join(e.id for e in self.exercises)))

    def notebook(self, stem: str) -> Notebook:
        for notebook in self.notebooks:
            if notebook.stem == stem:
                return notebook
        raise KeyError(f"There is no notebook {stem!r}; the notebooks are {', '.join(self.stems)}.")

    def notebook_of(self, exercise_id: str) -> Notebook:
        for notebook in self.notebooks:
            if exercise_id in notebook.ids:
                return notebook
        raise KeyError(TITLES("no_such_exercise", exercise=exercise_id))

    @property
    def stems(self) -> list[str]:
        return [notebook.stem for notebook in self.notebooks]

    # --- what a check needs -----------------------------------------------------------------------

    def checks(self, exercise_id: str) -> Any:
        """The module of the exercise's notebook checks: CHECKERS and HINTS, and (optionally) TEXTS."""
        return importlib.import_module(self.notebook_of(exercise_id).checks)

    def checker(self, exercise_id: str) -> Callable[[Any, Any], None]:
        return self.checks(exercise_id).CHECKERS[exercise_id]

    def hints(self, exercise_id: str) -> list[str]:
        """The exercise's hints, in the learner's language where its catalogue has it (catalogue.Hints)."""
        hints = self.checks(exercise_id).HINTS[exercise_id]
        return hints.said() if hasattr(hints, "said") else list(hints)

    def texts(self, exercise_id: str) -> dict:
        """Every learner-facing text of its checks, by key (a module without TEXTS writes its words inline)."""
        return getattr(self.checks(exercise_id), "TEXTS", {})

    def earlier_pieces(self, exercise_id: str) -> dict[str, str]:
        """What the exercise may lean on, name -> the course's object: every name provided by its
        notebook's set-up and the ones before, and every earlier exercise's name; not its own. Last, the
        exercise's own `checked_with`, over those: what its check puts under a name while it runs.

        Swapped in the learner's namespace while the exercise is checked, in-process (checks/core.py `isolated`)
        and in the grader's kernel alike (each named by its target with every call, resolved by the kernel's
        package: looplab/withheld.py). A value made from an exercise's reference reaches a graded kernel only once
        that exercise is judged, so a `checked_with` value is made from none: it is there whatever the order of
        the notebook's check cells."""
        own = self.exercise(exercise_id)
        pieces: dict[str, str] = {}
        for notebook in self.notebooks:
            pieces.update(notebook.provides)
            for exercise in notebook.exercises:
                if exercise.id == exercise_id:
                    pieces.pop(own.name, None)
                    pieces.update(own.checked_with)
                    return pieces
                pieces[exercise.name] = exercise.reference
        raise KeyError(exercise_id)


COURSE = Course(
    # Oldest first; the last is the current one. Adding an exercise to a published course: append a
    # version here and give the exercise since="<that version>" (docs/WRITING_NOTEBOOKS.md).
    versions=("2026.12",),
    notebooks=(
        Notebook(
            "01_one_tool_call", "One tool call", "looplab.checks.notebook1",
            builds="a safe calculator, its tool definition, one request where the model *asks* for the tool",
            exercises=(
                Exercise("1.1", "calculator", "calculator", 2, "looplab.tools:calculator"),
                Exercise("1.2", "CALCULATOR_TOOL", "CALCULATOR_TOOL", 1, "looplab.tools:CALCULATOR_TOOL"),
                Exercise("1.3", "one_shot", "one_shot", 2, "looplab.loop:one_shot"),
            ),
            provides={"MODEL": "looplab.client:MODEL", "TOOLS": "looplab.tools:TOOLS",
                      "run_tool": "looplab.tools:run_tool"},
        ),
        Notebook(
            "02_closing_the_loop", "Closing the loop", "looplab.checks.notebook2",
            builds="the return path: `tool_result`, the loop until the model answers in words, a hard cap",
            exercises=(
                Exercise("2.1", "tool_result", "tool_result", 1, "looplab.loop:tool_result"),
                Exercise("2.2", "agent_turn", "agent_turn", 3, "looplab.loop:agent_turn"),
                Exercise("2.3", "agent_turn", "agent_turn with a hard cap", 2, "looplab.loop:agent_turn"),
            ),
            provides={"SYSTEM_PROMPT": "looplab.loop:SYSTEM_PROMPT"},
        ),
        Notebook(
            "03_matching_ids", "Matching ids", "looplab.checks.notebook3",
            builds="several tool calls in one reply, results matched by id, errors reported back",
            exercises=(
                Exercise("3.1", "run_tools", "run_tools", 2, "looplab.loop:run_tools"),
                Exercise("3.2", "unanswered_tool_uses", "unanswered_tool_uses", 2, "looplab.loop:unanswered_tool_uses"),
                Exercise("3.3", "agent_turn", "agent_turn, parallel calls", 3, "looplab.loop:agent_turn"),
            ),
        ),
        Notebook(
            "04_your_agent", "Your agent", "looplab.checks.notebook4",
            builds="the whole agent as a program you run from a terminal",
            exercises=(
                Exercise("4.1", "run", "run", 4, "looplab.loop:run"),
            ),
        ),
        Notebook(
            "05_toolbox", "A toolbox", "looplab.checks.notebook5",
            builds="a registry of tools, dispatch by name, the model choosing among tools (or made to, with "
                   "`tool_choice`); the registry served over MCP",
            exercises=(
                Exercise("5.1", "TOOL_REGISTRY", "TOOL_REGISTRY", 2, "looplab.toolbox:TOOL_REGISTRY"),
                Exercise("5.2", "tool_definitions", "tool_definitions", 2, "looplab.toolbox:tool_definitions"),
                # While 5.3 is checked, TOOL_REGISTRY holds two tools more (looplab/toolbox.py): one added after
                # run_tool was defined, one that raises KeyError inside.
                Exercise("5.3", "run_tool", "run_tool, dispatch by name", 2, "looplab.toolbox:run_tool",
                         checked_with={"TOOL_REGISTRY": "looplab.toolbox:CHECKED_REGISTRY"}),
                Exercise("5.4", "FORCE_WEATHER", "FORCE_WEATHER, a tool_choice", 1, "looplab.toolbox:FORCE_WEATHER"),
                Exercise("5.5", "agent_turn", "agent_turn with a toolbox", 3, "looplab.toolbox:agent_turn"),
            ),
            # TOOLS is derived in the notebook from the learner's registry; while 5.5 is checked it is the course's.
            provides={"TOOLS": "looplab.toolbox:TOOLS"},
            references="looplab.toolbox",
        ),
        Notebook(
            "06_when_calls_go_wrong", "When calls go wrong", "looplab.checks.notebook6",
            builds="a harness that survives bad tool calls: error results the model reads, a guard against repeats",
            references="looplab.robust",
            exercises=(  # checked with the registry of looplab/robust.py: its tools and those that fail on purpose
                Exercise("6.1", "run_tool", "run_tool, every failure", 3, "looplab.robust:run_tool",
                         checked_with={"TOOL_REGISTRY": "looplab.robust:CHECKED_REGISTRY"}),
                Exercise("6.2", "agent_turn", "agent_turn, flagging only failures", 3, "looplab.robust:agent_turn",
                         checked_with={"TOOL_REGISTRY": "looplab.robust:CHECKED_REGISTRY"}),
                Exercise("6.3", "agent_turn", "agent_turn with a repeat guard", 2, "looplab.robust:agent_turn",
                         checked_with={"TOOL_REGISTRY": "looplab.robust:CHECKED_REGISTRY"}),
            ),
            provides={"TOOLS": "looplab.robust:TOOLS"},
        ),
        Notebook(
            "07_knowledge_tools", "Knowledge tools", "looplab.checks.notebook7",
            builds="two tools over a corpus the model never saw: exact-word search, the model refining its query, "
                   "and retrieval by meaning with vectors; when each one wins",
            references="looplab.knowledge",
            exercises=(  # each checked on a corpus of its own (looplab/knowledge.py: CHECKED_CORPUS, CHECKED_STORE)
                Exercise("7.1", "search", "search, exact words", 2, "looplab.knowledge:search",
                         checked_with={"CORPUS": "looplab.knowledge:CHECKED_CORPUS"}),
                Exercise("7.2", "cosine_similarity", "cosine_similarity", 1, "looplab.knowledge:cosine_similarity"),
                Exercise("7.3", "nearest", "nearest, the closest vectors", 2, "looplab.knowledge:nearest"),
                Exercise("7.4", "retrieve", "retrieve, or nothing relevant", 1, "looplab.knowledge:retrieve",
                         checked_with={"STORE": "looplab.knowledge:CHECKED_STORE"}),
                Exercise("7.5", "TOOL_REGISTRY", "TOOL_REGISTRY, knowledge tools", 2,
                         "looplab.knowledge:TOOL_REGISTRY",
                         checked_with={"CORPUS": "looplab.knowledge:CHECKED_CORPUS",
                                       "STORE": "looplab.knowledge:CHECKED_STORE"}),
            ),
            provides={"CORPUS": "looplab.knowledge:CORPUS", "embed": "looplab.knowledge:embed"},
        ),
        Notebook(
            "08_context_compaction", "Context compaction", "looplab.checks.notebook8",
            builds="an agent that measures its history, and past a budget folds its old exchanges into a summary "
                   "made by one model call, cutting only between exchanges, between turns",
            references="looplab.compaction",
            exercises=(
                Exercise("8.1", "render_message", "render_message, a message as text", 2,
                         "looplab.compaction:render_message"),
                Exercise("8.2", "exchange_starts", "exchange_starts, where to cut", 1,
                         "looplab.compaction:exchange_starts"),
                Exercise("8.3", "compact", "compact, the old exchanges folded", 3, "looplab.compaction:compact"),
                Exercise("8.4", "run", "run, compacting between turns", 2, "looplab.compaction:run"),
            ),
            provides={"agent_turn": "looplab.robust:agent_turn", "KEEP_RECENT": "looplab.compaction:KEEP_RECENT",
                      "CONTEXT_LIMIT": "looplab.compaction:CONTEXT_LIMIT",
                      "SUMMARY_PROMPT": "looplab.compaction:SUMMARY_PROMPT",
                      "ACKNOWLEDGEMENT": "looplab.compaction:ACKNOWLEDGEMENT", "part": "looplab.compaction:part"},
        ),
        Notebook(
            "09_subagent", "A subagent as a tool", "looplab.checks.notebook9",
            builds="a research tool whose function is another agent loop, with its own prompt, tools and fresh "
                   "history: the parent sees one call and one paragraph",
            references="looplab.subagent",
            exercises=(
                Exercise("9.1", "run_tool", "run_tool, over the registry it is handed", 2,
                         "looplab.subagent:run_tool"),
                Exercise("9.2", "agent_turn", "agent_turn, for any agent", 2, "looplab.subagent:agent_turn"),
                Exercise("9.3", "research", "research, the subagent", 2, "looplab.subagent:research"),
                Exercise("9.4", "run", "run, the parent with its subagent", 2, "looplab.subagent:run"),
            ),
            provides={"SYSTEM_PROMPT": "looplab.subagent:SYSTEM_PROMPT",
                      "RESEARCHER_PROMPT": "looplab.subagent:RESEARCHER_PROMPT",
                      "RESEARCHER_REGISTRY": "looplab.subagent:RESEARCHER_REGISTRY",
                      "PARENT_REGISTRY": "looplab.subagent:PARENT_REGISTRY",
                      "RESEARCH_SCHEMA": "looplab.subagent:RESEARCH_SCHEMA"},
        ),
        Notebook(
            "10_evals_and_tracing", "Evals and tracing", "looplab.checks.notebook10",
            builds="a trace of every model call, the subagent's tagged, with its tokens and cost; expectations over "
                   "scripted conversations and a harness that grades each case from a fresh history",
            references="looplab.evals",
            exercises=(
                Exercise("10.1", "cost_of", "cost_of, tokens into dollars", 1, "looplab.evals:cost_of"),
                Exercise("10.2", "agent_turn", "agent_turn, traced", 3, "looplab.evals:agent_turn"),
                Exercise("10.3", "expect_tool_call", "expect_tool_call", 1, "looplab.evals:expect_tool_call"),
                Exercise("10.4", "expect_no_tool_calls", "expect_no_tool_calls", 1,
                         "looplab.evals:expect_no_tool_calls"),
                Exercise("10.5", "expect_reply_contains", "expect_reply_contains", 1,
                         "looplab.evals:expect_reply_contains"),
                Exercise("10.6", "run_evals", "run_evals, a fresh history per case", 2, "looplab.evals:run_evals"),
            ),
            provides={"PRICE_INPUT": "looplab.evals:PRICE_INPUT", "PRICE_OUTPUT": "looplab.evals:PRICE_OUTPUT",
                      "run_tool": "looplab.subagent:run_tool", "research": "looplab.evals:research",
                      "build_registry": "looplab.evals:build_registry"},
        ),
        Notebook(
            "11_capstone", "The capstone", "looplab.checks.notebook11",
            builds="the whole agent in one program: the research subagent, the calculator, compaction between turns "
                   "with its summary call traced, every call's cost, and a scripted demo",
            references="looplab.capstone",
            exercises=(
                Exercise("11.1", "compact", "compact, traced", 2, "looplab.capstone:compact"),
                Exercise("11.2", "run", "run, the whole agent", 3, "looplab.capstone:run"),
            ),
            provides={"SUMMARY_MAX_TOKENS": "looplab.compaction:SUMMARY_MAX_TOKENS",
                      "history_size": "looplab.compaction:history_size"},
        ),
    ),
)


# Where a notebook and its cells say where they belong in the course: their metadata under "looplab".
# A notebook: {"looplab": {"course_version": ...}}, the course version it was made with (the generator stamps
# every learner notebook; solution notebooks carry it too; the grader reads it). An exercise cell:
# {"looplab": {"exercise": "2.1"}}, the exercise it holds.
METADATA_KEY = "looplab"
VERSION_KEY = "course_version"
EXERCISE_KEY = "exercise"


def looplab_metadata(node) -> dict:
    """A notebook's or a cell's looplab metadata; {} when it has none. Read defensively: a submitted
    notebook's metadata can hold anything."""
    found = (node.get("metadata") or {}).get(METADATA_KEY)
    return found if isinstance(found, dict) else {}


def made_with(notebook) -> str | None:
    """The course version a notebook says it was made with, or None when it says none."""
    version = looplab_metadata(notebook).get(VERSION_KEY)
    return version if isinstance(version, str) and version else None


def exercise_number(cell) -> str | None:
    """The exercise a cell says it holds (`{"looplab": {"exercise": "2.1"}}`), as text; None for any other cell."""
    number = looplab_metadata(cell).get(EXERCISE_KEY)
    return str(number) if number is not None else None


def stamp_version(notebook, version: str) -> None:
    """Write into the notebook's metadata that it was made with this course version."""
    notebook.metadata.setdefault(METADATA_KEY, {})[VERSION_KEY] = version


def _course_in_use() -> Course:
    """This course, unless LOOPLAB_COURSE names another one as "module:attribute".

    The seam a fork of the course, or a test that adds a notebook, uses to extend the course
    without editing this file: its module imports COURSE from here (defined above, so the
    import works while this module is still loading) and builds a new Course from it.
    """
    import os

    target = os.environ.get("LOOPLAB_COURSE")
    if not target:
        return COURSE
    course = resolve(target)
    if not isinstance(course, Course):
        raise TypeError(f"LOOPLAB_COURSE={target!r} is a {type(course).__name__}, not a looplab.course.Course")
    return course


COURSE = _course_in_use()
