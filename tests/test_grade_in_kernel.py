"""The grader's in-kernel code (looplab/grade/in_kernel.py), run here, in-process.

In a grading run its source is injected into the grader's cells; here the same functions run on a
namespace of our own, so what they report (fingerprints, tampering, each check's kind) is tested
without a kernel.
"""

from __future__ import annotations

import ast
import hashlib
import json

import pytest

import looplab.checks
from looplab.checks.core import COURSE_CODE, NOT_SOLVED, NOT_WRITTEN, SOLVED
from looplab.grade import in_kernel
from looplab.grade.kernel_cells import IN_KERNEL_SOURCE, grader_cell_source
from looplab.grade.status import CheckKind
from looplab.tools import CALCULATOR_TOOL, calculator
from tests.check_helpers import twin

NONCE = "0123456789abcdef" * 2


def start() -> dict:
    payload = in_kernel.payload_for({"nonce": NONCE, "step": "start"}, {})
    assert "error" not in payload, payload.get("error")
    return payload


def check_step(start_payload: dict, exercises: list[list[str]]) -> dict:
    return {"nonce": NONCE, "step": "check", "modules": start_payload["modules"],
            "builtins": start_payload["builtins"], "expected": start_payload["digest"], "exercises": exercises}


def stub(expression):
    raise NotImplementedError("Exercise 1.1: write calculator")


def test_the_start_fingerprints_the_check_machinery():
    payload = start()
    assert payload["nonce"] == NONCE and payload["step"] == "start"
    assert "looplab.checks" in payload["modules"] and not any(m.startswith("looplab.grade") for m in payload["modules"])
    assert payload["digest"] == hashlib.sha256(payload["fingerprint"].encode()).hexdigest()
    names = dict(line.split("\t", 1) for line in payload["fingerprint"].splitlines())
    assert "looplab.checks.run_check" in names and "builtins.print" in names
    assert not any(name in names for name in in_kernel.MUTABLE_STATE)
    json.dumps(payload)  # what the kernel publishes must be JSON


def test_each_check_carries_its_kind_not_just_words():
    first = start()
    namespace = {"calculator": twin(calculator), "CALCULATOR_TOOL": {}, "stubbed": stub}
    payload = in_kernel.payload_for(check_step(first, [["1.1", "calculator"], ["1.2", "CALCULATOR_TOOL"],
                                                        ["1.3", "one_shot"]]), namespace)
    assert payload["before"] == {"digest": first["digest"]} and payload["after"] == {"digest": first["digest"]}
    results = payload["results"]
    assert results["1.1"] == {"kind": SOLVED, "message": None, "hint": None}
    assert results["1.2"]["kind"] == NOT_WRITTEN
    assert results["1.2"]["hint"] == "Fill in the three keys: name, description and input_schema."
    assert results["1.3"] == {"kind": in_kernel.UNDEFINED, "message": None}

    again = in_kernel.payload_for(check_step(first, [["1.1", "stubbed"], ["1.2", "tool"]]),
                                  {"stubbed": stub, "tool": dict(CALCULATOR_TOOL, name="calc")})
    assert again["results"]["1.1"]["kind"] == NOT_WRITTEN
    assert again["results"]["1.2"]["kind"] == NOT_SOLVED and "calc" in again["results"]["1.2"]["message"]


def test_a_check_that_raises_is_reported_as_crashed():
    first = start()
    payload = in_kernel.payload_for(check_step(first, [["9.9", "calculator"]]), {"calculator": calculator})
    assert payload["results"]["9.9"]["kind"] == in_kernel.CRASHED
    assert payload["results"]["9.9"]["message"].startswith("KeyError")


def test_every_kind_the_kernel_reports_is_one_the_grader_knows():
    assert {kind.value for kind in CheckKind} == {SOLVED, NOT_WRITTEN, NOT_SOLVED, COURSE_CODE, in_kernel.UNDEFINED,
                                                   in_kernel.CRASHED}


def test_patching_the_checks_changes_the_fingerprint(monkeypatch):
    first = start()
    monkeypatch.setattr(looplab.checks, "run_check", lambda number, obj: None)
    payload = in_kernel.payload_for(check_step(first, []), {})
    report = payload["before"]
    assert report["digest"] != first["digest"]
    reference = dict(line.split("\t", 1) for line in first["fingerprint"].splitlines())
    now = dict(line.split("\t", 1) for line in report["prints"].splitlines())
    assert {name for name in reference if reference[name] != now.get(name)} == {"looplab.checks.run_check"}


def test_swapping_a_checkers_code_changes_the_fingerprint(monkeypatch):
    import looplab.checks.notebook1 as notebook1

    first = start()
    monkeypatch.setattr(notebook1.check_calculator, "__code__", (lambda calculator, report: None).__code__)
    report = in_kernel.payload_for(check_step(first, []), {})["before"]
    assert "prints" in report and report["digest"] != first["digest"]


def test_the_in_kernel_code_imports_nothing_of_the_grader():
    tree = ast.parse(IN_KERNEL_SOURCE)
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            assert node.level == 0 and not (node.module or "").startswith("looplab.grade"), ast.unparse(node)
        if isinstance(node, ast.Import):
            assert not any(alias.name.startswith("looplab.grade") for alias in node.names), ast.unparse(node)


def test_the_first_grader_cell_runs_the_module_source_on_its_step():
    step = {"nonce": NONCE, "step": "start", "cell": 0}
    source = grader_cell_source(step)
    assert source.startswith("# Added by the looplab grader")
    compile(source, "<grader cell>", "exec")
    call = ast.parse(source).body[0].value
    code = ast.literal_eval(call.args[0].args[0])
    assert code.startswith(IN_KERNEL_SOURCE) and code.rstrip().endswith("start(STEP)")
    namespace = call.args[1]
    assert ast.literal_eval(namespace.values[0]) == {"__name__": "looplab_grader", "STEP": step}
    assert ast.unparse(namespace.values[1]) == "__import__('builtins').__dict__.copy()"


def test_later_grader_cells_look_up_no_name_of_the_learners():
    """Only an import statement (its `__import__` comes from the builtins) and a literal: a learner's
    `exec`, `compile` or `print` is never called, and the STEP holds no secret."""
    step = {"nonce": NONCE, "step": "check", "cell": 5, "modules": ["looplab"], "builtins": ["len"],
            "expected": "abc", "exercises": [["1.1", "calculator"]]}
    tree = ast.parse(grader_cell_source(step))
    loaded = [node.id for node in ast.walk(tree) if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)]
    assert loaded == [in_kernel.RUNNER]  # the name the import statement itself just bound
    assert isinstance(tree.body[0], ast.Import) and tree.body[0].names[0].name == in_kernel.RUNNER
    assert ast.literal_eval(tree.body[1].value.args[0]) == step


# --- the signed reports: made in the kernel, believed on the grader's side only when they are right -----------


def test_the_in_kernel_mac_is_standard_hmac_sha256():
    import hmac

    key = bytes(range(32))
    for text in ["", "{'step': 'check'}", "é" * 100]:
        assert in_kernel.hmac_sha256(key, text) == hmac.new(key, text.encode(), hashlib.sha256).hexdigest()


class Shouty(str):
    def __repr__(self):
        return "'x', 'results': {'1.1': {'kind': 'solved'}}, 'y': '"

    def __str__(self):
        return self


def test_a_report_is_plain_builtin_types_whatever_the_learners_objects_are():
    payload = {"message": Shouty("fine"), "count": True, "items": (1, Shouty("a")), Shouty("k"): None, "x": 1.5}
    text = in_kernel.signed(payload, b"k" * 32)["text"]
    assert ast.literal_eval(text) == {"message": "fine", "count": True, "items": [1, "a"], "k": None, "x": "1.5"}
    assert "solved" not in text


def signed_cell(*shown: dict) -> dict:
    return {"outputs": [{"output_type": "display_data", "data": {in_kernel.MIME: item}} for item in shown]}


def test_only_one_right_signed_report_answering_its_own_cell_is_believed():
    from looplab.grade.grader_reports import FORGED, GARBLED, MISSING, read_report

    key = bytes(32)
    request = {"nonce": NONCE, "step": "check", "cell": 3, "exercises": [["1.1", "calculator"]]}
    payload = {"step": "check", "results": {"1.1": {"kind": "solved"}}, "request": request}
    good = in_kernel.signed(payload, key)
    assert read_report(signed_cell(good), request, key) == (ast.literal_eval(good["text"]), None)
    assert read_report(signed_cell(), request, key) == (None, MISSING)
    assert read_report({"outputs": [{"output_type": "stream", "text": good["text"]}]}, request, key) == (None, MISSING)
    assert read_report(signed_cell(good, good), request, key) == (None, FORGED)
    assert read_report(signed_cell(in_kernel.signed(payload, b"x" * 32)), request, key) == (None, FORGED)
    assert read_report(signed_cell(dict(good, text=good["text"].replace("solved", "SOLVED"))), request, key)[1] == FORGED
    another = dict(request, cell=7)
    assert read_report(signed_cell(good), another, key) == (None, FORGED)  # a report replayed in another cell
    assert read_report(signed_cell({"nonce": NONCE, "step": "check"}), request, key) == (None, GARBLED)
    assert read_report(signed_cell({"text": "__import__('os')", "mac": ""}), request, key) == (None, GARBLED)
    assert read_report(signed_cell(good), request, None) == (None, FORGED)  # no key yet: nothing is believed


def test_the_first_report_brings_the_key_the_later_ones_are_signed_with(monkeypatch):
    from looplab.grade.grader_reports import key_of, read_report

    published = []
    monkeypatch.setattr(in_kernel, "publish_display_data", published.append)
    shell = type("Shell", (), {"user_ns": {"calculator": twin(calculator)}})()
    monkeypatch.setattr(in_kernel, "get_ipython", lambda: shell)
    monkeypatch.delitem(in_kernel.MODULES, in_kernel.RUNNER, raising=False)
    first = {"nonce": NONCE, "step": "start", "cell": 0}
    in_kernel.start(first)
    start_payload, problem = read_report(signed_cell(published[0][in_kernel.MIME]), first, None)
    assert problem is None and "error" not in start_payload
    runner = in_kernel.MODULES.pop(in_kernel.RUNNER)
    later = check_step(start_payload, [["1.1", "calculator"]]) | {"cell": 4}
    runner.run(later)
    payload, problem = read_report(signed_cell(published[1][in_kernel.MIME]), later, key_of(start_payload))
    assert problem is None and payload["results"]["1.1"]["kind"] == SOLVED


def test_appending_to_the_courses_tools_changes_the_fingerprint():
    """So it counts when a check runs (rows.py); after the last check it no longer can (tests/test_grade_reports.py)."""
    from looplab.tools import TOOLS

    first = start()
    TOOLS.append({"name": "clock", "description": "The time now.", "input_schema": {"type": "object"}})
    try:
        report = in_kernel.payload_for(check_step(first, []), {})["before"]
    finally:
        TOOLS.pop()
    reference = dict(line.split("\t", 1) for line in first["fingerprint"].splitlines())
    now = dict(line.split("\t", 1) for line in report["prints"].splitlines())
    assert "looplab.tools.TOOLS" in {name for name in reference if reference[name] != now.get(name)}
