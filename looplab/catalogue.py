"""The course's words, read from TOML catalogues: the one seam where the course changes language.

Every word a learner reads from the package (a check's panel and messages, the exercises' hints)
sits in a catalogue, texts/<module>.toml beside the module that speaks with it, never in the code, so
a message is reworded, or translated, without reading Python. `language.current()` picks the column
(the notebook's language, or LOOPLAB_LANG). A translated row records in `of` the fingerprint of the
English it translates (authoring/notebook_translations.py: `fingerprint`), so a reworded English row
shows its translation stale; `of` is for the tests, never read here.
"""

from __future__ import annotations

import functools
import re
import string
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import language


@dataclass(frozen=True)
class Text:
    """Everything a learner may read about one expectation (or one situation), in one row of a table.

    `failed` and `passed` are `str.format` templates over the values the checker passes (and
    `situation`); `hint` is plain words, never formatted, so it can show code with braces.
    A second language is a column: a row's [key.fr] sub-table becomes `other={"fr": Text(...)}`, and
    language.current() picks it.
    """

    failed: str = ""
    hint: str = ""
    passed: str = ""
    # The hint of the situation being tested, where it has one, before this row's own: a failure whose cure is
    # the situation's point (notebook 6's "run_tool raised" while a tool misbehaves in one way or another). Set on
    # the row in the source language; the workshop guide reads it too, so that it shows the hint the learner sees.
    situation_hint: bool = False
    other: dict = field(default_factory=dict, compare=False)

    def said(self) -> "Text":
        return self.other.get(language.current(), self)


class Hints(list):
    """An exercise's hints, one more each time the learner asks; other languages sit beside them, as in Text."""

    def __init__(self, hints=(), other: dict | None = None):
        super().__init__(hints)
        self.other = other or {}

    def said(self) -> list[str]:
        return list(self.other.get(language.current(), self))


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
    translated_hints = {name: hints.pop(name) for name in _languages(hints)}
    texts = {key: _text(rows, key) for key in rows}
    return texts, {exercise: Hints(items, {name: table[exercise] for name, table in translated_hints.items()
                                           if exercise in table})
                   for exercise, items in hints.items()}


def _languages(table: dict) -> list[str]:
    """The sub-tables of a row (or of the hints): one a language."""
    return [name for name, value in table.items() if isinstance(value, dict)]


def _text(rows: dict, key: str) -> Text:
    other = {name: Text(**_fields(rows, key, name)) for name in _spoken(rows, key)}
    return Text(**_fields(rows, key, None), other=other)


def _spoken(rows: dict, key: str) -> list[str]:
    """The languages a row speaks: its own sub-tables, and those of the row it is `like` (a row that
    writes no words of its own speaks every language its model does, with no sub-table to keep)."""
    row = rows[key]
    own = _languages(row)
    lent = _spoken(rows, row["like"]) if "like" in row else []
    return own + [name for name in lent if name not in own]


def _fields(rows: dict, key: str, name: str | None) -> dict:
    """A row's fields in one language (None: the row itself), over those of the row it is `like`."""
    row = rows[key]
    own = row.get(name, row) if name else row
    lent = _fields(rows, row["like"], name) if "like" in row else {}
    return lent | {field: value for field, value in own.items()
                   if field not in ("like", "of") and not isinstance(value, dict)}


NO_BREAK_ESCAPES = re.compile(r"(?<!\\)((?:\\\\)*)\\(xa0|u202f)")  # \xa0 or \u202f as repr writes them


def readable_repr(value: Any) -> str:
    """repr(value), the no-break spaces of French typography kept as they are: repr writes them as escapes
    (`'Combien font 4823 × 1979\\u202f?'`), and a French message quoting a French text would show those."""
    return NO_BREAK_ESCAPES.sub(lambda found: found.group(1) + ("\xa0" if found.group(2) == "xa0" else "\u202f"),
                                repr(value))


class _Readable(string.Formatter):
    def convert_field(self, value: Any, conversion: str | None) -> Any:
        return readable_repr(value) if conversion == "r" else super().convert_field(value, conversion)


_READABLE = _Readable()


def fill(template: str, **values: Any) -> str:
    """`template.format(**values)`, but `{value!r}` quotes a text with its no-break spaces as they are."""
    return _READABLE.format(template, **values)


class Words:
    """The words of a module that is not a check (the client's mode line, the viewer's labels, the
    doctor's lines...): `WORDS("key", **values)` is the row's text in the current language, a
    `str.format` template filled with `values` (a row said with no values is never formatted, so it
    may show code with braces)."""

    def __init__(self, rows: dict[str, dict[str, str]], where: str = ""):
        self.rows = rows  # key -> {language: text}
        self.where = where

    def __call__(self, key: str, **values) -> str:
        row = self.rows[key]
        template = row.get(language.current(), row[language.SOURCE])
        return fill(template, **values) if values else template

    def __contains__(self, key: str) -> bool:
        return key in self.rows


@functools.cache
def words(module_file: str) -> Words:
    """The words of a module, from texts/<its name>.toml beside it: one table a key, `text = "..."` in
    English and `[key.fr]` with `text` (and `of`, the fingerprint of the English it translates)."""
    path = Path(module_file).parent / "texts" / f"{Path(module_file).stem}.toml"
    rows = tomllib.loads(path.read_text(encoding="utf-8"))
    return Words({key: {language.SOURCE: row["text"]} | {name: value["text"] for name, value in row.items()
                                                         if isinstance(value, dict)}
                  for key, row in rows.items()}, str(path))
