"""Writing CSV files a spreadsheet opens safely: every CSV the grader writes goes through here,
the gradebook's (`write_csv`) among them.

A spreadsheet reads a cell that starts with `=`, `+`, `-` or `@` as a formula (and some also after a
tab or a carriage return), so a learner folder named `=HYPERLINK(...)` would run in the instructor's
spreadsheet. Such a text cell gets a leading apostrophe, `'=2+3`, which every spreadsheet shows as
text. Numbers are written as numbers: a score is never negative, and the points must stay numeric
for a gradebook import.
"""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Iterable

from ..shared.gradebook import CSV_COLUMNS, Row

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def safe_cell(value):
    """A cell as a spreadsheet will show it, never as a formula: '=2+3' -> "'=2+3"; numbers unchanged."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value


def write_csv_rows(path: Path, header: list[str], rows: Iterable[list]) -> None:
    """A CSV file (UTF-8), header first, every text cell escaped with safe_cell."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow([safe_cell(cell) for cell in header])
        for row in rows:
            writer.writerow([safe_cell(cell) for cell in row])


def write_csv(rows: list[Row], path: Path) -> None:
    """The gradebook; a cell a spreadsheet would run as a formula is escaped (safe_cell)."""
    write_csv_rows(path, CSV_COLUMNS, (r.as_csv() for r in rows))
