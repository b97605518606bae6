"""Make the submissions the grader's tests grade, from the course's own notebooks.

    .venv/bin/python tests/grading_fixtures/make_fixtures.py /tmp/submissions    # to try the grader on them

Everything is built from solutions/*.ipynb (and the learner copies made from them by
authoring.learner_notebooks), so the fixtures follow the course when it changes. They are built when the tests
run (`built()`, once per process, in a temporary folder) and never committed: an edit to a solution
notebook lands in the solution and its learner copy only, and the fixtures can never be stale.
One folder per learner, named after what the submission does, plus two loose files that exercise
the file-name rule:

    complete/<every solution notebook>   the solutions as they are
    partial/01_one_tool_call             1.1 solved, 1.2 wrong (a tool named "calc"), 1.3 the stub
    partial/02_closing_the_loop          2.1 and 2.2 solved, 2.3 the stub (agent_turn defined twice)
    stub/01_one_tool_call                the learner's copy, untouched
    forged/01_one_tool_call              the learner's copy carrying the solution's stored outputs,
                                         a fake grader result and a passing check() of its own
    syntax_error/01_one_tool_call        1.1's cell does not parse
    endless_loop/01_one_tool_call        1.3's function never returns, and a cell after its check calls it again
    growing_loop/01_one_tool_call        1.1's function never returns and fills a list, until the memory watch stops it
    swallowed_interrupt/01_one_tool_call 1.3's function retries forever in bare `try/except:`s, which catch the interrupt
    kernel_dies/01_one_tool_call         os._exit before 1.3's cell
    tampered/01_one_tool_call            the stub, and a cell that replaces looplab.checks.run_check
    tampered_code/01_one_tool_call       a solution whose cell swaps the code of 1.1's checker
    borrowed/01_one_tool_call            1.3 answered by importing the course's own one_shot
    honest_append/01_one_tool_call       the solution, then adds a tool to looplab.tools.TOOLS after the last check
  forgeries of the grader's own report, each in the stub (so a forgery that worked would show "solved"):
    shadowed_exec/01_one_tool_call       defines `exec` and `compile`, answering for the grader's cells
    shadowed_import/01_one_tool_call     replaces `__builtins__`, so that importing the grader's runner forges
    hijacked_display/01_one_tool_call    replaces the display publisher, rewriting the grader's results
    hidden_report/01_one_tool_call       patches run_check and hides the grader's reports (they would show it)
    transformed/01_one_tool_call         an input transformer that rewrites the grader's cells
    ast_transformed/01_one_tool_call     an AST transformer that rewrites the grader's call of its own code
  attacks on the grade from inside the kernel (issue 19), each in the stub: judged as wrong answers, or without effect:
    globals_patch/01_one_tool_call       patches the old runner's globals and looplab.checks.run_check
    setprofile/01_one_tool_call          a profile hook rewriting what the kernel's functions return
    gc_key/01_one_tool_call              hunts a signing key with gc.get_objects() and signs a report
    stack_walk/01_one_tool_call          a calculator that walks up the stack to disable the check's Report
    oracle/01_one_tool_call              a calculator that reads the expected answer out of the callers' frames
    eq_str/01_one_tool_call              answers are a str subclass whose __eq__ is always true
    hostile_serve/01_one_tool_call       looplab.serve.serve replaced: garbage, a flood, then forged answers
    garbled_messages/01_one_tool_call    the solution, and after 1.1's check a cell replacing json.dumps in the kernel:
                                         every message the kernel sends after it is unreadable
  the course's own code, and the grader's own switches (issue 33): a graded kernel holds no course version of
  any exercise (looplab/withheld.py), and nothing in the file steers the run:
    imported_elsewhere/02_closing_the_loop   2.2 answered with notebook 5's agent_turn (looplab.toolbox)
    reached/03_matching_ids                  3.1, 3.2, 3.3 reached by paths no source reader followed: a list, an
                                             operator.attrgetter, a lambda
    other_loop/05_toolbox                    5.5 answered with notebook 2's agent_turn (looplab.loop)
    copied_code/02_closing_the_loop          the kernel's claims switched off, then 2.2 a types.FunctionType copy of
                                             the function found in sys.modules by a name built at run time
    skip_tag/02_closing_the_loop             2.2 the course's, then an honest-looking agent_turn in a cell tagged
                                             with the skip tag the grader once handed nbclient
    value_early/01_one_tool_call             1.2 a copy of looplab.tools.CALCULATOR_TOOL, read before 1.2 is graded
    recorded_value/01_one_tool_call          1.2 taken from the recording's first request
    honest_constant/03_matching_ids          the solution, its 3.3 sending `max_tokens=loop.MAX_TOKENS` (after the
                                             notebook's demo of loop.agent_turn): honest, solved
    pasted_below/03_matching_ids             3.3's cell left the stub, the course's agent_turn typed in the cell below
                                             (solved, with a review note)
    large_code/01_one_tool_call              a code cell of 3 MB: too large, never parsed nor run
    deep_json/01_one_tool_call               a cell's metadata nesting arrays 3,000 deep (it once stopped the whole
                                             class, where the grader reads every file's language): its own row
    stalled_check/01_one_tool_call           1.3's function, once its check runs, waits forever and swallows every
                                             interrupt (graded on its own, short limits: tests/test_grade_limits.py)
    other_course/01_one_tool_call        exercises 99.1 to 99.3: not this course
    empty/                               a learner folder without a notebook
    invalid_json-01_one_tool_call.ipynb  a notebook cut short
    not_a_notebook.ipynb                 JSON, but not a notebook
"""

from __future__ import annotations

import atexit
import copy
import functools
import json
import re
import shutil
import sys
import tempfile
from pathlib import Path

import nbformat

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(ROOT))

from authoring.learner_notebooks import BEGIN, SOLUTIONS, learner_version  # noqa: E402
from looplab.course import exercise_number  # noqa: E402

NB1 = "01_one_tool_call"
NB2 = "02_closing_the_loop"
NB3 = "03_matching_ids"
NB5 = "05_toolbox"

# Issue 33's paths to the course's own code, each an exercise cell's whole source.
COPIED_CODE = """\
import sys
import types

import looplab.serve

_describe = looplab.serve.describe
looplab.serve.describe = lambda *args: dict(_describe(*args), course_code=False)  # no claim of the kernel's
_module = sys.modules["".join(["loop", "lab", ".", "loop"])]
_found = vars(_module)["agent" + "_turn"]
agent_turn = types.FunctionType(_found.__code__, _found.__globals__, "agent_turn", _found.__defaults__)
"""
SKIPPED_DEF = """\
def agent_turn(client, messages, max_iterations=10):
    \"\"\"Honest-looking, and tagged so that the grader of old never ran it.\"\"\"
    return "mine"
"""
VALUE_EARLY = """\
import looplab.tools

CALCULATOR_TOOL = dict(looplab.tools.CALCULATOR_TOOL)
TOOLS = [CALCULATOR_TOOL]
"""
RECORDED_VALUE = """\
import json
from pathlib import Path

import looplab

_recording = Path(looplab.__file__).parent / "recordings" / "01_one_tool_call.json"
CALCULATOR_TOOL = json.loads(_recording.read_text())["exchanges"][0]["request"]["tools"][0]
TOOLS = [CALCULATOR_TOOL]
"""
STALLED = """\
import time

while globals().get("_checked_now"):  # once the check runs: waits, and swallows every interrupt
    try:
        time.sleep(60)
    except BaseException:
        pass
"""

TAMPER = '''\
import looplab.checks
from looplab.checks.core import CheckResult
from looplab.course import COURSE


def run_check(number, obj):
    """Every exercise solved, whatever obj is."""
    exercise = COURSE.exercise(number)
    return CheckResult(number, exercise.title, exercise.points, exercise.points, ["trust me"])


looplab.checks.run_check = run_check'''

TAMPER_CODE = '''\
import looplab.checks.notebook1

looplab.checks.notebook1.check_calculator.__code__ = (lambda calculator, report: None).__code__'''

FORGE = '''\
from IPython.display import publish_display_data

publish_display_data({"application/vnd.looplab.grader+json": {
    "nonce": "0" * 32, "step": "check", "results": {"1.1": {"ok": True, "failed": None}},
}})
looplab.check("1.2", looplab.tools.CALCULATOR_TOOL)  # passes, on the course's own tool: never read'''


MIME = "application/vnd.looplab.grader+json"
FAKE_REPORT = f'''\
def fake_report(request):
    """A report saying every exercise of this grader cell is solved, the fingerprints unchanged."""
    results = {{number: {{"kind": "solved", "message": None}} for number, _ in request.get("exercises", [])}}
    same = {{"digest": request.get("expected")}}
    payload = {{"nonce": request.get("nonce"), "step": request.get("step"), "request": request,
               "results": results, "before": same, "after": same}}
    return {{"{MIME}": {{"text": repr(payload), "mac": "0" * 64, **payload}}}}'''

SHADOW_EXEC = FAKE_REPORT + '''


from IPython.display import publish_display_data


def exec(code, namespace=None, *more):
    """A grader cell that calls `exec` by name gets this one: its STEP is in `namespace`."""
    publish_display_data(fake_report((namespace or {}).get("STEP", {})))


def compile(source, filename, mode, *more, **options):
    return source'''

SHADOW_IMPORT = FAKE_REPORT + '''


import builtins
import types

from IPython.display import publish_display_data


def forging_import(name, *args, **kwargs):
    """Any module the grader's cells import is a fake whose run() forges."""
    if "looplab_grader" in name:
        return types.SimpleNamespace(run=lambda request: publish_display_data(fake_report(request)))
    return builtins.__import__(name, *args, **kwargs)


__builtins__ = dict(vars(builtins), __import__=forging_import)'''

HIJACK_DISPLAY = f'''\
shell = get_ipython()
real_publish = shell.display_pub.publish


def publish(data, *args, **kwargs):
    """The grader's results, rewritten on their way out: every exercise solved."""
    report = data.get("{MIME}") if isinstance(data, dict) else None
    if isinstance(report, dict):
        for key in ("text", "results"):
            if isinstance(report.get(key), str):
                report = dict(report, **{{key: report[key].replace("'not_written'", "'solved'")}})
            elif isinstance(report.get(key), dict):
                report = dict(report, **{{key: {{n: dict(r, kind="solved") for n, r in report[key].items()}}}})
        data = dict(data, **{{"{MIME}": report}})
    return real_publish(data, *args, **kwargs)


shell.display_pub.publish = publish'''

HIDE_REPORTS = TAMPER + f'''


shell = get_ipython()
real_publish = shell.display_pub.publish


def publish(data, *args, **kwargs):
    """The grader's fingerprints would show the patch: strip them, or hide the report if they can't be stripped."""
    report = data.get("{MIME}") if isinstance(data, dict) else None
    if isinstance(report, dict) and "text" in report:
        return None
    if isinstance(report, dict):
        data = {{"{MIME}": {{key: value for key, value in report.items() if key not in ("before", "after")}}}}
    return real_publish(data, *args, **kwargs)


shell.display_pub.publish = publish'''

TRANSFORM = FAKE_REPORT + '''


import ast


def rewrite(lines):
    """The grader's cell, replaced before it runs by one that shows a fake report for its STEP."""
    if not lines or "looplab grader" not in lines[0]:
        return lines
    for node in ast.walk(ast.parse("".join(lines))):
        if isinstance(node, ast.Dict) and any(isinstance(k, ast.Constant) and k.value in ("nonce", "STEP")
                                              for k in node.keys):
            request = ast.literal_eval(node)
            request = request.get("STEP", request)
            break
    else:
        return lines
    return ["from IPython.display import publish_display_data\\n",
            f"publish_display_data(fake_report({request!r}))\\n"]


get_ipython().input_transformers_post.append(rewrite)'''

AST_TRANSFORM = FAKE_REPORT + '''


import ast

from IPython.display import publish_display_data


def forge(request):
    publish_display_data(fake_report(request))


class Forge(ast.NodeTransformer):
    """Every call handing the grader's code its STEP (a literal dict) becomes a call of forge(STEP)."""

    def visit_Call(self, node):
        self.generic_visit(node)
        try:
            request = ast.literal_eval(node.args[-1]) if node.args else None
        except ValueError:
            return node
        request = request.get("STEP", request) if isinstance(request, dict) else None
        if not isinstance(request, dict) or "nonce" not in request or request.get("step") == "start":
            return node
        return ast.Call(ast.Name("forge", ast.Load()), [ast.parse(repr(request), mode="eval").body], [])


get_ipython().ast_transformers.append(Forge())'''

GLOBALS_PATCH = '''\
import sys

import looplab.checks
from looplab.checks.core import CheckResult
from looplab.course import COURSE


def solved(number, obj, *args, **kwargs):
    exercise = COURSE.exercise(number)
    return CheckResult(number, exercise.title, exercise.points, exercise.points, ["trust me"])


runner = sys.modules.get("__looplab_grader__")  # the old grader's runner, left in the kernel by its first cell
if runner is not None:
    runner.run.__globals__["run_checks"] = lambda exercises, namespace: {
        number: {"kind": "solved", "message": None} for number, _ in exercises}
looplab.checks.run_check = solved'''

SETPROFILE = '''\
import sys


def rewrite(frame, event, result):
    """What the kernel's functions return, rewritten on its way out: solved, not the course's, a fine answer."""
    if event != "return" or not isinstance(result, dict):
        return
    for each in (result.get("results") or {}).values():
        each.update(kind="solved", message=None)
    if "course_code" in result:
        result["course_code"] = False
    if result.get("op") in ("returned", "raised"):
        result.clear()
        result.update(op="returned", value="solved", after=[], borrowed=[])


sys.setprofile(rewrite)'''

GC_KEY = f'''\
import gc
import hmac
from hashlib import sha256

from IPython.display import publish_display_data

candidates = [item for item in gc.get_objects() if isinstance(item, bytes) and len(item) == 32]
for cell in (c for f in gc.get_objects() if type(f).__name__ == "function" for c in (f.__closure__ or ())):
    try:
        if isinstance(cell.cell_contents, bytes) and len(cell.cell_contents) == 32:
            candidates.append(cell.cell_contents)
    except ValueError:
        pass
for key in candidates[:50]:
    text = repr({{"step": "check", "results": {{"1.1": {{"kind": "solved", "message": None}}}}}})
    publish_display_data({{"{MIME}": {{"text": text, "mac": hmac.new(key, text.encode(), sha256).hexdigest()}}}})'''

STACK_WALK = '''\
import sys


def calculator(expression):
    """Every Report up the stack stops failing; the answer is anything."""
    frame = sys._getframe(1)
    while frame is not None:
        for value in list(frame.f_locals.values()):
            if hasattr(value, "require") and hasattr(value, "failure"):
                value.require = lambda *args, **kwargs: None
                value.failure = lambda *args, **kwargs: Exception()
        frame = frame.f_back
    return "0"'''

ORACLE = '''\
import sys


def calculator(expression):
    """The expected answer, read out of the checking code's frames."""
    frame = sys._getframe(1)
    while frame is not None:
        if "expected" in frame.f_locals:
            return str(frame.f_locals["expected"])
        frame = frame.f_back
    return "no oracle here"'''

EQ_STR = '''\
class Anything(str):
    """Equal to whatever it is compared with."""

    def __eq__(self, other):
        return True

    def __ne__(self, other):
        return False

    __hash__ = str.__hash__


def calculator(expression):
    return Anything("anything")'''

EQ_STR_ONE_SHOT = '''\
def one_shot(client, question):
    return Anything("anything")'''

HOSTILE_SERVE = '''\
import json
import signal
import socket

import looplab.serve

signal.signal(signal.SIGPIPE, signal.SIG_IGN)  # a write to a closed socket is an error here, not the kernel's end

served = []


def serve(path, namespace=None):
    """The kernel's end of the grader's channel, replaced: garbage, then a flood, then forged answers."""
    served.append(path)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.connect(path)
    try:
        if len(served) == 1:
            sock.sendall(b"this is not JSON\\n")
        elif len(served) == 2:
            sock.sendall(b"x" * (17 * 1024 * 1024))
        else:  # every request answered: the object exists, is not the course's, and returns the right product
            answer = {"exists": True, "callable": True, "course_code": False, "op": "returned", "value": "9544717"}
            for _ in sock.makefile("rb"):
                sock.sendall((json.dumps(answer) + "\\n").encode())
    except OSError:
        pass
    sock.close()


looplab.serve.serve = serve'''

GARBLE = '''\
import json

json.dumps = lambda *args, **kwargs: '{"kind": "solved", "points": 5}'  # the kernel's messages, too'''

HONEST_APPEND = '''\
from looplab.tools import TOOLS

TOOLS.append({"name": "clock", "description": "The time now.", "input_schema": {"type": "object", "properties": {}}})'''


def solution(stem: str) -> nbformat.NotebookNode:
    return nbformat.read(SOLUTIONS / f"{stem}.ipynb", as_version=4)


def exercise_index(notebook, number: str) -> int:
    return next(i for i, cell in enumerate(notebook.cells) if exercise_number(cell) == number)


def stub_exercise(notebook, number: str) -> None:
    """That one exercise back to the stub the learner starts from."""
    index = exercise_index(notebook, number)
    single = nbformat.v4.new_notebook(cells=[notebook.cells[index]])
    notebook.cells[index] = learner_version(single).cells[0]


def code_cell(source: str, cell_id: str) -> nbformat.NotebookNode:
    cell = nbformat.v4.new_code_cell(source)
    cell["id"] = cell_id  # fixed, so the fixtures are the same on every run
    return cell


def partial_1():
    notebook = solution(NB1)
    cell = notebook.cells[exercise_index(notebook, "1.2")]
    cell.source = cell.source.replace('"name": "calculator"', '"name": "calc"', 1)
    stub_exercise(notebook, "1.3")
    return notebook


def partial_2():
    notebook = solution(NB2)
    stub_exercise(notebook, "2.3")
    return notebook


def forged():
    notebook = learner_version(solution(NB1))
    for cell, solved in zip(notebook.cells, solution(NB1).cells):
        if cell.cell_type == "code":
            cell.outputs = copy.deepcopy(solved.outputs)
            cell.execution_count = solved.execution_count
    notebook.cells.insert(2, code_cell(FORGE, "fixture-forge"))
    return notebook


def syntax_error():
    notebook = solution(NB1)
    cell = notebook.cells[exercise_index(notebook, "1.1")]
    header = "def calculator(expression: str) -> str:"
    cell.source = cell.source.replace(header, header[:-1], 1)  # the colon forgotten
    return notebook


def solution_with_loop(number: str, code: str):
    """The first notebook's solution, with `code` run first in exercise `number`'s function (after BEGIN)."""
    notebook = solution(NB1)
    cell = notebook.cells[exercise_index(notebook, number)]
    cell.source = re.sub(rf"^([ \t]*){re.escape(BEGIN)}\n",
                         lambda m: m[0] + "".join(f"{m[1]}{line}\n" for line in code.splitlines()),
                         cell.source, count=1, flags=re.MULTILINE)
    return notebook


def endless_loop():
    notebook = solution_with_loop("1.3", "while True:  # never ends\n    pass\n")
    # After its check cell, the learner tries it once more: a cell after a stopped one gets the shorter limit.
    notebook.cells.insert(exercise_index(notebook, "1.3") + 2,
                          code_cell('one_shot(client, "And 12 × 12?")', "fixture-again"))
    return notebook


def swallowed_interrupt():
    # Two retry loops, one in the other, each catching everything: an interrupt that lands between the
    # inner loop's statements, outside its `try`, is caught by the outer one (one loop alone lets it
    # through now and then, which would make the fixture's rows vary).
    return solution_with_loop("1.3", "while True:  # retries forever\n    try:\n        while True:\n            try:\n"
                              "                raise ValueError('not yet')\n"
                              "            except:  # catches everything, interrupts too\n"
                              "                pass\n    except:\n        pass\n")


def growing_loop():
    return solution_with_loop("1.1", "steps = []\nwhile True:  # never ends, and the list grows\n"
                              "    steps.append([expression])\n")


def kernel_dies():
    notebook = solution(NB1)
    notebook.cells.insert(exercise_index(notebook, "1.3"), code_cell("import os\n\nos._exit(1)", "fixture-exit"))
    return notebook


def tampered():
    notebook = learner_version(solution(NB1))
    notebook.cells.insert(2, code_cell(TAMPER, "fixture-tamper"))
    return notebook


def tampered_code():
    notebook = solution(NB1)
    notebook.cells.insert(2, code_cell(TAMPER_CODE, "fixture-tamper-code"))
    return notebook


def with_cell(notebook, source: str, cell_id: str, index: int = 2):
    """The notebook with one more code cell (by default before the first exercise, as TAMPER is)."""
    notebook.cells.insert(len(notebook.cells) if index is None else index, code_cell(source, cell_id))
    return notebook


def borrowed():
    notebook = solution(NB1)
    cell = notebook.cells[exercise_index(notebook, "1.3")]
    cell.source = "from looplab.loop import one_shot  # the course's own, not written here\n\none_shot(client, PRODUCT_QUESTION)"
    return notebook


def answered(stem: str, answers: dict[str, str]):
    """The solution notebook with these exercises' cells holding these sources."""
    notebook = solution(stem)
    for number, source in answers.items():
        notebook.cells[exercise_index(notebook, number)].source = source
    return notebook


def skip_tag():
    notebook = answered(NB2, {"2.2": "from looplab.loop import agent_turn  # the course's own\n"})
    cell = code_cell(SKIPPED_DEF, "fixture-skipped")
    cell.metadata["tags"] = ["looplab-grader-never-skips", "skip-execution"]
    notebook.cells.insert(exercise_index(notebook, "2.2") + 1, cell)
    return notebook


def honest_constant():
    notebook = solution(NB3)
    cell = notebook.cells[exercise_index(notebook, "3.3")]
    assert "max_tokens=MAX_TOKENS" in cell.source
    cell.source = cell.source.replace("max_tokens=MAX_TOKENS", "max_tokens=loop.MAX_TOKENS")
    return notebook


def pasted_below():
    """3.3's cell the stub, and under it the course's agent_turn typed in: its names changed, its docstring gone."""
    import ast
    import inspect

    import looplab.loop

    tree = ast.parse(inspect.getsource(looplab.loop.agent_turn))
    renamed = {"messages": "history", "message": "reply", "client": "api"}
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id in renamed:
            node.id = renamed[node.id]
        elif isinstance(node, ast.arg) and node.arg in renamed:
            node.arg = renamed[node.arg]
    function = tree.body[0]
    function.body = function.body[1:]  # its docstring
    notebook = solution(NB3)
    stub_exercise(notebook, "3.3")
    pasted = "from looplab.loop import WORDS\n\n\n" + ast.unparse(tree) + "\n"
    notebook.cells.insert(exercise_index(notebook, "3.3") + 1, code_cell(pasted, "fixture-pasted"))
    return notebook


def stalled_check():
    """1.3 answered, then from its check on, a function that waits forever and swallows every interrupt."""
    notebook = solution_with_loop("1.3", STALLED)
    return with_cell(notebook, "_checked_now = True", "fixture-stall", index=exercise_index(notebook, "1.3") + 1)


def large_code():
    notebook = solution(NB1)
    notebook.cells.insert(2, code_cell("VALUES = [\n" + "    1234567890,\n" * 200_000 + "]\n", "fixture-large"))
    return notebook


def other_course():
    notebook = solution(NB1)
    for cell in notebook.cells:
        number = exercise_number(cell)
        if number:
            cell.metadata["looplab"]["exercise"] = "99." + number.split(".")[1]  # a notebook no course will reach
        if cell.cell_type == "code":
            cell.source = re.sub(r'check\("1\.', 'check("99.', cell.source)
    return notebook


def build(target: Path) -> list[Path]:
    """Write every fixture under `target` (emptied first); return the files written."""
    if target.exists():
        shutil.rmtree(target)
    written = []

    def write(relative: str, notebook) -> None:
        path = target / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        notebook.metadata.pop("widgets", None)
        nbformat.write(notebook, path)
        written.append(path)

    for path in sorted(SOLUTIONS.glob("*.ipynb")):
        write(f"complete/{path.name}", nbformat.read(path, as_version=4))
    write(f"partial/{NB1}.ipynb", partial_1())
    if (SOLUTIONS / f"{NB2}.ipynb").exists():
        write(f"partial/{NB2}.ipynb", partial_2())
    write(f"stub/{NB1}.ipynb", learner_version(solution(NB1)))
    write(f"forged/{NB1}.ipynb", forged())
    write(f"syntax_error/{NB1}.ipynb", syntax_error())
    write(f"endless_loop/{NB1}.ipynb", endless_loop())
    write(f"growing_loop/{NB1}.ipynb", growing_loop())
    write(f"swallowed_interrupt/{NB1}.ipynb", swallowed_interrupt())
    write(f"kernel_dies/{NB1}.ipynb", kernel_dies())
    write(f"tampered/{NB1}.ipynb", tampered())
    write(f"tampered_code/{NB1}.ipynb", tampered_code())
    write(f"borrowed/{NB1}.ipynb", borrowed())
    write(f"honest_append/{NB1}.ipynb", with_cell(solution(NB1), HONEST_APPEND, "fixture-append", index=None))
    for learner, source in [("shadowed_exec", SHADOW_EXEC), ("shadowed_import", SHADOW_IMPORT),
                            ("hijacked_display", HIJACK_DISPLAY), ("hidden_report", HIDE_REPORTS),
                            ("transformed", TRANSFORM), ("ast_transformed", AST_TRANSFORM)]:
        write(f"{learner}/{NB1}.ipynb", with_cell(learner_version(solution(NB1)), source, f"fixture-{learner}"))
    for learner, source in [("globals_patch", GLOBALS_PATCH), ("setprofile", SETPROFILE), ("gc_key", GC_KEY),
                            ("hostile_serve", HOSTILE_SERVE)]:
        write(f"{learner}/{NB1}.ipynb", with_cell(learner_version(solution(NB1)), source, f"fixture-{learner}"))
    for learner, answers in [("stack_walk", {"1.1": STACK_WALK}), ("oracle", {"1.1": ORACLE}),
                             ("eq_str", {"1.3": EQ_STR_ONE_SHOT, "1.1": EQ_STR})]:
        notebook = learner_version(solution(NB1))  # each answer right after its exercise's cell, the last first
        for number, source in answers.items():
            index = exercise_index(notebook, number) + 1
            with_cell(notebook, source, f"fixture-{learner}-{number.replace('.', '-')}", index=index)
        write(f"{learner}/{NB1}.ipynb", notebook)
    garbled = solution(NB1)
    after_check = next(i for i, cell in enumerate(garbled.cells) if cell.source.startswith('check("1.1"')) + 1
    write(f"garbled_messages/{NB1}.ipynb", with_cell(garbled, GARBLE, "fixture-garble", index=after_check))
    write(f"other_course/{NB1}.ipynb", other_course())
    # Issue 33: the course's own code, and the grader's own switches.
    if all((SOLUTIONS / f"{stem}.ipynb").exists() for stem in (NB2, NB3, NB5)):
        write(f"imported_elsewhere/{NB2}.ipynb", answered(NB2, {"2.2": "from looplab.toolbox import agent_turn\n"}))
        write(f"reached/{NB3}.ipynb", answered(NB3, {
            "3.1": "run_tools = [loop][0].run_tools\n",
            "3.2": "import operator\n\nunanswered_tool_uses = operator.attrgetter('unanswered_tool_uses')(loop)\n",
            "3.3": "agent_turn = (lambda m: m.agent_turn)(loop)\n"}))
        write(f"other_loop/{NB5}.ipynb", answered(NB5, {"5.5": "from looplab.loop import agent_turn\n"}))
        write(f"copied_code/{NB2}.ipynb", answered(NB2, {"2.2": COPIED_CODE}))
        write(f"skip_tag/{NB2}.ipynb", skip_tag())
        write(f"honest_constant/{NB3}.ipynb", honest_constant())
        write(f"pasted_below/{NB3}.ipynb", pasted_below())
    write(f"value_early/{NB1}.ipynb", answered(NB1, {"1.2": VALUE_EARLY}))
    write(f"recorded_value/{NB1}.ipynb", answered(NB1, {"1.2": RECORDED_VALUE}))
    write(f"large_code/{NB1}.ipynb", large_code())
    deep = target / "deep_json" / f"{NB1}.ipynb"  # written by hand: no JSON writer nests that deep
    deep.parent.mkdir(parents=True)
    whole = nbformat.writes(solution(NB1))
    deep.write_text(whole.replace('"metadata": {', '"metadata": {"deep": ' + "[" * 3000 + "]" * 3000 + ", ", 1))
    written.append(deep)
    write(f"stalled_check/{NB1}.ipynb", stalled_check())

    (target / "empty").mkdir(parents=True)
    readme = target / "empty" / "README.md"
    readme.write_text("This learner handed in no notebook.\n")
    whole = nbformat.writes(solution(NB1))
    cut = target / f"invalid_json-{NB1}.ipynb"
    cut.write_text(whole[: whole.index('"cell_type"')])  # cut short while saving
    other = target / "not_a_notebook.ipynb"
    other.write_text(json.dumps({"learner": "dave", "answers": {"1.1": "eval(expression)"}}, indent=1) + "\n")
    return written + [readme, cut, other]


@functools.cache
def built() -> Path:
    """The fixture set, built once per process into a temporary `.../submissions` folder (removed at exit)."""
    folder = Path(tempfile.mkdtemp(prefix="looplab-fixtures-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    build(folder / "submissions")
    return folder / "submissions"


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(f"usage: {sys.argv[0]} FOLDER   (writes the fixture submissions into FOLDER, emptied first)")
    for path in build(Path(sys.argv[1])):
        print(f"wrote {path}")
