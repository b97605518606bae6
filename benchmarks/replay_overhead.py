"""How much slower is `client.messages.create(...)` offline than a bare SDK call?

Why this exists
---------------
Offline, every call a learner makes goes through looplab before it gets its answer: the
request is checked against the API's conversation rules (looplab/rules.py), reduced to a
canonical conversation and looked up in the recording (looplab/recordings.py), and the
exchange is logged for the history viewer (looplab/transport.py). A notebook's agent loop
resends the WHOLE history on every turn, so that work runs once per turn on a history that
keeps growing. If it were slow, or grew faster than the history, long loops would drag.

This script measures it. It compares two genuine `anthropic.Anthropic` clients that get the
very same canned response JSON, over an in-memory transport (no network, no key):

    baseline  anthropic.Anthropic(http_client=httpx2.Client(transport=MockTransport(canned)))
    replay    looplab.client(recording, mode="offline")

Both pay for the SDK's own work (building the request, parsing the Message); the difference
between them is exactly what looplab adds. Targets from the issue:

    - at 20 messages, replay costs at most 2x the bare call;
    - looplab's overhead grows no worse than linearly with the number of messages.

The figures are printed, never asserted: timings depend on the machine. The script always
exits with 0. `--quick` runs a few repetitions only, to prove the script works (the test
suite does that); run it without the flag for figures worth reading (`make benchmarks`).

How it measures
---------------
- Histories of 2, 20 and 200 messages, each a conversation the API would accept: the user's
  question, then assistant turns (text + tool_use) each answered by a user tool_result, and a
  last user message. A history that starts AND ends with the user and alternates has an odd
  length, so for an even length the last user message is a short follow-up sent right after
  the last tool_result (two user messages in a row are allowed; the API reads them as one turn).
- The recording is made once, in a temporary directory, by the real SDK in record mode over a
  canned upstream, so it holds the exact wire requests; it also holds 20 unrelated
  conversations, so the lookup is not trivially the only entry. Before timing, the script
  checks that the replay answers each history.
- Baseline and replay calls alternate, side by side in the same process (order swapped every
  round), after a warm-up. Each size runs for a time budget with a minimum number of rounds.
  The garbage collector is off while timing, as `timeit` does, to keep the figures steady.
- We report the median per call, in microseconds: the median ignores the odd slow call.
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import anthropic
import httpx2

import looplab
from looplab.rules import check_request

MODEL = looplab.MODEL
SIZES = (2, 20, 200)
OTHER_CONVERSATIONS = 20

TARGET_RATIO_AT_20 = 2.0  # replay may cost at most 2x the bare call at 20 messages
LINEAR_TOLERANCE = 1.5  # overhead(200) / overhead(20) may reach 10 x this and still count as linear

# A stand-in tool, defined here so the benchmark does not depend on the course's tool module.
CALCULATOR = {
    "name": "calculator",
    "description": "Evaluates an arithmetic expression and returns the exact result.",
    "input_schema": {
        "type": "object",
        "properties": {"expression": {"type": "string", "description": "e.g. '4823 * 1979'"}},
        "required": ["expression"],
    },
}
TOOLS = [CALCULATOR]


def tool_set(count: int) -> list[dict]:
    """The calculator and count - 1 other tools, each with its own schema: every schema is
    checked against JSON Schema 2020-12 on every call (rules.py), so more tools cost more."""
    others = [
        {
            "name": f"lookup_{n}",
            "description": f"Looks up record {n} of a table.",
            "input_schema": {
                "type": "object",
                "properties": {"key": {"type": "string"}, "limit": {"type": "integer", "minimum": n}},
                "required": ["key"],
            },
        }
        for n in range(1, count)
    ]
    return [CALCULATOR, *others]


# The one answer both clients give to every request: a finished assistant turn.
CANNED_RESPONSE = {
    "id": "msg_bench_canned",
    "type": "message",
    "role": "assistant",
    "model": MODEL,
    "content": [{"type": "text", "text": "The running total is 42."}],
    "stop_reason": "end_turn",
    "stop_sequence": None,
    "usage": {"input_tokens": 120, "output_tokens": 9},
}


def canned_handler(request: httpx2.Request) -> httpx2.Response:
    return httpx2.Response(200, json=CANNED_RESPONSE)


# --- the conversations -----------------------------------------------------------------------


def history(length: int, topic: str = "bench") -> list[dict]:
    """A valid conversation of exactly `length` messages that ends with a user message.

    user question, then (assistant text + tool_use, user tool_result) pairs, then, if `length`
    is even, a last user follow-up. Tool ids are unique: toolu_<topic>_0001, _0002, ...
    """
    messages = [{"role": "user", "content": f"[{topic}] Add up the numbers 1 to {length}, one step at a time."}]
    step = 0
    while len(messages) + 2 <= length:
        step += 1
        tool_id = f"toolu_{topic}_{step:04d}"
        messages.append(
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": f"Step {step}: I'll add {step} to the total."},
                    {"type": "tool_use", "id": tool_id, "name": "calculator", "input": {"expression": f"{step - 1} + {step}"}},
                ],
            }
        )
        messages.append(
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": tool_id, "content": str(step * (step + 1) // 2)}]}
        )
    if len(messages) < length:
        messages.append({"role": "user", "content": "Keep going, please."})
    assert len(messages) == length and messages[-1]["role"] == "user"
    return messages


def request_body(messages: list[dict]) -> dict:
    """What the SDK sends for one call; used to check the rules before anything is timed."""
    return {"model": MODEL, "max_tokens": 1024, "messages": messages, "tools": TOOLS}


def create(client: anthropic.Anthropic, messages: list[dict]):
    return client.messages.create(model=MODEL, max_tokens=1024, messages=messages, tools=TOOLS)


def make_recording(path: Path, histories: dict[int, list[dict]]) -> None:
    """Record every conversation through the real SDK, so the file holds its exact wire requests."""
    others = [history(1 + 2 * (n % 8), topic=f"other{n:02d}") for n in range(OTHER_CONVERSATIONS)]
    for messages in [*histories.values(), *others]:
        violation = check_request(request_body(messages))
        assert violation is None, f"the benchmark built an invalid history: {violation}"

    recorder = looplab.client(path, mode="record", upstream=httpx2.MockTransport(canned_handler), quiet=True)
    for messages in others + list(histories.values()):
        create(recorder, messages)
    recorder.close()

    saved = json.loads(path.read_text(encoding="utf-8"))
    assert len(saved["exchanges"]) == OTHER_CONVERSATIONS + len(histories), "record mode did not save every exchange"


# --- the two clients -------------------------------------------------------------------------


def baseline_client() -> anthropic.Anthropic:
    """The bare SDK over the same canned answer: what a call costs with no looplab at all."""
    return anthropic.Anthropic(
        api_key="x",
        max_retries=0,
        base_url="https://api.anthropic.com",  # as looplab's offline client, whatever ANTHROPIC_BASE_URL says
        http_client=httpx2.Client(transport=httpx2.MockTransport(canned_handler)),
    )


def replay_client(path: Path) -> anthropic.Anthropic:
    return looplab.client(path, mode="offline", quiet=True)


# --- timing ----------------------------------------------------------------------------------


def time_call(client: anthropic.Anthropic, messages: list[dict]) -> float:
    start = time.perf_counter()
    create(client, messages)
    return time.perf_counter() - start


def measure(baseline, replay, messages, *, warmup: int, min_rounds: int, budget: float, max_rounds: int):
    """Alternate baseline and replay calls; return the median seconds per call of each, and the rounds run."""
    for _ in range(warmup):
        create(baseline, messages)
        create(replay, messages)

    baseline_times: list[float] = []
    replay_times: list[float] = []
    gc.collect()
    gc.disable()
    try:
        started = time.perf_counter()
        rounds = 0
        while rounds < max_rounds and (rounds < min_rounds or time.perf_counter() - started < budget):
            if rounds % 2 == 0:  # swap the order every round, so neither always runs first
                baseline_times.append(time_call(baseline, messages))
                replay_times.append(time_call(replay, messages))
            else:
                replay_times.append(time_call(replay, messages))
                baseline_times.append(time_call(baseline, messages))
            rounds += 1
    finally:
        gc.enable()
    return statistics.median(baseline_times), statistics.median(replay_times), rounds


# --- the report ------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a few repetitions only: proves the script runs")
    parser.add_argument("--tools", type=int, default=1, metavar="N", help="send N tool definitions (default 1)")
    args = parser.parse_args(argv)
    TOOLS[:] = tool_set(args.tools)  # create() and request_body() send TOOLS

    if args.quick:
        warmup, min_rounds, budget, max_rounds = 2, 5, 0.05, 50
    else:
        warmup, min_rounds, budget, max_rounds = 20, 50, 1.5, 5000

    histories = {size: history(size) for size in SIZES}
    medians: dict[int, tuple[float, float, int]] = {}

    with tempfile.TemporaryDirectory(prefix="looplab-bench-") as tmp:
        path = Path(tmp) / "bench.json"
        make_recording(path, histories)
        baseline, replay = baseline_client(), replay_client(path)

        # The replay must FIND each history, or we would be timing the not-recorded error.
        for size, messages in histories.items():
            answer = create(replay, messages)
            assert answer.id == CANNED_RESPONSE["id"], f"the replay did not answer the {size}-message history"

        for size, messages in histories.items():
            medians[size] = measure(
                baseline, replay, messages, warmup=warmup, min_rounds=min_rounds, budget=budget, max_rounds=max_rounds
            )
        replay.close()
        baseline.close()

    print(f"Replay overhead: median time per client.messages.create(...){' (--quick: rough figures)' if args.quick else ''}")
    print(f"python {sys.version.split()[0]}, anthropic {anthropic.__version__}, "
          f"recording of {OTHER_CONVERSATIONS + len(SIZES)} conversations, {len(TOOLS)} tool(s) per request")
    print()
    print(f"{'messages':>8}  {'baseline µs':>11}  {'replay µs':>9}  {'ratio':>6}  {'overhead µs':>11}  {'rounds':>6}")
    for size, (base, rep, rounds) in medians.items():
        print(f"{size:>8}  {base * 1e6:>11.1f}  {rep * 1e6:>9.1f}  {rep / base:>5.2f}x  {(rep - base) * 1e6:>11.1f}  {rounds:>6}")
    print()

    overhead = {size: rep - base for size, (base, rep, _) in medians.items()}
    ratio_20 = medians[20][1] / medians[20][0]
    verdict = "met" if ratio_20 <= TARGET_RATIO_AT_20 else "NOT met"
    print(f"target: replay <= {TARGET_RATIO_AT_20:g}x the bare call at 20 messages: {ratio_20:.2f}x, {verdict}")

    for size in (20, 200):
        print(f"overhead per message at {size:>3} messages: {overhead[size] / size * 1e6:7.2f} µs")
    if overhead[20] > 0:
        growth = overhead[200] / overhead[20]
        limit = 10 * LINEAR_TOLERANCE
        verdict = "met" if growth <= limit else "NOT met"
        print(f"target: overhead grows at most linearly: overhead(200) / overhead(20) = {growth:.1f} "
              f"(10x the messages; linear means <= {limit:g} with tolerance), {verdict}")
    else:
        print("target: overhead grows at most linearly: overhead at 20 messages is within noise, cannot tell")
    return 0


if __name__ == "__main__":
    main()
    sys.exit(0)
