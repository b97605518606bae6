"""Numbers as the class's language writes them: `22.4 s` and `10,000` in English, `22,4 s` and `10 000` in French.

The marks are words of the language (texts/numbers.toml: the decimal mark, the thousands separator), so a number
the grader says in a sentence, a status or a spreadsheet cell follows the catalogue's column like every other
word (`language.current()`), with no `if language == ...` in the code.
"""

from __future__ import annotations

from ...catalogue import words

WORDS = words(__file__)  # texts/numbers.toml: the decimal mark and the thousands separator of each language


def integer(value: int) -> str:
    """A whole number with its thousands grouped: 10000 -> '10,000' (English), '10 000' (French, a narrow no-break
    space)."""
    return f"{value:,}".replace(",", WORDS("thousands"))


def decimal(value: float, places: int | None = None) -> str:
    """A number with the language's decimal mark: 22.4 -> '22.4' / '22,4'; `places` fixed digits (2 -> '0.50'),
    else as short as it reads (`:g`: 5.0 -> '5', 2.5 -> '2.5')."""
    shown = f"{value:.{places}f}" if places is not None else f"{value:g}"
    return shown.replace(".", WORDS("decimal_mark"))
