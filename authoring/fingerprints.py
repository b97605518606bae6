"""`python -m authoring stamp`: every French text that records which English it translates, in one list.

A translator's French records `of`, the fingerprint of the English it was made from
(notebook_translations.fingerprint): when the English changes, the fingerprint no longer matches and the
French is stale until someone re-reads it. Three kinds of file hold such rows, and an author adding a
notebook writes all three:

- the catalogues (looplab/**/texts/*.toml, authoring/texts/*.toml): a row's `[<key>.fr]`, an exercise's
  hints under `[hints.fr]` (catalogue_translations.py); the manifest's words (titles, `builds:<stem>`) are
  the catalogue looplab/texts/course.toml;
- the notebooks' words (translations/<lang>/<stem>.toml): each markdown cell's `[cells.<id>]`
  (notebook_translations.py; a code cell's tokens are matched by their English, so they carry no `of`);
- the audit rows (looplab/checks/audit/*.toml): `fr = { instruction = "...", of = "..." }` (audit.py),
  keyed here `<exercise>#<n>`, the n-th row of that exercise.

    python -m authoring stamp                 list every French text missing, new (no `of` yet) or stale
    python -m authoring stamp --new           stamp every French text written for the first time (no `of` yet)
    python -m authoring stamp FILE KEY...     stamp these, re-read by a translator after their English changed

Stamping is the translator's word that the French is right for today's English: `--new` only fills in
rows that never had an `of`, and a stale row is stamped only by name. The file is edited with tomlkit,
so every other line stays as the translator wrote it. `python -m authoring notebooks` runs `problems()`
before it writes anything, and stops on any row listed here (a notebook's missing cells only skip its
French edition: translating comes after the English is settled).
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path

import tomlkit

from looplab.course import COURSE

from . import audit as audit_rows
from . import SOLUTIONS
from . import catalogue_translations as catalogues
from .notebook_translations import TRANSLATIONS, english_notebook, fingerprint, read, source_of

ROOT = Path(__file__).resolve().parent.parent
LANGUAGE = catalogues.TRANSLATED  # "fr"
STATES = ("missing", "new", "stale")  # and "ok"
AUDIT_KEY = "{exercise}#{number}"


@dataclass(frozen=True)
class Row:
    """One French text that records its English: where it is, its key there, and how it stands."""

    kind: str  # "catalogue", "notebook", "audit"
    path: Path
    key: str
    state: str  # "missing" (no French), "new" (French, no `of`), "stale" (`of` not today's English's), "ok"
    english: str  # the English it translates, as its fingerprint is taken
    todo: str = ""  # what to do, where the state alone does not say it

    @property
    def where(self) -> str:
        return str(self.path.relative_to(ROOT))

    def fix(self) -> str:
        """The one thing to do about this row, with the command that does it."""
        if self.todo:
            return self.todo
        if self.state == "missing":
            if self.kind == "notebook":
                return (f"translate it (`python -m authoring translations skeleton --lang {LANGUAGE} "
                        f"{self.path.stem}` writes a todo entry)")
            return f"write its {LANGUAGE} text, then `python -m authoring stamp --new`"
        if self.state == "new":
            return "`python -m authoring stamp --new`"
        return (f"re-read the French against the English now ({self.english[:60]!r}...), fix it, then "
                f"`python -m authoring stamp {self.where} {self.key}`")

    def line(self) -> str:
        return f"{self.state:<8} {self.where}  {self.key}: {self.fix()}"


# --- where the rows are ----------------------------------------------------------------------------------


def catalogue_rows() -> list[Row]:
    found = []
    for path in catalogues.catalogues():
        table = catalogues.read(path)
        for state in catalogues.states(path):
            found.append(Row("catalogue", path, state.key, state.what, catalogues.english(path, table, state.key)))
    return found


def notebook_rows(stems: list[str] | None = None) -> list[Row]:
    """The markdown cells of each notebook's translation (missing when the notebook has no entry for one). A notebook
    the manifest names before its solution is written has no cells yet: the regeneration says it is missing."""
    found = []
    for stem in stems or COURSE.stems:
        path = TRANSLATIONS / LANGUAGE / f"{stem}.toml"
        if not (SOLUTIONS / f"{stem}.ipynb").exists():
            continue
        cells = read(stem, LANGUAGE) or {}
        for cell in english_notebook(stem)["cells"]:
            if cell["cell_type"] != "markdown":
                continue
            entry, english = cells.get(cell["id"]), source_of(cell)
            if not isinstance(entry, dict) or "text" not in entry or entry.get("todo"):
                state = "missing"
            elif "of" not in entry:
                state = "new"
            else:
                state = "ok" if entry["of"] == fingerprint(english) else "stale"
            found.append(Row("notebook", path, cell["id"], state, english))
    return found


def audit_file_rows() -> list[Row]:
    found = []
    for path in [audit_rows.audit_file(audit_rows.COMMON)] + [audit_rows.audit_file(n.checks) for n in COURSE.notebooks]:
        for exercise, rows in audit_rows.read_table(path).items():
            for number, row in enumerate(rows, 1):
                french = getattr(row, LANGUAGE) or {}
                if not french.get("instruction"):
                    state = "missing"
                elif "of" not in french:
                    state = "new"
                else:
                    state = "ok" if french["of"] == fingerprint(row.instruction) else "stale"
                key = AUDIT_KEY.format(exercise=exercise, number=number)
                found.append(Row("audit", path, key, state, row.instruction))
    return found


MANIFEST_WORDS = ROOT / "looplab" / "texts" / "course.toml"


def manifest_rows() -> list[Row]:
    """The rows the manifest needs in looplab/texts/course.toml and lacks: each notebook's title and `builds`,
    and the title of each exercise titled by more than its name; and a row whose English is not the manifest's."""
    table = catalogues.read(MANIFEST_WORDS)
    wanted = {notebook.stem: notebook.title for notebook in COURSE.notebooks}
    wanted |= {f"builds:{notebook.stem}": notebook.builds for notebook in COURSE.notebooks}
    wanted |= {exercise.id: exercise.title for exercise in COURSE.exercises if exercise.title != exercise.name}
    found = []
    for key, english in wanted.items():
        row = table.get(key)
        if row is None:
            todo = (f"add [\"{key}\"] with text = {english!r} (the manifest's words) and [\"{key}\".{LANGUAGE}] with its "
                    f"text, then `python -m authoring stamp --new`")
            found.append(Row("catalogue", MANIFEST_WORDS, key, "missing", english, todo))
        elif row.get("text") != english:
            todo = f"its text is {row.get('text')!r}; the manifest says {english!r}: make it so, and re-read the French"
            found.append(Row("catalogue", MANIFEST_WORDS, key, "stale", english, todo))
    return found


def audit_file_rows_of_every_exercise() -> list[Row]:
    """An exercise of the manifest with no audit row at all (the audit page and the guide need its rows)."""
    found = []
    for exercise in COURSE.exercises:
        try:
            audit_rows.audit_rows(exercise)
        except audit_rows.Incomplete as error:  # its words: which exercise, which file, which fields
            path = audit_rows.audit_file(COURSE.notebook_of(exercise.id).checks)
            found.append(Row("audit", path, exercise.id, "missing", exercise.title, str(error)))
    return found


def every_row() -> list[Row]:
    return catalogue_rows() + notebook_rows() + audit_file_rows()


def problems() -> tuple[list[Row], list[Row]]:
    """What `make notebooks` must hear about before it writes anything: (rows that stop it, notebooks' missing
    cells, which only skip that notebook's French edition)."""
    waiting = [row for row in every_row() if row.state != "ok"]
    stopping = [row for row in waiting if not (row.kind == "notebook" and row.state == "missing")]
    stopping += manifest_rows() + audit_file_rows_of_every_exercise()
    return stopping, [row for row in waiting if row.kind == "notebook" and row.state == "missing"]


# --- stamping -------------------------------------------------------------------------------------------


def _french_table(row: Row, document):
    """The tomlkit table that holds this row's `of`."""
    if row.kind == "notebook":
        return document["cells"][row.key]
    if row.kind == "audit":
        exercise, number = row.key.rsplit("#", 1)
        return document[exercise][int(number) - 1][LANGUAGE]
    if row.key.startswith(catalogues.HINTS_PREFIX):
        french = document["hints"].setdefault(LANGUAGE, tomlkit.table())
        return french.setdefault("of", tomlkit.table())
    return document[row.key][LANGUAGE]


def _header(row: Row) -> "re.Pattern | None":
    """The line that opens the table of this row's French (`[key.fr]`, `["8.1".fr]`, `[cells.<id>]`); None for a row
    whose French has no header of its own (an audit row's inline table, the hints' table of fingerprints)."""
    if row.kind == "notebook":
        return re.compile(rf"^\[cells\.{re.escape(row.key)}\][ \t]*$", re.MULTILINE)
    if row.kind == "catalogue" and not row.key.startswith(catalogues.HINTS_PREFIX):
        key = rf'(?:{re.escape(row.key)}|"{re.escape(row.key)}")'
        return re.compile(rf"^\[{key}\.{LANGUAGE}\][ \t]*$", re.MULTILINE)
    return None


def stamp(row: Row) -> str:
    """Write the fingerprint of the row's English today into its French's `of`; returns it."""
    if row.state == "missing":
        raise KeyError(f"{row.where} has no {LANGUAGE} text for {row.key!r} to stamp: {row.fix()}")
    mark = fingerprint(row.english)
    source = row.path.read_text(encoding="utf-8")
    document = tomlkit.parse(source)
    table = _french_table(row, document)
    header = _header(row)
    if "of" not in table and header is not None and len(header.findall(source)) == 1:
        # first in its table, under its header: appended at the table's end, it would land after the comment that
        # opens the next section, and move to whichever table is later written above that comment
        row.path.write_text(header.sub(lambda match: f'{match.group(0)}\nof = "{mark}"', source, count=1),
                            encoding="utf-8")
        return mark
    if row.key.startswith(catalogues.HINTS_PREFIX) and row.kind == "catalogue":
        table[row.key[len(catalogues.HINTS_PREFIX):]] = mark
    elif row.kind == "audit" and "of" not in table:  # an inline table: `{ instruction = "...", of = "..." }`
        table["of"] = mark
        table.add(tomlkit.ws(" "))
    else:
        table["of"] = mark
    row.path.write_text(tomlkit.dumps(document), encoding="utf-8")
    return mark


def _named(rows: list[Row], argument: str, keys: list[str]) -> list[Row]:
    path = (Path.cwd() / argument).resolve()
    path = path if path.exists() else (ROOT / argument).resolve()
    chosen = []
    for key in keys:
        match = [row for row in rows if row.path.resolve() == path and row.key == key]
        if not match:
            raise SystemExit(f"stamp: no French text {key!r} in {argument} (`python -m authoring stamp` lists them)")
        chosen += match
    return chosen


def main(argv: list[str]) -> int:
    rows = every_row()
    if not argv:
        stopping, skipping = problems()
        waiting = stopping + skipping
        print("\n".join(row.line() for row in waiting))
        counts = ", ".join(f"{sum(row.state == state for row in waiting)} {state}" for state in STATES)
        print(f"{len(rows)} French texts that record their English; {counts}")
        return 1 if waiting else 0
    if argv == ["--new"]:
        chosen = [row for row in rows if row.state == "new"]
    elif len(argv) >= 2 and not argv[0].startswith("-"):
        chosen = _named(rows, argv[0], argv[1:])
    else:
        print(__doc__.split("\n\n")[2], file=sys.stderr)
        return 2
    for row in chosen:
        print(f'of = "{stamp(row)}"  {row.where}  {row.key}')
    if not chosen:
        print("nothing to stamp")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
