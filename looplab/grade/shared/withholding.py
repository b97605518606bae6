"""What a kernel the grader runs must not hold: the course's version of every exercise, and what is made of one.

The package ships the course's own version of each exercise (`Exercise.reference`), so that every notebook
stands on the ones before it. A kernel that holds them hands a learner full points for one import, and no
reading of the learner's source can close every path to an object in the same process (issue 33). So the
grader runs every notebook on the package's *graded edition* (kernels/edition.py), where they are not:
- a **function** that is an exercise's reference (`looplab.loop:agent_turn`, `looplab.tools:calculator`...)
  is a stand-in whose calls the grader runs in its own process (looplab/withheld.py; judgement/course_line.py),
  and refuses while an exercise is judged that may not lean on it;
- a **value** that is an exercise's reference (`CALCULATOR_TOOL`, `TOOL_REGISTRY`, `FORCE_WEATHER`), every
  value of the course made from one (`TOOLS = [CALCULATOR_TOOL]`, an alias imported by another module), and
  the data of its own module it is made of (the schemas notebook 5's registry is written from) is left out and
  handed over on first use once every exercise of the notebook it answers has been judged.

This module reads that plan off the course's reference modules' source (the manifest's modules: looplab.tools,
looplab.loop, one module per later notebook), statement by statement, once per process: which names are
stand-ins, which are handed over later and which exercises' judgement each waits for. Anything it cannot place
(a kept function whose body reads a value that is left out, a value changed after it is made) is a
`WithholdingError` naming the module and the line: the edition would break or leak, so it is never written.

tests/test_withholding.py holds the plan to what the checks do: every object of the reference modules is
played against every exercise's check, and each one that passes is withheld here for that exercise.
"""

from __future__ import annotations

import ast
import importlib
import inspect
from dataclasses import dataclass, field
from typing import Any

from ...course import COURSE, SHARED_REFERENCES, Course, resolve


class WithholdingError(Exception):
    """The reference modules hold something the graded edition cannot keep out safely (the message says where)."""


@dataclass
class ModulePlan:
    """One reference module in the graded edition: its functions that are stand-ins, its names left out."""

    name: str  # "looplab.loop"
    stand_ins: dict[str, str] = field(default_factory=dict)  # local name -> the course function's target
    left_out: dict[str, str] = field(default_factory=dict)  # local name -> the value's target (where it is made)
    # Its private helpers only the stand-ins' functions used (the calculator's parser, its walk of the tree): the
    # course's code of an exercise all the same, so left out with it.
    helpers: set[str] = field(default_factory=set)


@dataclass
class Withholding:
    """The plan for the whole course: per module, and per value left out, the reference values it is made from."""

    modules: dict[str, ModulePlan]
    functions: dict[str, Any]  # a course function's target -> the function (every callable exercise reference)
    values: dict[str, set[str]]  # a value left out, by target -> the targets of the exercise references it is made of

    def answered_by(self, value: str, course: Course = COURSE) -> set[str]:
        """The exercises (ids) whose judgement a value left out waits for: those its references answer."""
        roots = self.values.get(value, set())
        return {exercise.id for exercise in course.exercises if _target(resolve(exercise.reference)) in roots}


def reference_modules(course: Course = COURSE) -> list[str]:
    """Every module holding references, each after the ones it imports from (looplab.tools before looplab.loop)."""
    named = list(dict.fromkeys(list(SHARED_REFERENCES) + [n.references for n in course.notebooks if n.references]))
    imports = {name: _imported_from(name) & set(named) for name in named}
    ordered: list[str] = []
    while len(ordered) < len(named):
        ready = [name for name in named if name not in ordered and imports[name] <= set(ordered)]
        if not ready:
            raise WithholdingError(f"the reference modules import each other in a circle: {', '.join(named)}")
        ordered.append(ready[0])
    return ordered


def _imported_from(name: str) -> set[str]:
    """The modules a module imports names from (`from .tools import ...`, `from looplab.loop import ...`)."""
    tree = ast.parse(inspect.getsource(importlib.import_module(name)))
    return {found for node in tree.body if (found := _source_module(node, name)) is not None}


def _source_module(node: ast.stmt, importer: str) -> str | None:
    """The module a `from ... import` at the top of `importer` reads from, by its full name; None for another statement."""
    if not isinstance(node, ast.ImportFrom) or not node.module:
        return None
    if node.level == 0:
        return node.module
    package = importer.rsplit(".", node.level)[0] if importer.count(".") >= node.level else ""
    return f"{package}.{node.module}" if package else None


def _target(obj: Any) -> str | None:
    """Where a course function or value is made, "module:name" (a function's own; a value by where it is bound first)."""
    if inspect.isfunction(obj) and (obj.__module__.startswith("looplab") or obj.__module__ in _COURSE_MODULES):
        return f"{obj.__module__}:{obj.__qualname__}"
    return _VALUE_TARGETS.get(id(obj))


_COURSE_MODULES: set[str] = set()  # the reference modules outside the package (a fork's own), once plan() has read them


_VALUE_TARGETS: dict[int, str] = {}  # id(value) -> its target, for the values of the reference modules (plan())


def target_of(obj: Any) -> str | None:
    """The target by which the course names one of its functions or reference-module values; None for another object."""
    plan()
    return _target(obj)


_PLANS: dict[int, Withholding] = {}  # id(course) -> its plan


def plan(course: Course = COURSE) -> Withholding:
    """The graded edition's plan for this course (read once per process)."""
    if id(course) not in _PLANS:
        _PLANS[id(course)] = _made(course)
    return _PLANS[id(course)]


def _made(course: Course) -> Withholding:
    modules = reference_modules(course)
    _COURSE_MODULES.update(modules)
    for name in modules:  # where each value is first bound: its target
        for attribute, value in vars(importlib.import_module(name)).items():
            if not attribute.startswith("__") and isinstance(value, (dict, list)):
                _VALUE_TARGETS.setdefault(id(value), f"{name}:{attribute}")
    references = [resolve(exercise.reference) for exercise in course.exercises]
    functions = {_target(obj): obj for obj in references if callable(obj)}
    roots = {_target(obj) for obj in references if not callable(obj)}
    if None in functions or None in roots:
        raise WithholdingError("an exercise's reference is not a function or a value of the reference modules "
                               f"({', '.join(modules)})")
    values: dict[str, set[str]] = {root: {root} for root in roots}
    plans = {name: _module_plan(name, functions, values) for name in modules}
    return Withholding(plans, functions, values)


def _module_plan(name: str, functions: dict[str, Any], values: dict[str, set[str]]) -> ModulePlan:
    """Read one module's top-level statements in order: which names are stand-ins, which are left out; then make
    sure that nothing the edition keeps as it is reads a name left out."""
    module = importlib.import_module(name)
    tree = ast.parse(inspect.getsource(module))
    found = ModulePlan(name)
    kept: list[ast.stmt] = []
    for statement in tree.body:
        where = f"{name}, line {statement.lineno}"
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)) and f"{name}:{statement.name}" in functions:
            found.stand_ins[statement.name] = f"{name}:{statement.name}"
        elif (source := _source_module(statement, name)) is not None:
            for alias in statement.names:
                if f"{source}:{alias.name}" in values:
                    found.left_out[alias.asname or alias.name] = f"{source}:{alias.name}"
        elif isinstance(statement, (ast.Assign, ast.AnnAssign)) and _left_out(statement, name, found, values, where):
            kept = _parts_left_out(statement, name, found, values, kept)
        else:
            kept.append(statement)
    found.helpers = _helpers_only(kept)
    for statement in kept:
        if defines(statement) & found.helpers:
            continue
        read = (_read(statement) | _bound(statement)) & set(found.left_out)
        if read:
            raise WithholdingError(f"{name}, line {statement.lineno}: kept in the graded edition, it uses "
                                   f"{', '.join(sorted(read))}, which is left out until an exercise is judged: make "
                                   "it an exercise's reference, or do without that value")
        called = _called_on_import(statement) & set(found.stand_ins)
        if called:
            raise WithholdingError(f"{name}, line {statement.lineno}: kept in the graded edition, it calls "
                                   f"{', '.join(sorted(called))} when the module is imported, and a stand-in answers "
                                   "only under the grader: make the value inside a function, or do without it")
    return found


def _left_out(statement: ast.Assign | ast.AnnAssign, name: str, found: ModulePlan, values: dict[str, set[str]],
              where: str) -> bool:
    """Is this assignment a value left out (an exercise's reference, or made from a value left out)? Noted if so."""
    targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
    names = [node.id for each in targets for node in ast.walk(each) if isinstance(node, ast.Name)]
    read = _read(statement.value) if statement.value is not None else set()
    roots = set().union(*(values[found.left_out[each]] for each in read if each in found.left_out))
    own = [f"{name}:{each}" for each in names if f"{name}:{each}" in values]
    if not (roots or own):
        return False
    if len(targets) != 1 or not isinstance(targets[0], ast.Name):
        raise WithholdingError(f"{where}: a value left out of the graded edition must be bound alone (`NAME = ...`)")
    target = f"{name}:{names[0]}"
    values[target] = values.get(target, set()) | roots
    found.left_out[names[0]] = target
    return True


def defines(statement: ast.stmt) -> set[str]:
    """The names a top-level definition binds (a function, a class, an assignment's targets)."""
    if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {statement.name}
    if isinstance(statement, (ast.Assign, ast.AnnAssign)):
        targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
        return {node.id for each in targets for node in ast.walk(each) if isinstance(node, ast.Name)}
    return set()


def _helpers_only(kept: list[ast.stmt]) -> set[str]:
    """The private names (`_parse`) defined here that nothing the edition keeps reads, directly or through another."""
    private = {name for statement in kept for name in defines(statement)
               if name.startswith("_") and not name.startswith("__")}
    used: set[str] = set()
    pending = [statement for statement in kept if not defines(statement) & private]
    while pending:
        read = _read(pending.pop()) & private - used
        used |= read
        pending += [statement for statement in kept if defines(statement) & read]
    return private - used


def _parts_left_out(statement: ast.Assign | ast.AnnAssign, name: str, found: ModulePlan, values: dict[str, set[str]],
                    kept: list[ast.stmt]) -> list[ast.stmt]:
    """An exercise's reference value made of this module's own data (notebook 5's registry of the schemas written
    above it): that data is the answer too, left out with it. The statements still kept are returned."""
    target = f"{name}:{defines(statement).pop()}" if defines(statement) else None
    if target is None or target not in values or target not in values[target]:
        return kept  # not an exercise's reference itself: what it is made of stays (CALCULATOR_TOOL in TOOLS)
    parts = _read(statement.value) if statement.value is not None else set()
    remaining = []
    for earlier in kept:
        bound = defines(earlier) if isinstance(earlier, (ast.Assign, ast.AnnAssign)) else set()
        if len(bound) == 1 and bound & parts and isinstance(earlier.value, (ast.Dict, ast.List, ast.Tuple)):
            part = bound.pop()
            found.left_out[part] = f"{name}:{part}"
            values[f"{name}:{part}"] = {target}
        else:
            remaining.append(earlier)
    return remaining


def _called_on_import(statement: ast.stmt) -> set[str]:
    """The names a top-level statement calls as it runs (a function's or a lambda's body runs later, if ever)."""
    if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return set()  # a class body runs on import, but the reference modules' classes call no exercise there
    pending, called = [statement], set()
    while pending:
        node = pending.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            continue
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            called.add(node.func.id)
        pending.extend(ast.iter_child_nodes(node))
    return called


def _bound(statement: ast.stmt) -> set[str]:
    return {each.id for each in ast.walk(statement) if isinstance(each, ast.Name) and isinstance(each.ctx, ast.Store)}


def _read(node: ast.AST) -> set[str]:
    return {each.id for each in ast.walk(node) if isinstance(each, ast.Name) and isinstance(each.ctx, ast.Load)}
