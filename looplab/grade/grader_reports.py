"""Reading the grader's cells' reports on the grader's side: signed, answering their own cell, exactly one.

A grader cell's report is believed only if it is the one output under MIME in that cell, its MAC
is right for the key the first cell sent (in_kernel.py's docstring says why that key is out of the
learner's reach), and it answers the very STEP the grader sent that cell. The first cell's report
carries the key itself: it ran in the fresh kernel before any learner code, so it is taken as it is.
"""

from __future__ import annotations

import ast
import hmac
from hashlib import sha256

from .in_kernel import MIME
from .outcome import Outcome

# Why a grader cell that finished has no report to believe.
MISSING = "missing"  # no output under MIME: hidden, or the cell was kept from running
FORGED = "forged"  # more than one, a wrong MAC, or a report that answers another STEP
GARBLED = "garbled"  # not a report the grader's code writes


def mac(key: bytes, text: str) -> str:
    return hmac.new(key, text.encode(), sha256).hexdigest()


def grader_outputs(cell) -> list:
    """What the cell showed under the grader's MIME type, in order."""
    return [output.get("data", {}).get(MIME) for output in cell.get("outputs", [])
            if output.get("output_type") == "display_data" and MIME in output.get("data", {})]


def read_report(cell, request: dict, key: bytes | None) -> tuple[dict | None, str | None]:
    """(the report, None) if the cell holds exactly one believable report; else (None, why not).

    `key` is what the first cell's report brought (unused for the first cell itself).
    """
    shown = grader_outputs(cell)
    if not shown:
        return None, MISSING
    if len(shown) > 1:
        return None, FORGED
    signed = shown[0]
    if not (isinstance(signed, dict) and isinstance(signed.get("text"), str) and isinstance(signed.get("mac"), str)):
        return None, GARBLED
    try:
        payload = ast.literal_eval(signed["text"])
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return None, GARBLED
    if not isinstance(payload, dict):
        return None, GARBLED
    if request.get("step") == "start":
        key = key_of(payload)
        if key is None:
            return None, GARBLED
    elif key is None:
        return None, FORGED
    if not hmac.compare_digest(mac(key, signed["text"]), signed["mac"]) or payload.get("request") != request:
        return None, FORGED
    return payload, None


def key_of(start_payload: dict | None) -> bytes | None:
    """The key the first cell's report brought (None before it arrived, or if it brought none)."""
    try:
        return bytes.fromhex(start_payload["key"]) if start_payload else None
    except (KeyError, TypeError, ValueError, AttributeError):
        return None


def take_report(outcome: Outcome, cell, index: int, request: dict) -> bool:
    """Keep what the grader cell at `index` reported, answering `request`; False if the run can't go on.

    A believable report goes to `outcome.payloads`, or, if it says the grader's code failed, to
    `outcome.failures`, as does a first cell without one (it ran before any learner code: the
    grader's own failure) and a cell interrupted at its time limit. Any other cell without one is
    in `outcome.forged`: tampering (rows.py).
    """
    start = request["step"] == "start"
    payload, problem = read_report(cell, request, None if start else key_of(outcome.payloads.get(0)))
    if payload is not None and "error" not in payload:
        outcome.payloads[index] = payload
    elif payload is not None or start or index in outcome.timed_out:
        outcome.failures[index] = payload["error"] if payload else (
            cell_error(cell) or ("it ran past its time limit" if index in outcome.timed_out
                                 else "it showed no result" if problem == MISSING else f"its result was {problem}"))
        return not start
    else:
        outcome.forged[index] = problem
    return True


def cell_error(cell) -> str | None:
    for output in cell.get("outputs", []):
        if output.get("output_type") == "error":
            return f"{output.get('ename')}: {output.get('evalue')}"
    return None
