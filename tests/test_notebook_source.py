"""looplab.notebook_source.definitions: the one reader that writes a notebook's program from the learner's cells.

Each case below is a correct answer that leans on code of the learner's own (issue 35): the program written from
it is run, in a namespace of its own holding only what a program's head would import, and the named function
called.
"""

import builtins
import functools
import linecache

import pytest

from looplab.notebook_source import definitions

CELLS = [
    "",
    "import json\nfrom functools import lru_cache\n\n@lru_cache\ndef tool(x):\n    return json.dumps(x)\n\ntool(1)",
    "TOOLS = [1]\nprint(TOOLS)",
    "%time x = 1\ndef tool(x):\n    return str(x)  # the last definition wins",
    "def run():\n    return tool(TOOLS)",
]


def run(program: str, **head) -> dict:
    """The program run as a module whose head gives `head` (MODEL, a course function...): its namespace."""
    namespace = dict(head)
    exec(compile(program, "<program>", "exec"), namespace)
    return namespace


def test_each_name_as_its_last_cell_defines_it_without_the_try_it_lines():
    program = definitions(CELLS, ["TOOLS", "tool", "run"])
    assert "print(TOOLS)" not in program and "tool(1)" not in program
    assert "return str(x)  # the last definition wins" in program and "json.dumps" not in program
    assert program.index("TOOLS = [1]") < program.index("def tool") < program.index("def run")
    assert run(program)["run"]() == "[1]"


def test_a_decorated_function_keeps_its_decorator_and_its_cell_s_imports():
    program = definitions(CELLS[:3], ["tool"])
    assert "@lru_cache\ndef tool" in program
    assert program.startswith("import json\nfrom functools import lru_cache\n")


def test_a_name_no_cell_defines_says_to_run_the_cells_first():
    with pytest.raises(NameError, match="no cell run so far defines 'agent_turn'"):
        definitions(CELLS, ["agent_turn"])


# --- the helpers a named definition uses come with it ------------------------------------------------------


def test_a_table_of_rows_a_function_reads():
    cells = ["", 'ROWS = [("Paris", "18°C"), ("Tokyo", "24°C")]\nlen(ROWS)',
             "def get_weather(city):\n    return dict(ROWS).get(city, 'unknown')"]
    program = definitions(cells, ["get_weather"])
    assert "len(ROWS)" not in program
    assert run(program)["get_weather"]("Tokyo") == "24°C"


def test_a_schema_helper_a_registry_calls_as_it_is_built():
    cells = ["", "def schema_for(description, *parameters):\n"
                 "    return {'description': description, 'input_schema': {'type': 'object', 'properties': "
                 "{p: {'type': 'string'} for p in parameters}, 'required': list(parameters)}}",
             "TOOL_REGISTRY = {'get_weather': {'function': get_weather, 'schema': schema_for('Weather.', 'city')}}"]
    program = definitions(cells, ["TOOL_REGISTRY"])
    assert program.index("def schema_for") < program.index("TOOL_REGISTRY = ")
    registry = run(program, get_weather=len)["TOOL_REGISTRY"]  # get_weather: the head's, as the course imports it
    assert registry["get_weather"]["schema"]["input_schema"]["required"] == ["city"]


def test_a_generator():
    cells = ["", "def tool_uses(content):\n    yield from (block for block in content if block['type'] == 'tool_use')",
             "def names(content):\n    return [block['name'] for block in tool_uses(content)]"]
    content = [{"type": "text"}, {"type": "tool_use", "name": "calculator"}]
    assert run(definitions(cells, ["names"]))["names"](content) == ["calculator"]


def test_a_recursive_helper():
    cells = ["", "def _turn(calls_left, answers):\n"
                 "    if calls_left == 0:\n        raise RuntimeError('too many calls')\n"
                 "    answer = answers.pop(0)\n"
                 "    return answer if answer != 'tool_use' else _turn(calls_left - 1, answers)\n\n\n"
                 "def agent_turn(answers, max_iterations=10):\n    return _turn(max_iterations, answers)\n\n\n"
                 "agent_turn(['tool_use', 'done'])"]
    program = definitions(cells, ["agent_turn"])
    assert program.index("def _turn") < program.index("def agent_turn") and "agent_turn([" not in program
    assert run(program)["agent_turn"](["tool_use", "tool_use", "done"]) == "done"


def test_a_custom_exception_class():
    cells = ["", "class BadArguments(Exception):\n    '''The model's arguments do not fit the tool.'''",
             "def run_tool(tool_input):\n    try:\n        if not isinstance(tool_input, dict):\n"
             "            raise BadArguments('must be an object')\n        return 'ok', False\n"
             "    except BadArguments as error:\n        return f'Error: {error}', True"]
    assert run(definitions(cells, ["run_tool"]))["run_tool"]("Paris") == ("Error: must be an object", True)


def test_a_helper_set_of_allowed_types():
    cells = ["", "OBJECT_TYPES = {dict}  # what an input may be",
             "def fits(tool_input):\n    return type(tool_input) in OBJECT_TYPES"]
    program = definitions(cells, ["fits"])
    assert "OBJECT_TYPES = {dict}  # what an input may be" in program
    assert run(program)["fits"]({}) and not run(program)["fits"]("Paris")


def test_a_decorator_of_the_learners_own_with_its_cell_s_import():
    cells = ["", "import functools\n\n\ndef never_raises(function):\n    @functools.wraps(function)\n"
                 "    def wrapper(*args, **kwargs):\n        try:\n            return function(*args, **kwargs)\n"
                 "        except Exception as error:\n            return f'Error: {error}'\n    return wrapper",
             "@never_raises\ndef calculator(a, b):\n    return str(a / b)"]
    program = definitions(cells, ["calculator"])
    assert program.startswith("import functools\n")
    assert program.index("def never_raises") < program.index("@never_raises\ndef calculator")
    calculator = run(program)["calculator"]
    assert calculator(1, 0) == "Error: division by zero" and calculator.__name__ == "calculator"


def test_a_name_defined_nowhere_in_the_cells_stays_free_for_the_program_s_head():
    """A name no cell binds is the head's to give; one a cell imported, and the head imports too, is left to it."""
    cells = ["", "from looplab import MODEL", "def settings():\n    return MODEL, SYSTEM_PROMPT"]
    program = definitions(cells, ["settings"], head="from looplab import MODEL\n")
    assert "MODEL" not in program.split("def settings")[0]
    assert run(program, MODEL="m", SYSTEM_PROMPT="s")["settings"]() == ("m", "s")


def test_an_import_in_a_cell_of_its_own_comes_with_the_code_that_uses_it():
    """`import json` in a cell above the exercise (or added to the set-up cell): the program imports it too, only the
    names it uses, and not what its head imports already."""
    cells = ["", "import json, textwrap\nfrom looplab import MODEL, check", "def as_text(value):\n    return json.dumps(value)",
             "def settings():\n    return MODEL"]
    program = definitions(cells, ["as_text", "settings"], head="import sys\nfrom looplab import MODEL\n")
    assert program.startswith("import json\n"), program
    assert "textwrap" not in program and "check" not in program and "MODEL" not in program.split("def ")[0]
    assert run(program, MODEL="m")["as_text"]({"a": 1}) == '{"a": 1}'


def test_a_name_used_only_inside_a_function_defined_in_a_later_cell():
    cells = ["", "def run_tool(name):\n    return describe(name)", "def describe(name):\n    return f'<{name}>'",
             "run_tool('x')"]
    program = definitions(cells, ["run_tool"])
    assert program.index("def run_tool") < program.index("def describe")  # the order the cells ran: a body reads late
    assert run(program)["run_tool"]("x") == "<x>"


def test_a_definition_a_statement_needs_as_it_runs_comes_first_whatever_the_names_order():
    cells = ["", "TOOL_REGISTRY = {'a': 1, 'b': 2}", "def tool_definitions(registry):\n    return list(registry)",
             "TOOLS = tool_definitions(TOOL_REGISTRY)"]
    program = definitions(cells, ["TOOLS", "tool_definitions", "TOOL_REGISTRY"])
    assert program.index("def tool_definitions") < program.index("TOOLS = ")
    assert program.index("TOOL_REGISTRY = ") < program.index("TOOLS = ")
    assert run(program)["TOOLS"] == ["a", "b"]


# --- a registry built step by step --------------------------------------------------------------------------


STEP_BY_STEP = [
    "",
    "TOOL_REGISTRY = {}  # the stub the exercise cell gives\n"
    "TOOL_REGISTRY['calculator'] = {'function': calculator, 'schema': {'description': 'Arithmetic.'}}\n"
    "TOOL_REGISTRY.update(get_weather={'function': get_weather, 'schema': {'description': 'Weather.'}})\n"
    "TOOL_REGISTRY.keys()",
    "ROWS = [('count_letters', len, 'Letters.'), ('shout', str.upper, 'Capitals.')]\n"
    "for name, function, description in ROWS:\n"
    "    TOOL_REGISTRY[name] = {'function': function, 'schema': {'description': description}}\n"
    "TOOL_REGISTRY['shout']['schema'].setdefault('input_schema', {'type': 'object'})\n"
    "list(TOOL_REGISTRY)",
    "def run_tool(name, tool_input):\n    return TOOL_REGISTRY[name]['function'](**tool_input)",
]
HEAD = {"calculator": len, "get_weather": str}  # what the program's head imports from the course


def test_a_registry_built_by_items_update_and_a_loop_over_rows():
    program = definitions(STEP_BY_STEP, ["TOOL_REGISTRY", "run_tool"])
    assert "TOOL_REGISTRY.keys()" not in program and "list(TOOL_REGISTRY)" not in program
    assert program.index("ROWS = ") < program.index("for name, function")
    namespace = run(program, **HEAD)
    assert list(namespace["TOOL_REGISTRY"]) == ["calculator", "get_weather", "count_letters", "shout"]
    assert namespace["TOOL_REGISTRY"]["shout"]["schema"]["input_schema"] == {"type": "object"}


def test_a_cell_run_twice_counts_once():
    cells = STEP_BY_STEP[:3] + STEP_BY_STEP[1:]  # the registry's cell run again after the rows' cell
    program = definitions(cells, ["TOOL_REGISTRY", "run_tool"])
    assert program.count("TOOL_REGISTRY = {}") == 1 and program.count("for name, function") == 1
    assert list(run(program, **HEAD)["TOOL_REGISTRY"]) == ["calculator", "get_weather", "count_letters", "shout"]


def test_a_registry_alone_as_notebook_5_serves_it():
    registry = run(definitions(STEP_BY_STEP, ["TOOL_REGISTRY"]), **HEAD)["TOOL_REGISTRY"]
    assert len(registry) == 4


def test_a_rebinding_leaves_out_the_changes_made_before_it():
    cells = STEP_BY_STEP + ["TOOL_REGISTRY = {'calculator': {'function': calculator}}  # anew",
                            "TOOL_REGISTRY |= {'echo': {'function': str}}"]
    program = definitions(cells, ["TOOL_REGISTRY", "run_tool"])
    assert "ROWS" not in program and ".update(" not in program and "TOOL_REGISTRY = {}" not in program
    assert list(run(program, **HEAD)["TOOL_REGISTRY"]) == ["calculator", "echo"]


def test_a_registry_filled_by_a_decorator_and_a_helper_of_the_learners_own():
    cells = ["", "TOOL_REGISTRY = {}\n\n\ndef tool(description, name=None):\n    def register(function):\n"
                 "        TOOL_REGISTRY[name or function.__name__] = {'function': function, 'schema': {'description': "
                 "description}}\n        return function\n    return register",
             "@tool('Capitals.')\ndef shout(text):\n    return text.upper()",
             "def add(name, function):\n    tool(name.title() + '.', name)(function)\n\n\n"
             "add('calculator', calculator)",
             "def run_tool(name, tool_input):\n    return TOOL_REGISTRY[name]['function'](**tool_input)\n\n\n"
             "run_tool('shout', {'text': 'hi'})"]
    program = definitions(cells, ["TOOL_REGISTRY", "run_tool"])
    assert "run_tool('shout'" not in program  # trying out a piece asked for is no step of the registry
    namespace = run(program, calculator=len)
    assert list(namespace["TOOL_REGISTRY"]) == ["shout", "calculator"]
    assert namespace["run_tool"]("shout", {"text": "hi"}) == "HI"


def test_calling_a_piece_asked_for_is_trying_it_out_even_when_it_changes_a_global():
    cells = ["", "CALLS = []", "def run_tool(name):\n    CALLS.append(name)\n    return name", "run_tool('try-it')"]
    namespace = run(definitions(cells, ["run_tool"]))
    assert namespace["CALLS"] == [] and namespace["run_tool"]("x") == "x" and namespace["CALLS"] == ["x"]


def test_what_a_cell_changes_in_an_imported_module_stays_in_the_notebook():
    cells = ["", "import os\nos.environ['ANTHROPIC_API_KEY'] = 'sk-secret'",
             "def home():\n    return os.environ.get('HOME')"]
    program = definitions(cells, ["home"])
    assert "sk-secret" not in program and "def home" in program


def test_a_try_it_loop_s_variable_named_like_a_builtin_is_no_definition():
    cells = ["", "for input in ['a', 'b']:\n    print(input)", "def ask():\n    return input"]
    program = definitions(cells, ["ask"])
    assert "for input" not in program and run(program)["ask"]() is builtins.input


def test_a_name_asked_for_that_a_cell_last_imported_is_imported():
    cells = ["", "def calculator(expression):\n    return 'mine'",
             "from functools import reduce, partial as calculator"]
    program = definitions(cells, ["calculator"])
    assert "from functools import partial as calculator" in program and "'mine'" not in program
    assert run(program)["calculator"] is functools.partial


def test_statements_sharing_a_line():
    cells = ["", "TOOLS = []; TOOLS.append('calculator'); print(TOOLS)"]
    program = definitions(cells, ["TOOLS"])
    assert "print" not in program and run(program)["TOOLS"] == ["calculator"]


def test_without_In_the_cells_are_those_the_kernel_keeps_for_its_tracebacks():
    """nbval runs cells with no input history: the kernel's own copies of them (linecache) stand in for `In`."""
    files = {"/tmp/ipykernel_4242/100.py": "HELPER = 41\n",
             "/tmp/ipykernel_4242/101.py": "def answer():\n    return HELPER + 1\n"}
    for name, text in files.items():
        linecache.cache[name] = (len(text), None, text.splitlines(True), name)
    try:
        assert run(definitions(["", ""], ["answer"]))["answer"]() == 42
    finally:
        for name in files:
            linecache.cache.pop(name, None)


def test_code_nested_deeper_than_the_stack_is_still_read():
    cells = ["", "TOTAL = " + "1 + " * 2000 + "1", "def total():\n    return TOTAL"]
    assert run(definitions(cells, ["total"]))["total"]() == 2001
