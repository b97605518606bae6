"""The course's words, read from TOML catalogues: the one seam where the course changes language.

Every word a learner reads from the package (a check's panel and messages, the exercises' hints)
sits in a catalogue, texts/<module>.toml beside the module that speaks with it, never in the code, so
a message is reworded, or translated, without reading Python. LANGUAGE picks the column.
"""

from __future__ import annotations

import functools
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

LANGUAGE = "en"  # the language of every text a learner reads; see Text


@dataclass(frozen=True)
class Text:
    """Everything a learner may read about one expectation (or one situation), in one row of a table.

    `failed` and `passed` are `str.format` templates over the values the checker passes (and
    `situation`); `hint` is plain words, never formatted, so it can show code with braces.
    A second language is a column: a row's [key.fr] sub-table becomes `other={"fr": Text(...)}`, and
    LANGUAGE picks it.
    """

    failed: str = ""
    hint: str = ""
    passed: str = ""
    other: dict = field(default_factory=dict, compare=False)

    def said(self) -> "Text":
        return self.other.get(LANGUAGE, self)


class Hints(list):
    """An exercise's hints, one more each time the learner asks; other languages sit beside them, as in Text."""

    def __init__(self, hints=(), other: dict | None = None):
        super().__init__(hints)
        self.other = other or {}

    def said(self) -> list[str]:
        return list(self.other.get(LANGUAGE, self))


@functools.cache
def catalogue(module_file: str) -> tuple[dict[str, Text], dict[str, Hints]]:
    """The words of a module, read from texts/<its name>.toml beside it: its TEXTS and its HINTS.

    Each table of the file is a row, with Text's fields; `like = "key"` gives a row every field it
    does not write from another row, so words several rows share are written once. A second
    language is a sub-table of the same row, [key.fr], and [hints.fr] for the hints.
    """
    path = Path(module_file).parent / "texts" / f"{Path(module_file).stem}.toml"
    rows = tomllib.loads(path.read_text(encoding="utf-8"))
    hints = rows.pop("hints", {})
    translated_hints = {language: hints.pop(language) for language in _languages(hints)}
    texts = {key: _text(rows, key) for key in rows}
    return texts, {exercise: Hints(items, {language: table[exercise] for language, table in translated_hints.items()
                                           if exercise in table})
                   for exercise, items in hints.items()}


def _languages(table: dict) -> list[str]:
    """The sub-tables of a row (or of the hints): one a language."""
    return [name for name, value in table.items() if isinstance(value, dict)]


def _text(rows: dict, key: str) -> Text:
    other = {language: Text(**_fields(rows, key, language)) for language in _languages(rows[key])}
    return Text(**_fields(rows, key, None), other=other)


def _fields(rows: dict, key: str, language: str | None) -> dict:
    """A row's fields in one language (None: the row itself), over those of the row it is `like`."""
    row = rows[key]
    own = row.get(language, row) if language else row
    lent = _fields(rows, row["like"], language) if "like" in row else {}
    return lent | {name: value for name, value in own.items() if name != "like" and not isinstance(value, dict)}
