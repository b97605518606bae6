"""Notebook 8's course version: an agent that folds its oldest turns into a summary, to keep going.

The history only grows: every question, reply, tool call and tool result stays in `messages`, and the whole list
is sent with every request. The context window is finite, so a long enough conversation ends with the API refusing
the request. Compaction turns the agent's one skill, calling the model, on its own memory: the old turns are
rendered to text, the model summarises them, and the summary replaces them. The agent forgets on purpose, so that it
can go on; what the summary leaves out is gone for good (compaction loses information: that is the trade).

Why the budget counts characters, not tokens: characters are what a learner can count and print, and the mechanism
is the same whatever the yardstick. It is tiny on purpose (CONTEXT_LIMIT), so that compaction happens within a few
turns of a notebook instead of after hours of talk.

Why a cut is made only at the start of an exchange (a line the user typed, and all the agent did to answer it): a
cut anywhere else may keep a tool_result whose tool_use was folded away, or the reverse, and the API refuses either.
`compact` is called between turns, before the new line joins the history, when no call is waiting for its result.

The series this course grew from (stage 010 of the-ai-coffee/ai-agent-from-scratch) reads two texts exactly, the
`[compact] ...` line and the `[Conversation summary: ...]` message: both stay in English, whatever the course's
language.
"""

from __future__ import annotations

from typing import TextIO

from .catalogue import words
from .client import client as offline_client
from .model_id import MODEL
from .robust import agent_turn

WORDS = words(__file__)  # what the model is told (a learner reads it too), in the course's language

__all__ = ["CONTEXT_LIMIT", "KEEP_RECENT", "SUMMARY_PROMPT", "SUMMARY_MAX_TOKENS", "ACKNOWLEDGEMENT", "part",
           "render_message", "history_size", "exchange_starts", "summarise", "compact", "run"]

CONTEXT_LIMIT = 1200  # characters of rendered history: deliberately tiny, as the series' (a real one is far larger)
KEEP_RECENT = 1  # complete exchanges kept word for word; everything older is folded (real agents keep more)
RECORDING = "08_context_compaction"  # what answers offline: the notebook's recording
SUMMARY_MAX_TOKENS = 512  # a summary is a few sentences: a reply longer than this would defeat its purpose
SUMMARY_PROMPT = WORDS("summary_prompt")
# The assistant's answer to the summary: the summary is a user message, and the kept exchange starts with one too,
# so without it two user messages would follow each other; with it, the roles alternate as in any conversation.
ACKNOWLEDGEMENT = WORDS("acknowledgement")


def part(block, key: str):
    """One field of a block: a block of a model's reply is an object (read through attributes), one the program
    wrote (a tool result, or any block of a history in wire form) is a dict."""
    return block.get(key) if isinstance(block, dict) else getattr(block, key, None)


def _result_text(content) -> str:
    """A tool result's content as text: a str as it is, a list of blocks by the text of its text blocks."""
    if isinstance(content, list):
        return " ".join(part(block, "text") for block in content if part(block, "type") == "text")
    return "" if content is None else str(content)


def render_message(message: dict) -> str:
    """A message as the lines a transcript shows, one a block: what is measured, and what the summary reads.

    A typed line is `user: text`; a reply's text `assistant: text`; a call `assistant called name(input)`; a result
    `tool result: its content`. Other blocks (thinking...) are left out: the summary needs what was said and done.
    """
    role, content = message["role"], message["content"]
    if isinstance(content, str):
        return f"{role}: {content}"
    lines = []
    for block in content:
        kind = part(block, "type")
        if kind == "text":
            lines.append(f"{role}: {part(block, 'text')}")
        elif kind == "tool_use":
            lines.append(f"{role} called {part(block, 'name')}({part(block, 'input')})")
        elif kind == "tool_result":
            lines.append(f"tool result: {_result_text(part(block, 'content'))}")
    return "\n".join(lines)


def history_size(messages: list) -> int:
    """The size of a history, in characters of its rendering: the yardstick the budget is written in."""
    return sum(len(render_message(message)) for message in messages)


def exchange_starts(messages: list) -> list[int]:
    """Where each exchange starts: the index of every user message that answers no tool call (a typed line).

    A user message holding tool results is the middle of an exchange: cut just before it, and its results would
    answer calls that were folded away. Cut before a typed line, and every call before it already has its answer.
    """
    return [index for index, message in enumerate(messages) if message["role"] == "user"
            and (isinstance(message["content"], str)
                 or not any(part(block, "type") == "tool_result" for block in message["content"]))]


def summarise(messages: list, client) -> str:
    """One model call, with a system prompt of its own and no tools: the text of its reply to the transcript."""
    transcript = "\n".join(render_message(message) for message in messages)
    reply = client.messages.create(model=MODEL, max_tokens=SUMMARY_MAX_TOKENS, system=SUMMARY_PROMPT,
                                   messages=[{"role": "user", "content": transcript}])
    return "".join(part(block, "text") for block in reply.content if part(block, "type") == "text")


def compact(messages: list, client, output_stream: TextIO, context_limit: int = CONTEXT_LIMIT) -> list:
    """The history to send from now on: as it is while it fits, else a summary of the old exchanges and the recent
    ones word for word.

    Nothing is folded (and the model is not called) while the history fits in `context_limit` characters, nor when
    it holds no more than KEEP_RECENT exchanges: there is nothing old to fold. The result may still be over the
    budget (a last exchange longer than it is kept whole). It is always a new list: the one given is never changed.
    """
    starts = exchange_starts(messages)
    if history_size(messages) <= context_limit or len(starts) <= KEEP_RECENT:
        return list(messages)
    split = starts[-KEEP_RECENT]
    summary = summarise(messages[:split], client)
    # Both texts below are read as they are by the series' tests (stages 010 and 013): English, in every language.
    output_stream.write(f"[compact] folded {split} messages into a summary\n")
    return [{"role": "user", "content": f"[Conversation summary: {summary}]"},
            {"role": "assistant", "content": ACKNOWLEDGEMENT},
            *messages[split:]]


def run(input_stream: TextIO, output_stream: TextIO, client=None, context_limit: int = CONTEXT_LIMIT,
        max_iterations: int = 10) -> None:
    """Notebook 6's agent as a program, compacting between turns: read a line, fold the history if it is over the
    budget, then answer the line with notebook 6's loop (looplab.robust.agent_turn).

    `compact` runs at the top of the loop, before the new line joins the history: no call is waiting for its result
    then, and the new line, the next exchange, is never folded into the summary it would be asked about."""
    client = client or offline_client(RECORDING)
    messages: list = []
    while True:
        output_stream.write("User> ")
        line = input_stream.readline()
        if not line.strip():  # the end of the input, or an empty line
            return
        messages = compact(messages, client, output_stream, context_limit)
        messages.append({"role": "user", "content": line.strip()})
        try:
            reply = agent_turn(client, messages, max_iterations=max_iterations)
        except RuntimeError as error:  # the cap: say so, and read the next line
            reply = f"({error})"
        output_stream.write(f"Agent> {reply}\n")
