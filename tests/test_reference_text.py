"""The course's reference code typed in as text, renamed and reformatted: flagged for review, never graded down.

The threshold's measurement (judgement/reference_text.py's docstring) is re-run here: every solution
notebook's exercise cells and every right answer in another style that the soundness tests pass
(`passes("2.1", name)` in tests/test_checks_notebookN.py, read as text) stay under it; and every piece of
a reference module at or above it is found when pasted with its names and formatting changed. No kernel.
"""

from __future__ import annotations

import ast
import builtins
import importlib.util
from pathlib import Path

import nbformat
import pytest

from looplab.course import COURSE
from looplab.grade import Row
from looplab.grade.exports.terminal import REVIEW_MARK, summary_table
from looplab.grade.grading import flag_reference_text
from looplab.grade.judgement.reference_text import (
    SHARED_BY_HONEST_ANSWERS, THRESHOLD, largest_shared, reference_module, review, sizes)

ROOT = Path(__file__).resolve().parent.parent


def solution_answers():
    for notebook in COURSE.notebooks:
        path = ROOT / "solutions" / f"{notebook.stem}.ipynb"
        read = nbformat.read(path, as_version=4)
        for exercise in notebook.exercises:
            yield f"solution {exercise.id}", exercise, [cell.source for cell in read.cells if cell.cell_type == "code"
                                                        and cell.metadata.get("looplab", {}).get("exercise") == exercise.id]


def answers_the_soundness_tests_pass():
    """`passes("N.M", f)` with f a function defined in the test file, or a lambda: its source."""
    for path in sorted((ROOT / "tests").glob("test_checks_notebook*.py")):
        text = path.read_text(encoding="utf-8")
        tree = ast.parse(text)
        defined = {}
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                defined.setdefault(node.name, node)
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "passes"
                    and len(node.args) >= 2 and isinstance(node.args[0], ast.Constant)):
                continue
            answer = node.args[1]
            if isinstance(answer, ast.Name) and answer.id in defined:
                answer = defined[answer.id]
            if isinstance(answer, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                yield (f"{path.name}:{answer.lineno}", COURSE.exercise(node.args[0].value),
                       [ast.get_source_segment(text, answer)])


HONEST = list(solution_answers()) + list(answers_the_soundness_tests_pass())


def test_honest_answers_share_less_than_the_threshold_with_the_reference():
    assert len(HONEST) >= len(COURSE.exercises) + 8  # every solution, and the other styles
    shared = {label: largest_shared(sources, reference_module(exercise)) for label, exercise, sources in HONEST}
    assert max(shared.values()) <= SHARED_BY_HONEST_ANSWERS < THRESHOLD, sorted(shared.items(), key=lambda x: x[1])
    assert max(shared.values()) == SHARED_BY_HONEST_ANSWERS  # the docstring's measurement, as it stands


class Disguised(ast.NodeTransformer):
    """The reference as a learner would disguise it: every name of theirs renamed, docstrings and annotations
    dropped, formatting changed (ast.unparse writes it anew)."""

    def rename(self, name):
        return name if name is None or name in dir(builtins) or name in ("ast", "operator", "re", "math") \
            else f"my_{name.strip('_')}"

    def visit_Name(self, node):
        node.id = self.rename(node.id)
        return node

    def visit_arg(self, node):
        node.arg, node.annotation = self.rename(node.arg), None
        return node

    def visit_FunctionDef(self, node):
        node.name, node.returns = self.rename(node.name), None
        if isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant):
            node.body = node.body[1:] or [ast.Pass()]
        self.generic_visit(node)
        return node

    visit_ClassDef = visit_FunctionDef

    def visit_ExceptHandler(self, node):
        node.name = self.rename(node.name)
        self.generic_visit(node)
        return node


def module_tree(module: str) -> ast.Module:
    return ast.parse(Path(importlib.util.find_spec(module).origin).read_text(encoding="utf-8"))


def disguised(node: ast.AST) -> str:
    return "# my own answer\n" + ast.unparse(Disguised().visit(ast.fix_missing_locations(node))).replace("    ", "  ")


def only_data(node: ast.AST) -> bool:
    """A constant made of literals alone (notebook 7's corpus and lexicon): handed to the learner by the set-up, never
    an answer, and with no name to disguise."""
    return isinstance(node, ast.Assign) and not any(isinstance(part, ast.Name) for part in ast.walk(node.value))


@pytest.mark.parametrize("module", sorted({reference_module(exercise) for exercise in COURSE.exercises}))
def test_every_large_piece_of_a_reference_typed_in_disguised_is_found(module):
    tree = module_tree(module)
    large = [node for node, size in sizes(tree).items() if size >= THRESHOLD and node in tree.body
             and not only_data(node)]
    for node in large:
        source = disguised(node)
        assert source.count("my_") > 2 and largest_shared([source], module) >= THRESHOLD, source[:200]


def notebook_with(exercise_id: str, source: str):
    cell = nbformat.v4.new_code_cell(source, metadata={"looplab": {"exercise": exercise_id}})
    return nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# 2.2"), cell])


def pasted_agent_turn() -> str:
    return disguised(next(node for node in module_tree("looplab.loop").body
                          if isinstance(node, ast.FunctionDef) and node.name == "agent_turn"))


def test_a_pasted_reference_is_flagged_for_review_and_keeps_its_points():
    notebook, exercise = notebook_with("2.2", pasted_agent_turn()), COURSE.exercise("2.2")
    note = review(notebook, exercise)
    assert note.startswith("to review: exercise 2.2's cell holds the course's reference code (looplab/loop.py)")
    assert f"flagged from {THRESHOLD}" in note
    rows = [Row("ada", "02_closing_the_loop", "2.2", 3, 3, "solved", "", "ada/02.ipynb"),
            Row("ada", "02_closing_the_loop", "2.3", 0, 2, "the course's own code", "...", "ada/02.ipynb")]
    flag_reference_text(notebook, COURSE.notebook("02_closing_the_loop"), rows)
    assert rows[0].review == note and rows[0].points == 3 and rows[0].status == "solved"
    assert rows[1].review == ""  # its own status says it already, and no cell of 2.3 holds the paste
    assert rows[0].as_csv()[-1] == note
    assert f"2.2 solved{REVIEW_MARK}" in summary_table(rows)


def test_the_solution_and_the_stub_are_not_flagged():
    for stem in ("solutions", "notebooks"):
        for notebook in COURSE.notebooks:
            read = nbformat.read(ROOT / stem / f"{notebook.stem}.ipynb", as_version=4)
            assert [review(read, exercise) for exercise in notebook.exercises] == [""] * len(notebook.exercises)


def pasted_calculator_notebook(solution: Path, out: Path) -> None:
    """Notebook 1's solution, its 1.1 cell replaced by looplab/tools.py's calculator and helpers typed in,
    disguised (tests/test_class_gradebook.py grades it for real: solved, and flagged for review)."""
    tree = module_tree("looplab.tools")
    kept = [node for node in tree.body[1:]  # not the module's docstring
            if not (isinstance(node, ast.FunctionDef) and node.name in ("run_tool", "is_error"))
            and not (isinstance(node, ast.Assign) and any(getattr(target, "id", "") in (
                "CALCULATOR_TOOL", "TOOLS", "_REGISTRY") for target in node.targets))]
    source = ast.unparse(Disguised().visit(ast.Module(body=kept, type_ignores=[]))).replace("my_calculator(", "calculator(")
    notebook = nbformat.read(solution, as_version=4)
    for cell in notebook.cells:
        if cell.metadata.get("looplab", {}).get("exercise") == "1.1":
            cell.source = "# my calculator\n" + source
    out.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(notebook, out)
