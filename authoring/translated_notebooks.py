"""The course in another language, made from the English solutions and their translations (never edited by hand).

    solutions/<lang>/<stem>.ipynb   the English solution's cells, same ids, same code, with the words of
                                    translations/<lang>/<stem>.toml (notebook_translations.py says its format):
                                    each markdown cell replaced whole, each code cell's comments and word-holding
                                    strings replaced token by token; metadata `looplab.lang`, and a line of its
                                    set-up cell, `looplab.speak("<lang>")`, so that it speaks its language however
                                    it is run; outputs stored by running it offline, on the recording of its
                                    language, as the English ones get theirs
    notebooks/<lang>/<stem>.ipynb   its learner copy, made by learner_notebooks.learner_version like the English

`python -m authoring notebooks` runs this after the English notebooks (regenerate.py). A notebook whose
translation is absent or not finished (an entry missing or still `todo`) is skipped with one line saying
so: the French notebook already on disk is then not what the generator would make, and the suite says
which texts are missing. A change to an English solution's code therefore reaches every language by
regenerating, never by editing a translated notebook.
"""

from __future__ import annotations

import ast
import copy
import sys
from pathlib import Path
from typing import Callable

import nbformat

from looplab.catalogue import words
from looplab.course import COURSE, Course
from looplab.language import LANGUAGES, SOURCE, using
from looplab.notebook_source import without_magics

from . import NOTEBOOKS, SOLUTIONS
from .notebook_translations import TRANSLATIONS, code_words, read, replaced_tokens, untranslated

TRANSLATED = tuple(language for language in LANGUAGES if language != SOURCE)
WORDS = words(__file__)  # texts/translated_notebooks.toml
SETUP_TAG = "setup"
PACKAGE_IMPORT = "import looplab"
SPEAK = 'looplab.speak("{language}")'  # the line a translated set-up cell gains after PACKAGE_IMPORT


def solutions_in(language: str, solutions: Path = SOLUTIONS) -> Path:
    return solutions if language == SOURCE else solutions / language


def notebooks_in(language: str, notebooks: Path = NOTEBOOKS) -> Path:
    return notebooks if language == SOURCE else notebooks / language


def translated(solution: nbformat.NotebookNode, cells: dict, language: str) -> nbformat.NotebookNode:
    """The solution in `language`, without outputs: every cell kept (same id, same metadata), markdown
    replaced by its translation, code cells with their words replaced in place (magics left alone)."""
    notebook = nbformat.from_dict(copy.deepcopy(solution))
    notebook.metadata.setdefault("looplab", {})["lang"] = language
    notebook.metadata.pop("widgets", None)
    for cell in notebook.cells:
        entry = cells.get(cell.get("id"), {})
        if cell.cell_type == "markdown":
            text = entry["text"]
            # A TOML ''' block usually ends with a newline the English cell does not have: the English decides.
            cell.source = text if cell.source.endswith("\n") else text.rstrip("\n")
        elif cell.cell_type == "code":
            cell.source = replaced_tokens(cell.source, code_words(entry.get("code", [])))
            if SETUP_TAG in cell.metadata.get("tags", []):
                cell.source = speaking(cell.source, language)
            cell.outputs = []
            cell.execution_count = None
    return notebook


def speaking(source: str, language: str) -> str:
    """The set-up cell with `looplab.speak("<language>")` after its `import looplab`: the notebook says its
    language in what it runs, so nbclient, nbconvert, papermill or VS Code need no Jupyter server to tell it."""
    lines = source.split("\n")
    if PACKAGE_IMPORT not in lines:
        raise ValueError(f"a set-up cell without a line `{PACKAGE_IMPORT}`, where a translated notebook says its "
                         f"language: add it to the English set-up cell")
    with using(language):
        comment = WORDS("speaks")
    at = lines.index(PACKAGE_IMPORT) + 1
    return "\n".join(lines[:at] + [f"{SPEAK.format(language=language)}  {comment}"] + lines[at:])


def write_solutions(names: list[str] | None, language: str, course: Course = COURSE, solutions: Path = SOLUTIONS,
                    translations: Path = TRANSLATIONS, kept: Callable[[str], bool] = lambda stem: False) -> list[str]:
    """Write solutions/<language>/<stem>.ipynb (no outputs yet) for each notebook whose translation is
    complete, but those `kept` as they are (made_from.py: made from today's inputs); say on stderr which are
    skipped and why. Returns the stems written."""
    written = []
    folder = solutions_in(language, solutions)
    for stem in course.stems:
        if names and stem not in names:
            continue
        cells = read(stem, language, translations)
        if cells is None:
            print(f"{language}/{stem}: skipped: no translation yet (translations/{language}/{stem}.toml; "
                  f"`python -m authoring translations skeleton --lang {language} {stem}` starts one)", file=sys.stderr)
            continue
        english = nbformat.read(solutions / f"{stem}.ipynb", as_version=4)
        missing = untranslated(english, cells)
        if missing:
            print(f"{language}/{stem}: skipped: {len(missing)} text(s) not translated yet, first {missing[0]} "
                  f"(`python -m authoring translations status --lang {language} {stem}`)", file=sys.stderr)
            continue
        if kept(stem):
            continue
        folder.mkdir(parents=True, exist_ok=True)
        nbformat.write(translated(english, cells, language), folder / f"{stem}.ipynb")
        written.append(stem)
    return written


# --- the same program: what a translation may change in a code cell ---------------------------------------

WORDS_PLACEHOLDER = "<words>"


class _WordsSetAside(ast.NodeTransformer):
    """Every string constant becomes one placeholder, and an f-string keeps only its formatted values, in order."""

    def visit_Constant(self, node: ast.Constant) -> ast.AST:
        return ast.Constant(WORDS_PLACEHOLDER) if isinstance(node.value, str) else node

    def visit_JoinedStr(self, node: ast.JoinedStr) -> ast.AST:
        self.generic_visit(node)
        return ast.JoinedStr([value for value in node.values if isinstance(value, ast.FormattedValue)])


def program_shape(source: str) -> str:
    """A code cell's program with its comments and string literals set aside (ast.dump, magics left out), and the
    set-up cell's `looplab.speak(...)` line, the one statement a translation adds: a translated cell must have the
    same shape as its English one."""
    tree = ast.parse(without_magics(source))
    tree.body = [statement for statement in tree.body if not _speaks(statement)]
    return ast.dump(_WordsSetAside().visit(tree))


def _speaks(statement: ast.stmt) -> bool:
    """`looplab.speak("<language>")`, the line `speaking` adds."""
    call = statement.value if isinstance(statement, ast.Expr) else None
    return (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "speak"
            and isinstance(call.func.value, ast.Name) and call.func.value.id == "looplab")
