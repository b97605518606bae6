"""The first difference between two JSON values, with its path: what a failure message names.

A check that compares what the learner's code built with what it should be (a history, a request, a
result) says where the two part, in full: `messages[2].content[0].tool_use_id: yours 'toolu_x',
expected 'toolu_y'`. The path points at the field; both sides are shown whole, never cut to fit a
line, and they are the smallest values that differ, so they stay short. Each caller first puts both
sides in the form the API compares (recordings.canonical_blocks, results matched by id...), then
asks here where they part.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from ..catalogue import catalogue, fill, readable_repr
from ..history import to_wire

TEXTS, _ = catalogue(__file__)  # the words: texts/difference.toml


class _Absent:
    """No such field, or no such item: one side of a difference that the other side has."""

    def __repr__(self) -> str:
        return TEXTS["absent"].said().passed


ABSENT = _Absent()


@dataclass(frozen=True)
class Difference:
    """Where two values part (a path such as `messages[2].content[0].tool_use_id`), and each side there."""

    path: str
    yours: Any
    expected: Any

    def __str__(self) -> str:
        return fill(TEXTS["difference"].said().passed, path=self.path, yours=shown(self.yours),
                                                        expected=shown(self.expected))


def first_difference(yours: Any, expected: Any, path: str = "") -> Difference | None:
    """The first place where `yours` and `expected` differ, walking expected's fields in order, then
    the fields only yours has; None if they are the same JSON. SDK objects count as their JSON."""
    return _walk(to_wire(yours), to_wire(expected), path)


def _walk(yours: Any, expected: Any, path: str) -> Difference | None:
    if isinstance(yours, dict) and isinstance(expected, dict) and not _other_kinds(yours, expected):
        keys = list(expected) + [key for key in yours if key not in expected]
        for key in keys:
            found = _walk(yours.get(key, ABSENT), expected.get(key, ABSENT), f"{path}.{key}" if path else key)
            if found:
                return found
        return None
    if isinstance(yours, list) and isinstance(expected, list):
        for index in range(max(len(yours), len(expected))):
            mine = yours[index] if index < len(yours) else ABSENT
            wanted = expected[index] if index < len(expected) else ABSENT
            found = _walk(mine, wanted, f"{path}[{index}]")
            if found:
                return found
        return None
    return None if _same(yours, expected) else Difference(path, yours, expected)


def _other_kinds(yours: dict, expected: dict) -> bool:
    """Two blocks of different types (a text block where a tool_use was expected) are not compared field by field."""
    return "type" in yours and "type" in expected and yours["type"] != expected["type"]


def _same(yours: Any, expected: Any) -> bool:
    """Equal as JSON: True is not 1, and "2" is not 2."""
    return type(yours) is type(expected) and yours == expected or (
        isinstance(yours, (int, float)) and isinstance(expected, (int, float))
        and not isinstance(yours, bool) and not isinstance(expected, bool) and yours == expected)


def shown(value: Any) -> str:
    """A value as the learner wrote it, whole: a string as Python writes it, the rest as compact JSON."""
    if value is ABSENT or isinstance(value, str):
        return readable_repr(value)
    return json.dumps(to_wire(value), ensure_ascii=False, default=repr)
