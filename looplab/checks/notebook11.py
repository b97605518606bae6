"""Checks for notebook 11, the capstone: compact with its summary call traced, and run, the whole agent.

Every call into the learner's code gets inputs of the check's own, made fresh for that call: histories (notebook 8's),
traces, the lines run reads and scripted models. 11.1 plays notebook 8's histories twice: with no trace, where compact
is notebook 8's exactly (no entry, no line), then with a trace handed by position before context_limit (an earlier
entry in it, or none), where the summary call adds one entry, the compactor's, and writes its `[compactor:trace]`
line before the `[compact]` line. What compact returns and writes besides is judged by notebook 8's helpers, in this
notebook's words; the entry is the course's (looplab/evals.py's traced, on the wire form).

11.2 plays sessions of run against one model that answers the parent, its researcher and the compactor. While it is
checked, the notebook's compact, agent_turn and build_registry are the course's (earlier pieces): a bug in 11.1 never
fails 11.2, and every trace line is written by the course's code when it is handed the session's trace, so a line
missing says which calls the trace never saw. The lines the series' tests read stay in English in every language:
`[compactor:trace] ...`, `[compact] ...`, `[trace] session total: ...`, `User> ` and `Agent> `.
"""

from __future__ import annotations

import copy
import io
import itertools
import re
from dataclasses import dataclass

from .. import scripted
from ..catalogue import catalogue
from ..compaction import CONTEXT_LIMIT, exchange_starts as course_exchange_starts, history_size
from ..scripted import TooManyCalls, calculator as calc, reply, said, scripted_client, text, tool_use
from .core import Report, Scenario, play
from .difference import ABSENT, first_difference, shown
from .notebook8 import (AFTER_A_SUMMARY, COMPACT_LINE, COMPACT_MARK, NEVER_READ, ONE_LONG_EXCHANGE, SUMMARIES,
                        THREE_EXCHANGES, TRIP, Fold, exactly, final_words, lines, made, one_under, print_kept)
from .notebook8 import _folded, _kept, folded_between_turns
from .notebook9 import FOUNDED, NOTHING_MORE, PARENT_SYSTEM, RESEARCHER_PROMPTS, SYSTEM_PROMPTS, searched
from .notebook10 import EARLIER, ENTRY_KEYS, PARENT, close, entry_of, trace_line

TEXTS, HINTS = catalogue(__file__)  # texts/notebook11.toml: the rows notebook 8's helpers word too

NEWLINE = "\n"
COMPACTOR = "compactor:"  # the tag of the summary call's line, [compactor:trace]; its entry's agent is "compactor"
COMPACTOR_AGENT, SUBAGENT = "compactor", "subagent"
PREFIXES = {PARENT: "", SUBAGENT: "subagent:", COMPACTOR_AGENT: COMPACTOR}  # each agent's trace line tag
TRACE_TAG = re.compile(r"^\[[\w:-]*trace\] ")  # the start of any agent's trace line: [trace], [compactor:trace]...
MULTIPLE_VALUES = "multiple values for argument"  # what Python says when trace comes after context_limit


# --- 11.1 compact, traced -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Ledger(Fold):
    """A scenario of compact (notebook 8's Fold) with what it is handed for a trace: the entries the list holds when
    handed (`earlier`; None: no trace, left out or handed as None, `none_given`), and whether context_limit goes by
    position too (`positional`: compact(messages, client, output_stream, trace, context_limit)); else by keyword, or
    left to its default when the budget is None."""

    earlier: tuple | None = (EARLIER,)
    none_given: bool = False
    positional: bool = False


UNTRACED_SCENARIOS = [  # notebook 8's compact, exactly: no trace given, or None
    Ledger("untraced_under_budget", SUMMARIES, TRIP, budget=5_000, earlier=None),
    Ledger("untraced_several_exchanges", SUMMARIES, THREE_EXCHANGES, budget=300, split=8, earlier=None,
           none_given=True),
    Ledger("untraced_default_budget", SUMMARIES, THREE_EXCHANGES, split=8, earlier=None),
]
TRACED_SCENARIOS = [  # the same histories and budgets, a trace handed by position
    Ledger("traced_under_budget", SUMMARIES, TRIP, budget=5_000),
    Ledger("traced_at_budget", SUMMARIES, TRIP, budget=exactly),
    Ledger("traced_one_long_exchange", SUMMARIES, ONE_LONG_EXCHANGE, budget=100, kept="folded_one_exchange"),
    Ledger("traced_several_exchanges", SUMMARIES, THREE_EXCHANGES, budget=300, split=8),
    Ledger("traced_empty_trace", SUMMARIES, THREE_EXCHANGES, budget=300, split=8, earlier=()),
    Ledger("traced_wire_history", SUMMARIES, THREE_EXCHANGES, budget=300, split=8, wire=True),
    Ledger("traced_just_over", SUMMARIES, TRIP, budget=one_under, split=2, positional=True),
    Ledger("traced_earlier_summary", SUMMARIES, AFTER_A_SUMMARY, budget=150, split=4),
    Ledger("traced_default_budget", SUMMARIES, THREE_EXCHANGES, split=8),
]


def check_compact(compact, report: Report) -> None:
    report.require_function(compact, "compact")
    for scenario in UNTRACED_SCENARIOS + TRACED_SCENARIOS:
        _compact_once(compact, scenario, report)
    report.situation = None
    report.note("compact_ok", untraced=len(UNTRACED_SCENARIOS), traced=len(TRACED_SCENARIOS))


def _called(compact, handed: list, client, output: io.StringIO, trace: list | None, scenario: Ledger,
            limit: int | None):
    """compact called as the prose orders its arguments: the trace by position, before context_limit."""
    arguments = [handed, client, output] + ([trace] if trace is not None or scenario.none_given else [])
    if limit is None:
        return compact(*arguments)
    return compact(*arguments, limit) if scenario.positional else compact(*arguments, context_limit=limit)


def _compact_once(compact, scenario: Ledger, report: Report) -> None:
    """One call of compact on a history and a trace of its own: notebook 8's verdict on what it returns and writes
    (its trace lines set apart), then what it added to the trace and where its line went."""
    history = made(scenario.given, scenario.wire)
    size = history_size(history)
    limit = scenario.limit(size)
    report.enter(scenario.key, size=size, limit=CONTEXT_LIMIT if limit is None else limit, count=len(history))
    handed = made(scenario.given, scenario.wire)
    earlier = None if scenario.earlier is None else copy.deepcopy(list(scenario.earlier))  # what it held, expected
    trace = copy.deepcopy(earlier)  # what compact is handed: a list of its own, its entries too
    output, printed = io.StringIO(), io.StringIO()
    with print_kept(compact, printed):
        turn = play(lambda client: _called(compact, handed, client, output, trace, scenario, limit), scenario)
    if isinstance(turn.error, NotImplementedError):
        turn.reraise()
    if isinstance(turn.error, TypeError) and MULTIPLE_VALUES in str(turn.error):
        raise report.failure("trace_after_context_limit", error=f"{type(turn.error).__name__}: {turn.error}")
    values = dict(size=size, limit=CONTEXT_LIMIT if limit is None else limit, calls=turn.calls,
                  exchanges=len(course_exchange_starts(history)))
    written = output.getvalue()
    if scenario.split is None:
        _kept(turn, history, written, scenario.kept, values, report)
        report.require(trace == earlier, "appended_when_kept", trace=shown(trace))
    else:
        traced, rest = set_apart(written)
        _folded(turn, history, scenario.split, rest, printed.getvalue(), values, report)
        if trace is None:
            report.require(not traced, "compactor_line_without_trace", line=(traced or [""])[0].strip())
        else:
            response = turn.responses[0]
            _ledger(trace, earlier, response, report)
            _compactor_line(written, traced, printed.getvalue(), response, scenario.split, report)
    difference = first_difference(handed, history, "messages")
    report.require(difference is None, "changed_the_history", difference=str(difference))


def set_apart(written: str) -> tuple[list[str], str]:
    """The trace lines written (any agent's), and the rest: what notebook 8's compact writes, which its helpers
    judge. A line holding the [compact] mark is never set apart: a trace line glued to it is the [compact] line's
    problem, said with everything written."""
    traced, rest = [], []
    for line in written.splitlines(keepends=True):
        (traced if TRACE_TAG.match(line) and COMPACT_MARK not in line else rest).append(line)
    return traced, "".join(rest)


def _ledger(trace: list, earlier: list, response: dict, report: Report) -> None:
    """The list handed in as trace: its earlier entries first, as they were, then one entry for the summary call,
    the compactor's, exactly the course's (its cost within TOLERANCE)."""
    if earlier:
        report.require(trace[:len(earlier)] == earlier, "earlier_entries_lost", first=shown(trace[0] if trace else
                                                                                            ABSENT),
                       earlier=shown(earlier[0]))
    added = trace[len(earlier):]
    report.require(bool(added), "trace_untouched" if earlier else "empty_trace_untouched")
    report.require(len(added) == 1, "compactor_entries", count=len(added))
    [entry] = added
    expected = entry_of(response, COMPACTOR)
    said = dict(entry=shown(entry), expected=shown(expected))
    report.require(isinstance(entry, dict), "entry_not_dict", kind=type(entry).__name__, **said)
    report.require(sorted(map(str, entry)) == sorted(ENTRY_KEYS), "entry_keys", keys=list(entry), wanted=ENTRY_KEYS,
                   **said)
    if entry["agent"] != COMPACTOR_AGENT:
        report.require(entry["agent"] != PARENT, "compactor_agent_parent", **said)
        raise report.failure("compactor_agent", agent=shown(entry["agent"]), **said)
    mine = {key: value for key, value in entry.items() if key != "cost"}
    wanted = {key: value for key, value in expected.items() if key != "cost"}
    difference = first_difference(mine, wanted, "entry")
    report.require(difference is None, "entry_differs", difference=str(difference), **said)
    report.require(close(entry["cost"], expected["cost"]), "entry_cost", cost=shown(entry["cost"]),
                   wanted=f"{expected['cost']!r}", **said)


def _compactor_line(written: str, traced: list[str], printed: str, response: dict, split: int,
                    report: Report) -> None:
    """What compact wrote: its [compactor:trace] line, then the [compact] line, and nothing else."""
    line = trace_line(entry_of(response, COMPACTOR), COMPACTOR)
    folded_line = COMPACT_LINE.format(split=split)
    if written == line + folded_line:
        return
    said = dict(written=written, expected=line + folded_line)
    if line not in written:
        bare = trace_line(entry_of(response, COMPACTOR), "")
        report.require(bare not in written, "compactor_line_untagged", line=bare.strip(), expected=line.strip())
        report.require(line.strip() not in printed, "compactor_line_printed", line=line.strip())
        report.require(bool(traced), "compactor_line_missing", line=line.strip(), **said)
        raise report.failure("compactor_line_differs", line=traced[0].strip(), expected=line.strip())
    report.require(written.index(line) < written.index(folded_line), "compactor_line_after_compact", **said)
    raise report.failure("compactor_lines", **said)


# --- 11.2 run -----------------------------------------------------------------------------------------------------

# A session of three lines: the first delegated to the researcher (one search) and answered at length, the second
# computed, the third answered in a sentence. Exchange 1 alone is over the small budget (a fold once line 2 has joined
# the history folds too early); exchanges 1 and 2 together are over CONTEXT_LIMIT (a run blind to context_limit folds
# under the large budget); after the fold, the history is still over the small budget (a run compacting after each
# answer folds again after the last one). tests/test_checks_notebook11.py holds these sizes in both languages.
FOUNDER_LINE = said("Who founded Halden Robotics, and when?", fr="Qui a fondé Halden Robotics, et quand ?")
ALLOWANCE_LINE = said("What is 25 * 180?", fr="Combien font 25 * 180 ?")
CAT_LINE = said("Thanks! And what is the office cat called?", fr="Merci ! Et comment s'appelle le chat du bureau ?")
SESSION_LINES = (FOUNDER_LINE, ALLOWANCE_LINE, CAT_LINE)
FOUNDER_QUESTION = "Which person founded Halden Robotics, and in which year?"  # the parent asks in English
FOUNDER_TOLD = text(
    "Halden Robotics was founded in 2019 by Dara Okonkwo, a former bridge engineer who wanted machines that could "
    "find their way through a building as surely as a load finds its way through a bridge. Its first product, "
    "Pathfinder, is a warehouse robot that maps shelves at night, so that the morning shift starts with an "
    "inventory that is already up to date. In 2023 the headquarters moved from Ghent to Utrecht, next to the "
    "central station; the company still demos one unfinished idea every Friday afternoon, and its office cat, "
    "Tinker, has a badge of her own.",
    fr="Halden Robotics a été fondée en 2019 par Dara Okonkwo, ancienne ingénieure des ponts qui voulait des "
       "machines capables de trouver leur chemin dans un bâtiment aussi sûrement qu'une charge trouve le sien dans "
       "un pont. Son premier produit, Pathfinder, est un robot d'entrepôt qui cartographie les rayonnages la nuit, "
       "pour que l'équipe du matin commence avec un inventaire déjà à jour. En 2023, le siège a quitté Gand pour "
       "Utrecht, à côté de la gare centrale ; l'entreprise présente toujours une idée inachevée chaque vendredi "
       "après-midi, et son chat de bureau, Tinker, a son propre badge.")
ALLOWANCE_TOLD = text(
    "25 * 180 = 4500: the whole allowance is worth $4,500 a year. Step by step: 25 days at $100 a day make $2,500, "
    "and 25 days at $80 a day make $2,000; together, $4,500. Spread over twelve months, that is $375 a month; over "
    "the five weeks the 25 days cover, $900 a week. Checked the other way round: 4,500 / 25 = 180, the worth of one "
    "day.",
    fr="25 * 180 = 4500 : l'ensemble des congés vaut 4 500 $ par an. Pas à pas : 25 jours à 100 $ par jour font "
       "2 500 $, et 25 jours à 80 $ par jour font 2 000 $ ; au total, 4 500 $. Réparti sur douze mois, cela fait "
       "375 $ par mois ; sur les cinq semaines que couvrent les 25 jours, 900 $ par semaine. Vérifié dans l'autre "
       "sens : 4 500 / 25 = 180, la valeur d'une journée.")
CAT_TOLD = text("She is called Tinker: she sleeps on the server rack.",
                fr="Elle s'appelle Tinker : elle dort sur la baie des serveurs.")
TURNS = (  # the parent's replies, turn by turn: the last of each answers in words
    (reply(text("I'll ask the researcher.", fr="Je demande au chercheur."),
           tool_use("research", {"question": FOUNDER_QUESTION})), reply(FOUNDER_TOLD)),
    (reply(calc("25 * 180")), reply(ALLOWANCE_TOLD)),
    (reply(CAT_TOLD),),
)
RESEARCHER_REPLIES = (reply(searched("founded")), reply(FOUNDED))  # then NOTHING_MORE
SESSION_SUMMARY = reply(text("The user asked who founded Halden Robotics: Dara Okonkwo, in 2019.",
                             fr="L'utilisateur a demandé qui a fondé Halden Robotics : Dara Okonkwo, en 2019."))
SMALL_BUDGET = 600
LARGE_BUDGET = 100_000
FOLD_AFTER = 2  # the turns answered when the history is folded: then it holds two exchanges, over the small budget
FOLDED = 4  # the messages of turn 1: its line, the call to research, the research's result, the answer
MAX_CALLS = 20  # model calls a session answers at most, every agent's together
PARENT_TOOLS = ["calculator", "research"]
PROMPT = "User> "
AGENT_LINE = "Agent> {reply}\n"
TOTAL_MARK = "[trace] session total:"
TOTAL_LINE = "[trace] session total: {count} model calls, ${cost:.6f}\n"
TOTAL = re.compile(r"\[trace\] session total:[^\n]*\n?")  # the total line as written, whatever its numbers
TOTAL_COUNT = re.compile(r"\[trace\] session total: (\d+) ")
NO_APPEND = "object has no attribute 'append'"  # what compact says when context_limit went where its trace goes
UNTRACED = {PARENT: "parent_untraced", SUBAGENT: "researcher_untraced", COMPACTOR_AGENT: "compactor_untraced"}


@dataclass(frozen=True)
class Session(Scenario):
    """A session of run: the lines it reads (`given`), what run is handed besides (`options`: a budget, a system
    prompt, echo_input), the parent's replies turn by turn (`turns_of`), whether it must fold once, between turns
    FOLD_AFTER and FOLD_AFTER + 1 (`folds`), and the row for a call of the parent's model past its last answer."""

    turns_of: tuple = TURNS
    folds: bool = False
    again: str = "called_after_last_answer"


RUN_SCENARIOS = [
    Session("session_folds", given=lines(*SESSION_LINES), options={"context_limit": SMALL_BUDGET, "echo_input": True},
            folds=True),
    Session("session_large_budget", given=lines(*SESSION_LINES, "", NEVER_READ),
            options={"system": PARENT_SYSTEM, "context_limit": LARGE_BUDGET}, again="went_on_after_empty_line"),
    Session("session_nothing_typed", given="", turns_of=(), again="called_when_nothing_typed"),
]


@dataclass
class Call:
    """One request of a session as the model got it: the agent that made it, the turn a parent's call answers
    (None for the others), the turns answered by then, and the reply it got."""

    agent: str
    turn: int | None
    answered: int
    request: dict
    response: dict


class SessionModel:
    """The model of a session, answering its three agents from one client: a request with no tools (a summary's)
    gets the summary; one with the researcher's prompt the researcher's next reply (then NOTHING_MORE); any other
    the parent's next reply, turn by turn, and past the last one, a refusal. So a run that folds at the wrong time
    still plays to the end, and the check sees when each call came."""

    def __init__(self, turns: tuple):
        self.script = [(number, answer, answer is replies[-1])
                       for number, replies in enumerate(turns, start=1) for answer in replies]
        self.researcher = list(RESEARCHER_REPLIES)
        self.calls: list[Call] = []
        self.went_on = False

    def of(self, agent: str) -> list[Call]:
        return [call for call in self.calls if call.agent == agent]

    def answered(self) -> int:
        """The turns whose last reply was sent."""
        return sum(last for _, _, last in self.script[:len(self.of(PARENT))])

    def answer(self, request: dict) -> dict:
        sent, turn = len(self.of(PARENT)), None
        if "tools" not in request:
            agent, answer = COMPACTOR_AGENT, SESSION_SUMMARY
        elif isinstance(request.get("system"), str) and request["system"] in RESEARCHER_PROMPTS:
            agent, answer = SUBAGENT, self.researcher.pop(0) if self.researcher else NOTHING_MORE
        elif sent == len(self.script):
            self.went_on = True
            raise TooManyCalls(scripted.WORDS("too_many_calls", calls=len(self.calls) + 1, expected=len(self.calls)))
        else:
            agent, (turn, answer, _) = PARENT, self.script[sent]
        response = answer(request)
        self.calls.append(Call(agent, turn, self.answered(), request, response))
        return response


def check_run(run, report: Report) -> None:
    report.require_function(run, "run")
    for session in RUN_SCENARIOS:
        _session_played(run, session, report)
    report.situation = None
    report.note("run_ok", count=len(RUN_SCENARIOS))


def _session_played(run, session: Session, report: Report) -> None:
    """One session of run, its model answering every agent; then what each request held, when the history was
    folded, and what was written."""
    handed = session.options
    limit = handed.get("context_limit", CONTEXT_LIMIT)
    report.enter(session.key, limit=limit, count=len(session.turns_of))
    model = SessionModel(session.turns_of)
    client, _ = scripted_client(itertools.repeat(model.answer), call_limit=MAX_CALLS)
    output, printed = io.StringIO(), io.StringIO()
    try:
        with print_kept(run, printed):
            run(io.StringIO(session.given), output, client, **handed)
    except TooManyCalls:
        if not model.went_on:
            raise
        raise report.failure(session.again, calls=len(model.calls)) from None
    except AttributeError as error:
        if NO_APPEND not in str(error):
            raise
        raise report.failure("context_limit_as_trace", error=f"{type(error).__name__}: {error}") from None
    written = output.getvalue()
    if not session.turns_of:
        report.require(TOTAL_MARK not in written, "total_when_nothing_typed", output=written)
        report.require(written == PROMPT, "nothing_typed_output", output=written, expected=PROMPT)
        return
    _parent_requests(model, handed.get("system"), report)
    _agent_lines(written, session.turns_of, report)
    _echoed(written, session, handed.get("echo_input", False), report)
    if session.folds:
        folded_between_turns(model.of(PARENT), model.of(COMPACTOR_AGENT), limit, report, SESSION_LINES,
                             SESSION_SUMMARY)
        expected = COMPACT_LINE.format(split=FOLDED)
        report.require(expected in written, "compact_line_not_written", expected=expected.strip(), output=written)
    else:
        summaries = model.of(COMPACTOR_AGENT)
        report.require(not summaries, "run_folded_within_budget", limit=limit,
                       answered=summaries[0].answered if summaries else 0)
    _traced(written, printed.getvalue(), model, report)
    _total(written, printed.getvalue(), model, report)


def _parent_requests(model: SessionModel, system: str | None, report: Report) -> None:
    """Every parent request: the system prompt run was handed (SYSTEM_PROMPT by default), the calculator and
    research as its tools (build_registry's registry)."""
    for number, call in enumerate(model.of(PARENT), start=1):
        sent = call.request.get("system", ABSENT)
        if system is None:
            report.require(isinstance(sent, str) and sent in SYSTEM_PROMPTS, "parent_default_system", number=number,
                           system=shown(sent))
        else:
            difference = first_difference(sent, system, "system")
            report.require(difference is None, "parent_system", number=number, difference=str(difference))
        names = sorted(str(tool.get("name")) for tool in call.request.get("tools", []) if isinstance(tool, dict))
        report.require(names == PARENT_TOOLS, "parent_tools", number=number, names=names)


def _agent_lines(written: str, turns: tuple, report: Report) -> None:
    """An `Agent> ` line for each turn's answer, in order."""
    at = 0
    for number, replies in enumerate(turns, start=1):
        line = AGENT_LINE.format(reply=final_words(replies))
        found = written.find(line, at)
        report.require(found >= 0, "agent_line_missing", turn=number, line=line.strip(), output=written)
        at = found + len(line)


def _echoed(written: str, session: Session, echo: bool, report: Report) -> None:
    """With echo_input, each line read written back once, right after its `User> `; without, never."""
    for number, typed in enumerate(SESSION_LINES[:len(session.turns_of)], start=1):
        words = typed.now()
        if not echo:
            report.require(words not in written, "echo_without_echo_input", line=words, output=written)
            continue
        said = dict(turn=number, line=words, output=written)
        if PROMPT + words + NEWLINE in written:
            report.require(written.count(words) == 1, "echo_doubled", **said)
            continue
        report.require(words + NEWLINE not in written, "echo_not_after_prompt", **said)
        raise report.failure("echo_missing", **said)


def expected_lines(model: SessionModel) -> list[tuple[str, str]]:
    """(agent, its trace line) for every model call of the session, in order: what the course's agent_turn and
    compact write when they are handed the session's trace."""
    return [(call.agent, trace_line(entry_of(call.response, PREFIXES[call.agent]), PREFIXES[call.agent]))
            for call in model.calls]


def _traced(written: str, printed: str, model: SessionModel, report: Report) -> None:
    """Every call's trace line on output_stream: the parent's, the researcher's and the compactor's. The course's
    code writes each one when it is handed the trace, so a line missing names the piece that was not."""
    for agent, line in expected_lines(model):
        if line in written:
            continue
        report.require(line.strip() not in printed, "trace_line_printed", line=line.strip())
        raise report.failure(UNTRACED[agent], line=line.strip(), output=written)


def _total(written: str, printed: str, model: SessionModel, report: Report) -> None:
    """One `[trace] session total: <n> model calls, $<cost>` line at the end: every call of the session, every
    agent's, and their cost."""
    entries = [entry_of(call.response, PREFIXES[call.agent]) for call in model.calls]
    expected = TOTAL_LINE.format(count=len(entries), cost=sum(entry["cost"] for entry in entries))
    found = TOTAL.findall(written)
    if not found:
        report.require(TOTAL_MARK not in printed, "total_printed", expected=expected.strip())
        raise report.failure("total_missing", expected=expected.strip(), output=written)
    report.require(len(found) == 1, "total_repeated", count=len(found), expected=expected.strip())
    if found[0] == expected:
        return
    counted = TOTAL_COUNT.match(found[0])
    said = dict(line=found[0], expected=expected)  # whole, its newline too: a total without one is not the line
    if counted and int(counted.group(1)) != len(entries):
        report.require(int(counted.group(1)) not in last_turn_counts(model), "total_of_last_turn", **said)
        raise report.failure("total_count", parent=len(model.of(PARENT)), researcher=len(model.of(SUBAGENT)),
                             compactor=len(model.of(COMPACTOR_AGENT)), **said)
    raise report.failure("total_line", **said)


def last_turn_counts(model: SessionModel) -> set[int]:
    """What a trace made anew at each line holds at the end: the calls of the last turn, with the summary call made
    before it or without (a trace made after compact ran)."""
    last = max(call.turn for call in model.of(PARENT))
    in_last = [call for call in model.calls if call.answered == last - 1]
    return {len(in_last), len([call for call in in_last if call.agent != COMPACTOR_AGENT])}


CHECKERS = {"11.1": check_compact, "11.2": check_run}
