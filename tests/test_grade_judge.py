"""Judgement outside the kernel (looplab/grade/judgement/, looplab/serve.py, looplab/channel.py).

The checks run in the grader's process on proxies of the learner's objects; the kernel's end runs
here in a thread, over a real Unix socket (tests/judge_helpers.py). For every exercise, the grader's
result is exactly the in-process one, on the solution, the stub and wrong answers; whatever the
kernel's end sends (garbage, a flood, forged answers, claims) is judged as an answer or costs the
exercise, never awards it. Graded end to end, with real kernels: tests/test_grade.py.
(`LOOPLAB_CHECKS_REMOTE=1 pytest tests/test_checks_notebook*.py` runs every soundness test both ways.)
"""

from __future__ import annotations

import ast
import functools
import json
import socket
import sys
import threading
import time

import pytest

from looplab.channel import MAX_LINE, Channel, decode, encode
from looplab.checks.core import COURSE_CODE, NOT_SOLVED, NOT_WRITTEN, SOLVED
from looplab.course import COURSE, resolve
from looplab.grade.judgement.judge import Judge
from looplab.grade.kernels.kernel_cells import IN_KERNEL_SOURCE, start_cell_source
from looplab.grade.shared.status import CRASHED, UNDEFINED, CheckKind
from looplab.serve import serve
from looplab.tools import CALCULATOR_TOOL
from tests.check_helpers import stub, twin
from tests.judge_helpers import judged, same_as_in_process
from tests.notebook_code import solution_namespace

@functools.cache
def solved_notebook(stem: str) -> dict:
    """The notebook run up to its last exercise: what the checks need (the cells after it run programs and servers).
    Run when a test first asks, not when the file is collected: every worker of the test command collects it."""
    return solution_namespace(stem, until=COURSE.notebook(stem).ids[-1])


def solution(number: str):
    return solved_notebook(COURSE.notebook_of(number).stem)[COURSE.exercise(number).name]


def wrong_answers(number: str) -> list:
    """Two typical wrong answers per exercise, plain enough to write here."""
    def returns(value):
        def answer(*args, **kwargs):
            return value
        return answer

    def raises(*args, **kwargs):
        raise ValueError("something went wrong")

    if number == "1.2":
        return [dict(CALCULATOR_TOOL, name="calc"), {"name": "calculator"}]
    return [returns("42"), raises]


EXERCISES = [exercise.id for exercise in COURSE.exercises]


@pytest.mark.parametrize("number", EXERCISES)
def test_the_solution_is_solved_the_graders_way_too(number):
    assert same_as_in_process(number, twin(solution(number)) if callable(solution(number)) else
                              dict(solution(number)))["kind"] == SOLVED


@pytest.mark.parametrize("number", EXERCISES)
def test_the_stub_is_not_written_the_graders_way_too(number):
    as_received = {} if not callable(resolve(COURSE.exercise(number).reference)) else stub  # a dict exercise: {}
    assert same_as_in_process(number, as_received)["kind"] == NOT_WRITTEN


@pytest.mark.parametrize("number", EXERCISES)
def test_wrong_answers_fail_the_same_way(number):
    for answer in wrong_answers(number):
        assert same_as_in_process(number, answer)["kind"] == NOT_SOLVED


def test_the_course_s_own_code_and_a_missing_name():
    assert judged("1.3", __import__("looplab.loop").loop.one_shot)["kind"] == COURSE_CODE
    assert judged("1.1", None, kernel=lambda path, namespace: serve(path, {}))["kind"] == UNDEFINED


def test_every_kind_the_judge_gives_is_one_the_grader_knows():
    assert {kind.value for kind in CheckKind} == {SOLVED, NOT_WRITTEN, NOT_SOLVED, COURSE_CODE, UNDEFINED, CRASHED}


# --- values: plain JSON both ways, never an object of the learner's ------------------------------------------

class Anything(str):
    def __eq__(self, other):
        return True

    __hash__ = str.__hash__


def test_a_str_subclass_crosses_as_the_plain_text_it_holds():
    data = json.loads(json.dumps(encode([Anything("x"), ("a", 1), {"$sdk": "Message"}])))
    value = decode(data, lambda tag, body: None)
    assert value == ["x", ("a", 1), {"$sdk": "Message"}] and type(value[0]) is str
    assert judged("1.1", lambda expression: Anything("nothing"))["kind"] == NOT_SOLVED


def test_an_object_of_the_learners_is_opaque_and_equal_to_nothing():
    class Answer:
        def __eq__(self, other):
            return True

    result = judged("1.1", lambda expression: Answer())
    assert result["kind"] == NOT_SOLVED and "Answer" in result["message"]


def test_a_learner_s_thousands_of_classes_never_change_the_next_learner_s_words(tmp_path):
    """The grader makes a type for each class name of the learner's it meets (so a message names it), at most
    OPAQUE_TYPES of them: a judge's own (one check point of one notebook). One learner whose code returned 1,100
    classes once changed the words of everyone graded after them: their classes were all named "Opaque"."""
    from looplab.grade.judgement.proxies import OPAQUE_TYPES, Proxies

    first, second = (Judge([COURSE.exercise("1.1")], [], tmp_path, 1) for _ in range(2))
    filled = Proxies(first)
    for number in range(OPAQUE_TYPES + 100):
        filled.tagged("$object", {"$object": f"Kind{number}", "repr": "?"})
    assert type(filled.tagged("$object", {"$object": "Answer", "repr": "?"})).__name__ == "Opaque"  # full, for them
    assert type(Proxies(second).tagged("$object", {"$object": "Answer", "repr": "?"})).__name__ == "Answer"
    for judge in (first, second):
        judge.close()


# --- attacks: the kernel's end is the learner's; what it says is judged ----------------------------------------

def first_connects(send):
    """A kernel whose own code connects to the grader first (as a background thread would) and `send`s on it;
    the real serve connects after it."""
    def kernel(path, namespace):
        hostile = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        hostile.connect(path)
        threading.Thread(target=send, args=(hostile,), daemon=True).start()
        serve(path, namespace)
    return kernel


def garbage(sock):
    sock.sendall(b"{not json\n")


def flood(sock):
    try:
        sock.sendall(b"x" * (MAX_LINE + 1024))
    except OSError:
        pass


def forged_claims(sock):
    """Every request answered: exists, not the course's, solved-looking answers and claims."""
    answer = {"exists": True, "callable": True, "course_code": False, "op": "returned", "value": "9544717",
              "results": {"1.1": {"kind": "solved"}}}
    try:
        for _ in sock.makefile("rb"):
            sock.sendall(json.dumps(answer).encode() + b"\n")
    except OSError:
        pass


@pytest.mark.parametrize("send", [garbage, flood])
def test_a_connection_that_sends_garbage_or_floods_gets_no_point(send):
    result = judged("1.1", twin(solution("1.1")), kernel=first_connects(send), seconds=3)
    assert result["kind"] == NOT_SOLVED and "did not answer the grader" in result["message"]


def test_forged_answers_are_judged_as_answers():
    for number in ("1.1", "1.3", "2.2"):
        assert judged(number, stub, kernel=first_connects(forged_claims), seconds=3)["kind"] == NOT_SOLVED


def test_a_claim_can_cost_points_never_award_them():
    def claims_course_code(path, namespace):
        import looplab.serve as kernel_side
        real = kernel_side.describe
        kernel_side.describe = lambda *args: dict(real(*args), course_code=True)
        try:
            serve(path, namespace)
        finally:
            kernel_side.describe = real

    assert judged("1.1", twin(solution("1.1")), kernel=claims_course_code)["kind"] == COURSE_CODE


def test_a_kernel_that_never_answers():
    def silent(path, namespace):
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.connect(path)
        time.sleep(3)
        sock.close()

    started = time.monotonic()
    result = judged("1.1", stub, kernel=silent, seconds=0.5)
    assert result["kind"] == NOT_SOLVED and "did not answer" in result["message"]
    assert time.monotonic() - started < 5


def test_a_loop_that_never_ends_is_stopped_by_the_grader_s_clock():
    over = threading.Event()  # set once the grader has given up: the thread must not spin in this process for good

    def endless(expression):
        while not over.is_set():
            pass

    started = time.monotonic()
    try:
        result = judged("1.1", endless, seconds=0.5, answered=over.set)
    finally:
        over.set()
    assert result["kind"] == NOT_SOLVED and "still running after 0.5 seconds" in result["message"]
    assert time.monotonic() - started < 10


def test_judges_side_by_side_parse_in_turn(monkeypatch):
    """The grader judges --jobs notebooks at once, a thread each, and those threads parse: the learner's cells
    (checks/source.py), the course calculator's expressions (notebook 2's and 4's expected answers). On
    CPython 3.11 before 3.11.8, two parses at once could raise SystemError ("AST constructor recursion depth
    mismatch", python/cpython#106905), and CI marked an honest 1.1 "the check could not finish". Here a
    parse that lingers shows whether another thread ever came in while it ran, by any of those paths."""
    from looplab.checks.source import parsed
    from looplab.grade.judgement import one_parse_at_a_time
    from looplab.tools import calculator

    real_parse, inside, most = ast.parse, [], []

    def lingering(source, *args, **kwargs):
        inside.append(threading.get_ident())
        most.append(len(inside))
        time.sleep(0.01)  # long enough for the other thread to arrive
        inside.pop()
        return real_parse(source, *args, **kwargs)

    monkeypatch.setattr(ast, "parse", one_parse_at_a_time.in_turn(lingering))
    paths = [lambda: parsed("x = 1"), lambda: calculator("2 + 3"), lambda: ast.literal_eval("[1, 2]")]
    threads = [threading.Thread(target=lambda: [path() for _ in range(2) for path in paths]) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(most) == 12 and max(most) == 1


def test_the_grader_s_judges_parse_in_turn_only_where_python_needs_it(monkeypatch, tmp_path):
    from looplab.grade.judgement import one_parse_at_a_time
    from looplab.grade.judgement.judge import check_point

    monkeypatch.setattr(ast, "parse", ast.parse)  # whatever check_point does to it is undone after this test
    check_point([], [], tmp_path, 1.0).close()
    assert getattr(ast.parse, "in_turn", False) is one_parse_at_a_time.AFFECTED
    release = sys.version_info[:3]
    assert one_parse_at_a_time.AFFECTED is (release < (3, 11, 8) if release[:2] == (3, 11)
                                             else release < (3, 12, 2) if release[:2] == (3, 12) else False)


def test_a_channel_message_is_one_json_line():
    left, right = socket.socketpair()
    a, b = Channel(left), Channel(right)
    a.send({"op": "describe", "name": "x"})
    a.send({"op": "done"})
    assert b.receive(1) == {"op": "describe", "name": "x"} and b.receive(1) == {"op": "done"}


# --- the grader's first cell: no grader code in the kernel ------------------------------------------------------

@pytest.mark.parametrize("module", ["looplab/grade/kernels/in_kernel.py", "looplab/serve.py", "looplab/channel.py"])
def test_the_kernel_side_imports_nothing_of_the_grader(module):
    from pathlib import Path

    tree = ast.parse((Path(__file__).resolve().parent.parent / module).read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            assert "grade" not in (node.module or ""), ast.unparse(node)
        if isinstance(node, ast.Import):
            assert not any("grade" in alias.name for alias in node.names), ast.unparse(node)


def test_the_first_grader_cell_runs_the_memory_watch_only():
    source = start_cell_source({"memory": 123})
    assert source.startswith("# Added by the looplab grader")
    call = ast.parse(source).body[0].value
    code = ast.literal_eval(call.args[0].args[0])
    assert code.startswith(IN_KERNEL_SOURCE) and code.rstrip().endswith("start(STEP)")


def test_one_dict_returned_twice_is_one_dict_for_the_grader_too():
    """The kernel keeps lists and dicts by number (channel.Identities): a tool_result that returns one dict for
    every call fails the grader's way as it fails in-process (checked on fresh copies: the dict is shared state)."""
    def reusing():
        shared = {}

        def tool_result(tool_use, output):
            shared.clear()
            shared.update(type="tool_result", tool_use_id=tool_use.id, content=output)
            if output.startswith("Error"):
                shared["is_error"] = True
            return shared
        return tool_result

    from looplab.checks import run_check

    local = run_check("2.1", reusing())
    remote = judged("2.1", reusing(), cells=[])
    assert (remote["kind"], remote["message"]) == (local.kind, local.failed) and "same dict" in local.failed


def test_a_message_taken_out_of_the_history_is_seen():
    def pops_the_answer(client, messages, max_iterations=10):
        solution("2.2")(client, messages, max_iterations)
        messages.pop()
        return "4823 × 1979 = 9,544,717."

    assert "took messages out of the list" in same_as_in_process("2.2", pops_the_answer)["message"]


def test_a_numpy_array_of_numbers_crosses_as_itself_and_any_other_as_an_opaque_object():
    """Notebook 7's vectors: an array of numbers reaches the other end as an array of the same values, shape and
    type (a copy); an array of objects, and an array the kernel's end made up, never becomes anything else."""
    import numpy

    def tagged(tag, data):
        return ("opaque", data.get("$object"))

    for array in (numpy.array([1.0, 0.0, 2.5]), numpy.zeros((2, 3), dtype="int64"), numpy.array([True, False])):
        sent = json.loads(json.dumps(encode(array)))
        back = decode(sent, tagged)
        assert isinstance(back, numpy.ndarray) and back.dtype == array.dtype and numpy.array_equal(back, array)
    assert encode(numpy.array(["a", "b"]))["$object"] == "ndarray"  # words, not numbers: opaque
    assert decode({"$ndarray": [[1.0], [2.0, 3.0]], "dtype": "float64"}, tagged) == ("opaque", "ndarray")
    assert decode({"$ndarray": [1, 2], "dtype": "object"}, tagged) == ("opaque", None)  # a dtype it does not take


def test_a_numpy_number_crosses_as_the_python_number_it_equals():
    """7.3's positions: a learner's ranking made with argsort holds np.int64, which must reach the check as the int
    it is (np.float64 is a float already; np.bool_ a bool)."""
    import numpy

    for number, plain in ((numpy.int64(2), 2), (numpy.int32(-1), -1), (numpy.float32(0.5), 0.5),
                          (numpy.float64(0.25), 0.25), (numpy.bool_(True), True)):
        back = decode(json.loads(json.dumps(encode(number))), lambda tag, data: ("opaque", data))
        assert back == plain and type(back) is type(plain)
    assert encode(numpy.str_("a")) == "a"  # a numpy str is a str: the text it holds
