"""Checks for notebook 4, your agent: `run`, the whole agent as a program over two streams.

`run(input_stream, output_stream, client, system=SYSTEM_PROMPT, max_iterations=10)` reads lines from
one `io.StringIO` and must write the transcript of expected_output to the other, exactly (bar trailing
white space at the very end). Where the words are the learner's own (`max_tokens`, `refusal`, the cap),
only what the prose asks that line to name is tested, in any words and any language: the stop reason as
the API spells it (`max_tokens`, `refusal`), or the number of calls made (`max_iterations`, as a whole
number). No list of words: a learner's own wording never fails. The next line's request must keep the
earlier turns and drop the cut reply. `input` and `sys.stdin` refuse
to be used: a run that reads its input_stream is one that can be tested, scripted and graded.
"""

import builtins
import contextlib
import io
import os
import re
import sys
from dataclasses import dataclass
from itertools import zip_longest
from types import SimpleNamespace
from typing import Callable
from unittest import mock

import anthropic

from .. import language
from ..catalogue import catalogue, readable_repr
from ..history import to_wire
from ..loop import MAX_TOKENS, system_prompt
from ..model_id import MODEL
from ..recordings import canonical_blocks
from ..rules import check_request
from ..scripted import Said, TooManyCalls, calculator as calc, never_stops, reply, said, spoken, text, thinking
from ..scripted import tool_use
from ..tools import run_tool
from .core import Report, Scenario, learner_frame, play
from .turns import final_text


def _lines(*lines: str) -> Said:
    """The lines run reads, each ended by a newline, as one Said: each line in its words of each language (a line
    with no words, the empty line, is the same in all)."""
    def read(spoken_in: str) -> str:
        return "".join((line.translations.get(spoken_in, line) if isinstance(line, Said) else line) + "\n"
                       for line in lines)
    return said(read(language.SOURCE), **{other: read(other) for other in language.LANGUAGES[1:]})


# The scenarios' words, in the check's language: a Scenario's `given` and `options` say them so; elsewhere, .now()
# or spoken() at check time (a Said in an f-string or joined with + is its English).
QUESTION = said("What is 4823 × 1979?", fr="Combien font 4823 × 1979 ?")
ASKED = _lines(QUESTION)
FOLLOW_UP = said("And that divided by 7?", fr="Et ça, divisé par 7 ?")
PROMPT = "User> "
AGENT = "Agent>"
TOOL_LINE = "[tool] {name}({input}) -> {output}"  # the input as Python prints a dict, the output as run_tool says
CUSTOM_SYSTEM = said("Answer in one word.", fr="Répondez en un seul mot.")
MAX_READS_AT_END = 5
MAX_OUTPUT = 100_000  # characters
WHOLE_NUMBER = r"(?<!\d){}(?!\d)"  # the number, not part of another one: 3 in '3 calls', not in '13' or '30'

TEXTS, HINTS = catalogue(__file__)  # the words of these checks: texts/notebook4.toml


def expected_output(replies: list) -> str:
    """What run should print for these replies: a prompt, a [tool] line for each call, and the Agent> line of
    the reply that ends the turn, for each line read; then the prompt that meets the end of the input."""
    output = PROMPT
    for scripted in replies:
        response = scripted({"messages": []})
        if response["stop_reason"] != "tool_use":
            output += f"{AGENT} {final_text(response)}\n{PROMPT}"
            continue
        for block in response["content"]:
            if block["type"] == "tool_use":
                output += TOOL_LINE.format(**block, output=run_tool(block["name"], block["input"])) + "\n"
    return output


@dataclass(frozen=True)
class Run(Scenario):
    """A scenario for run (`given` is the lines it reads), with what only a whole program can get wrong."""

    exact: bool = True  # run must print expected_output(replies); else `then` reads the learner's own words
    again: str = "called_again"  # the row for a model called once more than the replies allow
    stray: tuple = (TooManyCalls,)  # the errors that mean it was called once too often
    crash: str | None = None  # the row whose hint explains a crash, where run must never crash


def _first_request(report: Report, output: str, turn) -> None:
    """The request holds one user message, the line read without its newline, the tools and the system prompt."""
    sent = turn.requests[0]
    messages = sent.get("messages", [])
    roles = [message.get("role") for message in messages]
    report.require(roles == ["user"], "first_request", count=len(messages), roles=roles)
    said, question = _text_of(messages[0].get("content")), QUESTION.now()
    report.require(said == question, "user_message", said=said, question=question)
    names = [tool.get("name") for tool in sent.get("tools", []) if isinstance(tool, dict)]
    report.require("calculator" in names, "no_calculator", names=names)
    report.require(sent.get("model") == MODEL and sent.get("max_tokens") == MAX_TOKENS, "request_settings",
                   model=sent.get("model"), max_tokens=sent.get("max_tokens"), expected_model=MODEL,
                   expected_tokens=MAX_TOKENS)
    expected = system_prompt()  # in the notebook's language: the grader judges French and English notebooks
    report.require(canonical_blocks(sent.get("system") or []) == canonical_blocks(expected), "default_system",
                   system=sent.get("system"), expected=expected)


def _error_flagged(report: Report, output: str, turn) -> None:
    """The failed call's tool_result went back to the model with is_error: True."""
    last = turn.requests[-1]["messages"][-1]
    content = last.get("content") if isinstance(last.get("content"), list) else []
    flags = [b.get("is_error") for b in content if isinstance(b, dict) and b.get("type") == "tool_result"]
    report.require(flags == [True], "no_is_error", flag=flags[0] if flags else None)


def _history_kept(report: Report, output: str, turn) -> None:
    """The second line's request sends the whole first turn again, then the new line."""
    first_turn = turn.requests[1]["messages"] + [{"role": "assistant", "content": turn.responses[1]["content"]}]
    sent = turn.requests[2]["messages"]
    report.require(len(sent) == len(first_turn) + 1, "history_lost", count=len(sent), first=len(first_turn))
    first, last = _text_of(sent[0].get("content")), _text_of(sent[-1].get("content"))
    question, follow_up = QUESTION.now(), FOLLOW_UP.now()
    report.require(first == question and last == follow_up, "history_kept", first=first, last=last,
                   question=question, follow_up=follow_up)


def stop_reason_named(reason: str) -> Callable[[str], bool]:
    """The test of a line that must name a stop reason: the API's own spelling in it, whatever the other words."""
    return lambda line: reason in line.lower()


def number_named(number: int) -> Callable[[str], bool]:
    """The test of a line that must name a number of calls: that whole number in it (3 in '3 calls', not in '13')."""
    whole = re.compile(WHOLE_NUMBER.format(number))
    return lambda line: bool(whole.search(line))


def _said(report: Report, output: str, named: Callable[[str], bool], key: str, **values) -> list[str]:
    """The turn's Agent> line names what happened (`named` tests it), in the learner's own words; what run wrote
    after each prompt. The message quotes that line in full, or the whole turn when it has no Agent> line."""
    turns = _turns(output)
    line = _agent_line(turns[0]) if turns else None
    report.require(line is not None and named(line), key,
                   wrote=line if line is not None else (turns[0] if turns else output), **values)
    return turns


def _said_then_went_on(named: Callable[[str], bool], key: str, first_line: Said, next_request: int,
                       dropped: int | None = None, **values) -> Callable:
    """A `then`: the turn's Agent> line names what happened; the next line is answered as usual, its request
    starts with the first line read (the earlier turns are kept) and no longer holds reply `dropped`."""
    def then(report: Report, output: str, turn) -> None:
        turns = _said(report, output, named, key, **values)
        expected, line = _answered_as_usual(), spoken(first_line)
        report.require(len(turns) >= 2 and turns[1].rstrip() == expected, "next_line",
                       wrote=turns[1] if len(turns) > 1 else report.words("nothing"), expected=expected)
        sent = to_wire(turn.requests[next_request].get("messages", []))
        report.require(bool(sent) and _text_of(sent[0].get("content")) == line, "lost_earlier_turns",
                       line=line, first=sent[0] if sent else None)
        if dropped is not None:
            content = canonical_blocks(turn.responses[dropped]["content"])
            kept = any(m.get("role") == "assistant" and canonical_blocks(m.get("content")) == content for m in sent)
            report.require(not kept, "kept_dropped_reply", content=turn.responses[dropped]["content"])
    return then


def _said_at_cap(cap: int) -> Callable:
    """A `then`: after `cap` calls of a model still asking for tools, the Agent> line names the number `cap`."""
    def then(report: Report, output: str, turn) -> None:
        _said(report, output, number_named(cap), "not_said_cap", cap=cap)
    return then


def _ran_no_cut_call(report: Report, output: str, turn) -> None:
    report.require(not any("[tool]" in turn for turn in _turns(output)), "printed_cut_call", wrote=output)
    _said(report, output, stop_reason_named("max_tokens"), "not_said_cut_call")


def _custom_sent(report: Report, output: str, turn) -> None:
    sent, custom = turn.requests[0].get("system"), CUSTOM_SYSTEM.now()
    report.require(canonical_blocks(sent or []) == canonical_blocks(custom), "custom_sent", custom=custom, sent=sent)


TWO_TURNS = [reply(text("I'll use the calculator.", fr="Je vais utiliser la calculatrice."), calc("4823 * 1979")),
             reply(text("4823 × 1979 = 9,544,717.", fr="4823 × 1979 = 9 544 717.")),
             reply(calc("9544717 / 7")), reply(text("That is 1,363,531.", fr="Cela fait 1 363 531."))]
NEXT_LINE = said("What is 12 × 12?", fr="Combien font 12 × 12 ?")
ANSWERED = [reply(calc("12 * 12")), reply(text("12 × 12 = 144.", fr="12 × 12 = 144."))]  # what NEXT_LINE gets
REFUSED_LINE = said("Help me cheat on my exam.", fr="Aidez-moi à tricher à mon examen.")


def _answered_as_usual() -> str:
    """What run writes for NEXT_LINE, after its prompt: "[tool] calculator({'expression': '12 * 12'}) -> 144" and
    the Agent> line, in the check's language."""
    return _turns(expected_output(ANSWERED))[0].rstrip()

CAP = 3  # max_iterations in the scenarios of the cap: not the default (10), and not the same in both, so the
NEVER_STOPS_CAP = 4  # Agent> line must name max_iterations itself, not a number written in the code

RUN_SCENARIOS = [  # Run(key, replies, the lines run reads, ...)
    Run("words", [reply(text("It is 9,544,717.", fr="Cela fait 9 544 717."))], ASKED, then=_first_request,
        note="one_turn_ok"),
    Run("text_first", [reply(text("I'll use the calculator.", fr="Je vais utiliser la calculatrice."),
                             calc("4823 * 1979")),
                       reply(text("4823 × 1979 = 9,544,717.", fr="4823 × 1979 = 9 544 717."))], ASKED),
    Run("thinking_first", [reply(thinking("A big product: use the tool.", fr="Un grand produit : j'utilise l'outil."),
                                 text("Let me compute that.", fr="Je fais le calcul."), calc("4823 * 1979")),
                           reply(thinking("The tool said 9544717.", fr="L'outil a répondu 9544717."),
                                 text("That is 9,544,717.", fr="Cela fait 9 544 717."))], ASKED),
    Run("two_calls", [reply(text("Both at once.", fr="Les deux d'un coup."), calc("4823 * 1979"), calc("1234 / 8")),
                      reply(text("9,544,717 and 154.25.", fr="9 544 717 et 154,25."))],
        _lines(said("What are 4823 × 1979 and 1234 / 8?", fr="Combien font 4823 × 1979 et 1234 / 8 ?"))),
    Run("three_calls", [reply(calc("2 + 3"), calc("4 * 5"), calc("10 / 4")),
                        reply(text("5, 20 and 2.5.", fr="5, 20 et 2,5."))],
        _lines(said("What are 2 + 3, 4 * 5 and 10 / 4?", fr="Combien font 2 + 3, 4 * 5 et 10 / 4 ?"))),
    Run("chain", [reply(calc("4823 * 1979")), reply(text("Now the division.", fr="Maintenant, la division."),
                                                     calc("9544717 / 7")),
                  reply(text("It is 1,363,531.", fr="Cela fait 1 363 531."))],
        _lines(said("What is 4823 × 1979, divided by 7?", fr="Combien fait 4823 × 1979 divisé par 7 ?"))),
    Run("tool_fails", [reply(text("Let me try.", fr="J'essaie."), calc("1 / 0")),
                       reply(text("Dividing by zero has no answer.", fr="Une division par zéro n'a pas de réponse."))],
        _lines(said("What is 1 / 0?", fr="Combien font 1 / 0 ?")), then=_error_flagged),
    Run("unknown_tool", [reply(tool_use("weather", {"city": "Paris"})),
                         reply(text("I have no weather tool, sorry.", fr="Je n'ai pas d'outil météo, désolé."))],
        _lines(said("What's the weather in Paris?", fr="Quel temps fait-il à Paris ?")), then=_error_flagged,
        note="transcripts_ok"),
    Run("two_lines", TWO_TURNS, _lines(QUESTION, FOLLOW_UP), then=_history_kept),
    Run("nothing_to_read", [], "", call_limit=0, again="called_on_nothing"),
    Run("empty_line", TWO_TURNS[:2], _lines(QUESTION, "", FOLLOW_UP), again="went_on",
        stray=(TooManyCalls, anthropic.BadRequestError), note="end_ok"),
    Run("cut_short", [reply(text("4823 × 1979 comes to 9,5", fr="4823 × 1979, cela fait 9 5"),
                            stop_reason="max_tokens"), *ANSWERED],
        _lines(QUESTION, NEXT_LINE), exact=False, crash="crash_on_stop",
        then=_said_then_went_on(stop_reason_named("max_tokens"), "not_said_cut", QUESTION, next_request=1, dropped=0)),
    Run("cut_in_call", [reply(text("I'll use the calculator.", fr="Je vais utiliser la calculatrice."),
                              calc("4823 * 19"), stop_reason="max_tokens")], ASKED,
        exact=False, then=_ran_no_cut_call, again="ran_cut_call"),
    Run("refusal", [reply(stop_reason="refusal"), *ANSWERED], _lines(REFUSED_LINE, NEXT_LINE), exact=False,
        then=_said_then_went_on(stop_reason_named("refusal"), "not_said_refused", REFUSED_LINE, next_request=1,
                                dropped=0),
        crash="crash_on_stop"),
    Run("never_stops", never_stops, ASKED, exact=False, again="past_cap", crash="crash_on_cap",
        then=_said_at_cap(NEVER_STOPS_CAP), call_limit=NEVER_STOPS_CAP, options={"max_iterations": NEVER_STOPS_CAP}),
    Run("cap_then_next_line", [reply(calc(f"{n}0 + {n}0")) for n in range(1, CAP + 1)] + ANSWERED,
        _lines(QUESTION, NEXT_LINE),
        exact=False, then=_said_then_went_on(number_named(CAP), "not_said_cap", QUESTION, next_request=CAP, cap=CAP),
        note="never_stops_ok", again="past_cap", crash="crash_on_cap", options={"max_iterations": CAP}),
    Run("custom_system", [reply(text("9544717.", fr="9544717."))], ASKED, exact=False, then=_custom_sent,
        options={"system": CUSTOM_SYSTEM}),
]
MINIMAL_CALL = said("Using the calculator.", fr="J'utilise la calculatrice.")
MINIMAL_ANSWER = text("It is 9,544,717.", fr="Cela fait 9 544 717.")


def minimal_replies() -> list:
    """What a client that is not the SDK's may return (only stop_reason and content), in the check's language."""
    return [
        SimpleNamespace(stop_reason="tool_use", content=[
            SimpleNamespace(type="text", text=MINIMAL_CALL.now()),
            SimpleNamespace(type="tool_use", id="call_1", name="calculator", input={"expression": "4823 * 1979"})]),
        SimpleNamespace(stop_reason="end_turn", content=[SimpleNamespace(**spoken(MINIMAL_ANSWER))]),
    ]


def minimal_output() -> str:
    """What run should write for minimal_replies(), in the check's language."""
    return expected_output([reply(calc("4823 * 1979")), reply(MINIMAL_ANSWER)])


# --- the session: guarded keyboard, bounded streams -------------------------------------------------------

class Session:
    """One check of run: input() and sys.stdin refuse (remembered if the code swallows it), print() is noticed."""

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

    def play(self, scenario: Run):
        """Run the learner's run on one scenario: what it wrote, and its exchanges with the model."""
        output, lines = _Output(self.report), _Input(scenario.given, self.report)
        turn = play(lambda client: self.run(lines, output, client, **scenario.options), scenario)
        self.verify()
        if isinstance(turn.error, scenario.stray):
            count = len(scenario.replies) if isinstance(scenario.replies, list) else 0
            raise self.report.failure(scenario.again, count=count, cap=scenario.options.get("max_iterations"),
                                      replies=self.report.words("one_reply" if count == 1 else "replies"))
        error = turn.error
        if scenario.crash and error is not None and not isinstance(error, anthropic.BadRequestError):
            said = f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
            raise self.report.failure("raised", self.report.text(scenario.crash).hint, error=said,
                                      where=learner_frame(error))
        turn.reraise()
        return output.getvalue(), turn

    def expect_transcript(self, output: str, expected: str, lines_read: str = "") -> None:
        """The output, line by line, against the transcript; trailing spaces and newlines at the end don't count."""
        got, want = output.rstrip(), expected.rstrip()
        if got == want:
            return
        printed = self.printed.getvalue().strip()
        self.report.require(bool(output.strip()) or not printed, "printed", printed=printed.splitlines()[0]
                            if printed else "")
        self.report.require(bool(output.strip()), "wrote_nothing")
        self.report.require(PROMPT.strip() in output, "no_prompt", prompt=PROMPT)
        lines = zip_longest(got.split("\n"), want.split("\n"))
        index, (mine, theirs) = next((index, pair) for index, pair in enumerate(lines) if pair[0] != pair[1])
        hint = self.report.text(_hint_for(mine or "", theirs or "", lines_read.splitlines())).hint
        raise self.report.failure("line_differs", hint,
                                  number=index + 1, mine=self.report.words("nothing") if mine is None else readable_repr(mine),
                                  theirs=self.report.words("nothing_more") if theirs is None else repr(theirs))

    @contextlib.contextmanager
    def guarded(self):
        """input() and sys.stdin refuse, print() is kept, in the process that runs `run`: here, or (under the
        grader) the kernel, which a proxy's `redirected` asks to do the same with these very objects."""
        refused = lambda *args, **kwargs: self.refuse("called_input")  # noqa: E731
        remote = getattr(self.run, "redirected", None)
        if remote is not None:
            with remote(input=refused, stdin=_NoStdin(self), stdout=self.printed):
                yield self
            return
        with (mock.patch.object(builtins, "input", refused), mock.patch.object(sys, "stdin", _NoStdin(self)),
              contextlib.redirect_stdout(self.printed)):
            yield self


class _NoStdin(io.TextIOBase):
    """sys.stdin during the check: reading it is a failure, not a hang."""

    def __init__(self, session: Session):
        self.session = session

    def readable(self) -> bool:
        return True

    def read(self, size=-1):
        return self.session.refuse("read_stdin")

    readline = readlines = __iter__ = read


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
        limit = f"{MAX_OUTPUT:,}".replace(",", self.report.text("thousands").passed)  # 100,000 or 100 000
        self.report.require(self.tell() <= MAX_OUTPUT, "writes_on", limit=limit)
        return super().write(text)


def _hint_for(mine: str, theirs: str, lines_read: list[str]) -> str:
    """The row whose hint fits where the first differing line differs: the prompt, an echo of the line read, a
    [tool] line or the Agent> line (mine is what run wrote, theirs the transcript's line)."""
    at = len(os.path.commonprefix([mine, theirs]))
    mine_rest, theirs_rest = _after_prompt(mine), _after_prompt(theirs)
    if at < len(PROMPT) and (theirs.startswith(PROMPT.strip()) or mine.startswith(PROMPT.strip())):
        return "prompt_hint"  # the prompt itself differs ('User>' without its space), is missing, or is extra
    if mine.startswith(PROMPT) and not mine_rest and theirs_rest:
        return "prompt_hint"  # a newline after the prompt
    if any(line.strip() and mine_rest.startswith(line.strip()) for line in lines_read):
        return "echo_hint"
    if mine_rest.startswith(AGENT) and not theirs_rest.startswith(AGENT):
        return "agent_line_hint"
    if mine_rest.startswith("[tool]") or theirs_rest.startswith("[tool]"):
        return "tool_line_hint"
    return "agent_line_hint" if theirs_rest.startswith(AGENT) else "prompt_hint"


def _after_prompt(line: str) -> str:
    """A line of the transcript without the prompt it may start with."""
    return line[len(PROMPT):] if line.startswith(PROMPT) else line


def _agent_line(turn: str) -> str | None:
    """The first Agent> line of what run wrote for one line read, or None."""
    return next((line for line in turn.split("\n") if line.startswith(AGENT)), None)


def _turns(output: str) -> list[str]:
    """What run wrote after each prompt (the text before the first prompt is dropped)."""
    return output.split(PROMPT)[1:]


def _text_of(content) -> str | None:
    blocks = canonical_blocks(content)
    if not isinstance(blocks, list) or not all(isinstance(b, dict) and b.get("type") == "text" for b in blocks):
        return None
    return "".join(b.get("text", "") for b in blocks)


# --- the checker ---------------------------------------------------------------------------------------

def check_run(run, report: Report) -> None:
    report.require_function(run, "run")
    with Session(run, report).guarded() as session:
        for scenario in RUN_SCENARIOS:
            report.enter(scenario.key)
            output, turn = session.play(scenario)
            if scenario.exact:
                session.expect_transcript(output, expected_output(scenario.replies), scenario.given)
            if scenario.then:
                scenario.then(report, output, turn)
            if scenario.note:
                report.note(scenario.note)
        report.enter("minimal_client")  # any client will do, one that is not the SDK's (MinimalClient below)
        output = _Output(report)
        asked = ASKED.now()
        session.run(_Input(asked, report), output, MinimalClient(minimal_replies(), report))
        session.verify()
        session.expect_transcript(output.getvalue(), minimal_output(), asked)
        report.note("any_client_ok")


# --- any client will do -----------------------------------------------------------------------------------

class MinimalClient:
    """Not the SDK: just `.messages.create(**kwargs)` returning objects with stop_reason and content."""

    def __init__(self, replies: list, report: Report):
        self.messages, self.replies, self.report = self, list(replies), report
        self.count = len(self.replies)

    def create(self, **kwargs):
        violation = check_request({"messages": to_wire(kwargs.get("messages"))})
        if violation is not None:  # the same code passed with the SDK's client: its replies' classes made the difference
            raise self.report.failure("minimal_rules", message=violation.message)
        self.report.require(bool(self.replies), "minimal_again", calls=self.count)
        return self.replies.pop(0)


CHECKERS = {"4.1": check_run}
