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
    assert results["1.1"] == {"kind": SOLVED, "message": None}
    assert results["1.2"]["kind"] == NOT_WRITTEN
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


@pytest.mark.parametrize("step", [{"nonce": NONCE, "step": "start"}])
def test_the_grader_cell_runs_the_module_source_on_its_step(step):
    source = grader_cell_source(step)
    assert source.startswith("# Added by the looplab grader")
    compile(source, "<grader cell>", "exec")
    call = ast.parse(source).body[0].value
    code, namespace = ast.literal_eval(call.args[0].args[0]), ast.literal_eval(call.args[1])
    assert code.startswith(IN_KERNEL_SOURCE) and code.rstrip().endswith("main(STEP)")
    assert namespace == {"__name__": "looplab_grader", "STEP": step}
