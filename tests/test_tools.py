"""Tests for the calculator tool: right answers, clear refusals, and no surprises."""

import keyword
import math
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from looplab.tools import CALCULATOR_TOOL, ERROR_PREFIX, TOOLS, calculator, is_error, run_tool

ONLY_ARITHMETIC = "only numbers and + - * / ( ) are allowed"


# --- examples ---------------------------------------------------------------

@pytest.mark.parametrize(
    "expression, expected",
    [
        ("4823 * 1979", "9544717"),
        ("4823 × 1979", "9544717"),
        ("  4823 × 1979\n", "9544717"),
        ("84 ÷ 4", "21.0"),
        ("2 + 3 * 4", "14"),
        ("10 - 4 - 3", "3"),
        ("(2 + 3) * 4", "20"),
        ("((1 + 2) * (3 + 4))", "21"),
        ("-3 + +5", "2"),
        ("-(2 - 7)", "5"),
        ("--3", "3"),
        ("0.1 + 0.2", repr(0.1 + 0.2)),
        ("1e3", "1000.0"),
        (".5 * 4", "2.0"),
        ("7 / 2", "3.5"),
        ("4 / 2", "2.0"),
        ("1 / 3", repr(1 / 3)),
        ("-0.0", "-0.0"),
    ],
)
def test_arithmetic_matches_python(expression, expected):
    assert calculator(expression) == expected
    assert not is_error(calculator(expression))


def test_division_by_zero():
    assert calculator("1 / 0") == "Error: division by zero"
    assert calculator("5 / (2 - 2)") == "Error: division by zero"
    assert calculator("1.5 / 0.0") == "Error: division by zero"


# --- refusals: each one has a specific reason and is fast ---------------------

HOSTILE = [
    ("x + 1", "found a name 'x'"),
    ("__import__('os').system('ls')", "found a function call"),
    ("abs(-3)", "found a function call"),
    ("(1).real", "found an attribute"),
    ("2**10000000", "found the operator **"),
    ("9**9**9", "found the operator **"),
    ("7 // 2", "found the operator //"),
    ("7 % 2", "found the operator %"),
    ("1 < 2", "found a comparison"),
    ("lambda: 1", "found a lambda"),
    ("'abc'", "found a string"),
    ("[1, 2]", "found a list"),
    ("1,000", "found a comma"),
    ("True", "found the value True"),
    ("1 and 2", "found the operator and"),
    ("1 | 2", "found the operator |"),
    ("4823 x 1979", "not a valid expression"),
    ("1 +", "not a valid expression"),
    ("", "the expression is empty"),
    ("   \n\t", "the expression is empty"),
    ("1" * 101, "number too long (at most 100 digits)"),
    ("1" * 10_000, "expression too long (10000 characters, at most 1000)"),
    ("(" * 1000 + "1" + ")" * 1000, "expression too long"),
    ("(" * 300 + "1" + ")" * 300, "nested too deeply"),
    ("-" * 999 + "1", "nested too deeply"),
    ("1+" * 500_000 + "1", "expression too long (1000001 characters, at most 1000)"),
    ("1\x00+2", "NUL byte"),
    ("1e999", "the result is too large"),
    ("1e308 * 10", "the result is too large"),
    ("*".join(["9" * 100] * 9) + " * 1.0", "the result is too large"),
    ("*".join(["9" * 100] * 9) + " / 3", "the result is too large"),
    ("0x" + "f" * 990, "the result is too large"),
]


@pytest.mark.parametrize("expression, reason", HOSTILE)
def test_hostile_input_gets_a_specific_error(expression, reason):
    """How long each takes is measured by benchmarks/calculator_hostile.py, not asserted here."""
    result = calculator(expression)
    assert result.startswith(ERROR_PREFIX)
    assert reason in result
    assert is_error(result)


def test_exact_wording_of_common_errors():
    assert calculator("x") == f"Error: {ONLY_ARITHMETIC}, found a name 'x'"
    assert calculator("2 ** 3") == f"Error: {ONLY_ARITHMETIC}, found the operator **"
    assert calculator("") == "Error: the expression is empty"


@pytest.mark.parametrize("value, type_name", [(42, "int"), (None, "NoneType"), (b"1+1", "bytes"), (["1"], "list")])
def test_non_string_input(value, type_name):
    assert calculator(value) == f"Error: the expression must be a string, got {type_name}"


def test_big_but_allowed_product_still_works():
    expression = "*".join(["9" * 100] * 5)  # about 500 digits: under the cap
    assert calculator(expression) == repr((10**100 - 1) ** 5)


# --- properties -------------------------------------------------------------

@settings(max_examples=300, deadline=None)
@given(st.text())
def test_never_raises_on_any_text(text):
    assert isinstance(calculator(text), str)


@settings(max_examples=200, deadline=None)
@given(st.one_of(st.none(), st.integers(), st.floats(), st.binary(), st.lists(st.integers()), st.dictionaries(st.text(), st.text())))
def test_never_raises_on_non_strings(value):
    assert calculator(value).startswith("Error: the expression must be a string")


# Each generated expression is a (text, expected) pair. `expected` is worked out here
# with Python's own operators as the tree is built, independently of the calculator.
# An expected error is carried as its error text, and the leftmost error wins, because
# the calculator evaluates left to right.
TOO_LARGE = "Error: the result is too large"


def _checked(value):
    if isinstance(value, float) and math.isinf(value):
        return TOO_LARGE
    return value


def _binary(symbol, left, right):
    (left_text, left_value), (right_text, right_value) = left, right
    text = f"({left_text} {symbol} {right_text})"
    for value in (left_value, right_value):
        if isinstance(value, str):
            return text, value
    try:
        operation = {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b, "/": lambda a, b: a / b}
        return text, _checked(operation[symbol](left_value, right_value))
    except ZeroDivisionError:
        return text, "Error: division by zero"


def _negate(operand):
    text, value = operand
    return f"-{text}", value if isinstance(value, str) else -value


numbers = st.one_of(
    st.integers(min_value=0, max_value=10**6),
    st.floats(min_value=0, max_value=1e300, allow_nan=False, allow_infinity=False),
).map(lambda number: (repr(number), number))

expressions = st.recursive(
    numbers,
    lambda inner: st.one_of(
        st.builds(_binary, st.sampled_from("+-*/"), inner, inner),
        st.builds(_negate, inner),
    ),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None)
@given(expressions)
def test_agrees_with_python_arithmetic(pair):
    text, expected = pair
    result = calculator(text)
    assert result == (expected if isinstance(expected, str) else repr(expected))


FORBIDDEN = [
    "abs(1)", "(1).real", "2 ** 3", "7 // 2", "7 % 2", "1 < 2", "1 == 1", "'1'", "b'1'",
    "[1]", "(1, 2)", "{1}", "{1: 2}", "[1][0]", "lambda: 1", "1 and 2", "1 or 2", "not 1",
    "1 | 2", "1 & 2", "1 ^ 2", "~1", "1 << 2", "1 >> 2", "True", "None", "1j",
    "1 if 1 else 2", "[i for i in []]", "f'{1}'", "(y := 1)", "...",
]
names = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,10}", fullmatch=True).filter(lambda n: not keyword.iskeyword(n))
forbidden = st.one_of(st.sampled_from(FORBIDDEN), names)


@settings(max_examples=300, deadline=None)
@given(forbidden, expressions, st.sampled_from("+-*/"), st.booleans())
def test_refuses_any_non_arithmetic_construct(bad, pair, symbol, bad_goes_first):
    arithmetic, _ = pair
    if bad_goes_first:  # evaluated first, so its refusal is the one reported
        result = calculator(f"({bad}) {symbol} {arithmetic}")
        assert result.startswith(f"Error: {ONLY_ARITHMETIC}, found ")
    else:  # the arithmetic part may fail first (e.g. division by zero), still an error
        result = calculator(f"{arithmetic} {symbol} ({bad})")
        assert result.startswith(ERROR_PREFIX)


# --- the tool definition and dispatcher --------------------------------------

def test_run_tool_dispatches_to_the_calculator():
    assert run_tool("calculator", {"expression": "4823 * 1979"}) == "9544717"
    assert run_tool("calculator", {"expression": "x"}).startswith(f"Error: {ONLY_ARITHMETIC}")


@pytest.mark.parametrize(
    "name, tool_input, reason",
    [
        ("weather", {"city": "Oslo"}, "Error: unknown tool 'weather'"),
        ("calculator", {}, "missing a required argument: 'expression'"),
        ("calculator", {"expr": "1+1"}, "Error: invalid input for 'calculator'"),
        ("calculator", {"expression": "1", "extra": 2}, "unexpected keyword argument 'extra'"),
        ("calculator", "1 + 1", "must be an object, got str"),
        ("calculator", None, "must be an object, got NoneType"),
        ("calculator", {1: "1 + 1"}, "Error: invalid input for 'calculator'"),
        ("calculator", {"expression": 3}, "must be a string, got int"),
        (None, {}, "Error: unknown tool None"),
    ],
)
def test_run_tool_turns_bad_requests_into_errors(name, tool_input, reason):
    result = run_tool(name, tool_input)
    assert is_error(result)
    assert reason in result


def test_calculator_tool_definition():
    assert TOOLS == [CALCULATOR_TOOL]
    assert re.fullmatch(r"[a-zA-Z0-9_-]{1,64}", CALCULATOR_TOOL["name"])
    assert CALCULATOR_TOOL["name"] == "calculator"
    assert "arithmetic" in CALCULATOR_TOOL["description"]
    schema = CALCULATOR_TOOL["input_schema"]
    assert schema["type"] == "object"
    assert schema["required"] == ["expression"]
    assert schema["properties"]["expression"]["type"] == "string"
    assert schema["properties"]["expression"]["description"]
