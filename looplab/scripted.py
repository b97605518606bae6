"""A scripted stand-in for the model: replies written in advance, in the API's exact wire format.

Two places need a model that answers the same way every time:
- the graded checks, which run a learner's loop against scenarios (a text block before the
  tool call, three calls at once, a model that never stops...), always offline;
- the authoring of the shipped recordings when no API key is at hand (authoring/author_recordings.py).

Every reply is validated with `anthropic.types.Message.model_validate`, so a script can only
say what the real API could say. The SDK still talks through a real transport, and every request
still goes through the API's rules (see transport.ObservedTransport).
"""

from __future__ import annotations

import hashlib
import json
import weakref
from typing import Callable, Iterable, Iterator

import anthropic
import httpx2
from anthropic.types import Message

from . import language
from .client import remember_traffic
from .catalogue import words
from .model_id import MODEL
from .transport import ObservedTransport, Traffic

WORDS = words(__file__)  # what a learner may read of a scripted model: its refusal past the scenario

Reply = Callable[[dict], dict]
"""Given the wire request, the wire Message to answer with."""

_ALPHABET = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"


def stable_id(prefix: str, *parts: object) -> str:
    """An id shaped like the API's (`toolu_01...`, `msg_01...`), the same on every run."""
    number = int(hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest(), 16)
    chars = []
    for _ in range(22):
        number, digit = divmod(number, len(_ALPHABET))
        chars.append(_ALPHABET[digit])
    return f"{prefix}01{''.join(chars)}"


# --- blocks -----------------------------------------------------------------------------------------


class Said(str):
    """Words the scripted side says (the model's text, a question in a scenario), with their translations.

    It reads as its English words wherever it is used as it is. The words in the course's current language
    are chosen when the words are played (`spoken`): a scenario table is built once, at import, and the
    same table then serves an English and a French check."""

    def __new__(cls, words: str, **translations: str):
        said = super().__new__(cls, words)
        said.translations = translations
        return said

    def __deepcopy__(self, memo) -> "Said":
        return self  # immutable, like any str

    def now(self) -> str:
        return self.translations.get(language.current(), str(self))


def said(words: str, **translations: str) -> Said:
    """Words in English, `fr="..."` giving them in French: `said("What is 2 + 2?", fr="Combien font 2 + 2 ?")`."""
    return Said(words, **translations)


def spoken(value):
    """`value` with every Said in it as plain words of the current language (dicts, lists and tuples walked)."""
    if isinstance(value, Said):
        return value.now()
    if isinstance(value, dict):
        return {key: spoken(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(spoken(item) for item in value)
    return value


def text(words: str, **translations: str) -> dict:
    """A text block; `fr="..."` gives its words when the course speaks French, chosen when the reply is sent,
    so one script answers both languages with the same calls."""
    return {"type": "text", "text": Said(words, **translations)}


def thinking(thought: str, **translations: str) -> dict:
    return {"type": "thinking", "thinking": Said(thought, **translations), "signature": stable_id("sig_", thought)}


def tool_use(name: str, tool_input: dict, id: str | None = None) -> dict:
    """A tool call; without an id, one is made from the conversation when the reply is sent."""
    block = {"type": "tool_use", "name": name, "input": tool_input}
    if id is not None:
        block["id"] = id
    return block


def calculator(expression: str, id: str | None = None) -> dict:
    return tool_use("calculator", {"expression": expression}, id)


# --- replies ----------------------------------------------------------------------------------------


def reply(*blocks: dict, stop_reason: str | None = None) -> Reply:
    """A reply of these blocks; the stop_reason follows from them unless given."""

    def answer(request: dict) -> dict:
        content = []
        for index, block in enumerate(spoken(list(blocks))):
            if block["type"] == "tool_use" and "id" not in block:
                block = {**block, "id": stable_id("toolu_", request.get("messages"), index)}
            content.append(block)
        reason = stop_reason or ("tool_use" if any(b["type"] == "tool_use" for b in content) else "end_turn")
        return message(request, content, reason)

    return answer


def message(request: dict, content: list[dict], stop_reason: str) -> dict:
    """A complete wire Message; token counts are estimates from the sizes of request and reply."""
    body = {
        "id": stable_id("msg_", request.get("messages"), content),
        "type": "message",
        "role": "assistant",
        "model": request.get("model", MODEL),
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": {
            "input_tokens": len(json.dumps(request)) // 4,
            "output_tokens": max(1, len(json.dumps(content)) // 4),
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
            "service_tier": "standard",
        },
    }
    Message.model_validate(body)
    return body


def never_stops(expression: str = "1 + 1") -> Iterator[Reply]:
    """A model that asks for the calculator again after every result, forever."""
    while True:
        yield reply(text("Let me check that once more.", fr="Je vérifie encore une fois."), calculator(expression))


# --- the scripted model, as an httpx2 handler -----------------------------------------------------------


class TooManyCalls(BaseException):
    """The code under test kept calling the model past the scenario's limit.

    A BaseException, so neither the SDK nor a learner's `except Exception` swallows it.
    """


class ScriptedModel:
    """Answers the requests of one scenario in order, then refuses to go on."""

    def __init__(self, replies: Iterable[Reply], call_limit: int = 25):
        self.replies = iter(replies)
        self.call_limit = call_limit
        self.calls = 0

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        self.calls += 1
        answer = next(self.replies, None) if self.calls <= self.call_limit else None
        if answer is None:
            expected = min(self.call_limit, self.calls - 1)
            raise TooManyCalls(WORDS("too_many_calls", calls=self.calls, expected=expected))
        body = json.loads(request.content)
        return httpx2.Response(200, json=answer(body))


_transports: "weakref.WeakKeyDictionary[anthropic.Anthropic, ObservedTransport]" = weakref.WeakKeyDictionary()


def transport_of(client: anthropic.Anthropic) -> ObservedTransport:
    """The transport under a scripted client: the grader answers a kernel's requests with it (looplab/grade/judgement/judge.py)."""
    return _transports[client]


def scripted_client(replies: Iterable[Reply], call_limit: int = 25) -> tuple[anthropic.Anthropic, Traffic]:
    """A real SDK client whose model is a script; every request still meets the API's rules."""
    traffic = Traffic()
    transport = ObservedTransport(httpx2.MockTransport(ScriptedModel(replies, call_limit)), traffic, print_hints=False)
    client = anthropic.Anthropic(
        api_key="scripted-no-key-needed",
        base_url="https://api.anthropic.com",
        max_retries=0,
        http_client=anthropic.DefaultHttpxClient(transport=transport),
    )
    remember_traffic(client, traffic)
    _transports[client] = transport
    return client, traffic
