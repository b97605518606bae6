"""Where a name's value came from, read from the notebook's cells without running them.

Exercise 1.1 asks for a calculator that never runs the model's text as code, and a calculator that reaches
`eval` may well give every right answer: only its source tells. Under the grader the learner's objects
live in a kernel that the learner's code controls, so the source is read from the notebook file, outside
it. `reaches(cells, name, targets)` follows the cells in the order they ran and says whether `name` was
last bound by a statement that reaches one of `targets` (dotted paths: `builtins.eval`), directly or
through names bound that way before it. (The course's own code needs no such reading under the grader:
a graded kernel does not hold it, looplab/withheld.py.)

It follows the paths the source spells out, however they are written:
    loop.agent_turn                      an attribute of a module the notebook imported
    from looplab import loop as l; x = l an alias, a module kept in a name
    getattr(loop, "agent_" + "turn")     getattr with a string glued from literals
    vars(loop)["run"], loop.__dict__[…]  a module's namespace
    importlib.import_module("looplab…")  imports by name, __import__, sys.modules[…]
    f.__code__, copy(f), partial(f)      anything built from a value that reaches a target
    exec(source_of(f), namespace)        a namespace an exec filled with what reaches a target
What the source does not spell out (strings built at run time, objects found through `gc`) it cannot
follow: docs/GRADING.md's "What the grader cannot rule out" says so.

Pure functions on strings, like source.py: the same answer in a learner's notebook (IPython's `In`) and
under the grader (the notebook file).
"""

from __future__ import annotations

import ast
from typing import Iterable, Iterator

from .source import bound_names, parsed

BUILTINS = "builtins"
# Built-in names a path can go through, as the notebook sees them until it binds the name itself.
BUILTIN_NAMES = ("eval", "exec", "compile", "getattr", "vars", "globals", "locals", "__import__", "__builtins__")
# The notebook's own namespace as a dict, and the calls that run code into it when given no other.
NAMESPACES = ("builtins.globals", "builtins.locals", "builtins.vars")
RUNNERS = ("builtins.exec", "builtins.eval")


def reaches(cells: Iterable[str], name: str, targets: Iterable[str]) -> bool:
    """Was `name`, after these cells ran in this order, last bound by code that reaches a target?"""
    reader = _Reader(targets)
    for cell in cells:
        tree = parsed(cell) if isinstance(cell, str) else None
        if tree is not None:
            reader.run(tree.body)
    return reader.holds(name)


def folded(node: ast.AST | None) -> str | None:
    """The string a literal expression always makes: "a", "a" + "b", f"a{'b'}", "".join(["a", "b"])."""
    parts, pending = [], [node]
    while pending:  # a loop, not recursion: "a" + "b" + … may be as long as a cell is
        node = pending.pop()
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            pending += [node.right, node.left]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            parts.append(node.value)
        elif isinstance(node, ast.JoinedStr) and all(isinstance(value, ast.Constant) for value in node.values):
            parts.append("".join(value.value for value in node.values))
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "join"
              and isinstance(node.func.value, ast.Constant) and isinstance(node.func.value.value, str)
              and len(node.args) == 1 and isinstance(node.args[0], (ast.List, ast.Tuple))
              and all(isinstance(part, ast.Constant) and isinstance(part.value, str) for part in node.args[0].elts)):
            parts.append(node.func.value.value.join(part.value for part in node.args[0].elts))
        else:
            return None
    return "".join(parts)


class _Reader:
    """The notebook's names as the cells leave them: which hold a path, which hold what reaches a target."""

    def __init__(self, targets: Iterable[str]):
        self.targets = tuple(targets)
        self.paths: dict[str, str] = {name: f"{BUILTINS}.{name}" for name in BUILTIN_NAMES}
        self.paths["__builtins__"] = BUILTINS
        self.reaching: set[str] = set()
        self.everything = False  # an exec or a globals() write fed with a target: any name may hold it

    def holds(self, name: str) -> bool:
        return self.everything or name in self.reaching or self._is_target(self.paths.get(name))

    # --- statements, in the order they run ---------------------------------------------------------
    def run(self, statements: list[ast.stmt]) -> None:
        for statement in statements:
            self.statement(statement)

    def statement(self, statement: ast.stmt) -> None:
        if isinstance(statement, (ast.If, ast.While, ast.For, ast.AsyncFor, ast.With, ast.AsyncWith, ast.Try,
                                  ast.TryStar, ast.Match)):
            self._compound(statement)
            return
        hit = self.mentions(statement)
        bound = list(self._bound(statement))
        if isinstance(statement, (ast.Import, ast.ImportFrom)):
            self._import(statement)
            hit = hit or any(self._is_target(self.paths.get(name)) for name in bound)
        elif not self._alias(statement):
            for name in bound:
                self.paths.pop(name, None)
        for name in bound:
            self._mark(name, hit)
        if hit and not isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            self.reaching.update(self._changed(statement))
        for name, through in self._namespace_writes(statement):
            if hit and name is not None:
                self.reaching.add(name)
            elif name is None and self.mentions(through):
                self.everything = True

    def _compound(self, statement: ast.stmt) -> None:
        """The lines a compound statement runs, and the names its own header binds (`for x in …`, `with … as x`)."""
        header = [getattr(statement, field) for field in ("iter", "test", "subject") if hasattr(statement, field)]
        header += [item.context_expr for item in getattr(statement, "items", [])]
        hit = any(self.mentions(node) for node in header)
        for target in [getattr(statement, "target", None)] + [item.optional_vars for item in getattr(statement, "items", [])]:
            for node in ast.walk(target) if target is not None else ():
                if isinstance(node, ast.Name):
                    self._mark(node.id, hit)
        for block in ("body", "orelse", "finalbody"):
            self.run(getattr(statement, block, []) or [])
        for handler in getattr(statement, "handlers", []):
            self.run(handler.body)
        for case in getattr(statement, "cases", []):
            self.run(case.body)

    def _mark(self, name: str, hit: bool) -> None:
        (self.reaching.add if hit else self.reaching.discard)(name)

    def _bound(self, statement: ast.stmt) -> Iterator[str]:
        """The names the statement binds; a function also binds what it declares `global`."""
        yield from bound_names([statement])
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for node in ast.walk(statement):
                if isinstance(node, ast.Global):
                    yield from node.names

    @staticmethod
    def _changed(statement: ast.stmt) -> Iterator[str]:
        """Names whose value the statement changes without binding them: `f.__code__ = …`, `ns.update(…)`,
        `exec(…, ns)`, `x += …`: they reach a target if what changed them does, and keep what they held."""
        for node in ast.walk(statement):
            if isinstance(node, (ast.Attribute, ast.Subscript)) and isinstance(node.ctx, ast.Store):
                yield from _root_names(node.value)
            elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
                yield node.target.id
            elif isinstance(node, ast.Call):
                if isinstance(node.func, ast.Attribute):
                    yield from _root_names(node.func.value)
                yield from (argument.id for argument in node.args if isinstance(argument, ast.Name))

    def _import(self, statement: ast.Import | ast.ImportFrom) -> None:
        if isinstance(statement, ast.Import):
            for alias in statement.names:
                if alias.asname:
                    self.paths[alias.asname] = alias.name
                else:
                    top = alias.name.split(".")[0]
                    self.paths[top] = top
            return
        if statement.level or not statement.module:
            return
        for alias in statement.names:
            if alias.name == "*":
                for target in self.targets:
                    module, _, attribute = target.rpartition(".")
                    if module == statement.module and "." not in attribute:
                        self.paths[attribute] = target
            else:
                self.paths[alias.asname or alias.name] = f"{statement.module}.{alias.name}"

    def _alias(self, statement: ast.stmt) -> bool:
        """`l = loop`, `ns = vars(loop)`: the name now holds that path (True). Any other binding forgets one."""
        if not (isinstance(statement, ast.Assign) and len(statement.targets) == 1
                and isinstance(statement.targets[0], ast.Name)):
            return False
        path = self.path(statement.value)
        if path is None:
            return False
        self.paths[statement.targets[0].id] = path
        return True

    def _namespace_writes(self, statement: ast.stmt) -> Iterator[tuple[str | None, ast.AST]]:
        """Names the statement binds through the namespace itself, and what it writes there:
        `globals()["x"] = …` binds x; `globals().update(…)`, `exec(…)` into the notebook's namespace may bind
        any name (None), with what their arguments hold."""
        for node in ast.walk(statement):
            if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Store) and self._is_namespace(node.value):
                yield folded(node.slice), node
            elif isinstance(node, ast.Call):
                arguments = ast.Tuple([*node.args, *(keyword.value for keyword in node.keywords)], ast.Load())
                if isinstance(node.func, ast.Attribute) and self._is_namespace(node.func.value):
                    yield None, arguments
                elif self.path(node.func) in RUNNERS and (
                        (len(node.args) < 2 and not node.keywords) or any(map(self._is_namespace, node.args[1:]))):
                    yield None, ast.Tuple(node.args[:1], ast.Load())  # exec(code) or exec(code, globals())

    def _is_namespace(self, node: ast.AST) -> bool:
        """`globals()`, `locals()`, `vars()`: the notebook's own names as a dict."""
        return isinstance(node, ast.Call) and not node.args and self.path(node.func) in NAMESPACES

    # --- expressions ---------------------------------------------------------------------------------
    def mentions(self, node: ast.AST) -> bool:
        """Does the code reach a target, or read a name that holds what reaches one?

        Inside a function or lambda, its own parameters and locals are not the notebook's names of the
        same spelling. A loop over the tree, not recursion: a cell may nest as deep as Python allows."""
        pending: list[tuple[ast.AST, frozenset[str]]] = [(node, frozenset())]
        while pending:
            child, local = pending.pop()
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                local = local | _locals_of(child)
            if self._hit(child, local):
                return True
            pending += [(grandchild, local) for grandchild in ast.iter_child_nodes(child)]
        return False

    def _hit(self, node: ast.AST, local: frozenset[str]) -> bool:
        if isinstance(node, ast.Name):
            if node.id in local:
                return False
            if isinstance(node.ctx, ast.Load) and node.id in self.reaching:
                return True
        if isinstance(node, (ast.Name, ast.Attribute, ast.Subscript, ast.Call)):
            return self._is_target(self.path(node, local))
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            module = getattr(node, "module", None)
            return any(self._is_target(f"{module}.{alias.name}" if module else alias.name) for alias in node.names)
        return False

    def path(self, node: ast.AST, local: frozenset[str] = frozenset()) -> str | None:
        """The dotted path an expression spells, or None: `loop.agent_turn` -> "looplab.loop.agent_turn"."""
        steps: list[tuple[bool, str]] = []  # (an item, not an attribute; its name), innermost last
        while isinstance(node, (ast.Attribute, ast.Subscript)):
            if isinstance(node, ast.Attribute):
                if node.attr != "__dict__":  # a namespace is its module: loop.__dict__["run"] is loop.run
                    steps.append((False, node.attr))
            else:
                key = folded(node.slice)
                if key is None:
                    return None
                steps.append((True, key))
            node = node.value
        if isinstance(node, ast.Name):
            base = None if node.id in local else self.paths.get(node.id)
        elif isinstance(node, ast.Call):
            base = self._called(node, local)
        else:
            base = None
        for is_item, name in reversed(steps):
            if base is None:
                return None
            base = name if is_item and base == "sys.modules" else f"{base}.{name}"
        return base

    def _called(self, call: ast.Call, local: frozenset[str]) -> str | None:
        function = self.path(call.func, local)
        first = call.args[0] if call.args else None
        if function == f"{BUILTINS}.getattr" and len(call.args) >= 2:
            base, key = self.path(first, local), folded(call.args[1])
            return None if base is None or key is None else f"{base}.{key}"
        if function == f"{BUILTINS}.vars" and first is not None:
            return self.path(first, local)
        if function == "importlib.import_module":
            return folded(first)
        if function == f"{BUILTINS}.__import__":
            name = folded(first)
            return None if name is None else (name if len(call.args) > 3 or call.keywords else name.split(".")[0])
        if function is not None and function.endswith(".get") and first is not None:  # sys.modules.get(…), vars(m).get(…)
            base, key = function[: -len(".get")], folded(first)
            return None if key is None else (key if base == "sys.modules" else f"{base}.{key}")
        return None

    def _is_target(self, path: str | None) -> bool:
        return path is not None and any(path == target or path.startswith(target + ".") for target in self.targets)


def _root_names(node: ast.AST) -> Iterator[str]:
    """`a` for `a`, `a.b.c`, `a[0].b`: the notebook name an attribute or item belongs to."""
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        node = node.value
    if isinstance(node, ast.Name):
        yield node.id


def _locals_of(function: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> set[str]:
    """Every name a function (and what it nests) binds for itself: parameters, assignments, loop names.
    Names it declares `global` are the notebook's."""
    declared = {name for node in ast.walk(function) if isinstance(node, ast.Global) for name in node.names}
    names = {argument.arg for node in ast.walk(function) if isinstance(node, ast.arguments)
             for argument in node.posonlyargs + node.args + node.kwonlyargs + [node.vararg, node.kwarg] if argument}
    body = function.body if isinstance(function.body, list) else [function.body]
    for node in body:
        for child in ast.walk(node):
            if isinstance(child, ast.Name) and isinstance(child.ctx, ast.Store):
                names.add(child.id)
            elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(child.name)
            elif isinstance(child, (ast.Import, ast.ImportFrom)):
                names.update(alias.asname or alias.name.split(".")[0] for alias in child.names)
    return names - declared
