"""The grader's shape: one direction of flow through its subpackages (docs/DESIGN.md, "The grader's flow").

looplab/grade/ is a flow, each stage a subpackage: shared (limits, statuses, rows: read by every
stage) -> submissions -> kernels -> judgement -> rows -> exports. A module may import from its own
stage and the stages before it, never from a later one; `grading.py` (the one orchestrator),
`__main__.py` (the command line) and `__init__.py` (the package's interface) come last and may import
every stage. This reads every module's syntax tree (imports inside functions too) and names each
import that goes against the flow.
"""

from __future__ import annotations

import ast
from pathlib import Path

GRADE = Path(__file__).resolve().parent.parent / "looplab" / "grade"
PACKAGE = "looplab.grade"
STAGES = ("shared", "submissions", "kernels", "judgement", "rows", "exports")
LAST = ("grading", "__main__", "__init__")  # the orchestrator, the command line, the interface: after every stage


def module_name(path: Path) -> str:
    parts = list(path.relative_to(GRADE.parent.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def stage_of(module: str) -> int | None:
    """The place in the flow of a module of looplab.grade (None for a module outside it)."""
    if module != PACKAGE and not module.startswith(PACKAGE + "."):
        return None
    parts = module.split(".")[2:]
    if parts and parts[0] in STAGES:
        return STAGES.index(parts[0])
    return len(STAGES)  # the package itself, grading, __main__


def imported(path: Path, tree: ast.AST) -> list[tuple[int, str]]:
    """(line, what) of every import in the file, relative ones resolved: `from ..shared.limits import X` in
    looplab/grade/kernels/runner.py -> looplab.grade.shared.limits.X."""
    package = module_name(path) if path.name == "__init__.py" else module_name(path).rpartition(".")[0]
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            found += [(node.lineno, f"{module}.{alias.name}") for alias in node.names]
    return found


def flow_of(module: str) -> str:
    stage = stage_of(module)
    return STAGES[stage] if stage is not None and stage < len(STAGES) else "grading (the orchestrator)"


def test_every_module_of_the_grader_sits_in_a_stage_or_is_the_orchestration():
    loose = [path.name for path in GRADE.glob("*.py") if path.stem not in LAST]
    unknown = [path.name for path in GRADE.iterdir() if path.is_dir() and path.name not in STAGES + ("__pycache__", "texts")]
    assert not loose and not unknown, (
        f"modules outside the flow's stages: {loose + unknown}; the stages are {', '.join(STAGES)} (docs/DESIGN.md)")


def test_no_module_imports_from_a_later_stage_of_the_flow():
    against = []
    for path in sorted(GRADE.rglob("*.py")):
        module = module_name(path)
        own = stage_of(module)
        for line, name in imported(path, ast.parse(path.read_text(encoding="utf-8"))):
            target = stage_of(name)  # decided by what follows looplab.grade: a stage, or the package itself
            if target is None:
                continue
            if target > own:
                against.append(f"{path.relative_to(GRADE.parent.parent)}:{line}: {module} ({flow_of(module)}) "
                               f"imports {name} ({flow_of(name)}), a later stage")
    assert not against, ("the grader's flow is shared -> submissions -> kernels -> judgement -> rows -> exports; "
                         "a module imports only from its own stage and earlier ones:\n" + "\n".join(against))


def test_nothing_outside_the_grader_imports_it():
    """The course's modules (what a learner's kernel imports) never reach into the grader."""
    found = []
    for path in sorted(GRADE.parent.rglob("*.py")):
        if GRADE in path.parents:
            continue
        for line, name in imported(path, ast.parse(path.read_text(encoding="utf-8"))):
            if stage_of(name) is not None:
                found.append(f"{path.relative_to(GRADE.parent.parent)}:{line}: {name}")
    assert not found, found


def test_the_shape_test_sees_an_import_against_the_flow(tmp_path):
    """The reader itself: a relative import from a later stage is found, one from an earlier stage is not."""
    later = ast.parse("from ..rows.from_run import rows_for\n")
    earlier = ast.parse("from ..shared.limits import CHECK_SECONDS\nfrom . import process_tree\n")
    path = GRADE / "kernels" / "runner.py"
    assert [name for _, name in imported(path, later)] == ["looplab.grade.rows.from_run.rows_for"]
    assert stage_of("looplab.grade.rows.from_run") > stage_of(module_name(path))
    assert all(stage_of(name) <= stage_of(module_name(path)) for _, name in imported(path, earlier))
