"""The course's own code, and eval in 1.1, read from the notebook's cells outside the kernel (checks/reaching.py).

Under the grader the kernel's claims ("this is the course's version", "it called it") can be switched off by
the learner's code: a hostile class did exactly that, then handed in `agent_turn = loop.agent_turn`. The
notebook file cannot be switched off. Each case below is a way a learner hands in the course's code (or
reaches eval) that the source spells out; the honest cases are what a learner who wrote their own writes.
"""

from __future__ import annotations

import contextlib

import pytest

import looplab.checks.core as core
import looplab.serve as kernel_side
from looplab.checks.core import COURSE_CODE, NOT_SOLVED, SOLVED
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


@contextlib.contextmanager
def _no_claims():
    """A kernel whose claims are switched off, as the learner's code can switch them off in its own kernel."""
    @contextlib.contextmanager
    def nothing_borrowed(*args, **kwargs):
        yield []

    real_describe, real_borrowing = kernel_side.describe, core.borrowing
    kernel_side.describe = lambda *args: dict(real_describe(*args), course_code=False)
    core.borrowing = nothing_borrowed
    try:
        yield
    finally:
        kernel_side.describe, core.borrowing = real_describe, real_borrowing


@pytest.mark.parametrize("cell", [
    "agent_turn = loop.agent_turn",
    "def agent_turn(client, messages, max_iterations=10):\n    return loop.agent_turn(client, messages, max_iterations)",
])
def test_the_grader_reads_the_course_s_code_from_the_file_whatever_the_kernel_claims(cell):
    import looplab.loop

    def wrapper(client, messages, max_iterations=10):
        return looplab.loop.agent_turn(client, messages, max_iterations)

    with _no_claims():
        assert judged("2.2", wrapper, cells=[SET_UP, cell])["kind"] == COURSE_CODE
        assert judged("2.2", wrapper, cells=[SET_UP])["kind"] == SOLVED  # the proof that claims were off


def test_a_calculator_reaching_eval_by_a_glued_name_is_not_solved_the_grader_s_way():
    cell = ("import builtins, re\n_e = getattr(builtins, 'ev' + 'al')\n"
            "def calculator(expression):\n    return str(_e(expression))\n")
    solved = twin(solution_namespace("01_one_tool_call")["calculator"])
    result = judged("1.1", solved, cells=[cell])
    assert result["kind"] == NOT_SOLVED and "eval" in result["message"]
