"""`python -m authoring catalogues`: where the catalogues' French stands, and stamping a re-checked row.

Every word the package says sits in a TOML catalogue (looplab/catalogue.py): the checks' in
looplab/checks/texts/, every other module's in texts/<module>.toml beside it. A French row, [key.fr],
records in `of` the fingerprint of the English it translates; when the English changes, the stored
fingerprint no longer matches and the suite fails (tests/test_translations_catalogues.py) until a
translator has re-read the French and stamps it again. Stamping is the translator's word that the French
is right for today's English, so this never stamps a row nobody named: a key, or `--all-new` for rows that
have no `of` yet (a French row written for the first time).

    python -m authoring catalogues                      what is missing, new (no `of`) or stale, by file and key
    python -m authoring catalogues stamp FILE KEY...    record the English's fingerprint in these rows' `of`
    python -m authoring catalogues stamp --all-new [FILE...]   ...in every French row that has no `of` yet

A KEY is a row's key (`mode_offline`, `2.3`), or `hints:<exercise>` for an exercise's hints. docs/TRANSLATING.md
is the translator's guide.
"""

from __future__ import annotations

import json
import re
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

from looplab.catalogue import _fields

from .notebook_translations import fingerprint

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "looplab"
CHECKS = PACKAGE / "checks" / "texts"
TRANSLATED = "fr"  # the language the catalogues are translated into (looplab.language.LANGUAGES[1:])
HINTS_PREFIX = "hints:"


def catalogues() -> list[Path]:
    """Every catalogue of the package: the checks' (rows of Text fields, and hints) and the Words of the others."""
    return sorted(PACKAGE.glob("**/texts/*.toml"))


def is_checks(path: Path) -> bool:
    return path.parent == CHECKS


def read(path: Path) -> dict:
    return tomllib.loads(path.read_text(encoding="utf-8"))


def row_keys(path: Path, table: dict | None = None) -> list[str]:
    """The keys of a catalogue's rows that hold words of their own (a checks catalogue's hints are not a row,
    and a row that only borrows, `like = "other"` and nothing else, speaks every language its lender speaks)."""
    table = read(path) if table is None else table
    return [key for key in table if not (is_checks(path) and key == "hints") and not _only_borrows(table[key])]


def _only_borrows(row) -> bool:
    return isinstance(row, dict) and "like" in row and set(row) <= {"like"}


def english(path: Path, table: dict, key: str) -> str:
    """The English a French row translates, as its fingerprint is taken (docs/TRANSLATING.md): a Words row's
    text; a check row's fields, `like` applied, as sorted JSON; an exercise's hints (key `hints:<id>`) as a
    JSON list."""
    if key.startswith(HINTS_PREFIX):
        return json.dumps(table["hints"][key[len(HINTS_PREFIX):]], ensure_ascii=False)
    if not is_checks(path):
        return table[key]["text"]
    return json.dumps(_fields(table, key, None), sort_keys=True, ensure_ascii=False)


def translation(path: Path, table: dict, key: str):
    """The French of a row (a dict of fields) or of hints (a list); None when there is none."""
    if key.startswith(HINTS_PREFIX):
        return table.get("hints", {}).get(TRANSLATED, {}).get(key[len(HINTS_PREFIX):])
    return table[key].get(TRANSLATED)


def stored(path: Path, table: dict, key: str) -> str | None:
    """The fingerprint a French row records (None: not stamped yet)."""
    if key.startswith(HINTS_PREFIX):
        return table.get("hints", {}).get(TRANSLATED, {}).get("of", {}).get(key[len(HINTS_PREFIX):])
    french = table[key].get(TRANSLATED)
    return french.get("of") if isinstance(french, dict) else None


def all_keys(path: Path, table: dict) -> list[str]:
    """Every translatable thing of a catalogue: its rows, then its exercises' hints."""
    hints = table.get("hints", {}) if is_checks(path) else {}
    return row_keys(path, table) + [HINTS_PREFIX + exercise for exercise, value in hints.items()
                                    if isinstance(value, list)]


@dataclass(frozen=True)
class State:
    path: Path
    key: str
    what: str  # "missing" (no French), "new" (French, no `of`), "stale" (`of` not the English's), "ok"


def states(path: Path) -> list[State]:
    table = read(path)
    found = []
    for key in all_keys(path, table):
        if translation(path, table, key) is None:
            what = "missing"
        elif stored(path, table, key) is None:
            what = "new"
        else:
            what = "ok" if stored(path, table, key) == fingerprint(english(path, table, key)) else "stale"
        found.append(State(path, key, what))
    return found


# --- stamping: one line of TOML written, the rest of the file left as the translator wrote it ---------


def _header_names(key: str) -> set[str]:
    """How a row's French table may be headed: [key.fr], ["key".fr], ['key'.fr]."""
    return {f"[{name}.{TRANSLATED}]" for name in (key, f'"{key}"', f"'{key}'")}


def _table_end(lines: list[str], start: int) -> int:
    """The line after the table that opens at `start`: the next table's header, or the end."""
    for index in range(start + 1, len(lines)):
        if lines[index].startswith("["):
            return index
    return len(lines)


def _set_in_table(lines: list[str], header: int, name: str, value: str) -> None:
    """`name = "value"` in the table opened at line `header`: replace the line that sets it, or add one first."""
    assignment = re.compile(rf"^\s*{re.escape(name)}\s*=")
    for index in range(header + 1, _table_end(lines, header)):
        if assignment.match(lines[index]):
            lines[index] = f'{name} = "{value}"'
            return
    lines.insert(header + 1, f'{name} = "{value}"')


def stamp(path: Path, key: str) -> str:
    """Write the fingerprint of the row's English today into its French's `of`; returns it."""
    table = read(path)
    if (not key.startswith(HINTS_PREFIX) and key not in table) or translation(path, table, key) is None:
        raise KeyError(f"{path.relative_to(ROOT)} has no French for {key!r} to stamp")
    mark = fingerprint(english(path, table, key))
    lines = path.read_text(encoding="utf-8").split("\n")
    if key.startswith(HINTS_PREFIX):
        header = f"[hints.{TRANSLATED}.of]"
        if header not in (line.strip() for line in lines):
            while lines and not lines[-1].strip():
                lines.pop()
            lines += ["", header, ""]
        at = next(index for index, line in enumerate(lines) if line.strip() == header)
        _set_in_table(lines, at, json.dumps(key[len(HINTS_PREFIX):]), mark)
    else:
        at = next((index for index, line in enumerate(lines) if line.strip() in _header_names(key)), None)
        if at is None:  # the French is an inline table ([key] fr = {...}): the translator stamps it by hand
            raise KeyError(f"{path.relative_to(ROOT)}: no [{key}.{TRANSLATED}] table to write `of` in")
        _set_in_table(lines, at, "of", mark)
    path.write_text("\n".join(lines), encoding="utf-8")
    if stored(path, read(path), key) != mark:  # the file's layout fooled the line search: say so, never guess
        raise RuntimeError(f"{path.relative_to(ROOT)}: wrote `of` for {key!r}, but it does not read back")
    return mark


def _path(argument: str) -> Path:
    path = Path(argument)
    path = path if path.is_absolute() else (Path.cwd() / path)
    if not path.exists():
        path = ROOT / argument
    if path.resolve() not in [found.resolve() for found in catalogues()]:
        raise SystemExit(f"{argument} is not one of the package's catalogues (looplab/**/texts/*.toml)")
    return path.resolve()


def report(paths: list[Path]) -> int:
    """Print every row that needs a translator; 1 when there is one."""
    waiting = [state for path in paths for state in states(path) if state.what != "ok"]
    for state in waiting:
        print(f"{state.what:<8} {state.path.relative_to(ROOT)}  {state.key}")
    counts = {what: sum(state.what == what for state in waiting) for what in ("missing", "new", "stale")}
    print(f"{sum(len(states(path)) for path in paths)} rows; " + ", ".join(f"{n} {what}" for what, n in counts.items()))
    return 1 if waiting else 0


def main(argv: list[str]) -> int:
    if not argv or argv[0] != "stamp":
        return report([_path(argument) for argument in argv] or catalogues())
    arguments = argv[1:]
    if arguments[:1] == ["--all-new"]:
        paths = [_path(argument) for argument in arguments[1:]] or catalogues()
        chosen = [(state.path, state.key) for path in paths for state in states(path) if state.what == "new"]
    elif len(arguments) >= 2:
        path = _path(arguments[0])
        chosen = [(path, key) for key in arguments[1:]]
    else:
        print("usage: python -m authoring catalogues stamp FILE KEY... | stamp --all-new [FILE...]", file=sys.stderr)
        return 2
    for path, key in chosen:
        print(f"of = \"{stamp(path, key)}\"  {path.relative_to(ROOT)}  {key}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
