"""The checks of notebook 1 pass the solutions and fail the stub and the typical wrong answers."""

import ast
import copy

import pytest

from looplab import loop, tools
from looplab.checks import run_check
from tests.check_helpers import fails, stub, twin
from tests.notebook_code import solution_namespace


@pytest.fixture(scope="module")
def solution():
    return solution_namespace("01_one_tool_call")


# --- they pass on the solutions ------------------------------------------------------------------


@pytest.mark.parametrize("number, name", [("1.1", "calculator"), ("1.2", "CALCULATOR_TOOL"), ("1.3", "one_shot")])
def test_solution_notebook_passes(solution, number, name):
    result = run_check(number, solution[name])
    assert result.ok and result.points == result.max_points > 0, repr(result)


@pytest.mark.parametrize("number, obj", [("1.1", tools.calculator), ("1.2", tools.CALCULATOR_TOOL), ("1.3", loop.one_shot)])
def test_reference_passes(number, obj):
    assert run_check(number, twin(obj)).ok


@pytest.mark.parametrize("number", ["1.1", "1.3"])
def test_stub_fails_as_not_written(number):
    fails(number, stub, "not written yet")


def test_empty_tool_definition_fails_as_not_written():
    fails("1.2", {}, "not written yet")


# --- 1.1 calculator: typical wrong answers ------------------------------------------------------------


def calculator_with_eval(expression):
    try:
        return str(eval(expression))
    except Exception as error:
        return f"Error: {error}"


def calculator_with_guarded_eval(expression):
    try:
        return str(eval(expression, {"__builtins__": {}}))
    except Exception as error:
        return f"Error: {error}"


def calculator_that_raises(expression):
    tree = ast.parse(expression, mode="eval")
    return str(_walk(tree.body))


def _walk(node):
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.BinOp):
        left, right = _walk(node.left), _walk(node.right)
        return {ast.Add: left + right, ast.Sub: left - right, ast.Mult: left * right}.get(type(node.op)) or left / right
    raise ValueError("not arithmetic")


def calculator_returning_numbers(expression):
    return tools.calculator(expression) if tools.is_error(tools.calculator(expression)) else float(tools.calculator(expression))


def calculator_allowing_power(expression):
    return tools.calculator(expression.replace("**", "*"))


def test_eval_fails_even_when_it_computes_right():
    fails("1.1", calculator_with_eval, "eval")


def test_eval_without_builtins_fails_too():
    result = fails("1.1", calculator_with_guarded_eval)
    assert "eval" in result.failed or "refuse" in result.failed


def test_a_calculator_that_raises_fails():
    fails("1.1", calculator_that_raises, "raised ValueError")


def test_results_must_be_text():
    fails("1.1", calculator_returning_numbers, "not a str")


def test_power_must_be_refused():
    fails("1.1", calculator_allowing_power, "**")


def test_wrong_arithmetic_fails():
    fails("1.1", lambda expression: "42", "expected")


# --- 1.2 CALCULATOR_TOOL ------------------------------------------------------------------------------


def tool_with(**changes):
    tool = copy.deepcopy(tools.CALCULATOR_TOOL)
    for key, value in changes.items():
        if value is None:
            tool.pop(key)
        else:
            tool[key] = value
    return tool


@pytest.mark.parametrize("tool, fragment", [
    (tool_with(name="calc ulator"), "name"),
    (tool_with(name="Calculator"), "name"),
    (tool_with(description=None), "description"),
    (tool_with(description="math"), "description"),
    (tool_with(input_schema={"type": "string"}), "input_schema"),
    (tool_with(input_schema={"type": "object", "properties": {"expr": {"type": "string"}}, "required": ["expr"]}), "expression"),
    (tool_with(input_schema={"type": "object", "properties": {"expression": {"type": "string"}}}), "required"),
    (tool_with(parameters={"type": "object"}, input_schema=None), "input_schema"),
    ([tools.CALCULATOR_TOOL], "dict"),
])
def test_wrong_tool_definitions_fail(tool, fragment):
    fails("1.2", tool, fragment)


# --- 1.3 one_shot -------------------------------------------------------------------------------------


def one_shot_first_block(client, question):
    reply = client.messages.create(model=loop.MODEL, max_tokens=1024, tools=tools.TOOLS,
                                   messages=[{"role": "user", "content": question}])
    block = reply.content[0]
    return tools.run_tool(block.name, block.input)


def one_shot_without_tools(client, question):
    reply = client.messages.create(model=loop.MODEL, max_tokens=1024, messages=[{"role": "user", "content": question}])
    return "".join(block.text for block in reply.content if block.type == "text")


def one_shot_trusting_stop_reason_only(client, question):
    reply = client.messages.create(model=loop.MODEL, max_tokens=1024, tools=tools.TOOLS,
                                   messages=[{"role": "user", "content": question}])
    if reply.stop_reason == "tool_use":
        block = reply.content[-1]
        return tools.run_tool(block.name, block.input)
    return reply.content[0].text


def one_shot_returning_the_model_text(client, question):
    reply = client.messages.create(model=loop.MODEL, max_tokens=1024, tools=tools.TOOLS,
                                   messages=[{"role": "user", "content": question}])
    return "".join(block.text for block in reply.content if block.type == "text")


def one_shot_asking_twice(client, question):
    loop.one_shot(client, question)
    return loop.one_shot(client, question)


def test_taking_content_0_fails():
    fails("1.3", one_shot_first_block, "text block", "AttributeError")


def test_not_offering_the_tool_fails():
    fails("1.3", one_shot_without_tools, "did not offer the calculator")


def test_returning_the_model_text_instead_of_the_result_fails():
    fails("1.3", one_shot_returning_the_model_text, "expected '9544717'")


def test_asking_twice_fails():
    fails("1.3", one_shot_asking_twice, "called the model 2 times")


def test_a_broken_learner_calculator_does_not_fail_one_shot():
    """Isolation: one_shot is checked with the reference tools, whatever the learner's calculator does."""
    namespace = {"MODEL": loop.MODEL, "TOOLS": [], "run_tool": lambda name, tool_input: "wrong"}
    exec(
        "def one_shot(client, question):\n"
        "    reply = client.messages.create(model=MODEL, max_tokens=1024, tools=TOOLS,\n"
        "                                   messages=[{'role': 'user', 'content': question}])\n"
        "    for block in reply.content:\n"
        "        if block.type == 'tool_use':\n"
        "            return run_tool(block.name, block.input)\n"
        "    return ''.join(b.text for b in reply.content if b.type == 'text')\n",
        namespace,
    )
    assert run_check("1.3", namespace["one_shot"]).ok
    assert namespace["TOOLS"] == []  # the learner's globals are given back afterwards


def test_a_failed_check_says_its_message_once():
    """The panel says what failed; the error line under it only points up (the value keeps the message)."""
    from looplab.checks.core import CheckFailed

    result = fails("1.1", stub, "not written yet")
    error = CheckFailed(result)
    shown = "\n".join(error._render_traceback_())
    assert result.failed not in shown and "1.1" in shown and "above" in shown
    assert result.failed in str(error)


def calculator_counting_booleans(expression):
    """Accepts any constant Python calls a number: True is an int to isinstance."""
    def value(node):
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
            return node.value
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub, ast.Mult, ast.Div)):
            left, right = value(node.left), value(node.right)
            return {ast.Add: left + right, ast.Sub: left - right, ast.Mult: left * right}.get(type(node.op), None) \
                if not isinstance(node.op, ast.Div) else left / right
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            return -value(node.operand) if isinstance(node.op, ast.USub) else value(node.operand)
        raise ValueError("not arithmetic")
    try:
        return str(value(ast.parse(expression.strip(), mode="eval").body))
    except (ZeroDivisionError, ValueError, SyntaxError) as error:
        return f"Error: {error}"


def calculator_returning_infinity(expression):
    """The course's calculator, except that an overflow to inf comes back as 'inf'."""
    return "inf" if expression.replace(" ", "") == "1e308*10" else tools.calculator(expression)


def test_a_truth_value_is_not_a_number():
    fails("1.1", calculator_counting_booleans, "'True + 1'", "a truth value")


def test_an_infinite_result_must_be_refused():
    fails("1.1", calculator_returning_infinity, "'1e308 * 10'", "inf")
