"""What a solution notebook's stored outputs were made from: `make notebooks` runs a notebook again only when
one of those changed.

Running every solution (two languages, a kernel each) is most of what `make notebooks` costs, and most runs
follow an edit that concerns one notebook or none. So each run records, in .cache/made_from.json (a cache of
this checkout, never committed: a commit that touches the package must not also touch a shared record, and a
fresh clone's first run simply runs everything), a digest of everything the outputs of that notebook in that
language can depend on:

- its cells as the solution holds them (ids, types, sources, tags; never outputs), and its metadata `looplab`;
  for a translation, the English solution's cells and the words of translations/<lang>/<stem>.toml;
- the package its kernel imports: every file of looplab/ but the grader (looplab/grade/, which no notebook
  imports) and the other notebooks' recordings (its own recording is in);
- how outputs are stored: authoring/learner_notebooks.py (running, normalising), and for a translation
  translated_notebooks.py and notebook_translations.py (how the French notebook is made);
- the pinned libraries (requirements.txt) and Python's version (major.minor).

The next run whose digest is the recorded one, with the solution on disk, keeps it as it is. When in doubt,
it runs: an input missed here would keep stale outputs, which nbval (`make test`) catches, since it runs every
solution in a fresh kernel against them. `python -m authoring notebooks --all` runs every notebook whatever
the record says.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import nbformat

from . import ROOT, SOLUTIONS
from .translated_notebooks import SOURCE, TRANSLATIONS, solutions_in

RECORD = ROOT / ".cache" / "made_from.json"  # .gitignore: a cache of this checkout
PACKAGE = ROOT / "looplab"
NOT_IMPORTED = ("grade",)  # folders of the package a notebook's kernel never imports
RECORDINGS = PACKAGE / "recordings"
HOW_STORED = ("authoring/learner_notebooks.py",)
HOW_TRANSLATED = ("authoring/translated_notebooks.py", "authoring/notebook_translations.py",
                  "authoring/texts/translated_notebooks.toml")


def package_files() -> list[Path]:
    """The package's files a kernel may read (listed once a run: digest() takes them)."""
    found = []
    for path in sorted(PACKAGE.rglob("*")):
        relative = path.relative_to(PACKAGE).parts
        if (not path.is_file() or "__pycache__" in relative or relative[0] in NOT_IMPORTED
                or path.suffix == ".pyc" or relative[0] == "recordings"):
            continue
        found.append(path)
    return found


def recording_of(stem: str, language: str) -> Path:
    return (RECORDINGS if language == SOURCE else RECORDINGS / language) / f"{stem}.json"


def _cells(path: Path) -> str:
    notebook = nbformat.read(path, as_version=4)
    return json.dumps([[cell.get("id"), cell.cell_type, cell.source, cell.metadata.get("tags", [])]
                       for cell in notebook.cells] + [notebook.metadata.get("looplab", {})], sort_keys=True)


def digest(stem: str, language: str, package: list[Path] | None = None) -> str:
    """The digest of everything the outputs of `stem` in `language` can depend on (see the module's docstring)."""
    parts = [_cells(SOLUTIONS / f"{stem}.ipynb"), json.dumps(sys.version_info[:2])]
    files = [*(package if package is not None else package_files()), recording_of(stem, language),
             ROOT / "requirements.txt", *(ROOT / name for name in HOW_STORED)]
    if language != SOURCE:
        files += [TRANSLATIONS / language / f"{stem}.toml", *(ROOT / name for name in HOW_TRANSLATED)]
    hasher = hashlib.sha256()
    for part in parts:
        hasher.update(part.encode("utf-8") + b"\0")
    for path in files:
        hasher.update(str(path.relative_to(ROOT)).encode() + b"\0")
        hasher.update(path.read_bytes() if path.exists() else b"(absent)")
        hasher.update(b"\0")
    return hasher.hexdigest()[:16]


def key(stem: str, language: str) -> str:
    return f"{language}/{stem}"


def recorded() -> dict[str, str]:
    return json.loads(RECORD.read_text(encoding="utf-8")) if RECORD.exists() else {}


def up_to_date(stem: str, language: str, package: list[Path] | None = None) -> bool:
    """Whether the solution's stored outputs were made from today's inputs (and it is on disk)."""
    solution = solutions_in(language) / f"{stem}.ipynb"
    return solution.exists() and recorded().get(key(stem, language)) == digest(stem, language, package)


def remember(stem: str, language: str) -> None:
    """Record that the solution's outputs were just made from today's inputs (after its run and any re-authoring)."""
    record = recorded()
    record[key(stem, language)] = digest(stem, language)
    RECORD.parent.mkdir(exist_ok=True)
    RECORD.write_text(json.dumps(dict(sorted(record.items())), indent=1) + "\n", encoding="utf-8")

