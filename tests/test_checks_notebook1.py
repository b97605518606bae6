"""The checks of notebook 1 pass the solutions and fail the stub and the typical wrong answers."""

import ast
import math
import operator

import nbformat
import pytest
from nbclient import NotebookClient

from looplab import loop, tools
from looplab.checks import core, run_check
from looplab.checks.core import COURSE_CODE, NOT_SOLVED, NOT_WRITTEN
from looplab.checks.source import CELL, FUNCTION, latest_definition, stub_left
from looplab.client import MODEL
from looplab.course import COURSE
from looplab.tools import TOOLS, run_tool
from tests.check_helpers import changed, fails, passes, stub, twin
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
    return changed(tools.CALCULATOR_TOOL, **changes)


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
    (tool_with(input_schema={**tools.CALCULATOR_TOOL["input_schema"], "required": "expression"}),
     "it is 'expression'"),
    (tool_with(input_schema={**tools.CALCULATOR_TOOL["input_schema"], "required": {"expression": True}}),
     "it is {'expression': True}"),
])
def test_wrong_tool_definitions_fail(tool, fragment):
    fails("1.2", tool, fragment)


REFUSED_ON_SENDING = [  # right in every part the check reads first, refused by the API when it is sent
    tool_with(input_schema={**tools.CALCULATOR_TOOL["input_schema"],
                            "properties": {"expression": {"type": "string", "minLength": "1"}}}),
    tool_with(parameters=tools.CALCULATOR_TOOL["input_schema"]),
]


@pytest.mark.parametrize("tool", REFUSED_ON_SENDING, ids=["invalid_schema", "extra_field"])
def test_a_tool_the_api_refuses_fails_on_sending(tool):
    fails("1.2", tool, "sending it to the API", "the API rejected")


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


def test_content_0_after_a_thinking_block_fails_on_a_reply_that_answers_in_words():
    """content[-1] is right for a call (tool_use blocks come last), but content[0] is no text after thinking."""
    fails("1.3", one_shot_trusting_stop_reason_only, "thinks first, then answers in words", "AttributeError",
          "has no .text")


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


# --- 1.1: an exception that escapes, the Error: prefix, the exact value -------------------------------


def _value(node):
    """A right walk of the tree, shared by the calculators below (each differs only where it is wrong)."""
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return node.value
    if isinstance(node, ast.BinOp) and type(node.op) in OPERATIONS:
        return OPERATIONS[type(node.op)](_value(node.left), _value(node.right))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.UAdd, ast.USub)):
        return -_value(node.operand) if isinstance(node.op, ast.USub) else +_value(node.operand)
    raise ValueError(f"only numbers and + - * / are allowed, not {type(node).__name__}")


OPERATIONS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv}


def _calculate(expression, caught=(Exception,), prefix="Error: ", written=str):
    """A calculator, right unless told otherwise: which exceptions it catches, its error prefix, how it writes."""
    try:
        result = _value(ast.parse(expression.strip(), mode="eval").body)
        if isinstance(result, float) and not math.isfinite(result):
            return f"{prefix}the result is not a finite number"
        return written(result)
    except caught as error:
        return f"{prefix}{error}"


def calculator_catching_only_the_usual_errors(expression):
    return _calculate(expression, caught=(SyntaxError, ValueError, TypeError, ZeroDivisionError))


def calculator_catching_arithmetic_errors_but_not_recursion(expression):
    return _calculate(expression, caught=(SyntaxError, ValueError, TypeError, ArithmeticError))


def calculator_refusing_only_plus_infinity(expression):
    try:
        result = _value(ast.parse(expression.strip(), mode="eval").body)
    except Exception as error:
        return f"Error: {error}"
    return "Error: too large" if result == float("inf") else str(result)


def calculator_with_a_lowercase_prefix(expression):
    return _calculate(expression, prefix="error: ")


def calculator_with_a_prefix_of_its_own(expression):
    return _calculate(expression, prefix="Cannot compute: ")


def calculator_rounding(expression):
    return _calculate(expression, written=lambda value: str(round(value, 10)))


def calculator_with_thousands_separators(expression):
    return _calculate(expression, written=lambda value: f"{value:,}")


def calculator_making_whole_floats_ints(expression):
    return _calculate(expression, written=lambda value: str(int(value)) if value == int(value) else str(value))


def calculator_computing_in_floats(expression):
    return _calculate(expression, written=lambda value: str(float(value)))


def calculator_without_strip(expression):
    try:
        return str(_value(ast.parse(expression, mode="eval").body))
    except Exception as error:
        return f"Error: {error}"


@pytest.mark.parametrize("calculator, words", [
    (calculator_catching_only_the_usual_errors, "raised OverflowError"),
    (calculator_catching_arithmetic_errors_but_not_recursion, "raised RecursionError"),
])
def test_an_exception_that_escapes_fails(calculator, words):
    result = fails("1.1", calculator, words, "catch it")
    assert "characters)" in result.failed  # a long expression is shown by its two ends and its length


def test_an_infinity_below_zero_must_be_refused_too():
    fails("1.1", calculator_refusing_only_plus_infinity, "'-1e308 - 1e308'", "-inf")


@pytest.mark.parametrize("calculator, output", [
    (calculator_with_a_lowercase_prefix, "'error: division by zero'"),
    (calculator_with_a_prefix_of_its_own, "'Cannot compute: division by zero'"),
])
def test_an_error_text_must_start_with_the_prefix(calculator, output):
    fails("1.1", calculator, "'1 / 0'", output, "should start with 'Error: '", "is_error")


@pytest.mark.parametrize("calculator, output, expected", [
    (calculator_rounding, "'0.3'", "'0.30000000000000004'"),
    (calculator_with_thousands_separators, "'9,544,717'", "'9544717'"),
    (calculator_making_whole_floats_ints, "'2'", "'2.0'"),
    (calculator_computing_in_floats, "'9544717.0'", "'9544717'"),
])
def test_a_result_must_be_exact_as_str_writes_it(calculator, output, expected):
    fails("1.1", calculator, f"returned {output}; expected {expected}", "not rounded", "str(value)")


def test_the_spaces_around_an_expression_must_be_stripped():
    fails("1.1", calculator_without_strip, "calculator('  12 - 4 - 3 ') returned 'Error: unexpected indent", "'5'")


class Evaluator(ast.NodeVisitor):
    """A calculator written as a NodeVisitor, with its own words for errors: right, in another style."""

    def visit_Expression(self, node):
        return self.visit(node.body)

    def visit_Constant(self, node):
        if type(node.value) not in (int, float):
            raise ValueError(f"{node.value!r} is not a number")
        return node.value

    def visit_BinOp(self, node):
        return OPERATIONS[type(node.op)](self.visit(node.left), self.visit(node.right))

    def visit_UnaryOp(self, node):
        sign = {ast.UAdd: 1, ast.USub: -1}[type(node.op)]
        return sign * self.visit(node.operand)

    def generic_visit(self, node):
        raise ValueError(f"{type(node).__name__} is not arithmetic")


def calculator_as_a_visitor(expression):
    try:
        value = Evaluator().visit(ast.parse(expression.strip(), mode="eval"))
        if not math.isfinite(value):
            raise OverflowError("too large")
        return repr(value)
    except BaseException as error:  # noqa: B036 - it returns every failure as text, whatever it is
        if isinstance(error, KeyboardInterrupt):
            raise
        return "Error: " + (str(error) or type(error).__name__)


def test_right_calculators_in_other_styles_pass():
    passes("1.1", calculator_as_a_visitor)
    passes("1.1", _calculate)


@pytest.mark.parametrize("number", ["1.1", "1.3"])
def test_something_that_is_not_a_function_fails(number):
    fails(number, "9544717", "should be a function; it is a str")
    fails(number, None, "should be a function; it is a NoneType")


# --- 1.2: a copy of the course's definition, made in the exercise cell ---------------------------------

SETUP_CELL = "import looplab\nfrom looplab import MODEL, check, show_history\n"
TOOL_CELL_END = "TOOLS = [CALCULATOR_TOOL]\nTOOLS[0]['name']\n"


def run_cells(monkeypatch, *cells):
    """Run the cells as a notebook would (one that raises stops there) and hand the checks their history."""
    namespace: dict = {}
    for cell in cells:
        try:
            exec(cell, namespace)
        except Exception:
            pass
    history = ["", *cells, "check(...)"]
    monkeypatch.setattr(core, "session", lambda: core.Session(history, namespace))
    return namespace


@pytest.mark.parametrize("cell", [
    "import copy\nCALCULATOR_TOOL = copy.deepcopy(looplab.tools.CALCULATOR_TOOL)\n" + TOOL_CELL_END,
    "import json\nfrom looplab.tools import CALCULATOR_TOOL as COURSE_TOOL\n"
    "CALCULATOR_TOOL = json.loads(json.dumps(COURSE_TOOL))\n" + TOOL_CELL_END,
    "CALCULATOR_TOOL = dict(**looplab.tools.CALCULATOR_TOOL)\n" + TOOL_CELL_END,
    "CALCULATOR_TOOL = {}\nCALCULATOR_TOOL.update(looplab.tools.TOOLS[0])\n" + TOOL_CELL_END,
], ids=["deepcopy", "json", "dict", "update"])
def test_a_copy_of_the_course_tool_is_refused(monkeypatch, cell):
    namespace = run_cells(monkeypatch, SETUP_CELL, cell)
    result = fails("1.2", namespace["CALCULATOR_TOOL"], "the course's own")
    assert result.kind == COURSE_CODE


def test_a_copy_from_a_name_an_earlier_cell_imported_is_refused(monkeypatch):
    earlier = "from looplab.tools import TOOLS, run_tool\n"
    namespace = run_cells(monkeypatch, SETUP_CELL, earlier, "CALCULATOR_TOOL = {**TOOLS[0]}\n" + TOOL_CELL_END)
    assert fails("1.2", namespace["CALCULATOR_TOOL"], "the course's own").kind == COURSE_CODE


def test_the_same_dict_typed_by_hand_is_the_learners(monkeypatch):
    """Equal to the course's, but written in the cell: the prose asks for exactly that, so it passes."""
    typed = f"CALCULATOR_TOOL = {tools.CALCULATOR_TOOL!r}\n" + TOOL_CELL_END
    namespace = run_cells(monkeypatch, SETUP_CELL, "from looplab.tools import TOOLS, run_tool\n", typed)
    assert namespace["CALCULATOR_TOOL"] == tools.CALCULATOR_TOOL
    passes("1.2", namespace["CALCULATOR_TOOL"])


def test_a_tool_of_the_learners_own_in_another_style_passes(monkeypatch):
    cell = ("schema = dict(type='object', properties=dict(expression=dict(type='string')), required=('expression',))\n"
            "CALCULATOR_TOOL = dict(name='calculator', input_schema=schema,\n"
            "                       description='Computes + - * / arithmetic exactly; use it for any sum.')\n"
            + TOOL_CELL_END)
    passes("1.2", run_cells(monkeypatch, SETUP_CELL, cell)["CALCULATOR_TOOL"])


# --- the stub's raise NotImplementedError left in the exercise cell -----------------------------------

STUB_1_2 = ("CALCULATOR_TOOL = {}  # the tool's description: fill it in\n# YOUR CODE HERE\n"
            "raise NotImplementedError(\"Exercise 1.2: replace this line with your code\")\n" + TOOL_CELL_END)
FILLED_1_2_STUB_KEPT = STUB_1_2.replace("CALCULATOR_TOOL = {}", f"CALCULATOR_TOOL = {tools.CALCULATOR_TOOL!r}")
FUNCTION_STUB = ('def calculator(expression: str) -> str:\n    """Evaluate."""\n    # YOUR CODE HERE\n'
                 '    raise NotImplementedError("Exercise 1.1: replace this line with your code")\n')
FUNCTION_FILLED_STUB_KEPT = ('def calculator(expression: str) -> str:\n    """Evaluate."""\n'
                             '    if expression.strip() == "4823 * 1979":\n        return "9544717"\n'
                             '    raise NotImplementedError("Exercise 1.1: replace this line with your code")\n')


@pytest.mark.parametrize("cell, where", [
    (STUB_1_2, CELL),
    (FILLED_1_2_STUB_KEPT, CELL),
    (FILLED_1_2_STUB_KEPT.replace('raise NotImplementedError("Exercise 1.2: replace this line with your code")',
                                  "raise NotImplementedError"), CELL),
    (FILLED_1_2_STUB_KEPT.replace("raise NotImplementedError", "# raise NotImplementedError"), None),
    (FUNCTION_STUB, None),
    (FUNCTION_FILLED_STUB_KEPT, FUNCTION),
    ("def f():\n    def g():\n        return 1\n    raise NotImplementedError\n", FUNCTION),
    ("def f():\n    def g():\n        x = 1\n        raise NotImplementedError\n    return g\n", None),
    ("if False:\n    raise NotImplementedError\n", None),
    ("raise ValueError('not the stub')\n", None),
    ("def broken(:\n    raise NotImplementedError\n", None),
])
def test_stub_left_reads_the_cell(cell, where):
    assert stub_left(cell) == where


def test_latest_definition_is_the_last_cell_that_binds_the_name():
    cells = ["", SETUP_CELL, STUB_1_2, "check('1.2', CALCULATOR_TOOL)", "x = CALCULATOR_TOOL",
             "CALCULATOR_TOOL = dict(CALCULATOR_TOOL)", "print(CALCULATOR_TOOL)", "def (broken"]
    assert latest_definition(cells, "CALCULATOR_TOOL") == "CALCULATOR_TOOL = dict(CALCULATOR_TOOL)"
    assert latest_definition(cells, "calculator") is None
    assert latest_definition(["def calculator(e):\n    return e", "for calculator in []: pass"], "calculator") \
        == "for calculator in []: pass"
    assert latest_definition(["def other():\n    calculator = 1\n"], "calculator") is None  # a local name


def test_a_filled_in_tool_with_the_stub_line_kept_fails(monkeypatch):
    """The cell errors at the raise, TOOLS is never defined: the right dict above it gets no points."""
    namespace = run_cells(monkeypatch, SETUP_CELL, FILLED_1_2_STUB_KEPT)
    assert "TOOLS" not in namespace
    result = fails("1.2", namespace["CALCULATOR_TOOL"], "still has the stub's `raise NotImplementedError(...)` line",
                   "Delete the `raise NotImplementedError(...)` line")
    assert result.kind == NOT_SOLVED


def test_a_wrong_tool_with_the_stub_line_kept_says_the_line_first(monkeypatch):
    cell = FILLED_1_2_STUB_KEPT.replace("'calculator'", "'Calculator'", 1)
    fails("1.2", run_cells(monkeypatch, SETUP_CELL, cell)["CALCULATOR_TOOL"], "still has the stub's")


def test_the_untouched_stub_is_still_not_written_yet(monkeypatch):
    result = fails("1.2", run_cells(monkeypatch, SETUP_CELL, STUB_1_2)["CALCULATOR_TOOL"], "not written yet")
    assert result.kind == NOT_WRITTEN


def test_a_function_that_still_reaches_the_stub_line_fails(monkeypatch):
    result = fails("1.1", run_cells(monkeypatch, FUNCTION_FILLED_STUB_KEPT)["calculator"],
                   "still reaches the stub's `raise NotImplementedError(...)` line", "every way through your code")
    assert result.kind == NOT_SOLVED


def test_an_unreachable_stub_line_after_a_return_is_harmless(monkeypatch):
    cell = ("def one_shot(client, question):\n"
            "    reply = client.messages.create(model=MODEL, max_tokens=1024, tools=TOOLS,\n"
            "                                   messages=[{'role': 'user', 'content': question}])\n"
            "    calls = [block for block in reply.content if block.type == 'tool_use']\n"
            "    if calls:\n        return run_tool(calls[0].name, calls[0].input)\n"
            "    return ''.join(block.text for block in reply.content if block.type == 'text')\n"
            "    raise NotImplementedError('Exercise 1.3: replace this line with your code')\n")
    setup = "from looplab import MODEL\nfrom looplab.tools import TOOLS, run_tool\n"
    passes("1.3", run_cells(monkeypatch, setup, cell)["one_shot"])


@pytest.mark.parametrize("exercise", COURSE.exercises, ids=[exercise.id for exercise in COURSE.exercises])
def test_every_exercise_says_the_stub_line_is_left(monkeypatch, exercise):
    cell = f"{exercise.name} = 42\nraise NotImplementedError('Exercise {exercise.id}: replace this line')\n"
    result = run_check(exercise.id, run_cells(monkeypatch, cell)[exercise.name])
    assert not result.ok and "still has the stub's" in result.failed, repr(result)


def test_the_session_is_ipythons_input_history(monkeypatch):
    """core.session reads the shell's `In` and namespace; outside IPython there is none."""
    assert core.session() is None
    namespace = {"In": ["", SETUP_CELL, STUB_1_2], "x": 1}
    monkeypatch.setattr(core, "get_ipython", lambda: type("Shell", (), {"user_ns": namespace})())
    found = core.session()
    assert found.cells == ["", SETUP_CELL, STUB_1_2] and found.namespace is namespace


def test_the_checks_read_the_cells_in_a_real_kernel():
    """A kernel keeps every cell it ran in `In`, the one that stopped at the stub's line too."""
    cells = [SETUP_CELL, FILLED_1_2_STUB_KEPT,
             "from looplab.checks import run_check\nprint(run_check('1.2', CALCULATOR_TOOL).failed)",
             "import copy\nCALCULATOR_TOOL = copy.deepcopy(looplab.tools.CALCULATOR_TOOL)\n" + TOOL_CELL_END,
             "print(run_check('1.2', CALCULATOR_TOOL).failed)"]
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(cell) for cell in cells])
    NotebookClient(notebook, allow_errors=True, timeout=60).execute()
    printed = ["".join(output.get("text", "") for output in cell.outputs) for cell in notebook.cells]
    assert "still has the stub's" in printed[2] and "the course's own" in printed[4], printed


# --- 1.3: the request it sends ---------------------------------------------------------------------


PRODUCT_QUESTION = "What is 4823 × 1979?"  # the notebook's question: a global a one_shot may wrongly read


def _answer(reply):
    """The right second half of a one_shot, shared by the wrong first halves below."""
    for block in reply.content:
        if block.type == "tool_use":
            return run_tool(block.name, block.input)
    return "".join(block.text for block in reply.content if block.type == "text")


def one_shot_asking_the_notebooks_question(client, question):
    return _answer(client.messages.create(model=MODEL, max_tokens=1024, tools=TOOLS,
                                          messages=[{"role": "user", "content": PRODUCT_QUESTION}]))


def one_shot_asking_in_the_system_prompt(client, question):
    return _answer(client.messages.create(model=MODEL, max_tokens=1024, tools=TOOLS, system=question,
                                          messages=[{"role": "user", "content": "Please answer the question."}]))


def one_shot_with_another_model(client, question):
    return _answer(client.messages.create(model="claude-opus-5", max_tokens=1024, tools=TOOLS,
                                          messages=[{"role": "user", "content": question}]))


def one_shot_with_a_model_of_its_own(client, question):
    return _answer(client.messages.create(model="claude-3-haiku", max_tokens=1024, tools=TOOLS,
                                          messages=[{"role": "user", "content": question}]))


def one_shot_with_more_tokens(client, question):
    return _answer(client.messages.create(model=MODEL, max_tokens=4096, tools=TOOLS,
                                          messages=[{"role": "user", "content": question}]))


def one_shot_with_few_tokens(client, question):
    return _answer(client.messages.create(model=MODEL, max_tokens=100, tools=TOOLS,
                                          messages=[{"role": "user", "content": question}]))


@pytest.mark.parametrize("one_shot, words", [
    (one_shot_asking_the_notebooks_question, "one_shot was asked 'How many hours are there in 365 days?'"),
    (one_shot_asking_in_the_system_prompt, "'content': 'Please answer the question.'"),
])
def test_a_one_shot_that_does_not_send_its_question_fails(one_shot, words):
    fails("1.3", one_shot, words, "its `question` argument")


@pytest.mark.parametrize("one_shot, model", [
    (one_shot_with_another_model, "'claude-opus-5'"), (one_shot_with_a_model_of_its_own, "'claude-3-haiku'")])
def test_a_one_shot_with_another_model_fails(one_shot, model):
    fails("1.3", one_shot, f"the request's model is {model}; expected MODEL, {loop.MODEL!r}", "model=MODEL")


@pytest.mark.parametrize("one_shot, tokens", [(one_shot_with_more_tokens, 4096), (one_shot_with_few_tokens, 100)])
def test_a_one_shot_with_other_max_tokens_fails(one_shot, tokens):
    fails("1.3", one_shot, f"the request's max_tokens is {tokens}; expected 1024", "max_tokens=1024")


def one_shot_skipping_text_blocks(client, question):
    reply = client.messages.create(model=loop.MODEL, max_tokens=1024, tools=tools.TOOLS,
                                   messages=[{"role": "user", "content": question}])
    if reply.stop_reason != "tool_use":
        return "".join(block.text for block in reply.content if block.type == "text")
    block = next(block for block in reply.content if block.type != "text")
    return tools.run_tool(block.name, block.input)


def one_shot_skipping_one_text_block(client, question):
    reply = client.messages.create(model=loop.MODEL, max_tokens=1024, tools=tools.TOOLS,
                                   messages=[{"role": "user", "content": question}])
    if reply.stop_reason != "tool_use":
        return "".join(block.text for block in reply.content if block.type == "text")
    block = reply.content[1] if reply.content[0].type == "text" else reply.content[0]
    return tools.run_tool(block.name, block.input)


@pytest.mark.parametrize("one_shot", [one_shot_skipping_text_blocks, one_shot_skipping_one_text_block])
def test_a_one_shot_that_takes_a_thinking_block_for_the_call_fails(one_shot):
    fails("1.3", one_shot, "the model thinks first, then asks for the tool", "AttributeError", "by its type")


def one_shot_with_no_answer_in_words(client, question):
    reply = client.messages.create(model=loop.MODEL, max_tokens=1024, tools=tools.TOOLS,
                                   messages=[{"role": "user", "content": question}])
    for block in reply.content:
        if block.type == "tool_use":
            return tools.run_tool(block.name, block.input)


def one_shot_returning_the_reply_itself(client, question):
    reply = client.messages.create(model=loop.MODEL, max_tokens=1024, tools=tools.TOOLS,
                                   messages=[{"role": "user", "content": question}])
    calls = [block for block in reply.content if block.type == "tool_use"]
    return tools.run_tool(calls[0].name, calls[0].input) if calls else reply


@pytest.mark.parametrize("one_shot", [one_shot_with_no_answer_in_words, one_shot_returning_the_reply_itself])
def test_a_one_shot_that_does_not_return_the_words_fails(one_shot):
    fails("1.3", one_shot, "the model answers without the tool: one_shot returned", "'Yes: 7 is a prime number.'",
          "return the text of its text blocks")


def one_shot_in_another_style(client, question):
    reply = client.messages.create(
        messages=[{"role": "user", "content": [{"type": "text", "text": question}]}],
        tools=TOOLS, max_tokens=1024, model=MODEL)
    call = next((block for block in reply.content if block.type == "tool_use"), None)
    if call is None:
        return "".join(getattr(block, "text", "") for block in reply.content)
    return run_tool(call.name, dict(call.input))


def test_right_one_shots_in_other_styles_pass():
    passes("1.3", one_shot_in_another_style)
    passes("1.3", lambda client, question: _answer(client.messages.create(
        model=MODEL, max_tokens=1024, tools=TOOLS, messages=[{"role": "user", "content": question}])))
