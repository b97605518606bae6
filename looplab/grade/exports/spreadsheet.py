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
"""

from __future__ import annotations

import csv
import re
from pathlib import Path
from typing import Iterable

from ..shared.gradebook import CSV_COLUMNS, Row

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


def write_csv_rows(path: Path, header: list[str], rows: Iterable[list], byte_order_mark: bool = False) -> None:
    """A CSV file (UTF-8), header first, every text cell on one line (one_line) and escaped with safe_cell.

    `byte_order_mark`: start with UTF-8's BOM, for the files an instructor opens in Excel (the Canvas file,
    unmatched.csv): without it Excel reads the local code page, and accents come out garbled."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="", encoding="utf-8-sig" if byte_order_mark else "utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow([safe_cell(one_line(cell)) for cell in header])
        for row in rows:
            writer.writerow([safe_cell(one_line(cell)) for cell in row])


def write_csv(rows: list[Row], path: Path) -> None:
    """The gradebook; every text cell on one line and escaped (write_csv_rows)."""
    write_csv_rows(path, CSV_COLUMNS, (r.as_csv() for r in rows))
