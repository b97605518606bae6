"""looplab.notebook_source.definitions: the one reader that writes a notebook's program from the learner's cells."""

import pytest

from looplab.notebook_source import definitions

CELLS = [
    "",
    "import json\nfrom functools import lru_cache\n\n@lru_cache\ndef tool(x):\n    return json.dumps(x)\n\ntool(1)",
    "TOOLS = [1]\nprint(TOOLS)",
    "%time x = 1\ndef tool(x):\n    return str(x)  # the last definition wins",
    "def run():\n    return tool(TOOLS)",
]


def test_each_name_as_its_last_cell_defines_it_without_the_try_it_lines():
    program = definitions(CELLS, ["TOOLS", "tool", "run"])
    assert "print(TOOLS)" not in program and "tool(1)" not in program
    assert "return str(x)  # the last definition wins" in program and "json.dumps" not in program
    assert program.index("TOOLS = [1]") < program.index("def tool") < program.index("def run")
    namespace: dict = {}
    exec(program, namespace)
    assert namespace["run"]() == "[1]"


def test_a_decorated_function_keeps_its_decorator_and_its_cell_s_imports():
    program = definitions(CELLS[:3], ["tool"])
    assert "@lru_cache\ndef tool" in program
    assert program.startswith("import json\nfrom functools import lru_cache\n")


def test_a_name_no_cell_defines_says_to_run_the_cells_first():
    with pytest.raises(NameError, match="no cell run so far defines 'agent_turn'"):
        definitions(CELLS, ["agent_turn"])
