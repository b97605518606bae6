"""`python -m authoring catalogues`: where the catalogues' French stands, and stamping a re-checked row.

Every word the package says sits in a TOML catalogue (looplab/catalogue.py): the checks' in
looplab/checks/texts/, every other module's in texts/<module>.toml beside it. A French row, [key.fr],
records in `of` the fingerprint of the English it translates; when the English changes, the stored
fingerprint no longer matches and the suite fails (tests/test_translations_catalogues.py) until a
translator has re-read the French and stamps it again, with `python -m authoring stamp` (fingerprints.py,
which stamps the notebooks' and the audit's French rows too).

    python -m authoring catalogues                      what is missing, new (no `of`) or stale, by file and key

A KEY is a row's key (`mode_offline`, `2.3`), or `hints:<exercise>` for an exercise's hints. docs/TRANSLATING.md
is the translator's guide.
"""

from __future__ import annotations

import json
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
    """Every catalogue: the package's (the checks', rows of Text fields and hints, and the Words of the others),
    then the maintainer's tools' (authoring/texts/: the generated pages' words)."""
    return sorted(PACKAGE.glob("**/texts/*.toml")) + sorted((ROOT / "authoring" / "texts").glob("*.toml"))


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
    words = {name: value for name, value in _fields(table, key, None).items() if isinstance(value, str)}
    return json.dumps(words, sort_keys=True, ensure_ascii=False)  # (a flag such as situation_hint holds no words)


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
    if argv[:1] == ["stamp"]:
        print("stamping is `python -m authoring stamp` now (every French text's `of`, catalogues or not)",
              file=sys.stderr)
        return 2
    return report([_path(argument) for argument in argv] or catalogues())


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
