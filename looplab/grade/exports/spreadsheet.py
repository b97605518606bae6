r"""Writing CSV files a spreadsheet opens safely: every CSV the grader writes goes through here,
the gradebook's (`write_csv`) among them.

A spreadsheet reads a cell that starts with `=`, `+`, `-` or `@` as a formula (and some also after a
tab or a carriage return), so a learner folder named `=HYPERLINK(...)` would run in the instructor's
spreadsheet. Such a text cell gets a leading apostrophe, `'=2+3`, which every spreadsheet shows as
text. Numbers are written as numbers: a score is never negative, and the points must stay numeric
for a gradebook import.

Every text cell is also written on one line (`one_line`): a line break becomes ` ⏎ `, any other control
character a space. A learner's exception text can carry `\r\n` and a line that looks like a row
(`mallory,01_one_tool_call,1.1,2,2,solved`); quoted, it is still valid CSV, but `grep`, `wc -l` and a
reader by eye would see it as a row of its own. No export needs a cell of several lines: Canvas takes
names and points, Gradescope's results are JSON, and the feedback notebooks keep the messages whole.

Each file is written in a `Dialect`: its separator, decimal mark and byte-order mark. The files a teacher opens
(the wide table, unmatched.csv, and the gradebook in a language other than English) are written as the class's
spreadsheet reads them (`for_spreadsheet`: texts/spreadsheet.toml's separator, numbers.py's decimal mark, and
UTF-8's byte-order mark, without which Excel reads the local code page and `Núñez` shows as `NÃºÃ±ez`): Excel in
a French locale splits a file on `;`, not `,`, and reads `2,5` as a number, so a French class's files are
`;`-separated with decimal commas and open in columns. The English gradebook stays the plain UTF-8 CSV with commas
that scripts have always read (`gradebook_dialect`). The Canvas file is Canvas's format whatever the class speaks
(`CANVAS`: commas, decimal points, the byte-order mark Canvas ignores).
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from ...catalogue import words
from ..shared import numbers
from ..shared.gradebook import Row, csv_columns

# How the class's spreadsheet reads a CSV (texts/spreadsheet.toml): its list separator, in the report's language.
WORDS = words(__file__)


@dataclass(frozen=True)
class Dialect:
    """How a CSV file is written: its separator, its decimal mark, and whether it starts with UTF-8's BOM."""
    separator: str = ","
    decimal_mark: str = "."
    byte_order_mark: bool = False


PLAIN = Dialect()  # what a script reads: commas, decimal points, no BOM
CANVAS = Dialect(byte_order_mark=True)  # Canvas's import format; the BOM for Excel (Canvas reads it either way)


def for_spreadsheet() -> Dialect:
    """A file a teacher opens in a spreadsheet, as the class's language writes it: its separator and decimal mark
    (`;` and `,` in French, where Excel splits on `;`), and the BOM."""
    return Dialect(WORDS("separator"), numbers.WORDS("decimal_mark"), True)


def gradebook_dialect() -> Dialect:
    """The gradebook (grades.csv): in English the plain CSV scripts have always read; in a language whose
    spreadsheets split on another separator, a spreadsheet's file (for_spreadsheet), since no script reads it as
    plain CSV anyway."""
    spreadsheet = for_spreadsheet()
    return PLAIN if spreadsheet.separator == PLAIN.separator else spreadsheet

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def safe_cell(value):
    """A cell as a spreadsheet will show it, never as a formula: '=2+3' -> "'=2+3"; numbers unchanged."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value


LINE_BREAK = " ⏎ "
CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")  # what is left once lines are joined: tabs, escapes, NUL...


def one_line(value):
    r"""A text cell on one line: 'a\r\nb' -> 'a ⏎ b' (every line break str.splitlines knows), other control
    characters a space ('a\tb' -> 'a b'); numbers unchanged."""
    if not isinstance(value, str):
        return value
    return CONTROL.sub(" ", LINE_BREAK.join(value.splitlines()))


def number_cell(value, dialect: Dialect):
    """A number as the dialect writes it: 2.5 -> '2,5' with a decimal comma; whole numbers and text unchanged."""
    if isinstance(value, float) and not isinstance(value, bool):
        return repr(value).replace(".", dialect.decimal_mark)
    return value


def write_csv_rows(path: Path, header: list[str], rows: Iterable[list], dialect: Dialect = PLAIN) -> None:
    """A CSV file (UTF-8) in `dialect`, header first, every text cell on one line (one_line) and escaped with
    safe_cell, every decimal number with the dialect's mark."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="", encoding="utf-8-sig" if dialect.byte_order_mark else "utf-8") as handle:
        writer = csv.writer(handle, delimiter=dialect.separator)
        writer.writerow([safe_cell(one_line(cell)) for cell in header])
        for row in rows:
            writer.writerow([number_cell(safe_cell(one_line(cell)), dialect) for cell in row])


def write_csv(rows: list[Row], path: Path, dialect: Dialect | None = None) -> None:
    """The gradebook, its column names in the current language (gradebook_dialect unless told); every text cell on
    one line and escaped (write_csv_rows)."""
    write_csv_rows(path, csv_columns(), (r.as_csv() for r in rows), dialect or gradebook_dialect())
