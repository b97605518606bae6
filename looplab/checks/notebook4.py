"""Checks for notebook 4, your agent: `run`, the whole agent as a program over two streams.

`run(input_stream, output_stream, client, system=SYSTEM_PROMPT, max_iterations=10)` is checked as
a program is: lines go in through an `io.StringIO`, and what it writes to the other `io.StringIO`
is compared with the transcript it should print, exactly:

    User> [tool] calculator({'expression': '4823 * 1979'}) -> 9544717
    Agent> 4823 × 1979 = 9,544,717.
    User>

(the typed line is not echoed: it comes from a stream, not a keyboard). The only tolerance is at
the very end: trailing spaces and newlines after the last prompt are ignored.

Where the wording is the learner's own (a reply cut short by `max_tokens`, a `refusal`), the check
asks for an `Agent>` line in that turn that names what happened: the stop reason itself
("max_tokens", "refusal"), or plain words such as "cut short", "truncated", "refused" (see
`MAX_TOKENS_WORDS`, `REFUSAL_WORDS`). The scripted text of those replies holds none of them.

While the check runs, the built-in `input` and `sys.stdin` refuse to be used: run must read its
input_stream, or it could not be tested, scripted or graded.
"""

from __future__ import annotations

import builtins
import contextlib
import io
import sys
from types import SimpleNamespace

import anthropic

from .. import scripted
from ..loop import SYSTEM_PROMPT
from ..recordings import canonical_blocks
from ..rules import check_request
from ..scripted import TooManyCalls, calculator as calculator_call, never_stops, reply, text, thinking, tool_use
from .core import Failure, Report, learner_frame

QUESTION = "What is 4823 × 1979?"
FOLLOW_UP = "And that divided by 7?"
PRODUCT = "[tool] calculator({'expression': '4823 * 1979'}) -> 9544717"
PROMPT = "User> "

MAX_TOKENS_WORDS = ("max_tokens", "max tokens", "token limit", "cut short", "cut off", "truncated",
                    "ended early", "too long", "incomplete", "unfinished")
REFUSAL_WORDS = ("refus", "declin")  # refusal, refused, refuses, declined...

HINT_PROMPT = ("Write the prompt before every read, the last one too: output_stream.write('User> '), then "
               "line = input_stream.readline(); stop when the line is '' (end of input) or empty.")
HINT_TOOL_LINE = ("One line per tool call: f\"[tool] {block.name}({block.input}) -> {output}\\n\", the input dict "
                  "as Python prints it (not JSON), the output exactly as run_tool returned it.")
HINT_AGENT_LINE = ("Once stop_reason is not 'tool_use', write one line f\"Agent> {reply}\\n\", the text blocks of that "
                   "last reply joined; text that comes along with a tool call is not printed.")
HINT_EMPTY_LINE = ("readline() returns '' at the end of the input and '\\n' for an empty line: stop on both, "
                   "e.g. if not line.strip(): return.")
HINT_STOP_REASON = ("When stop_reason is 'max_tokens' or 'refusal', write an Agent> line that names it, e.g. "
                    "f\"Agent> (the reply ended early: {reply.stop_reason}) {text}\": the check looks for the stop "
                    "reason's name, or words like 'cut short' or 'refused'. A refusal may have no text block at all.")


def transcript(*turns: list[str]) -> str:
    """What run should print: a prompt and the lines of each turn, then the prompt that meets the end."""
    return "".join(PROMPT + "".join(line + "\n" for line in lines) for lines in turns) + PROMPT


# (situation, input text, scripted replies, expected transcript)
TRANSCRIPT_SCENARIOS = [
    ("the model answers in words", f"{QUESTION}\n",
     [reply(text("It is 9,544,717."))],
     transcript(["Agent> It is 9,544,717."])),
    ("the model asks for the calculator after a text block", f"{QUESTION}\n",
     [reply(text("I'll use the calculator."), calculator_call("4823 * 1979")), reply(text("4823 × 1979 = 9,544,717."))],
     transcript([PRODUCT, "Agent> 4823 × 1979 = 9,544,717."])),
    ("the model thinks, writes a text block, then asks for the calculator", f"{QUESTION}\n",
     [reply(thinking("A big product: use the tool."), text("Let me compute that."), calculator_call("4823 * 1979")),
      reply(thinking("The tool said 9544717."), text("That is 9,544,717."))],
     transcript([PRODUCT, "Agent> That is 9,544,717."])),
    ("the model asks for two calls at once", "What are 4823 × 1979 and 1234 / 8?\n",
     [reply(text("Both at once."), calculator_call("4823 * 1979"), calculator_call("1234 / 8")),
      reply(text("9,544,717 and 154.25."))],
     transcript([PRODUCT, "[tool] calculator({'expression': '1234 / 8'}) -> 154.25", "Agent> 9,544,717 and 154.25."])),
    ("the model asks for three calls at once", "What are 2 + 3, 4 * 5 and 10 / 4?\n",
     [reply(calculator_call("2 + 3"), calculator_call("4 * 5"), calculator_call("10 / 4")),
      reply(text("5, 20 and 2.5."))],
     transcript(["[tool] calculator({'expression': '2 + 3'}) -> 5", "[tool] calculator({'expression': '4 * 5'}) -> 20",
                 "[tool] calculator({'expression': '10 / 4'}) -> 2.5", "Agent> 5, 20 and 2.5."])),
    ("the model chains two calls", "What is 4823 × 1979, divided by 7?\n",
     [reply(calculator_call("4823 * 1979")), reply(text("Now the division."), calculator_call("9544717 / 7")),
      reply(text("It is 1,363,531."))],
     transcript([PRODUCT, "[tool] calculator({'expression': '9544717 / 7'}) -> 1363531.0", "Agent> It is 1,363,531."])),
    ("the tool fails", "What is 1 / 0?\n",
     [reply(text("Let me try."), calculator_call("1 / 0")), reply(text("Dividing by zero has no answer."))],
     transcript(["[tool] calculator({'expression': '1 / 0'}) -> Error: division by zero",
                 "Agent> Dividing by zero has no answer."])),
    ("the model asks for a tool that does not exist", "What's the weather in Paris?\n",
     [reply(tool_use("weather", {"city": "Paris"})), reply(text("I have no weather tool, sorry."))],
     transcript(["[tool] weather({'city': 'Paris'}) -> Error: unknown tool 'weather'",
                 "Agent> I have no weather tool, sorry."])),
]

TWO_TURNS = [
    reply(text("I'll use the calculator."), calculator_call("4823 * 1979")),
    reply(text("4823 × 1979 = 9,544,717.")),
    reply(calculator_call("9544717 / 7")),
    reply(text("That is 1,363,531.")),
]
TWO_TURNS_TRANSCRIPT = transcript(
    [PRODUCT, "Agent> 4823 × 1979 = 9,544,717."],
    ["[tool] calculator({'expression': '9544717 / 7'}) -> 1363531.0", "Agent> That is 1,363,531."],
)


# --- guards: no input(), no sys.stdin, and notice print() to the notebook -----------------------------


class _NoStdin(io.TextIOBase):
    """sys.stdin during the check: reading it is a failure, not a hang."""

    def __init__(self, guard: "_Guard"):
        self.guard = guard

    def readable(self) -> bool:
        return True

    def read(self, size=-1):
        return self.guard.refuse("sys.stdin")

    def readline(self, size=-1):
        return self.guard.refuse("sys.stdin")

    def readlines(self, hint=-1):
        return self.guard.refuse("sys.stdin")

    def __iter__(self):
        self.guard.refuse("sys.stdin")
        return iter(())


class _Guard:
    """Remembers a forbidden read even when the learner's code swallows the exception."""

    def __init__(self):
        self.used: str | None = None
        self.printed = io.StringIO()

    def refuse(self, what: str):
        self.used = what
        raise self.failure()

    def failure(self) -> Failure:
        what = "called input()" if self.used == "input" else "read sys.stdin"
        return Failure(
            f"run {what}: it must read its lines from input_stream only, with input_stream.readline()",
            "The streams are what make run testable: a test, a script or a grader hands it any object "
            "with .readline(); the keyboard is only one of them.",
        )

    def verify(self) -> None:
        if self.used:
            raise self.failure()


@contextlib.contextmanager
def _guarded():
    guard = _Guard()
    saved_input, saved_stdin = builtins.input, sys.stdin

    def no_input(*args, **kwargs):
        return guard.refuse("input")

    builtins.input, sys.stdin = no_input, _NoStdin(guard)
    try:
        with contextlib.redirect_stdout(guard.printed):
            yield guard
    finally:
        builtins.input, sys.stdin = saved_input, saved_stdin


# --- bounded streams: a run that never stops reading or writing fails quickly ------------------------------

MAX_READS_AT_END = 5
MAX_OUTPUT = 100_000  # characters


class _Input(io.StringIO):
    """The lines of a scenario; reading on and on at the end of the input is a failure."""

    reads_at_end = 0

    def readline(self, size=-1):
        line = super().readline(size)
        if line == "":
            self.reads_at_end += 1
            if self.reads_at_end > MAX_READS_AT_END:
                raise Failure(f"run went on reading after the end of the input ({MAX_READS_AT_END} more reads "
                              "returned ''); it should return the first time", HINT_EMPTY_LINE)
        return line


class _Output(io.StringIO):
    """What run writes; far more than any scenario needs means a loop that does not end."""

    def write(self, text):
        if self.tell() > MAX_OUTPUT:
            raise Failure(f"run wrote more than {MAX_OUTPUT:,} characters: it seems to loop without end",
                          HINT_EMPTY_LINE)
        return super().write(text)


# --- playing a scenario ---------------------------------------------------------------------------------


def _play(run, guard: _Guard, lines: str, replies, call_limit: int | None = None, **kwargs):
    """Run the learner's run on one scenario; the output text and the traffic."""
    client, traffic = scripted.scripted_client(replies, call_limit=len(replies) if call_limit is None else call_limit)
    output = _Output()
    run(_Input(lines), output, client, **kwargs)
    guard.verify()
    return output.getvalue(), traffic


def _called_again(situation: str, replies: list) -> Failure:
    return Failure(
        f"{situation}: run called the model again after its final reply (the scenario scripted {len(replies)} "
        f"{'reply' if len(replies) == 1 else 'replies'})",
        "Call the model again only while stop_reason is 'tool_use'; after any other stop_reason, write "
        "the Agent> line and read the next line.",
    )


def _play_expecting_calls(run, guard: _Guard, situation: str, lines: str, replies: list, **kwargs):
    """As _play, but a call past the scripted replies gets a message about this scenario."""
    try:
        return _play(run, guard, lines, replies, **kwargs)
    except TooManyCalls:
        guard.verify()
        raise _called_again(situation, replies) from None


def _play_without_crash(run, guard: _Guard, situation: str, hint: str, lines: str, replies, too_many: Failure | None = None,
                        **kwargs):
    """As _play_expecting_calls, but an exception from run gets this scenario's hint: a program goes on."""
    try:
        return _play(run, guard, lines, replies, **kwargs)
    except TooManyCalls:
        guard.verify()
        raise (too_many or _called_again(situation, replies)) from None
    except (Failure, anthropic.BadRequestError):
        raise
    except Exception as error:
        guard.verify()
        said = f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
        raise Failure(f"{situation}: run raised {said}{learner_frame(error)}", hint) from None


def _expect_transcript(report: Report, guard: _Guard, situation: str, output: str, expected: str) -> None:
    got, want = output.rstrip(), expected.rstrip()
    if got == want:
        return
    printed = guard.printed.getvalue()
    if not output.strip():
        if printed.strip():
            raise Failure(f"{situation}: run wrote nothing to output_stream, but printed to the notebook "
                          f"({printed.strip().splitlines()[0]!r})",
                          "Write everything to output_stream: output_stream.write(...), or print(..., file=output_stream).")
        raise Failure(f"{situation}: run wrote nothing to output_stream", HINT_PROMPT)
    if PROMPT.strip() not in output:
        raise Failure(f"{situation}: run never wrote the prompt {PROMPT!r} to output_stream", HINT_PROMPT)
    got_lines, want_lines = got.split("\n"), want.split("\n")
    for index in range(max(len(got_lines), len(want_lines))):
        mine = got_lines[index] if index < len(got_lines) else None
        theirs = want_lines[index] if index < len(want_lines) else None
        if mine != theirs:
            break
    number = index + 1
    shown = "(nothing)" if mine is None else repr(mine)
    expected_text = "(nothing more)" if theirs is None else repr(theirs)
    raise Failure(f"{situation}: line {number} of the output is {shown}; expected {expected_text}",
                  _hint_for(mine or "", theirs or ""))


def _hint_for(mine: str, theirs: str) -> str:
    """The hint for the first line that differs from the expected transcript."""
    prompt = PROMPT.strip()
    if mine.startswith(prompt) != theirs.startswith(prompt):
        return HINT_PROMPT
    if "Agent>" in mine and "Agent>" not in theirs:
        return HINT_AGENT_LINE
    if "[tool]" in mine or "[tool]" in theirs:
        return HINT_TOOL_LINE
    if "Agent>" in theirs:
        return HINT_AGENT_LINE
    return HINT_PROMPT


def _turns(output: str) -> list[str]:
    """What run wrote after each prompt (the text before the first prompt is dropped)."""
    return output.split(PROMPT)[1:]


def _text_of(content) -> str | None:
    blocks = canonical_blocks(content)
    if not isinstance(blocks, list) or not all(isinstance(b, dict) and b.get("type") == "text" for b in blocks):
        return None
    return "".join(b.get("text", "") for b in blocks)


def _results(message: dict) -> list[dict]:
    content = message.get("content")
    return [b for b in content if isinstance(b, dict) and b.get("type") == "tool_result"] if isinstance(content, list) else []


def _says(turn: str, words: tuple[str, ...]) -> bool:
    lowered = turn.lower()
    return "agent>" in lowered and any(word in lowered for word in words)


# --- the checker ---------------------------------------------------------------------------------------


def check_run(run, report: Report) -> None:
    report.expect(callable(run), None, f"run should be a function; it is a {type(run).__name__}")
    with _guarded() as guard:
        _check_one_turn(run, report, guard)
        _check_transcripts(run, report, guard)
        _check_history(run, report, guard)
        _check_end_of_input(run, report, guard)
        _check_cut_and_refused(run, report, guard)
        _check_never_stops(run, report, guard)
        _check_system(run, report, guard)
        _check_any_client(run, report, guard)
    report.situation = None


def _check_one_turn(run, report: Report, guard: _Guard) -> None:
    situation, lines, replies, expected = TRANSCRIPT_SCENARIOS[0]
    report.situation = situation
    output, traffic = _play_expecting_calls(run, guard, situation, lines, replies)
    _expect_transcript(report, guard, situation, output, expected)
    sent = traffic.exchanges[0]["request"]
    messages = sent.get("messages", [])
    report.expect(len(messages) == 1 and messages[0].get("role") == "user", None,
                  f"{situation}: the first request should hold one user message, the line read; it held "
                  f"{len(messages)} message(s)")
    said = _text_of(messages[0].get("content"))
    report.expect(said == QUESTION, None,
                  f"{situation}: the user message was {said!r}; expected the line without its newline, {QUESTION!r}",
                  "Append {'role': 'user', 'content': line.strip()} to messages.")
    names = [tool.get("name") for tool in sent.get("tools", []) if isinstance(tool, dict)]
    report.expect("calculator" in names, None,
                  f"{situation}: the request did not offer the calculator tool (tools={names})", "Pass tools=TOOLS.")
    report.expect(canonical_blocks(sent.get("system") or []) == canonical_blocks(SYSTEM_PROMPT),
                  None,
                  f"{situation}: the request's system prompt was {sent.get('system')!r}; by default it should be "
                  "SYSTEM_PROMPT",
                  "Pass system=system to client.messages.create; the parameter's default is SYSTEM_PROMPT.")
    report.note("one line, one reply: the prompt, the Agent> line, and the request (the line, TOOLS, SYSTEM_PROMPT)")


def _check_transcripts(run, report: Report, guard: _Guard) -> None:
    for situation, lines, replies, expected in TRANSCRIPT_SCENARIOS[1:]:
        report.situation = situation
        output, traffic = _play_expecting_calls(run, guard, situation, lines, replies)
        _expect_transcript(report, guard, situation, output, expected)
        if "[tool]" in expected and "Error:" in expected:
            last = traffic.exchanges[-1]["request"]["messages"][-1]
            flags = [result.get("is_error") for result in _results(last)]
            report.expect(flags == [True], None,
                          f"{situation}: the tool_result sent back for the failed call has is_error={flags[0] if flags else None!r}; "
                          "it should be True",
                          "Build each result with tool_result(block, output): it flags an 'Error: ...' output with "
                          "is_error: true, so the model knows the call failed.")
    report.note("exact [tool] and Agent> lines with a text or thinking block before the call, 2 and 3 calls at once, "
                "chained calls, a failing tool (is_error sent) and an unknown tool")


def _check_history(run, report: Report, guard: _Guard) -> None:
    situation = "two lines: the second question refers to the first answer"
    report.situation = situation
    output, traffic = _play_expecting_calls(run, guard, situation, f"{QUESTION}\n{FOLLOW_UP}\n", TWO_TURNS)
    _expect_transcript(report, guard, situation, output, TWO_TURNS_TRANSCRIPT)
    first_turn = traffic.exchanges[1]["request"]["messages"] + [
        {"role": "assistant", "content": traffic.exchanges[1]["response"]["content"]}]
    sent = traffic.exchanges[2]["request"]["messages"]
    report.expect(len(sent) == len(first_turn) + 1, None,
                  f"{situation}: the second line's request held {len(sent)} message(s); it should hold the "
                  f"{len(first_turn)} messages of the first turn, then the new line",
                  "Create the messages list once, before the loop that reads lines, and keep appending to it: "
                  "the model only remembers what each request sends again.")
    report.expect(_text_of(sent[0].get("content")) == QUESTION and _text_of(sent[-1].get("content")) == FOLLOW_UP,
                  "the history is kept across turns",
                  f"{situation}: the second line's request should start with the first question and end with the "
                  "second one", "Keep one messages list for the whole session.")


def _check_end_of_input(run, report: Report, guard: _Guard) -> None:
    report.situation = "nothing to read"
    try:
        output, _ = _play(run, guard, "", [], call_limit=0)
    except TooManyCalls:
        guard.verify()
        raise Failure("nothing to read: run called the model although the input was empty; "
                      "at the end of the input (readline() returns '') it should return", HINT_PROMPT) from None
    _expect_transcript(report, guard, "nothing to read", output, PROMPT)

    situation = "an empty line ends the session"
    report.situation = situation
    try:
        output, _ = _play(run, guard, f"{QUESTION}\n\n{FOLLOW_UP}\n", TWO_TURNS[:2])
    except (TooManyCalls, anthropic.BadRequestError):
        guard.verify()
        raise Failure(f"{situation}: run went on after the empty line (line 2) and called the model again; "
                      "an empty line ends the session, like the end of the input", HINT_EMPTY_LINE) from None
    _expect_transcript(report, guard, situation, output,
                       transcript([PRODUCT, "Agent> 4823 × 1979 = 9,544,717."]))
    report.note("stops at the end of the input and at an empty line, without calling the model again")


def _check_cut_and_refused(run, report: Report, guard: _Guard) -> None:
    situation = "the reply is cut short (stop_reason 'max_tokens'), then a new line"
    report.situation = situation
    replies = [reply(text("4823 × 1979 comes to 9,5"), stop_reason="max_tokens"),
               reply(calculator_call("12 * 12")), reply(text("12 × 12 = 144."))]
    output, _ = _play_without_crash(run, guard, situation, HINT_STOP_REASON, f"{QUESTION}\nWhat is 12 × 12?\n", replies)
    turns = _turns(output)
    report.expect(len(turns) >= 1 and _says(turns[0], MAX_TOKENS_WORDS), None,
                  f"{situation}: after the cut reply, run wrote {turns[0] if turns else output!r}; "
                  "it should write an Agent> line that says the reply was cut short (max_tokens)", HINT_STOP_REASON)
    report.expect(len(turns) >= 2 and turns[1].rstrip() ==
                  "[tool] calculator({'expression': '12 * 12'}) -> 144\nAgent> 12 × 12 = 144.", None,
                  f"{situation}: the next line should be answered as usual; run wrote {turns[1] if len(turns) > 1 else '(nothing)'!r}",
                  "After a cut reply, go on reading lines: the session is not over.")

    situation = "the reply is cut short in the middle of a tool call"
    report.situation = situation
    try:
        output, _ = _play(run, guard, f"{QUESTION}\n",
                          [reply(text("I'll use the calculator."), calculator_call("4823 * 19"), stop_reason="max_tokens")])
    except TooManyCalls:
        guard.verify()
        raise Failure(f"{situation}: run went on with the tool call of a reply that was cut short (stop_reason "
                      "'max_tokens'); its input may be cut in half, so it must not run",
                      "Run the tools only when stop_reason is 'tool_use'.") from None
    turns = _turns(output)
    report.expect(not any("[tool]" in turn for turn in turns), None,
                  f"{situation}: run ran the cut tool call ({output!r}); a reply cut by max_tokens may hold a "
                  "half-written call, so it must not run", "Run the tools only when stop_reason is 'tool_use'.")
    report.expect(len(turns) >= 1 and _says(turns[0], MAX_TOKENS_WORDS), None,
                  f"{situation}: run wrote {turns[0] if turns else output!r}; it should write an Agent> line that "
                  "says the reply was cut short (max_tokens)", HINT_STOP_REASON)

    situation = "the model refuses (stop_reason 'refusal', no content at all)"
    report.situation = situation
    output, _ = _play_without_crash(run, guard, situation, HINT_STOP_REASON, "Help me cheat on my exam.\n",
                                    [reply(stop_reason="refusal")])
    turns = _turns(output)
    report.expect(len(turns) >= 1 and _says(turns[0], REFUSAL_WORDS),
                  "says so on max_tokens (running no cut tool call) and on refusal, without crashing, and goes on",
                  f"{situation}: run wrote {turns[0] if turns else output!r}; it should write an Agent> line that "
                  "says the model refused (refusal)", HINT_STOP_REASON)


def _check_never_stops(run, report: Report, guard: _Guard) -> None:
    situation = "a model that never stops asking for tools, with max_iterations=3"
    report.situation = situation
    hint = ("A program should not crash when the model goes on: after max_iterations calls, write an Agent> line "
            "that says so, and read the next line.")
    too_many = Failure(f"{situation}: run called the model more than 3 times; it should stop after max_iterations calls",
                       "Bound the inner loop: for _ in range(max_iterations): ..., and use the parameter, "
                       "not a number of your own.")
    _play_without_crash(run, guard, situation, hint, f"{QUESTION}\n", never_stops(), too_many=too_many, call_limit=3,
                        max_iterations=3)
    report.note("stops after max_iterations calls of a model that never stops, without crashing")


def _check_system(run, report: Report, guard: _Guard) -> None:
    situation = "a custom system prompt"
    report.situation = situation
    custom = "Answer in one word."
    _, traffic = _play_expecting_calls(run, guard, situation, f"{QUESTION}\n", [reply(text("9544717."))], system=custom)
    sent = traffic.exchanges[0]["request"].get("system")
    report.expect(canonical_blocks(sent or []) == canonical_blocks(custom), "sends a custom system prompt",
                  f"{situation}: run(..., system={custom!r}) sent the system prompt {sent!r}",
                  "Pass system=system to client.messages.create, not SYSTEM_PROMPT.")


# --- any client will do -----------------------------------------------------------------------------------


def _plain(value):
    """SimpleNamespace blocks (as the duck-typed client returns them) as plain dicts, for the API's rules."""
    if isinstance(value, SimpleNamespace):
        return {key: _plain(item) for key, item in vars(value).items()}
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    if hasattr(value, "model_dump"):
        return value.model_dump(mode="json", exclude_unset=True)
    return value


class _MinimalMessages:
    def __init__(self, replies: list):
        self.replies = list(replies)
        self.requests: list[dict] = []

    def create(self, **kwargs):
        self.requests.append(kwargs)
        violation = check_request({"messages": _plain(kwargs.get("messages"))})
        if violation is not None:
            raise Failure(f"with a minimal client: the history sent breaks the API's rules: {violation.message}",
                          violation.hint)
        if not self.replies:
            raise Failure("with a minimal client: run called the model again after its final reply",
                          "Call the model again only while stop_reason is 'tool_use'.")
        return self.replies.pop(0)


class MinimalClient:
    """Not the SDK: just `.messages.create(**kwargs)` returning objects with stop_reason and content."""

    def __init__(self, replies: list):
        self.messages = _MinimalMessages(replies)


def _check_any_client(run, report: Report, guard: _Guard) -> None:
    situation = "a minimal client that is not the SDK's (replies with only stop_reason and content)"
    report.situation = situation
    client = MinimalClient([
        SimpleNamespace(stop_reason="tool_use", content=[
            SimpleNamespace(type="text", text="Using the calculator."),
            SimpleNamespace(type="tool_use", id="call_1", name="calculator", input={"expression": "4823 * 1979"}),
        ]),
        SimpleNamespace(stop_reason="end_turn", content=[SimpleNamespace(type="text", text="It is 9,544,717.")]),
    ])
    output = _Output()
    run(_Input(f"{QUESTION}\n"), output, client)
    guard.verify()
    _expect_transcript(report, guard, situation, output.getvalue(), transcript([PRODUCT, "Agent> It is 9,544,717."]))
    report.note("works with a minimal client that is not the SDK's")


# The course manifest (looplab/course.py) names this module; these are what it reads.
CHECKERS = {
    "4.1": check_run,
}

HINTS = {
    "4.1": [
        "Two loops. The outer one writes 'User> ' to output_stream, reads input_stream.readline(), and returns at '' "
        "(end of input) or an empty line; the inner one calls the model while stop_reason is 'tool_use', at most "
        "max_iterations times. Create the messages list once, before the outer loop, so the history lasts the session.",
        "For each tool_use block (found by its type, never content[0]): output = run_tool(block.name, block.input); "
        "write f\"[tool] {block.name}({block.input}) -> {output}\\n\"; collect tool_result(block, output). All the "
        "results go back in ONE user message.",
        "Then write f\"Agent> {reply}\\n\", the text blocks of the last reply joined. On 'max_tokens' or 'refusal', "
        "write an Agent> line that names the stop reason (a refusal may have no text block), run no tool call of a "
        "cut reply, and drop that reply from messages. Never raise: a program goes on to the next line.",
    ],
}
