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

from ..loop import SYSTEM_PROMPT
from ..recordings import canonical_blocks
from ..rules import check_request
from ..scripted import TooManyCalls, calculator as calculator_call, never_stops, reply, text, thinking, tool_use
from ..tools import ERROR_PREFIX
from .core import Report, catalogue, play

QUESTION = "What is 4823 × 1979?"
FOLLOW_UP = "And that divided by 7?"
PRODUCT = "[tool] calculator({'expression': '4823 * 1979'}) -> 9544717"
PROMPT = "User> "
AGENT = "Agent>"
CUSTOM_SYSTEM = "Answer in one word."
MAX_READS_AT_END = 5
MAX_OUTPUT = 100_000  # characters

MAX_TOKENS_WORDS = ("max_tokens", "max tokens", "token limit", "cut short", "cut off", "truncated",
                    "ended early", "too long", "incomplete", "unfinished")
REFUSAL_WORDS = ("refus", "declin")  # refusal, refused, refuses, declined...

TEXTS, HINTS = catalogue(__file__)  # the words of these checks: texts/notebook4.toml


def transcript(*turns: list[str]) -> str:
    """What run should print: a prompt and the lines of each turn, then the prompt that meets the end."""
    return "".join(PROMPT + "".join(line + "\n" for line in lines) for lines in turns) + PROMPT


# (key of the situation in TEXTS, input text, scripted replies, expected transcript)
TRANSCRIPT_SCENARIOS = [
    ("words", f"{QUESTION}\n", [reply(text("It is 9,544,717."))], transcript(["Agent> It is 9,544,717."])),
    ("text_first", f"{QUESTION}\n",
     [reply(text("I'll use the calculator."), calculator_call("4823 * 1979")), reply(text("4823 × 1979 = 9,544,717."))],
     transcript([PRODUCT, "Agent> 4823 × 1979 = 9,544,717."])),
    ("thinking_first", f"{QUESTION}\n",
     [reply(thinking("A big product: use the tool."), text("Let me compute that."), calculator_call("4823 * 1979")),
      reply(thinking("The tool said 9544717."), text("That is 9,544,717."))],
     transcript([PRODUCT, "Agent> That is 9,544,717."])),
    ("two_calls", "What are 4823 × 1979 and 1234 / 8?\n",
     [reply(text("Both at once."), calculator_call("4823 * 1979"), calculator_call("1234 / 8")),
      reply(text("9,544,717 and 154.25."))],
     transcript([PRODUCT, "[tool] calculator({'expression': '1234 / 8'}) -> 154.25", "Agent> 9,544,717 and 154.25."])),
    ("three_calls", "What are 2 + 3, 4 * 5 and 10 / 4?\n",
     [reply(calculator_call("2 + 3"), calculator_call("4 * 5"), calculator_call("10 / 4")),
      reply(text("5, 20 and 2.5."))],
     transcript(["[tool] calculator({'expression': '2 + 3'}) -> 5", "[tool] calculator({'expression': '4 * 5'}) -> 20",
                 "[tool] calculator({'expression': '10 / 4'}) -> 2.5", "Agent> 5, 20 and 2.5."])),
    ("chain", "What is 4823 × 1979, divided by 7?\n",
     [reply(calculator_call("4823 * 1979")), reply(text("Now the division."), calculator_call("9544717 / 7")),
      reply(text("It is 1,363,531."))],
     transcript([PRODUCT, "[tool] calculator({'expression': '9544717 / 7'}) -> 1363531.0", "Agent> It is 1,363,531."])),
    ("tool_fails", "What is 1 / 0?\n",
     [reply(text("Let me try."), calculator_call("1 / 0")), reply(text("Dividing by zero has no answer."))],
     transcript(["[tool] calculator({'expression': '1 / 0'}) -> Error: division by zero",
                 "Agent> Dividing by zero has no answer."])),
    ("unknown_tool", "What's the weather in Paris?\n",
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
FIRST_TURN_TRANSCRIPT = transcript([PRODUCT, "Agent> 4823 × 1979 = 9,544,717."])
CUT_SHORT_LINES = f"{QUESTION}\nWhat is 12 × 12?\n"
REFUSED_LINE = "Help me cheat on my exam.\n"
CUT_SHORT = [reply(text("4823 × 1979 comes to 9,5"), stop_reason="max_tokens"), reply(calculator_call("12 * 12")),
             reply(text("12 × 12 = 144."))]
CUT_IN_CALL = [reply(text("I'll use the calculator."), calculator_call("4823 * 19"), stop_reason="max_tokens")]
ANSWERED_AS_USUAL = "[tool] calculator({'expression': '12 * 12'}) -> 144\nAgent> 12 × 12 = 144."
MINIMAL_TRANSCRIPT = transcript([PRODUCT, "Agent> It is 9,544,717."])
MINIMAL_REPLIES = [  # what a client that is not the SDK's may return: only stop_reason and content
    SimpleNamespace(stop_reason="tool_use", content=[
        SimpleNamespace(type="text", text="Using the calculator."),
        SimpleNamespace(type="tool_use", id="call_1", name="calculator", input={"expression": "4823 * 1979"}),
    ]),
    SimpleNamespace(stop_reason="end_turn", content=[SimpleNamespace(type="text", text="It is 9,544,717.")]),
]


# --- the session: guarded keyboard, bounded streams -------------------------------------------------------


class Session:
    """One check of run: input() and sys.stdin refuse to be used, print() to the notebook is noticed.

    A forbidden read is remembered even when the learner's code swallows the exception.
    """

    def __init__(self, run, report: Report):
        self.run, self.report = run, report
        self.used: str | None = None
        self.printed = io.StringIO()

    def refuse(self, what: str, *args, **kwargs):
        self.used = what
        raise self.report.failure(what)

    def verify(self) -> None:
        if self.used:
            raise self.report.failure(self.used)

    def input(self, lines: str) -> "_Input":
        return _Input(lines, self.report)

    def output(self) -> "_Output":
        return _Output(self.report)

    def play(self, lines: str, replies, call_limit: int | None = None, again: str = "called_again",
             stray=(TooManyCalls,), crash: str | None = None, **options):
        """Run the learner's run on one scenario: what it wrote, and its exchanges with the model."""
        output = self.output()
        turn = play(lambda client: self.run(self.input(lines), output, client, **options), replies,
                    len(replies) if call_limit is None else call_limit)
        self.verify()
        if isinstance(turn.error, stray):
            count = len(replies) if isinstance(replies, list) else 0
            raise self.report.failure(again, count=count,
                                      replies=self.report.words("one_reply" if count == 1 else "replies"))
        if crash and turn.error is not None and not isinstance(turn.error, anthropic.BadRequestError):
            error = turn.error
            said = f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
            raise self.report.failure("raised", self.report.text(crash).hint, error=said, where=turn.where)
        turn.reraise()
        return output.getvalue(), turn

    def expect_transcript(self, output: str, expected: str) -> None:
        """The output, line by line, against the transcript; trailing spaces and newlines at the end don't count."""
        got, want = output.rstrip(), expected.rstrip()
        if got == want:
            return
        printed = self.printed.getvalue().strip()
        self.report.require(bool(output.strip()) or not printed, "printed", printed=printed.splitlines()[0]
                            if printed else "")
        self.report.require(bool(output.strip()), "wrote_nothing")
        self.report.require(PROMPT.strip() in output, "no_prompt", prompt=PROMPT)
        got_lines, want_lines = got.split("\n"), want.split("\n")
        index = next(i for i in range(max(len(got_lines), len(want_lines)))
                     if (got_lines + [None] * len(want_lines))[i] != (want_lines + [None] * len(got_lines))[i])
        mine = got_lines[index] if index < len(got_lines) else None
        theirs = want_lines[index] if index < len(want_lines) else None
        raise self.report.failure("line_differs", self.report.text(_hint_for(mine or "", theirs or "")).hint,
                                  number=index + 1, mine=self.report.words("nothing") if mine is None else repr(mine),
                                  theirs=self.report.words("nothing_more") if theirs is None else repr(theirs))

    @contextlib.contextmanager
    def guarded(self):
        saved_input, saved_stdin = builtins.input, sys.stdin
        builtins.input, sys.stdin = lambda *args, **kwargs: self.refuse("called_input"), _NoStdin(self)
        try:
            with contextlib.redirect_stdout(self.printed):
                yield self
        finally:
            builtins.input, sys.stdin = saved_input, saved_stdin


class _NoStdin(io.TextIOBase):
    """sys.stdin during the check: reading it is a failure, not a hang."""

    def __init__(self, session: Session):
        self.session = session

    def readable(self) -> bool:
        return True

    def read(self, size=-1):
        return self.session.refuse("read_stdin")

    readline = readlines = read

    def __iter__(self):
        return self.session.refuse("read_stdin")


class _Input(io.StringIO):
    """The lines of a scenario; reading on and on at the end of the input is a failure."""

    def __init__(self, lines: str, report: Report):
        super().__init__(lines)
        self.report, self.reads_at_end = report, 0

    def readline(self, size=-1):
        line = super().readline(size)
        self.reads_at_end += line == ""
        self.report.require(self.reads_at_end <= MAX_READS_AT_END, "reads_on", reads=MAX_READS_AT_END)
        return line


class _Output(io.StringIO):
    """What run writes; far more than any scenario needs means a loop that does not end."""

    def __init__(self, report: Report):
        super().__init__()
        self.report = report

    def write(self, text):
        self.report.require(self.tell() <= MAX_OUTPUT, "writes_on", limit=MAX_OUTPUT)
        return super().write(text)


def _hint_for(mine: str, theirs: str) -> str:
    """The row whose hint fits the first line that differs from the expected transcript."""
    prompt = PROMPT.strip()
    if mine.startswith(prompt) != theirs.startswith(prompt):
        return "prompt_hint"
    if AGENT in mine and AGENT not in theirs:
        return "agent_line_hint"
    if "[tool]" in mine or "[tool]" in theirs:
        return "tool_line_hint"
    return "agent_line_hint" if AGENT in theirs else "prompt_hint"


def _turns(output: str) -> list[str]:
    """What run wrote after each prompt (the text before the first prompt is dropped)."""
    return output.split(PROMPT)[1:]


def _text_of(content) -> str | None:
    blocks = canonical_blocks(content)
    if not isinstance(blocks, list) or not all(isinstance(b, dict) and b.get("type") == "text" for b in blocks):
        return None
    return "".join(b.get("text", "") for b in blocks)


def _says(turn: str, words: tuple[str, ...]) -> bool:
    lowered = turn.lower()
    return AGENT.lower() in lowered and any(word in lowered for word in words)


# --- the checker ---------------------------------------------------------------------------------------


def check_run(run, report: Report) -> None:
    report.require_function(run, "run")
    with Session(run, report).guarded() as session:
        for part in (_one_turn, _transcripts, _history, _end_of_input, _cut_and_refused, _never_stops, _system,
                     _any_client):
            part(session, report)
    report.situation = None


def _one_turn(session: Session, report: Report) -> None:
    key, lines, replies, expected = TRANSCRIPT_SCENARIOS[0]
    report.enter(key)
    output, turn = session.play(lines, replies)
    session.expect_transcript(output, expected)
    sent = turn.requests[0]
    messages = sent.get("messages", [])
    report.require(len(messages) == 1 and messages[0].get("role") == "user", "first_request", count=len(messages))
    said = _text_of(messages[0].get("content"))
    report.require(said == QUESTION, "user_message", said=said, question=QUESTION)
    names = [tool.get("name") for tool in sent.get("tools", []) if isinstance(tool, dict)]
    report.require("calculator" in names, "no_calculator", names=names)
    report.require(canonical_blocks(sent.get("system") or []) == canonical_blocks(SYSTEM_PROMPT), "default_system",
                   system=sent.get("system"))
    report.note("one_turn_ok")


def _transcripts(session: Session, report: Report) -> None:
    for key, lines, replies, expected in TRANSCRIPT_SCENARIOS[1:]:
        report.enter(key)
        output, turn = session.play(lines, replies)
        session.expect_transcript(output, expected)
        if "[tool]" in expected and ERROR_PREFIX in expected:
            last = turn.requests[-1]["messages"][-1]
            content = last.get("content") if isinstance(last.get("content"), list) else []
            flags = [b.get("is_error") for b in content if isinstance(b, dict) and b.get("type") == "tool_result"]
            report.require(flags == [True], "no_is_error", flag=flags[0] if flags else None)
    report.note("transcripts_ok")


def _history(session: Session, report: Report) -> None:
    report.enter("two_lines")
    output, turn = session.play(f"{QUESTION}\n{FOLLOW_UP}\n", TWO_TURNS)
    session.expect_transcript(output, TWO_TURNS_TRANSCRIPT)
    first_turn = turn.requests[1]["messages"] + [{"role": "assistant", "content": turn.responses[1]["content"]}]
    sent = turn.requests[2]["messages"]
    report.require(len(sent) == len(first_turn) + 1, "history_lost", count=len(sent), first=len(first_turn))
    report.require(_text_of(sent[0].get("content")) == QUESTION and _text_of(sent[-1].get("content")) == FOLLOW_UP,
                   "history_kept")


def _end_of_input(session: Session, report: Report) -> None:
    report.enter("nothing_to_read")
    output, _ = session.play("", [], call_limit=0, again="called_on_nothing")
    session.expect_transcript(output, PROMPT)
    report.enter("empty_line")
    output, _ = session.play(f"{QUESTION}\n\n{FOLLOW_UP}\n", TWO_TURNS[:2], again="went_on",
                             stray=(TooManyCalls, anthropic.BadRequestError))
    session.expect_transcript(output, FIRST_TURN_TRANSCRIPT)
    report.note("end_ok")


def _cut_and_refused(session: Session, report: Report) -> None:
    report.enter("cut_short")
    output, _ = session.play(CUT_SHORT_LINES, CUT_SHORT, crash="crash_on_stop")
    turns = _turns(output)
    report.require(len(turns) >= 1 and _says(turns[0], MAX_TOKENS_WORDS), "not_said_cut",
                   wrote=turns[0] if turns else output)
    report.require(len(turns) >= 2 and turns[1].rstrip() == ANSWERED_AS_USUAL, "next_line",
                   wrote=turns[1] if len(turns) > 1 else report.words("nothing"))

    report.enter("cut_in_call")
    output, _ = session.play(f"{QUESTION}\n", CUT_IN_CALL, again="ran_cut_call")
    turns = _turns(output)
    report.require(not any("[tool]" in turn for turn in turns), "printed_cut_call", wrote=output)
    report.require(len(turns) >= 1 and _says(turns[0], MAX_TOKENS_WORDS), "not_said_cut_call",
                   wrote=turns[0] if turns else output)

    report.enter("refusal")
    output, _ = session.play(REFUSED_LINE, [reply(stop_reason="refusal")], crash="crash_on_stop")
    turns = _turns(output)
    report.require(len(turns) >= 1 and _says(turns[0], REFUSAL_WORDS), "not_said_refused",
                   wrote=turns[0] if turns else output)


def _never_stops(session: Session, report: Report) -> None:
    report.enter("never_stops")
    session.play(f"{QUESTION}\n", never_stops(), call_limit=3, again="past_cap", crash="crash_on_cap",
                 max_iterations=3)
    report.note("never_stops_ok")


def _system(session: Session, report: Report) -> None:
    report.enter("custom_system")
    _, turn = session.play(f"{QUESTION}\n", [reply(text("9544717."))], system=CUSTOM_SYSTEM)
    sent = turn.requests[0].get("system")
    report.require(canonical_blocks(sent or []) == canonical_blocks(CUSTOM_SYSTEM), "custom_sent",
                   custom=CUSTOM_SYSTEM, sent=sent)


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


class MinimalClient:
    """Not the SDK: just `.messages.create(**kwargs)` returning objects with stop_reason and content."""

    def __init__(self, replies: list, report: Report):
        self.messages, self.replies, self.report = self, list(replies), report

    def create(self, **kwargs):
        violation = check_request({"messages": _plain(kwargs.get("messages"))})
        if violation is not None:
            raise self.report.failure("minimal_rules", violation.hint, message=violation.message)
        self.report.require(bool(self.replies), "minimal_again")
        return self.replies.pop(0)


def _any_client(session: Session, report: Report) -> None:
    report.enter("minimal_client")
    output = session.output()
    session.run(session.input(f"{QUESTION}\n"), output, MinimalClient(MINIMAL_REPLIES, report))
    session.verify()
    session.expect_transcript(output.getvalue(), MINIMAL_TRANSCRIPT)
    report.note("any_client_ok")


# The course manifest (looplab/course.py) names this module; these are what it reads.
CHECKERS = {
    "4.1": check_run,
}
