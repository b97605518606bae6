"""Where a name's value came from, read from the notebook's cells (checks/reaching.py): eval in 1.1's calculator.

The reader follows every path the source spells out to a target. The grader no longer needs it for the course's
own code, which a graded kernel does not hold (looplab/withheld.py, tests/test_withholding.py); what it reads
today is whether 1.1's calculator reaches eval, exec or compile. The cases below hold the reader to every
spelling, with the course's agent_turn as a target too, the way it was first written.
"""

from __future__ import annotations

import pytest

from looplab.checks.core import NOT_SOLVED
from looplab.checks.reaching import folded, reaches
from tests.check_helpers import twin
from tests.judge_helpers import judged
from tests.notebook_code import solution_namespace

AGENT_TURN = ["looplab.loop.agent_turn"]
EVAL = ["builtins.eval", "builtins.exec", "builtins.compile"]
SET_UP = "import looplab\nfrom looplab import loop\n"

HANDED_IN = {
    "assigned": "agent_turn = loop.agent_turn",
    "wrapped": "def agent_turn(client, messages):\n    return loop.agent_turn(client, messages)",
    "imported": "from looplab.loop import agent_turn",
    "star": "from looplab.loop import *",
    "aliased module": "import looplab.loop as L\nagent_turn = L.agent_turn",
    "glued getattr": "import importlib\n_l = importlib.import_module('loop' + 'lab.loop')\n"
                     "agent_turn = getattr(_l, 'agent_' + 'turn')",
    "default argument": "def agent_turn(c, m, _impl=[getattr(loop, 'agent_' + 'turn')]):\n    return _impl[0](c, m)",
    "namespace": "agent_turn = (lambda f: lambda *a: f(*a))(loop.__dict__['agent' + '_turn'])",
    "vars": "agent_turn = vars(loop).get('agent_turn')",
    "code object": "def agent_turn(c, m):\n    pass\nagent_turn.__code__ = loop.agent_turn.__code__",
    "exec into a dict": "import inspect\n_ns = {}\nexec(inspect.getsource(loop.agent_turn), _ns)\nagent_turn = _ns['agent_turn']",
    "exec into the notebook": "import inspect\nexec(inspect.getsource(loop.agent_turn), globals())",
    "sys.modules": "import sys\nagent_turn = sys.modules['looplab.loop'].agent_turn",
    "globals write": "globals()['agent_' + 'turn'] = loop.agent_turn",
    "global in a function": "def set_up():\n    global agent_turn\n    agent_turn = loop.agent_turn\nset_up()",
    "two cells": ["_x = looplab.loop.agent_turn", "agent_turn = _x"],
    "in a branch": "if True:\n    agent_turn = loop.agent_turn",
}

OWN = {
    "written": "def agent_turn(client, messages, max_iterations=10):\n    answer = None\n"
               "    for _ in range(max_iterations):\n        answer = client\n    return answer",
    "after a story cell": ["answer = loop.agent_turn(None, [])",
                           "def agent_turn(client, messages):\n    answer = 1\n    return answer"],
    "rewritten after": ["agent_turn = loop.agent_turn", "def agent_turn(client, messages):\n    return 1"],
    "a parameter of the same name": ["answer = loop.agent_turn(None, [])", "agent_turn = lambda answer: answer"],
    "compared with the course's": "def agent_turn(client, messages):\n    return 1\n"
                                  "same = agent_turn(None, []) == loop.agent_turn(None, [])",
    "other pieces of the course": "def agent_turn(client, messages):\n    return loop.run_tools(messages)",
}


def _cells(case) -> list[str]:
    return [SET_UP] + (case if isinstance(case, list) else [case])


@pytest.mark.parametrize("case", HANDED_IN, ids=list(HANDED_IN))
def test_the_course_s_code_is_found_however_the_source_spells_it(case):
    assert reaches(_cells(HANDED_IN[case]), "agent_turn", AGENT_TURN)


@pytest.mark.parametrize("case", OWN, ids=list(OWN))
def test_the_learner_s_own_code_is_theirs(case):
    assert not reaches(_cells(OWN[case]), "agent_turn", AGENT_TURN)


@pytest.mark.parametrize("source, expected", [
    ("def calculator(x):\n    return str(eval(x))", True),
    ("import builtins\n_e = getattr(builtins, 'ev' + 'al')\ndef calculator(x):\n    return str(_e(x))", True),
    ("import sys, types\n_c = sys.modules['builtins'].__dict__['com' + 'pile']\n"
     "def calculator(x):\n    return str(types.FunctionType(_c(x, '', 'eval'), {})())", True),
    ("def calculator(x):\n    return str(__builtins__.__dict__['ev' + 'al'](x))", True),
    ("globals()['calculator'] = eval", True),
    ("import ast\ndef calculator(x):\n    tree = ast.parse(x, mode='eval')\n    return str(ast.literal_eval(x))", False),
    ("def eval(x):\n    return 1\ndef calculator(x):\n    return str(eval(x))", False),
    ("exec('x = 1')\ndef calculator(x):\n    return x", False),
], ids=["eval", "glued getattr", "sys.modules", "__builtins__", "globals write", "ast", "own eval", "exec elsewhere"])
def test_eval_in_the_calculator(source, expected):
    assert reaches([source], "calculator", EVAL) is expected


def test_a_cell_too_deep_to_read_is_skipped_not_a_crash():
    deep = "x = " + " + ".join(["'a'"] * 50_000) + "\ncalculator = 1"
    assert not reaches([deep], "calculator", EVAL)
    assert folded(__import__("ast").parse(" + ".join(["'a'"] * 300), mode="eval").body) == "a" * 300


def test_a_calculator_reaching_eval_by_a_glued_name_is_not_solved_the_grader_s_way():
    cell = ("import builtins, re\n_e = getattr(builtins, 'ev' + 'al')\n"
            "def calculator(expression):\n    return str(_e(expression))\n")
    solved = twin(solution_namespace("01_one_tool_call")["calculator"])
    result = judged("1.1", solved, cells=[cell])
    assert result["kind"] == NOT_SOLVED and "eval" in result["message"]
