"""The calculator tool our agent loop offers the model, and a tiny dispatcher for it.

Why not simply ``eval(expression)``? The expression is written by the model, and the
model writes whatever its input nudges it towards. ``eval`` runs any Python at all:
``__import__('os').system('rm -rf ~')`` is a perfectly good "expression", and even
plain arithmetic like ``9**9**9`` can freeze the notebook.

So we only *read* the text: ``ast.parse`` turns it into a syntax tree without running
anything, and we walk that tree ourselves, accepting a handful of node types (numbers,
+ - * /, unary signs). Everything else is refused.

Why return "Error: ..." texts instead of raising? The tool's answer goes back to the
model. A specific error lets it correct itself on the next turn; an exception would
stop the whole loop instead.
"""

import ast
import inspect
import math
import operator
import re

ERROR_PREFIX = "Error: "

MAX_LENGTH = 1000  # characters; checked first, so huge inputs cost nothing
MAX_DIGITS = 100  # per number literal; turning huge digit strings into ints is slow
MAX_DEPTH = 200  # nested operations; keeps our recursive walk far from Python's limit
MAX_RESULT = 10**1000  # magnitude cap for every intermediate value

_ALLOWED = "only numbers and + - * / ( ) are allowed"
_BINARY = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv}
_UNARY = {ast.UAdd: operator.pos, ast.USub: operator.neg}
_LONG_NUMBER = re.compile(f"[0-9]{{{MAX_DIGITS + 1},}}")

# Used only to word error messages: what did the model write that we refuse?
_OPERATOR_SYMBOLS = {
    ast.Pow: "**", ast.FloorDiv: "//", ast.Mod: "%", ast.MatMult: "@",
    ast.LShift: "<<", ast.RShift: ">>", ast.BitAnd: "&", ast.BitOr: "|", ast.BitXor: "^",
    ast.Invert: "~", ast.Not: "not", ast.And: "and", ast.Or: "or",
}
_NODE_NAMES = {
    ast.Call: "a function call", ast.Attribute: "an attribute", ast.Compare: "a comparison",
    ast.Subscript: "a subscript", ast.Lambda: "a lambda", ast.List: "a list",
    ast.Tuple: "a comma (write 1000, not 1,000)", ast.JoinedStr: "a string",
}


class _Refused(Exception):
    """Carries a learner-readable reason from anywhere in the tree walk up to `calculator`."""


def calculator(expression: str) -> str:
    """Evaluate arithmetic like "4823 × 1979" and return the result as text.

    The result is ``repr()`` of the Python value, so it matches what Python itself
    would print ("3.5", "2.0", "9544717"). It never raises: every problem comes back
    as a text starting with ``ERROR_PREFIX``.
    """
    try:
        return repr(_evaluate(_parse(expression)))
    except _Refused as reason:
        return f"{ERROR_PREFIX}{reason}"
    except ZeroDivisionError:
        return f"{ERROR_PREFIX}division by zero"
    except OverflowError:  # e.g. a huge int divided, or mixed with a float
        return f"{ERROR_PREFIX}the result is too large"
    except (RecursionError, MemoryError):  # last-resort guards; the limits above should prevent them
        return f"{ERROR_PREFIX}nested too deeply"


def is_error(result: str) -> bool:
    """The loop uses this to flag a tool_result with ``is_error: true``."""
    return result.startswith(ERROR_PREFIX)


def _parse(expression):
    """Do the cheap checks first, so the parser only ever sees small, plain text."""
    if not isinstance(expression, str):
        raise _Refused(f"the expression must be a string, got {type(expression).__name__}")
    if len(expression) > MAX_LENGTH:
        raise _Refused(f"expression too long ({len(expression)} characters, at most {MAX_LENGTH})")
    if "\x00" in expression:
        raise _Refused("the expression contains a NUL byte")
    text = expression.replace("×", "*").replace("÷", "/").strip()
    if not text:
        raise _Refused("the expression is empty")
    if _LONG_NUMBER.search(text):
        raise _Refused(f"number too long (at most {MAX_DIGITS} digits)")
    try:
        return ast.parse(text, mode="eval").body
    except SyntaxError as error:
        if "too many nested" in str(error.msg):
            raise _Refused("nested too deeply") from None
        raise _Refused(f"not a valid expression: {error.msg}") from None
    except ValueError as error:  # e.g. characters that are not valid Unicode text
        raise _Refused(f"not a valid expression: {error}") from None


def _evaluate(node, depth=0):
    """Compute the value of an allowed node; refuse any other kind of node."""
    if depth > MAX_DEPTH:
        raise _Refused("nested too deeply")
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):  # not bool
        value = node.value
    elif isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        value = _UNARY[type(node.op)](_evaluate(node.operand, depth + 1))
    elif isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        left = _evaluate(node.left, depth + 1)
        right = _evaluate(node.right, depth + 1)
        value = _BINARY[type(node.op)](left, right)
    else:
        raise _Refused(f"{_ALLOWED}, found {_describe(node)}")
    if isinstance(value, float) and math.isnan(value):
        raise _Refused("the result is not a number")
    if abs(value) >= MAX_RESULT:  # also catches float('inf')
        raise _Refused("the result is too large")
    return value


def _describe(node):
    """Name the refused construct, so the model knows what to change."""
    if isinstance(node, ast.Name):
        return f"a name {node.id!r}"
    if isinstance(node, (ast.BinOp, ast.UnaryOp, ast.BoolOp)):
        return f"the operator {_OPERATOR_SYMBOLS.get(type(node.op), type(node.op).__name__)}"
    if isinstance(node, ast.Constant):
        return "a string" if isinstance(node.value, (str, bytes)) else f"the value {node.value!r}"
    return _NODE_NAMES.get(type(node), f"unsupported syntax ({type(node).__name__})")


CALCULATOR_TOOL = {
    "name": "calculator",
    "description": (
        "Evaluates an arithmetic expression and returns the exact result. "
        "Supports numbers, + - * /, and parentheses, e.g. '(12.5 + 3) * 4 / 2'. "
        "Use this tool for any arithmetic instead of calculating in your head. "
        "If the input is not valid, the result starts with 'Error: ' and says why."
    ),
    "input_schema": {
        "type": "object",
        "properties": {
            "expression": {"type": "string", "description": "The arithmetic to evaluate, e.g. '4823 * 1979'."}
        },
        "required": ["expression"],
    },
}

TOOLS = [CALCULATOR_TOOL]
_REGISTRY = {"calculator": calculator}


def run_tool(name: str, tool_input: dict) -> str:
    """Run the tool the model asked for; bad requests become error texts, not crashes."""
    tool = _REGISTRY.get(name) if isinstance(name, str) else None
    if tool is None:
        return f"{ERROR_PREFIX}unknown tool {name!r}"
    if not isinstance(tool_input, dict):
        return f"{ERROR_PREFIX}the input for {name!r} must be an object, got {type(tool_input).__name__}"
    try:  # check the arguments against the function's signature before calling it
        arguments = inspect.signature(tool).bind(**tool_input)
    except TypeError as error:
        return f"{ERROR_PREFIX}invalid input for {name!r}: {error}"
    return tool(*arguments.args, **arguments.kwargs)
