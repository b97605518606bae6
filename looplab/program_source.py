"""The program a notebook writes from the learner's cells: the statements that last made the names it asks for,
everything those statements use that the cells made, in an order that runs.

notebook_source.definitions is the entry point (notebook 5's agent_toolbox.py and toolbox_server.py, notebook 6's
agent_robust.py); this is how it reads the cells. A correct answer is often more than one statement: a registry
built step by step (`TOOL_REGISTRY = {}`, then `TOOL_REGISTRY["calculator"] = {...}`, `.update(...)`, a loop over
a table of rows), or a function leaning on a helper of the learner's own (`schema_for`, a recursive `_turn`, a
decorator, an exception class, a set of allowed types). Copying the named definitions alone made programs that
failed with NameError, and an MCP server that listed no tool. So the cells are read here as Python would run
them, without running them: which top-level statement last bound each name, which later ones changed what it
holds, which names of the module each statement reads (as it runs, or later, in the functions it defines); from
those, every statement the program needs, and an order in which they run.

Only the standard library (`ast`): a notebook's kernel imports this, and learners read it.
"""

from __future__ import annotations

import ast
import builtins
from dataclasses import dataclass, field

# The methods that change a dict, a list or a set in place: `TOOL_REGISTRY.update(...)` changes the registry.
MUTATORS = {"append", "extend", "insert", "update", "setdefault", "add", "remove", "discard", "pop", "popitem",
            "clear", "sort", "reverse", "difference_update", "intersection_update", "symmetric_difference_update",
            "__setitem__", "__delitem__"}
BUILTINS = set(dir(builtins))
FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
IMPORTS = (ast.Import, ast.ImportFrom)


class Unbound(LookupError):
    """A name the program asks for that no cell binds (definitions says it in the learner's words)."""

    def __init__(self, name: str):
        super().__init__(name)
        self.name = name


@dataclass
class Uses:
    """The module's names some code reads, calls and changes (binds, assigns an item or an attribute of, or
    calls a method of MUTATORS on)."""

    reads: set[str] = field(default_factory=set)
    calls: set[str] = field(default_factory=set)
    changes: set[str] = field(default_factory=set)


@dataclass(eq=False)
class Statement:
    """One top-level statement of a cell, where the cells ran it, and what it does with the module's names:
    `now` as it runs, `later` in the bodies of the functions it defines (they run when called)."""

    place: tuple[int, int]  # (the cell's place in the history, the statement's in the cell): the order they ran
    node: ast.stmt
    text: str  # its lines as the cell has them, decorators included
    binds: set[str]
    continues: set[str]  # the names it binds from their own value (`X += [...]`): it changes them, not starts them
    now: Uses
    later: Uses

    @classmethod
    def read(cls, place: tuple[int, int], node: ast.stmt, source: str) -> "Statement":
        now, later = Uses(), Uses()
        try:
            _walk(node, frozenset(), frozenset(), now, later)
        except RecursionError:  # code nested deeper than the stack: every name in it taken as read as it runs
            now, later = Uses(reads={name.id for name in ast.walk(node) if isinstance(name, ast.Name)}), Uses()
        annotation_only = isinstance(node, ast.AnnAssign) and node.value is None  # `X: dict` binds nothing
        binds = set() if annotation_only else _bound_in([node])
        return cls(place, node, segment(source, node), binds, _continued(node, binds), now, later)

    @property
    def uses(self) -> set[str]:
        """The names it reads at any depth, but those it binds itself (a loop's variable, a recursive function)."""
        return (self.now.reads | self.later.reads) - self.binds


def segment(source: str, node: ast.stmt) -> str:
    """A top-level statement's lines, decorators and a comment after it included (`ast` starts a decorated `def`
    at the `def`); just its own text when it shares a line with another (`X = {}; X["a"] = 1`)."""
    lines = source.splitlines()
    after = lines[node.end_lineno - 1].encode()[node.end_col_offset:].decode(errors="replace").strip()
    if node.col_offset or (after and not after.startswith("#")):
        return ast.get_source_segment(source, node) or ""
    first = min([node.lineno] + [decorator.lineno for decorator in getattr(node, "decorator_list", [])])
    return "\n".join(lines[first - 1:node.end_lineno])


def program(sources: list[str], names: list[str], head: str = "") -> str:
    """Python source making `names` as the cells last made them, with all the cells made that they use: first the
    imports of the cells the statements come from (and of each name used that a cell last imported, unless `head`,
    the lines the program starts with, binds it), then the statements. Raises Unbound for a name asked for that no
    cell binds."""
    cells = Cells(sources, names, _bound_by(head))
    statements = cells.needed()
    imports: list[str] = []
    for statement in statements:
        for text in ([_import_of(statement.node, cells.imported[statement])] if isinstance(statement.node, IMPORTS)
                     else cells.imports_of(statement.place[0])):
            if text not in imports:
                imports.append(text)
    parts = [statement.text for statement in statements if not isinstance(statement.node, IMPORTS)]
    return "".join(f"{line}\n" for line in imports) + "\n\n" + "\n\n\n".join(parts) + "\n"


class Cells:
    """The cells' top-level statements, in the order they ran, and the program `names` needs from them."""

    def __init__(self, sources: list[str], names: list[str], given: set[str] = frozenset()):
        self.names, self.asked, self.given = list(names), set(names), set(given)
        self.statements: list[Statement] = []
        self._imports: dict[int, list[str]] = {}
        for number, source in enumerate(sources):
            try:
                tree = ast.parse(source)
            except (SyntaxError, ValueError, RecursionError):  # a cell that did not run (a null byte, too deep)
                continue
            for index, node in enumerate(tree.body):
                self.statements.append(Statement.read((number, index), node, source))
            self._imports[number] = [segment(source, node) for node in tree.body if isinstance(node, IMPORTS)]
        self._last = {name: statement for statement in self.statements for name in statement.binds}
        self._chains: dict[str, list[Statement]] = {}
        self._writes: dict[str, set[str]] = {}
        self.imported: dict[Statement, set[str]] = {}  # an import the program needs -> the names it is needed for

    def imports_of(self, cell: int) -> list[str]:
        """A cell's top-level imports: a statement taken from it comes with them, so it has what it had there."""
        return self._imports.get(cell, [])

    def chain(self, name: str) -> list[Statement]:
        """The statements that made `name` what it last was: the last that bound it anew, then every later one
        that changed what it holds (`X[...] = ...`, `X.update(...)`, a loop or a helper filling it), in the order
        they ran; a rebinding leaves out the changes before it. Empty when no cell binds it. What an import
        binds is the library's: changes made to it (`os.environ[...] = ...`) stay in the notebook."""
        if name not in self._chains:
            binding = [index for index, statement in enumerate(self.statements) if name in statement.binds]
            anew = [index for index in binding if name not in self.statements[index].continues]
            if not binding:
                self._chains[name] = []
            else:
                start = anew[-1] if anew else binding[0]
                first = self.statements[start]
                self._chains[name] = [first] + ([] if isinstance(first.node, IMPORTS) else [
                    statement for statement in self.statements[start + 1:] if self._changes(statement, name)])
        return self._chains[name]

    def _changes(self, statement: Statement, name: str) -> bool:
        """Does this statement change what `name` holds, itself or by calling a function of the cells that does?
        Calling one of the names asked for at the top level is trying it out, as a cell's last lines do: the
        program leaves that out."""
        return name in statement.now.changes or any(
            name in self._written_by(called) for called in statement.now.calls - self.asked)

    def _written_by(self, function: str) -> set[str]:
        """The module's names the last definition of `function` changes when called, with the functions it calls
        (a decorator's inner function filling a registry counts)."""
        if function not in self._writes:
            written, pending, seen = set(), [function], set()
            while pending:
                name = pending.pop()
                seen.add(name)
                last = self._last.get(name)
                if last is not None:
                    written |= last.later.changes
                    pending += last.later.calls - seen
            self._writes[function] = written
        return self._writes[function]

    def resolved(self, name: str) -> list[Statement]:
        """The chain a name the program uses stands for, or none: a name the cells last imported is that import,
        unless the program's head binds it already (`given`: the head imports what the course gives), and a name
        Python has built in (`input`, `type`) stays the builtin unless a cell defines it with def or class (a
        try-it loop's `for input in ...` is no definition)."""
        found = self.chain(name)
        if not found or (isinstance(found[0].node, IMPORTS) and name in self.given):
            return []
        if name in BUILTINS and not isinstance(found[0].node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            return []
        return found

    def needed(self) -> list[Statement]:
        """Every statement the program needs, in an order that runs: each name asked for in turn, followed back
        through the names it uses to the statements that made them; placed as the cells ran them, the names in
        the order asked, moved only where a statement must come before one that uses it as it runs."""
        groups: list[list[Statement]] = []
        taken: set[Statement] = set()
        for name in self.names:
            if not self.chain(name):
                raise Unbound(name)
            group = self._take(name, self.chain(name), taken)
            pending = list(group)
            while pending:
                for used in sorted(pending.pop().uses - self.asked):  # a name asked for: its own group places it
                    found = self._take(used, self.resolved(used), taken)
                    group += found
                    pending += found
            groups.append(sorted(group, key=lambda statement: statement.place))
        preferred = [statement for group in groups for statement in group]
        return self._runnable(preferred)

    def _take(self, name: str, chain: list[Statement], taken: set[Statement]) -> list[Statement]:
        """The statements of `name`'s chain not taken yet, now taken (a name asked for that a cell last imported:
        the import, noting the name it brings)."""
        if chain and isinstance(chain[0].node, IMPORTS):
            self.imported.setdefault(chain[0], set()).add(name)
        found = [statement for statement in chain if statement not in taken]
        taken.update(found)
        return found

    def _runnable(self, preferred: list[Statement]) -> list[Statement]:
        """`preferred`, with each statement after those it needs as it runs; where statements need each other, the
        preferred order decides."""
        kept = set(preferred)
        before = {statement: self._needed_to_run(statement) & kept for statement in preferred}
        ordered: list[Statement] = []
        remaining = list(preferred)
        while remaining:
            ready = next((statement for statement in remaining if before[statement] <= set(ordered)),
                         remaining[0])  # none is: they need each other, and the cells' order decides
            ordered.append(ready)
            remaining.remove(ready)
        return ordered

    def _needed_to_run(self, statement: Statement) -> set[Statement]:
        """The statements that must have run before this one: those that made the names it reads as it runs,
        and the names read by the functions it calls then (`TOOLS = tool_definitions(TOOL_REGISTRY)` runs
        tool_definitions' body); a change of a name comes after that name's earlier statements, never its later ones."""
        reads, calls, seen = set(statement.now.reads - statement.binds), set(statement.now.calls), set()
        while calls - seen:
            called = (calls - seen).pop()
            seen.add(called)
            for definition in self.resolved(called):
                reads |= definition.later.reads
                calls |= definition.later.calls
        needed: set[Statement] = set()
        for name in reads | statement.continues | (statement.now.changes - statement.binds):
            chain = self.resolved(name)
            needed.update(chain[:chain.index(statement)] if statement in chain else chain)
        needed.discard(statement)
        return needed


# --- reading a statement as Python runs it ---------------------------------------------------------------------


def _walk(node: ast.AST, hidden: frozenset, outer: frozenset, uses: Uses, later: Uses) -> None:
    """Note in `uses` the module's names this code reads, calls and changes, and in `later` those of the bodies of
    the functions it defines. `hidden`: the names that are not the module's here (the locals of the functions
    around, and a class body's own); `outer`: those a function defined here sees (never a class body's own)."""
    if isinstance(node, FUNCTIONS):
        for part in _run_on_definition(node):
            _walk(part, hidden, outer, uses, later)
        uses.calls.update(d.id for d in getattr(node, "decorator_list", []) if isinstance(d, ast.Name)
                          and d.id not in hidden)
        inner = outer | _locals(node)
        for part in node.body if isinstance(node.body, list) else [node.body]:
            _walk(part, inner, inner, later, later)
        return
    if isinstance(node, ast.ClassDef):
        for part in node.decorator_list + node.bases + [keyword.value for keyword in node.keywords]:
            _walk(part, hidden, outer, uses, later)
        uses.calls.update(d.id for d in node.decorator_list if isinstance(d, ast.Name) and d.id not in hidden)
        own = hidden | _bound_in(node.body)
        for part in node.body:
            _walk(part, own, outer, uses, later)
        return
    if isinstance(node, COMPREHENSIONS):  # its first iterable is read where it stands, the rest in its own scope
        _walk(node.generators[0].iter, hidden, outer, uses, later)
        inner = outer | {name.id for generator in node.generators for name in ast.walk(generator.target)
                         if isinstance(name, ast.Name)}
        parts = [generator.iter for generator in node.generators[1:]] + [
            condition for generator in node.generators for condition in generator.ifs]
        parts += [node.key, node.value] if isinstance(node, ast.DictComp) else [node.elt]
        for part in parts:
            _walk(part, inner, inner, uses, later)
        return
    if isinstance(node, ast.Name):
        if node.id not in hidden:
            (uses.reads if isinstance(node.ctx, ast.Load) else uses.changes).add(node.id)
        return
    if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Delete)):
        targets = node.targets if isinstance(node, (ast.Assign, ast.Delete)) else [node.target]
        for target in targets:
            for root in _changed_roots(target):
                if root not in hidden:
                    uses.changes.add(root)
        if isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name) and node.target.id not in hidden:
            uses.reads.add(node.target.id)  # `X += ...` reads X first
    if isinstance(node, ast.Call):
        if isinstance(node.func, ast.Name) and node.func.id not in hidden:
            uses.calls.add(node.func.id)
        elif isinstance(node.func, ast.Attribute) and node.func.attr in MUTATORS:
            root = _root(node.func.value)
            if root is not None and root not in hidden:
                uses.changes.add(root)
    for child in ast.iter_child_nodes(node):
        _walk(child, hidden, outer, uses, later)


def _run_on_definition(function: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> list[ast.AST]:
    """What a `def` or a `lambda` evaluates where it stands: decorators, default values, annotations (read as the
    def runs unless `from __future__ import annotations`; counted either way, which only adds a name)."""
    arguments = function.args
    parts: list[ast.AST] = list(getattr(function, "decorator_list", []))
    parts += arguments.defaults + [default for default in arguments.kw_defaults if default is not None]
    if not isinstance(function, ast.Lambda):
        every = arguments.posonlyargs + arguments.args + arguments.kwonlyargs + [
            argument for argument in (arguments.vararg, arguments.kwarg) if argument is not None]
        parts += [argument.annotation for argument in every if argument.annotation is not None]
        parts += [function.returns] if function.returns is not None else []
    return parts


def _locals(function: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> set[str]:
    """A function's own names: its parameters and what its body binds, but those it declares `global`."""
    arguments = function.args
    names = {argument.arg for argument in arguments.posonlyargs + arguments.args + arguments.kwonlyargs}
    names |= {argument.arg for argument in (arguments.vararg, arguments.kwarg) if argument is not None}
    if isinstance(function, ast.Lambda):
        return names
    declared = {name for node in _own_nodes(function.body) if isinstance(node, ast.Global) for name in node.names}
    return (names | _bound_in(function.body)) - declared


def _own_nodes(statements: list[ast.AST]):
    """Every node of a block of code in its own scope: not inside the functions, classes or comprehensions in it
    (a nested def or class itself is yielded: its name is bound here)."""
    pending = list(statements)
    while pending:
        node = pending.pop()
        yield node
        if not isinstance(node, FUNCTIONS + COMPREHENSIONS + (ast.ClassDef,)):
            pending.extend(ast.iter_child_nodes(node))


def _bound_in(statements: list[ast.AST]) -> set[str]:
    """The names a block of code binds in its own scope: assignments' and loops' targets, defs, classes, imports,
    `except ... as`, `with ... as`, a match's captures."""
    bound: set[str] = set()
    for node in _own_nodes(statements):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            bound.add(node.id)
        elif isinstance(node, IMPORTS):
            bound |= {alias.asname or alias.name.split(".")[0] for alias in node.names if alias.name != "*"}
        elif isinstance(node, (ast.ExceptHandler, ast.MatchAs, ast.MatchStar)) and node.name:
            bound.add(node.name)
        elif isinstance(node, ast.MatchMapping) and node.rest:
            bound.add(node.rest)
    return bound


def _bound_by(head: str) -> set[str]:
    """The names a program's first lines bind at their top level (its imports, mostly)."""
    try:
        return _bound_in(ast.parse(head).body)
    except (SyntaxError, ValueError):
        return set()


def _import_of(node: ast.Import | ast.ImportFrom, names: set[str]) -> str:
    """A cell's import, bringing only the names the program uses (`from looplab import MODEL, check` -> `from
    looplab import MODEL`): the rest of the line stays in the notebook."""
    kept = [alias for alias in node.names if (alias.asname or alias.name.split(".")[0]) in names]
    if isinstance(node, ast.Import):
        return ast.unparse(ast.Import(names=kept))
    return ast.unparse(ast.ImportFrom(module=node.module, names=kept, level=node.level))


def _continued(node: ast.stmt, binds: set[str]) -> set[str]:
    """The names an assignment binds from their own value (`X += [...]`, `X = X | {...}`)."""
    if isinstance(node, ast.AugAssign):
        return {node.target.id} if isinstance(node.target, ast.Name) else set()
    if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
        return binds & {name.id for name in ast.walk(node.value) if isinstance(name, ast.Name)}
    return set()


def _changed_roots(target: ast.AST) -> set[str]:
    """The names an assignment's target changes what they hold of: `X["a"]["b"] = ...` and `X.a = ...` change X
    (a plain name is bound, noted as a Name)."""
    if isinstance(target, (ast.Tuple, ast.List)):
        return set().union(*(_changed_roots(element) for element in target.elts))
    if isinstance(target, ast.Starred):
        return _changed_roots(target.value)
    if isinstance(target, (ast.Subscript, ast.Attribute)):
        root = _root(target)
        return {root} if root is not None else set()
    return set()


def _root(node: ast.AST) -> str | None:
    """The name an expression's items and attributes hang from: `X["a"].b` -> "X"; None for `f()["a"]`."""
    while isinstance(node, (ast.Subscript, ast.Attribute)):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None
