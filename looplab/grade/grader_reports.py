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
