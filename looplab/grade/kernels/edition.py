"""The graded edition: the package a kernel the grader runs imports, holding none of the course's answers.

Why: the package ships the course's own version of every exercise, so that each notebook stands on the ones
before it, and a kernel that holds them can hand one in (`from looplab.toolbox import agent_turn` as 2.2, or
any of the many paths to an object in the same process). nbgrader's release holds no solutions; this is the
same idea for a course whose notebooks lean on earlier answers. Once per grader run, `build` writes a copy of
the package into the grader's temporary folder, and every kernel imports it in place of the real one: in a
bubblewrap sandbox it is bound at the package's own path (sandbox.py), without one it comes first on the
kernel's path (runner.py). What differs from the package, following shared/withholding.py's plan:
- each reference module (looplab.tools, looplab.loop, one per later notebook): every function that is an
  exercise's reference keeps its signature (its defaults are read here, in the notebook's language) and its
  docstring, and its body becomes one call, `withheld.call(target, ...)`, which the grader runs
  (judgement/course_line.py); its private helpers that only those used (the calculator's parser) are gone;
  every value left out is gone from its module, whose `__getattr__` asks the grader for it (looplab/withheld.py);
- looplab/checks holds no check (its scenarios and its checkers' helpers are the course's code too): `check`,
  `hint` and `progress` say that the grader checks this notebook (looplab/graded_checks.py);
- looplab/recordings is not there (the requests the course's own code sent, answers included): an offline
  client replays through the grader;
- looplab/grade holds only what the kernel template runs (shared/, kernels/), its `__init__` nothing.
Everything else is the package's own file, copied with its date, so the compiled files copied beside it stay
valid; the rewritten modules are compiled here.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import os
import py_compile
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

from ..shared.withholding import ModulePlan, WithholdingError, defines, plan

PACKAGE = "looplab"
COURSE_VARIABLE = "LOOPLAB_COURSE"  # looplab/course.py: a course module extending the package's (tests, a fork)
WITHHELD = "_looplab_withheld"  # the name the rewritten modules know looplab/withheld.py by
LEFT_OUT = ("recordings", "checks", "grade")  # folders not copied as they are (below: what takes their place)
GRADE_KEPT = ("shared", "kernels")  # what the kernel template runs of the grader
CHECKS_INIT = '''"""The graded edition's looplab.checks: no check here, the grader checks this notebook (looplab/graded_checks.py)."""

from ..graded_checks import check, hint, progress  # noqa: F401
'''
GRADE_INIT = '''"""The graded edition's looplab.grade: only what a kernel template runs (kernels/, shared/); the grader is elsewhere."""
'''


def package_folder() -> Path:
    """The real package's folder (what the edition stands in for, and where a sandbox binds it)."""
    return Path(importlib.import_module(PACKAGE).__file__).resolve().parent


@dataclass(frozen=True)
class Edition:
    """Where `build` wrote the graded edition: the package (bound over the real one in a sandbox), and the folder of
    a course's own modules outside the package (first on every kernel's path)."""

    package: Path  # .../package/looplab
    modules: Path  # .../modules

    def path(self, sandboxed: bool) -> list[str]:
        """The folders a kernel's PYTHONPATH starts with: in a sandbox the package is where the real one was (its
        messages name the course's own paths); without one, its folder comes first on the path."""
        return [str(self.modules)] + ([] if sandboxed else [str(self.package.parent)])


def build(folder: Path) -> Edition:
    """Write the graded edition into `folder` and compile it. Raises WithholdingError (shared/withholding.py)."""
    withholding = plan()
    edition = Edition(Path(folder) / "package" / PACKAGE, Path(folder) / "modules")
    source = package_folder()
    edition.modules.mkdir(parents=True, exist_ok=True)
    _copy(source, edition.package, LEFT_OUT)
    for kept in GRADE_KEPT:
        _copy(source / "grade" / kept, edition.package / "grade" / kept, ())
    _write(edition.package / "grade" / "__init__.py", GRADE_INIT)
    _write(edition.package / "checks" / "__init__.py", CHECKS_INIT)
    for name, module_plan in withholding.modules.items():
        root = edition.package.parent if name.startswith(f"{PACKAGE}.") else edition.modules
        _write(root / _file_of(name), rewritten(inspect.getsource(importlib.import_module(name)), module_plan))
        for package in list(Path(_file_of(name)).parents)[:-1]:  # a dotted module outside the package: its packages
            if not (root / package / "__init__.py").exists():
                _write(root / package / "__init__.py", "")
    for name in _course_modules_outside(withholding.modules):
        # A course extended outside the package (LOOPLAB_COURSE, a fork's manifest): the kernel imports it too.
        _write(edition.modules / _file_of(name), inspect.getsource(importlib.import_module(name)))
    return edition


def _course_modules_outside(rewritten: dict) -> list[str]:
    """The course module LOOPLAB_COURSE names, when outside the package, and the modules of its own it imports
    (not the reference modules, which the edition rewrites, nor the checks modules, which it holds none of)."""
    from ...course import COURSE

    course = os.environ.get(COURSE_VARIABLE, "").split(":")[0]
    if not course or course.startswith(f"{PACKAGE}."):
        return []
    checks = {notebook.checks for notebook in COURSE.notebooks}
    home = Path(inspect.getfile(importlib.import_module(course))).resolve().parent
    found, pending = [], [course]
    while pending:
        name = pending.pop()
        if name in found or name in rewritten or name in checks or name.split(".")[0] == PACKAGE:
            continue
        try:
            module = importlib.import_module(name)
            file = Path(inspect.getfile(module)).resolve()
        except (ImportError, TypeError):
            continue
        if not file.is_relative_to(home):
            continue  # the standard library, an installed package: the kernel has them
        found.append(name)
        tree = ast.parse(inspect.getsource(module))
        pending += [alias.name for node in tree.body if isinstance(node, ast.Import) for alias in node.names]
        pending += [node.module for node in tree.body if isinstance(node, ast.ImportFrom) and node.level == 0
                    and node.module]
    return found


def _file_of(module: str) -> Path:
    """A module's file in the edition's folder, by its name ("looplab.loop" -> looplab/loop.py)."""
    return Path(*module.split(".")).with_suffix(".py")


def outside_the_package() -> list[Path]:
    """The folders holding a module the edition replaces outside the package (a fork's reference module, its
    manifest): what a sandbox must not show, since the edition's copy is what the kernel gets."""
    modules = [name for name in plan().modules if not name.startswith(f"{PACKAGE}.")]
    modules += _course_modules_outside(plan().modules)
    return [Path(inspect.getfile(importlib.import_module(name))).resolve().parent for name in modules]


def _copy(source: Path, target: Path, left_out: tuple[str, ...]) -> None:
    """A folder's Python files and catalogues, with their dates, and the compiled files of this interpreter."""
    tag = sys.implementation.cache_tag

    def ignored(folder: str, names: list[str]) -> set[str]:
        here = Path(folder)
        skip = {name for name in names if here == source and name in left_out}
        if here.name == "__pycache__":
            skip |= {name for name in names if f".{tag}." not in name}
        return skip

    shutil.copytree(source, target, ignore=ignored, dirs_exist_ok=True)


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    py_compile.compile(str(path), doraise=True)


def rewritten(source: str, module: ModulePlan) -> str:
    """A reference module's source as the graded edition holds it: stand-ins, values left out (module docstring)."""
    tree = ast.parse(source)
    body: list[ast.stmt] = []
    for statement in tree.body:
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)) and statement.name in module.stand_ins:
            body.append(_stand_in(statement, module.stand_ins[statement.name]))
        elif isinstance(statement, ast.ImportFrom):
            statement.names = [alias for alias in statement.names if (alias.asname or alias.name) not in module.left_out]
            if statement.names:
                body.append(statement)
        elif isinstance(statement, (ast.Assign, ast.AnnAssign)) and defines(statement) & set(module.left_out):
            continue
        elif defines(statement) & module.helpers:
            continue
        elif isinstance(statement, (ast.FunctionDef, ast.Assign)) and "__getattr__" in defines(statement):
            raise WithholdingError(f"{module.name} defines __getattr__, which the graded edition needs")
        else:
            body.append(statement)
    first = _after_the_preamble(body)
    body.insert(first, ast.ImportFrom(module=None, names=[ast.alias("withheld", WITHHELD)], level=1))
    if module.left_out:
        body.append(ast.Assign(targets=[ast.Name("__getattr__", ast.Store())], value=ast.Call(
            func=ast.Attribute(ast.Name(WITHHELD, ast.Load()), "left_out", ast.Load()),
            args=[ast.Name("__name__", ast.Load()), ast.Constant(dict(module.left_out))], keywords=[])))
    tree.body = body
    edition_note = f"# The graded edition of {module.name} (looplab/grade/kernels/edition.py): no answers here.\n"
    return edition_note + ast.unparse(ast.fix_missing_locations(tree)) + "\n"


def _after_the_preamble(body: list[ast.stmt]) -> int:
    """Where the withheld import goes: after the docstring and `from __future__` imports."""
    index = 0
    while index < len(body) and (
            (isinstance(body[index], ast.Expr) and isinstance(body[index].value, ast.Constant)) or
            (isinstance(body[index], ast.ImportFrom) and body[index].module == "__future__")):
        index += 1
    return index


def _stand_in(function: ast.FunctionDef, target: str) -> ast.FunctionDef:
    """The function with its signature and docstring, its body one call: `withheld.call(target, positional, named)`."""
    if function.decorator_list:
        raise WithholdingError(f"{target} is decorated: the graded edition's stand-in would not be the same function")
    arguments = function.args
    positional: list[ast.expr] = [ast.Name(arg.arg, ast.Load()) for arg in arguments.posonlyargs]
    if arguments.vararg is not None:
        positional.append(ast.Starred(ast.Name(arguments.vararg.arg, ast.Load()), ast.Load()))
    named = arguments.args + arguments.kwonlyargs
    keys: list[ast.expr | None] = [ast.Constant(arg.arg) for arg in named]
    values: list[ast.expr] = [ast.Name(arg.arg, ast.Load()) for arg in named]
    if arguments.kwarg is not None:
        keys.append(None)
        values.append(ast.Name(arguments.kwarg.arg, ast.Load()))
    call = ast.Call(func=ast.Attribute(ast.Name(WITHHELD, ast.Load()), "call", ast.Load()),
                    args=[ast.Constant(target), ast.Tuple(positional, ast.Load()), ast.Dict(keys, values)], keywords=[])
    docstring = ast.get_docstring(function, clean=False)
    body: list[ast.stmt] = [ast.Expr(ast.Constant(docstring))] if docstring else []
    function.body = body + [ast.Return(call)]
    return function
