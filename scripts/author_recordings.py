"""Write the course's recordings by running real conversations through the SDK in record mode.

Every request in a recording is exactly what the `anthropic` SDK sent, because it is produced
by driving the SDK (looplab.client in record mode) through the same loop the notebooks teach.
Where the answers come from depends on how this script is run:

    python scripts/author_recordings.py          # scripted answers below, no key needed
    python scripts/author_recordings.py --live   # the real API answers (needs ANTHROPIC_API_KEY)

The scripted answers are written by hand in the API's wire format and validated with
`anthropic.types.Message.model_validate`; their token counts are estimates. The shipped
recordings were made this way because no API key was available when the course was built;
`--live` (or `make record`) replaces them with real answers.
"""

from __future__ import annotations

import argparse
import hashlib
import json

import httpx2
from anthropic.types import Message

import looplab
from looplab.recordings import recording_path
from looplab.tools import TOOLS, run_tool

MAX_TOKENS = 1024

# What each recording holds: conversations, each a list of user turns; with each turn, the
# scripted model's answers in order. A tool call is ("tool_use", name, input).
CONVERSATIONS = {
    "calculator": [
        {
            "system": None,
            "turns": [
                {
                    "user": "What is 4823 × 1979?",
                    "answers": [
                        [("text", "I'll use the calculator for that."),
                         ("tool_use", "calculator", {"expression": "4823 * 1979"})],
                        [("text", "4823 × 1979 = 9,544,717.")],
                    ],
                }
            ],
        },
        {
            "system": None,
            "turns": [
                {
                    "user": "What are 4823 × 1979 and 1234 / 8?",
                    "answers": [
                        [("text", "I'll work out both at once."),
                         ("tool_use", "calculator", {"expression": "4823 * 1979"}),
                         ("tool_use", "calculator", {"expression": "1234 / 8"})],
                        [("text", "4823 × 1979 = 9,544,717, and 1234 / 8 = 154.25.")],
                    ],
                }
            ],
        },
    ],
}


def _stable_id(prefix: str, *parts: object) -> str:
    """Ids that look like the API's and stay the same each time the script runs."""
    alphabet = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
    number = int(hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest(), 16)
    chars = []
    for _ in range(22):
        number, digit = divmod(number, len(alphabet))
        chars.append(alphabet[digit])
    return prefix + "01" + "".join(chars)


class ScriptedAPI:
    """Stands in for the API while authoring: answers each request with the next scripted reply."""

    def __init__(self) -> None:
        self.pending: list[list[tuple]] = []

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        body = json.loads(request.content)
        blocks = []
        for index, (kind, *rest) in enumerate(self.pending.pop(0)):
            if kind == "text":
                blocks.append({"type": "text", "text": rest[0]})
            else:
                name, tool_input = rest
                tool_id = _stable_id("toolu_", body["messages"], index)
                blocks.append({"type": "tool_use", "id": tool_id, "name": name, "input": tool_input})
        stop_reason = "tool_use" if any(b["type"] == "tool_use" for b in blocks) else "end_turn"
        message = {
            "id": _stable_id("msg_", body["messages"]),
            "type": "message",
            "role": "assistant",
            "model": body["model"],
            "content": blocks,
            "stop_reason": stop_reason,
            "stop_sequence": None,
            "usage": {
                "input_tokens": len(request.content) // 4,
                "output_tokens": len(json.dumps(blocks)) // 4,
                "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": 0,
                "service_tier": "standard",
            },
        }
        Message.model_validate(message)
        return httpx2.Response(200, json=message)


def run_conversation(client, conversation: dict, scripted: ScriptedAPI | None) -> None:
    """The loop the notebooks build, run once per user turn."""
    messages: list = []
    extra = {"system": conversation["system"]} if conversation["system"] else {}
    for turn in conversation["turns"]:
        if scripted is not None:
            scripted.pending = list(turn["answers"])
        messages.append({"role": "user", "content": turn["user"]})
        for _ in range(10):
            reply = client.messages.create(
                model=looplab.MODEL, max_tokens=MAX_TOKENS, tools=TOOLS, messages=messages, **extra
            )
            messages.append({"role": "assistant", "content": reply.content})
            if reply.stop_reason != "tool_use":
                break
            results = []
            for block in reply.content:
                if block.type == "tool_use":
                    output = run_tool(block.name, block.input)
                    result = {"type": "tool_result", "tool_use_id": block.id, "content": output}
                    if output.startswith("Error: "):
                        result["is_error"] = True
                    results.append(result)
            messages.append({"role": "user", "content": results})


def author(names: list[str], live: bool) -> None:
    for name in names:
        recording_path(name).unlink(missing_ok=True)
        scripted = None if live else ScriptedAPI()
        upstream = None if live else httpx2.MockTransport(scripted)
        client = looplab.client(name, mode="record", upstream=upstream)
        for conversation in CONVERSATIONS[name]:
            run_conversation(client, conversation, scripted)
        print(f"wrote {recording_path(name)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--live", action="store_true", help="ask the real API (needs ANTHROPIC_API_KEY)")
    parser.add_argument("names", nargs="*", default=sorted(CONVERSATIONS), help="recordings to write")
    args = parser.parse_args()
    author(args.names, args.live)


if __name__ == "__main__":
    main()
