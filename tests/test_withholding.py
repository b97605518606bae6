"""A graded kernel holds no course version of any exercise (issue 33): the plan, the edition, the course line.

- The plan (looplab/grade/shared/withholding.py) is held to what the checks do: every public object of the
  course's reference modules is played against every exercise's check, and each one that passes is withheld
  for it (a function: a stand-in the grader runs; a value: handed over after that exercise is judged). This is
  the list of which course versions pass which checks; it can never fall behind, since it is played here.
- The edition (looplab/grade/kernels/edition.py), imported in a fresh interpreter as a kernel imports it,
  holds none of their code or values, no checks and no recordings, and keeps every signature.
- The course line (looplab/grade/judgement/course_line.py) runs the course's functions for a kernel, but while
  an exercise is judged only its earlier pieces, and hands values over only once their exercise is judged.
"""

from __future__ import annotations

import copy
import importlib
import inspect
import json
import os
import socket
import subprocess
import sys
import textwrap
import types
from pathlib import Path

import pytest

from looplab.channel import Channel, at_path
from looplab.checks.core import Report, isolated, time_limit
from looplab.course import COURSE, Course, Exercise, Notebook, resolve
from looplab.grade.judgement.course_line import CONNECTIONS, CourseLine
from looplab.grade.kernels.edition import build
from looplab.grade.shared.withholding import WithholdingError, plan, reference_modules, target_of

ROOT = Path(__file__).resolve().parent.parent


def candidates() -> dict[str, object]:
    """Every public function or container of the reference modules, once each, by where it is made."""
    found: dict[str, object] = {}
    for name in reference_modules():
        for attribute, value in vars(importlib.import_module(name)).items():
            if attribute.startswith("_") or isinstance(value, types.ModuleType):
                continue
            if (inspect.isfunction(value) and value.__module__.startswith("looplab")) or isinstance(value, (dict, list)):
                target = target_of(value) or f"{name}:{attribute}"
                found.setdefault(target, value)
    return found


def passes(number: str, obj: object) -> bool:
    """Does `obj` pass the exercise's check on what it does alone (the course's own-code verdict left out)?"""
    references = {name: resolve(target) for name, target in COURSE.earlier_pieces(number).items()}
    obj = obj if callable(obj) else copy.deepcopy(obj)
    try:
        with isolated(obj, references), time_limit(10):
            COURSE.checker(number)(obj, Report(texts=COURSE.texts(number)))
    except BaseException:
        return False
    return True


@pytest.fixture(scope="module")
def matrix() -> dict[str, list[str]]:
    """Exercise id -> the course versions (targets) that pass its check."""
    objects = candidates()
    return {exercise.id: [target for target, obj in objects.items()
                          if callable(obj) == callable(resolve(exercise.reference)) and passes(exercise.id, obj)]
            for exercise in COURSE.exercises}


def test_every_course_version_that_passes_a_check_is_withheld_for_it(matrix):
    withholding = plan()
    leaks = {}
    for number, passing in matrix.items():
        for target in passing:
            function = target in withholding.functions
            value = number in withholding.answered_by(target)
            if not (function or value):
                leaks.setdefault(number, []).append(target)
    assert leaks == {}, (f"these course versions pass these exercises' checks and a graded kernel would hold them: "
                         f"{leaks}; make each an exercise's reference (course.py) or change the check. The whole list: "
                         f"{json.dumps(matrix, indent=1)}")


def test_each_exercise_s_own_reference_passes_its_check(matrix):
    """The proof that the list above was played for real: every reference passes its own exercise's check."""
    assert {exercise.id for exercise in COURSE.exercises
            if target_of(resolve(exercise.reference)) not in matrix[exercise.id]} == set()
    assert "looplab.toolbox:agent_turn" in matrix["2.2"]  # one course version passing another exercise's check


def test_the_plan_withholds_every_reference_and_what_is_made_of_a_value():
    withholding = plan()
    assert {target_of(resolve(e.reference)) for e in COURSE.exercises if callable(resolve(e.reference))} == \
        set(withholding.functions)
    # TOOLS holds CALCULATOR_TOOL; toolbox's registry is made from it; its TOOLS from the registry.
    assert withholding.values["looplab.tools:TOOLS"] == {"looplab.tools:CALCULATOR_TOOL"}
    assert withholding.answered_by("looplab.toolbox:TOOLS") == {"1.2", "5.1"}
    assert withholding.modules["looplab.loop"].left_out == {"TOOLS": "looplab.tools:TOOLS"}
    assert {"_parse", "_evaluate", "_describe"} <= withholding.modules["looplab.tools"].helpers  # the calculator's
    # The schemas notebook 5's registry is written from are its answer too (a red team handed them in as 5.1).
    assert withholding.answered_by("looplab.toolbox:WEATHER_SCHEMA") == {"5.1"}
    assert "CALCULATOR_TOOL" in withholding.modules["looplab.toolbox"].left_out  # imported: 1.2's, not 5.1's part
    assert withholding.answered_by("looplab.tools:CALCULATOR_TOOL") == {"1.2"}


def test_what_an_exercise_is_checked_with_is_in_the_edition_from_the_start():
    """An exercise's `checked_with` (5.3's TOOL_REGISTRY: looplab.toolbox.CHECKED_REGISTRY) is swapped in for every call
    of its check, in a graded kernel too. Made from no exercise's reference, it is never left out, so it is there
    whatever the order of the notebook's check cells (5.1's judged after 5.3's: the learner's own registry would stay,
    and a right run_tool fail); and it answers no exercise by itself (the matrix above plays it too)."""
    withholding = plan()
    checked_with = {target for exercise in COURSE.exercises for target in exercise.checked_with.values()}
    assert "looplab.toolbox:CHECKED_REGISTRY" in checked_with
    for target in checked_with:
        module, _, name = target.partition(":")
        assert target not in withholding.values and name not in withholding.modules[module].left_out, target
    # Its three course tools alone are no 5.1: its schemas are the check's own, not the registry's answer.
    checked = resolve("looplab.toolbox:CHECKED_REGISTRY")
    course_tools = {name: checked[name] for name in resolve("looplab.toolbox:TOOL_REGISTRY")}
    assert not passes("5.1", course_tools)


# --- the edition, as a kernel imports it --------------------------------------------------------------------

READ_THE_EDITION = textwrap.dedent('''
    import importlib, inspect, json, sys
    import looplab
    from looplab.course import COURSE
    report = {"package": looplab.__file__, "modules": {}}
    for name in json.loads(sys.argv[1]):
        module = importlib.import_module(name)
        source = inspect.getsource(module)
        report["modules"][name] = {"source": source, "names": sorted(vars(module)), "code": {
            attribute: sorted(value.__code__.co_names) for attribute, value in vars(module).items()
            if inspect.isfunction(value) and value.__module__ == name}}
    import looplab.checks
    report["checks"] = sorted(vars(looplab.checks))
    report["recordings"] = (__import__("pathlib").Path(looplab.__file__).parent / "recordings").exists()
    report["signatures"] = {e.id: str(inspect.signature(vars(importlib.import_module(e.reference.split(":")[0]))[
        e.reference.split(":")[1]])) for e in COURSE.exercises
        if e.reference.split(":")[1] in vars(importlib.import_module(e.reference.split(":")[0]))}
    from looplab.withheld import course_object
    def shown(value):  # a list or a dict by its items; an object (7.4's store) by its type and its chunks
        return sorted(value) if isinstance(value, (list, dict)) else [type(value).__name__, *getattr(value, "chunks", [])]
    report["checked_with"] = {target: shown(course_object(target)) for e in COURSE.exercises
                              for target in e.checked_with.values()}
    print(json.dumps(report))
''')


@pytest.fixture(scope="module")
def edition(tmp_path_factory):
    built = build(tmp_path_factory.mktemp("edition"))
    env = {key: value for key, value in os.environ.items() if not key.startswith(("ANTHROPIC_", "LOOPLAB_COURSE"))}
    env["PYTHONPATH"] = os.pathsep.join(built.path(sandboxed=False))
    run = subprocess.run([sys.executable, "-c", READ_THE_EDITION, json.dumps(reference_modules())], env=env,
                         cwd=tmp_path_factory.mktemp("cwd"), capture_output=True, text=True, timeout=120, check=True)
    return built, json.loads(run.stdout)


def test_a_kernel_imports_the_edition_not_the_package(edition):
    built, report = edition
    assert Path(report["package"]).resolve().parent == built.package.resolve()


def test_the_edition_holds_no_course_function_s_code(edition):
    """Each stand-in's code does one thing, `_looplab_withheld.call(...)`; the calculator's helpers are gone."""
    _, report = edition
    for name, module_plan in plan().modules.items():
        code = report["modules"][name]["code"]
        for local, target in module_plan.stand_ins.items():
            assert code[local] == ["_looplab_withheld", "call"], (name, local, code[local])
            assert f"_looplab_withheld.call('{target}'" in report["modules"][name]["source"]
        for helper in module_plan.helpers:
            assert helper in vars(importlib.import_module(name)) and helper not in report["modules"][name]["names"]


def test_the_edition_leaves_out_every_value_and_keeps_every_signature(edition):
    _, report = edition
    for name, module_plan in plan().modules.items():
        assert not set(module_plan.left_out) & set(report["modules"][name]["names"]), name
    real = {e.id: str(inspect.signature(resolve(e.reference))) for e in COURSE.exercises if callable(resolve(e.reference))}
    assert report["signatures"] == real


def test_the_edition_resolves_what_an_exercise_is_checked_with_with_no_course_line(edition):
    """The kernel resolves each `checked_with` target itself (withheld.course_object), as it does every piece; the
    functions inside (the check's tools) are the edition's own, kept."""
    _, report = edition
    def shown(value):
        return sorted(value) if isinstance(value, (list, dict)) else [type(value).__name__, *value.chunks]
    assert report["checked_with"] == {target: shown(resolve(target)) for e in COURSE.exercises
                                      for target in e.checked_with.values()}
    assert report["checked_with"]["looplab.toolbox:CHECKED_REGISTRY"]
    assert {"reverse_text", "get_price"} <= set(report["modules"]["looplab.toolbox"]["names"])


def test_the_edition_holds_no_checks_and_no_recordings(edition):
    built, report = edition
    assert [name for name in report["checks"] if not name.startswith("__")] == ["check", "hint", "progress"]
    assert report["recordings"] is False
    assert [path.name for path in (built.package / "checks").glob("*.py")] == ["__init__.py"]


def test_a_kept_function_reading_a_value_left_out_is_refused(tmp_path, monkeypatch):
    (tmp_path / "leaky_reference.py").write_text(textwrap.dedent('''
        ANSWER = {"name": "calculator"}


        def shows_it():
            return ANSWER["name"]
    '''))
    monkeypatch.syspath_prepend(str(tmp_path))
    first, number = COURSE.notebooks[0], len(COURSE.notebooks) + 1  # after the course's last, whatever it is
    leaky = Course(COURSE.versions, COURSE.notebooks[1:] + (Notebook(
        f"{number:02d}_leaky", "Leaky", first.checks, exercises=(Exercise(f"{number}.1", "ANSWER", "answer", 1,
                                                                          "leaky_reference:ANSWER"),),
        references="leaky_reference"),))
    with pytest.raises(WithholdingError, match="leaky_reference, line 5: kept in the graded edition, it uses ANSWER"):
        plan(leaky)


def test_a_value_made_by_calling_a_stand_in_on_import_is_refused(tmp_path, monkeypatch):
    """In the edition a stand-in answers only under the grader: a module calling one as it is imported could not be
    imported by anything else (notebook 10's reference module once made its eval cases so)."""
    (tmp_path / "eager_reference.py").write_text(textwrap.dedent('''
        def expect(name):
            return lambda trace: name in trace


        CASES = [expect("calculator")]
        LATER = lambda: expect("search")
    '''))
    monkeypatch.syspath_prepend(str(tmp_path))
    first, number = COURSE.notebooks[0], len(COURSE.notebooks) + 1
    eager = Course(COURSE.versions, COURSE.notebooks[1:] + (Notebook(
        f"{number:02d}_eager", "Eager", first.checks, exercises=(Exercise(f"{number}.1", "expect", "expect", 1,
                                                                          "eager_reference:expect"),),
        references="eager_reference"),))
    with pytest.raises(WithholdingError, match="eager_reference, line 6: kept in the graded edition, it calls expect "
                                               "when the module is imported"):
        plan(eager)


# --- the course line ----------------------------------------------------------------------------------------

class Kernel:
    """The kernel's end of a course line, as looplab/withheld.py speaks it, over a real socket."""

    def __init__(self, line: CourseLine):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        at_path(self.sock, str(line.path), "connect")
        self.channel = Channel(self.sock)

    def ask(self, message: dict) -> dict:
        self.channel.send(message)
        return self.channel.receive(10)


@pytest.fixture
def line(tmp_path):
    made = CourseLine(COURSE.notebook("02_closing_the_loop"), tmp_path)  # CALCULATOR_TOOL: no exercise of notebook 2
    yield made
    made.close()


def test_the_line_runs_the_course_s_functions_for_a_story(line):
    answer = Kernel(line).ask({"op": "course", "target": "looplab.loop:tool_result", "args": [], "kwargs": {
        "tool_use": {"$namespace": {"id": "toolu_1"}}, "output": "42"}})
    assert answer["op"] == "returned"
    assert answer["value"]["value"] == {"type": "tool_result", "tool_use_id": "toolu_1", "content": "42"}


def test_while_an_exercise_is_judged_only_its_earlier_pieces_run(line):
    kernel = Kernel(line)
    with line.judging_exercise(COURSE.exercise("2.2")) as called:
        allowed = kernel.ask({"op": "course", "target": "looplab.loop:tool_result", "args": [], "kwargs": {
            "tool_use": {"$namespace": {"id": "toolu_1"}}, "output": "42"}})
        refused = kernel.ask({"op": "course", "target": "looplab.toolbox:agent_turn", "args": [], "kwargs": {}})
    assert allowed["op"] == "returned"  # 2.1's tool_result: an earlier piece of 2.2
    assert refused["op"] == "refused" and "exercise 2.2 is judged" in refused["message"]
    assert called == ["looplab.toolbox:agent_turn"]
    after = kernel.ask({"op": "course", "target": "looplab.loop:one_shot", "args": [], "kwargs": {}})
    assert after["op"] != "refused"  # outside a check: a story cell's call runs (it raised here: no client given)


def test_the_line_runs_nothing_but_the_course_s_withheld_functions(line):
    for target in ("os:system", "looplab.grade.grading:grade", "looplab.toolbox:get_weather", 42):
        assert Kernel(line).ask({"op": "course", "target": target, "args": ["x"], "kwargs": {}})["op"] == "refused"


def test_a_value_is_handed_over_once_its_exercise_is_judged(tmp_path):
    line = CourseLine(COURSE.notebook("01_one_tool_call"), tmp_path)
    try:
        kernel = Kernel(line)
        before = kernel.ask({"op": "value", "target": "looplab.tools:CALCULATOR_TOOL"})
        assert before["op"] == "refused" and "exercise 1.2" in before["message"]
        line.judged([COURSE.exercise("1.1")])
        assert kernel.ask({"op": "value", "target": "looplab.tools:TOOLS"})["op"] == "refused"
        line.judged([COURSE.exercise("1.2")])
        assert kernel.ask({"op": "value", "target": "looplab.tools:TOOLS"})["value"][0]["name"] == "calculator"
    finally:
        line.close()
    other = CourseLine(COURSE.notebook("05_toolbox"), tmp_path)  # notebook 5 never judges 1.2: at once
    try:
        assert Kernel(other).ask({"op": "value", "target": "looplab.tools:CALCULATOR_TOOL"})["value"]["name"] == \
            "calculator"
        assert Kernel(other).ask({"op": "value", "target": "looplab.toolbox:FORCE_WEATHER"})["op"] == "refused"
    finally:
        other.close()


def test_a_notebook_gets_a_few_connections_and_a_budget_of_the_grader_s_time(line, monkeypatch):
    kernels = [Kernel(line) for _ in range(CONNECTIONS + 3)]
    answered = 0
    for kernel in kernels:
        try:
            answered += "value" in kernel.ask({"op": "value", "target": "looplab.tools:CALCULATOR_TOOL"})
        except Exception:
            pass
    assert answered == CONNECTIONS  # the others were closed at once
    monkeypatch.setattr("looplab.grade.judgement.course_line.CPU_SECONDS", 0.0)
    line.cpu_used = 0.001
    assert "grader's time" in kernels[0].ask({"op": "value", "target": "looplab.tools:CALCULATOR_TOOL"})["message"]


def test_a_replay_comes_from_the_course_s_recording_in_the_notebook_s_language(line):
    from looplab.recordings import Recording

    recorded = Recording.load("02_closing_the_loop").exchanges[0]
    answer = Kernel(line).ask({"op": "replay", "recording": "02_closing_the_loop", "method": "POST",
                               "path": "/v1/messages", "content": json.dumps(recorded["request"])})
    assert json.loads(answer["body"]) == recorded["response"]
    stranger = Kernel(line).ask({"op": "replay", "recording": "../../etc/passwd", "method": "POST",
                                 "path": "/v1/messages", "content": "{}"})
    assert "no recording" in stranger["not_recorded"]


def test_a_kernel_names_only_the_reference_modules_functions_to_the_grader():
    """A registry's tool crosses the channel by its name, and the grader takes its own: only a top-level function of
    a reference module. A hostile kernel naming anything else (another module, a value) gets nothing."""
    from looplab import robust
    from looplab.course import reference_function, reference_function_target

    assert reference_function_target(robust.calculator) == "looplab.robust:calculator"
    assert reference_function("looplab.robust:calculator") is robust.calculator
    for target in ("os:system", "builtins:eval", "looplab.grade.grading:grade", "looplab.robust:TOOL_REGISTRY",
                   "looplab.subagent:calculator", "looplab.robust", 42, None):
        assert reference_function(target) is None, target
    assert reference_function_target(lambda: None) is None and reference_function_target(print) is None


def test_a_list_both_the_course_s_code_and_a_kernel_function_append_to_keeps_the_order_of_events(tmp_path, monkeypatch):
    """Notebook 10's trace under the grader: the parent's turn runs in the grader, its research tool is the kernel's,
    and that tool runs the subagent's turn in the grader again, each turn appending to the kernel's one trace. The
    kernel's function gets the list as the course's code has left it so far, and hands it back as it left it: the
    subagent's entries land between the parent's, as they would in one process."""
    import io
    import threading

    import looplab
    from looplab import subagent, withheld

    line = CourseLine(COURSE.notebook("10_evals_and_tracing"), tmp_path)
    monkeypatch.setenv(withheld.LINE, str(line.path))
    monkeypatch.setattr(withheld, "_lines", threading.local())  # this thread's connection: to this line, then gone
    client, trace, stream = looplab.client("10_evals_and_tracing"), [], io.StringIO()

    def research(question: str) -> str:
        return withheld.call("looplab.evals:agent_turn", (client, subagent.RESEARCHER_PROMPT,
                             subagent.RESEARCHER_REGISTRY, [{"role": "user", "content": question}], stream),
                             {"tag_prefix": "subagent:", "trace": trace})

    registry = dict(subagent.PARENT_REGISTRY, research={"function": research, "schema": subagent.RESEARCH_SCHEMA})
    question = "Who founded Halden Robotics, and how many years before 2026 was that?"  # the notebook's FOUNDER_QUESTION
    try:
        reply = withheld.call("looplab.evals:agent_turn", (client, subagent.SYSTEM_PROMPT, registry,
                              [{"role": "user", "content": question}], stream), {"trace": trace})
    finally:
        line.close()
    assert "Okonkwo" in reply
    assert [(entry["agent"], entry["tools"]) for entry in trace] == [
        ("parent", ["research"]), ("subagent", ["search"]), ("subagent", ["search"]), ("subagent", []),
        ("parent", ["calculator"]), ("parent", [])]
