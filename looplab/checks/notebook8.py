"""Checks for notebook 8, context compaction: render_message, exchange_starts, compact, and run compacting between
turns.

Every call into the learner's code gets a history of the check's own, made fresh for that call: typed lines as str,
a reply's blocks as the SDK's objects (as the loop appends them) or as dicts (a history in wire form), tool results
as dicts. What each function must return is the course's reckoning on the same history (looplab/compaction.py: its
render_message, history_size and exchange_starts); the splits of the scenario tables are written out, and the
soundness tests hold them to the course's. The two texts the series' tests read are required exactly, in English in
every language: the `[compact] folded N messages into a summary` line, and the `[Conversation summary: ...]` message.
While 8.3 and 8.4 are checked, the notebook's render_message, exchange_starts and compact are the course's (earlier
pieces): a bug in 8.1 never fails 8.3.
"""

from __future__ import annotations

import contextlib
import copy
import io
import itertools
from dataclasses import dataclass
from typing import Any, Callable

from anthropic.types import Message

from .. import language, scripted
from ..catalogue import catalogue
from ..compaction import CONTEXT_LIMIT, WORDS as COMPACTION_WORDS, exchange_starts as course_exchange_starts
from ..compaction import history_size, render_message as course_render_message
from ..history import to_wire
from ..model_id import MODEL
from ..recordings import canonical_blocks
from ..rules import check_request
from ..scripted import Said, TooManyCalls, calculator as calc, reply, said, scripted_client, spoken, stable_id, text
from ..scripted import thinking, tool_use
from .core import Report, Scenario, play
from .difference import ABSENT, first_difference, shown

TEXTS, HINTS = catalogue(__file__)  # texts/notebook8.toml

# The texts the series' tests read as they are (stages 010 and 013): English, whatever the course's language.
COMPACT_LINE = "[compact] folded {split} messages into a summary\n"
COMPACT_MARK = "[compact]"
SUMMARY_MESSAGE = "[Conversation summary: {summary}]"
AGENT = "Agent>"  # the start of the line run writes for each answer
NEWLINE = "\n"
MAX_TOKENS = 256  # of the request the check makes the API's rules judge, a fold followed by the next typed line


def in_every_language(key: str) -> set[str]:
    """A text of looplab/compaction.py's catalogue in each of its languages: the notebook's constant is the one of the
    language the package was imported in, which the check's own may not be."""
    return set(COMPACTION_WORDS.rows[key].values())


def as_said(key: str) -> Said:
    """A text of looplab/compaction.py's catalogue as words the scripted side says, in the check's language."""
    row = COMPACTION_WORDS.rows[key]
    return said(row[language.SOURCE], **{name: words for name, words in row.items() if name != language.SOURCE})


ACKNOWLEDGEMENTS = in_every_language("acknowledgement")
SUMMARY_PROMPTS = in_every_language("summary_prompt")


# --- the check's histories -------------------------------------------------------------------------------------


class _Reply(list):
    """The blocks of a model's reply in one of the check's histories: SDK objects when the history is made (as the
    loop appends a reply's content), or dicts when it is made in wire form."""


def typed(words: Said) -> dict:
    """A line the user typed: a str."""
    return {"role": "user", "content": words}


def answered(*blocks: dict) -> dict:
    """A reply of the model, as the loop appends it."""
    return {"role": "assistant", "content": _Reply(blocks)}


def results(*blocks: dict) -> dict:
    """The tool results the program sends back: dicts, whatever the form of the history."""
    return {"role": "user", "content": list(blocks)}


def typed_blocks(*words: Said) -> dict:
    """A typed line as some clients send it: a list of text blocks (dicts: the program writes them)."""
    return {"role": "user", "content": [{"type": "text", "text": each} for each in words]}


def result(tool_id: str, content: Any) -> dict:
    """One tool result, as the program writes it."""
    return {"type": "tool_result", "tool_use_id": tool_id, "content": content}


def made(history: list, wire: bool = False) -> list:
    """A history of the check's, fresh, in the check's language: each reply's blocks the SDK's objects, or dicts."""
    fresh = []
    for message in spoken(copy.deepcopy(history)):
        if isinstance(message["content"], _Reply):
            blocks = list(message["content"])
            message = {**message, "content": blocks if wire else sdk_blocks(blocks)}
        fresh.append(message)
    return fresh


def sdk_blocks(blocks: list) -> list:
    """Blocks as a reply's content holds them: the SDK's objects, validated as the API's own."""
    return Message.model_validate(scripted.message({"model": MODEL}, list(blocks), "end_turn")).content


def call_id(name: str) -> str:
    """A tool call's id shaped like the API's, the same at every run."""
    return stable_id("toolu_", "notebook8", name)


PARIS, TOKYO, PRODUCT, LONDON = call_id("paris"), call_id("tokyo"), call_id("product"), call_id("london")
ACKNOWLEDGED = {"role": "assistant", "content": as_said("acknowledgement")}
GREETING = typed(said("Hi! Can you help me plan a trip?", fr="Bonjour ! Pouvez-vous m'aider à préparer un voyage ?"))
PARIS_WEATHER = typed(said("What's the weather in Paris?", fr="Quel temps fait-il à Paris ?"))
PARIS_WEATHER_SAID = result(PARIS, "Weather in Paris: 18°C, partly cloudy")
LETS_CHECK = text("Let me check.", fr="Je vérifie.")
# An answer long enough that one exchange holding it is over every small budget of the scenarios, in both languages.
LONG_ANSWER = text(
    " ".join(["It is 18°C and partly cloudy in Paris: a mild spring day. Mornings are cool, so take a light jacket; "
              "the afternoon should stay dry, with some sun between the clouds. It is a good day to walk along the "
              "Seine, visit a museum if the clouds thicken, and sit outside a café in the evening."] * 3),
    fr=" ".join(["Il fait 18 °C à Paris, avec un ciel partiellement nuageux : une douce journée de printemps. Les "
                 "matinées sont fraîches, prenez donc une veste légère ; l'après-midi devrait rester sec, avec un "
                 "peu de soleil entre les nuages. C'est une bonne journée pour marcher le long de la Seine, visiter"
                 " un musée si les nuages s'épaississent, et s'asseoir à la terrasse d'un café le soir."] * 3))

# Two short exchanges in words.
TRIP = [
    GREETING,
    answered(text("Of course. Where would you like to go?", fr="Bien sûr. Où aimeriez-vous aller ?")),
    typed(said("To Lisbon, in May.", fr="À Lisbonne, en mai.")),
    answered(text("Lisbon in May is lovely: warm days and few crowds.",
                  fr="Lisbonne en mai, c'est très agréable : des journées chaudes et peu de monde.")),
]
# One exchange, a tool call in it, longer than every small budget.
ONE_LONG_EXCHANGE = [
    PARIS_WEATHER,
    answered(LETS_CHECK, tool_use("get_weather", {"city": "Paris"}, id=PARIS)),
    results(PARIS_WEATHER_SAID),
    answered(LONG_ANSWER),
]
# Three exchanges, each with a tool call (the last one too, kept whole); a result of text blocks; a thinking block.
# Over CONTEXT_LIMIT in both languages. The last exchange starts at messages[8].
THREE_EXCHANGES = ONE_LONG_EXCHANGE + [
    typed(said("And what is 4823 × 1979?", fr="Et combien font 4823 × 1979 ?")),
    answered(thinking("A big product: use the calculator.", fr="Un grand produit : j'utilise la calculatrice."),
             calc("4823 * 1979", id=PRODUCT)),
    results(result(PRODUCT, [{"type": "text", "text": "9544717"}])),
    answered(text("4823 × 1979 = 9,544,717.", fr="4823 × 1979 = 9 544 717.")),
    typed(said("Is it warmer in Tokyo?", fr="Fait-il plus chaud à Tokyo ?")),
    answered(text("Let me check Tokyo.", fr="Je vérifie pour Tokyo."), tool_use("get_weather", {"city": "Tokyo"},
                                                                               id=TOKYO)),
    results(result(TOKYO, "Weather in Tokyo: 24°C, clear skies")),
    answered(text("Yes: 24°C in Tokyo, six degrees warmer than Paris.",
                  fr="Oui : 24 °C à Tokyo, six degrés de plus qu'à Paris.")),
]
# A history that starts with an earlier fold: the summary is folded again with the exchange after it.
AFTER_A_SUMMARY = [
    typed(said("[Conversation summary: The user is planning a trip to Lisbon in May.]",
               fr="[Conversation summary: L'utilisateur prépare un voyage à Lisbonne en mai.]")),
    ACKNOWLEDGED,
    typed(said("Which neighbourhood should I stay in?", fr="Dans quel quartier devrais-je loger ?")),
    answered(text("Alfama or Baixa: both are central, close to the river and full of small restaurants; Baixa is "
                  "flatter, Alfama has the views.",
                  fr="L'Alfama ou la Baixa : les deux sont centraux, près du fleuve et pleins de petits "
                     "restaurants ; la Baixa est plus plate, l'Alfama a les points de vue.")),
    typed(said("And from the airport?", fr="Et depuis l'aéroport ?")),
    answered(text("Take the metro's red line: about twenty minutes.",
                  fr="Prenez la ligne rouge du métro : une vingtaine de minutes.")),
]


@dataclass(frozen=True)
class History(Scenario):
    """A scenario whose `given` is a history of the check's: made with the SDK's objects, or all dicts (`wire`)."""

    wire: bool = False


# --- 8.1 render_message ----------------------------------------------------------------------------------------

# given: the one message render_message is handed (made as in a history); its text is the course's reckoning.
RENDER_SCENARIOS = [
    History("render_typed_line", given=[PARIS_WEATHER]),
    History("render_assistant_words", given=[ACKNOWLEDGED]),
    History("render_reply_text", given=[answered(text("Of course. Where would you like to go?",
                                                      fr="Bien sûr. Où aimeriez-vous aller ?"))]),
    History("render_reply_call", given=[answered(LETS_CHECK, tool_use("get_weather", {"city": "Paris"}, id=PARIS))]),
    History("render_wire_call", wire=True, given=[answered(text("Let me multiply.", fr="Je multiplie."),
                                                           calc("4823 * 1979", id=PRODUCT))]),
    History("render_tool_results", given=[results(PARIS_WEATHER_SAID, result(PRODUCT, "9544717"))]),
    History("render_result_blocks", given=[results(result(PRODUCT, [{"type": "text", "text": "9544717"},
                                                                     {"type": "text", "text": "(exact)"}]))]),
    History("render_thinking", given=[answered(
        thinking("Two cities: I need the weather of each.", fr="Deux villes : il me faut la météo de chacune."),
        text("Let me check London.", fr="Je vérifie pour Londres."),
        tool_use("get_weather", {"city": "London"}, id=LONDON))]),
    History("render_typed_as_blocks", given=[typed_blocks(said("Plan my trip.", fr="Préparez mon voyage."),
                                                          said("Three days in Tokyo.", fr="Trois jours à Tokyo."))]),
]
THINKING = "thinking"  # the block type that gives no line
# How Python says a block was read the way that does not fit it: [] on an object, an attribute of a dict.
NOT_SUBSCRIPTABLE, DICT_ATTRIBUTE = "not subscriptable", "'dict' object has no attribute"
ROLES = ("user", "assistant")


def contents(value: Any) -> str:
    """A container the learner's code returned, as the learner reads it (after its type), in parentheses; nothing for
    another object, whose repr may hold an address that differs at every run."""
    return f" ({shown(value)})" if isinstance(value, (list, tuple, dict)) else ""


def reading_blocks(call: Callable[[], Any], report: Report) -> Any:
    """The learner's function called on a history; a block read the one way that does not fit it, in words: `[]` on
    the SDK's objects (a reply's content), attributes on dicts (what the program writes)."""
    try:
        return call()
    except TypeError as error:
        if NOT_SUBSCRIPTABLE not in str(error):
            raise
        raise report.failure("read_with_brackets", error=f"{type(error).__name__}: {error}") from None
    except AttributeError as error:
        if DICT_ATTRIBUTE not in str(error):
            raise
        raise report.failure("read_as_attributes", error=f"{type(error).__name__}: {error}") from None


def check_render_message(render_message, report: Report) -> None:
    report.require_function(render_message, "render_message")
    for scenario in RENDER_SCENARIOS:
        [message] = made(scenario.given, scenario.wire)
        report.enter(scenario.key, message=shown(message))
        expected = course_render_message(message)
        rendered = reading_blocks(lambda: render_message(made(scenario.given, scenario.wire)[0]), report)
        report.require(isinstance(rendered, str), "render_not_text", kind=type(rendered).__name__,
                       value=contents(rendered))
        if rendered != expected:
            _rendered_wrong(rendered, expected, message, report)
    report.situation = None
    report.note("render_ok", count=len(RENDER_SCENARIOS))


def _rendered_wrong(rendered: str, expected: str, message: dict, report: Report) -> None:
    """Where the learner's text parts from the course's: the lines joined otherwise, a line left out or one too
    many (a thinking block's), a role not the message's, or the first line that differs."""
    mine, theirs = rendered.split(NEWLINE), expected.split(NEWLINE)
    if len(theirs) > 1 and rendered == " ".join(theirs):
        raise report.failure("lines_joined", rendered=rendered, expected=expected)
    content = to_wire(message["content"])
    thinks = isinstance(content, list) and THINKING in [block.get("type") for block in content]
    if thinks and len(mine) > len(theirs):
        raise report.failure("thinking_rendered", rendered=rendered, expected=expected)
    if len(mine) < len(theirs) and theirs[:len(mine)] == mine:
        raise report.failure("lines_left_out", count=len(mine), expected_count=len(theirs), rendered=rendered,
                             expected=expected)
    number, line, wanted = next((number, line, wanted) for number, (line, wanted)
                                in enumerate(itertools.zip_longest(mine, theirs, fillvalue=""), start=1)
                                if line != wanted)
    role = message["role"]
    other = next(each for each in ROLES if each != role)
    if wanted.startswith(role) and line.startswith(other):
        raise report.failure("wrong_role", number=number, line=line, expected=wanted, role=role)
    raise report.failure("line_differs", number=number, line=line, expected=wanted)


# --- 8.2 exchange_starts ---------------------------------------------------------------------------------------

ASKS_LONDON_TOO = {"type": "text", "text": said("And London too, please.", fr="Et Londres aussi, s'il vous plaît.")}

STARTS_SCENARIOS = [  # given: the history; expected: the indexes of the typed lines
    History("starts_plain", given=TRIP, expected=[0, 2]),
    History("starts_tool_exchange", given=ONE_LONG_EXCHANGE + TRIP[2:], expected=[0, 4]),
    History("starts_typed_as_blocks", given=[TRIP[0], TRIP[1], typed_blocks(said(
        "To Lisbon, in May.", fr="À Lisbonne, en mai.")), TRIP[3]], expected=[0, 2]),
    History("starts_results_with_text", given=[PARIS_WEATHER, ONE_LONG_EXCHANGE[1],
                                               results(PARIS_WEATHER_SAID, ASKS_LONDON_TOO), ONE_LONG_EXCHANGE[3]],
            expected=[0]),
    History("starts_after_summary", given=AFTER_A_SUMMARY, expected=[0, 2, 4]),
    History("starts_wire_form", given=THREE_EXCHANGES, expected=[0, 4, 8], wire=True),
    History("starts_empty", given=[], expected=[]),
]


def holds_results(message: dict) -> bool:
    """Is this message tool results (the middle of an exchange), whatever else it holds?"""
    content = to_wire(message["content"])
    return isinstance(content, list) and any(block.get("type") == "tool_result" for block in content)


def check_exchange_starts(exchange_starts, report: Report) -> None:
    report.require_function(exchange_starts, "exchange_starts")
    for scenario in STARTS_SCENARIOS:
        history = made(scenario.given, scenario.wire)
        report.enter(scenario.key, count=len(history))
        starts = reading_blocks(lambda: exchange_starts(made(scenario.given, scenario.wire)), report)
        expected = scenario.expected
        report.require(isinstance(starts, list) and all(type(index) is int for index in starts), "starts_not_list",
                       kind=type(starts).__name__, value=contents(starts))
        if starts != expected:
            _starts_wrong(starts, expected, history, report)
    report.situation = None
    report.note("starts_ok", count=len(STARTS_SCENARIOS))


def _starts_wrong(starts: list[int], expected: list[int], history: list, report: Report) -> None:
    """Why the learner's indexes are not the typed lines': one further each, an assistant message or a tool result
    counted, a typed line sent as blocks missed; else the two lists."""
    if expected and starts == [index + 1 for index in expected]:
        raise report.failure("starts_off_by_one", starts=starts, expected=expected)
    for index in starts:
        if index in expected or not 0 <= index < len(history):
            continue
        message = history[index]
        if message["role"] != "user":
            raise report.failure("counted_assistant", index=index, message=shown(message), starts=starts,
                                 expected=expected)
        if holds_results(message):
            raise report.failure("counted_results", index=index, message=shown(message), starts=starts,
                                 expected=expected)
    missed = [index for index in expected if index not in starts]
    if missed and isinstance(history[missed[0]]["content"], list):
        raise report.failure("missed_typed_blocks", index=missed[0], message=shown(history[missed[0]]),
                             starts=starts, expected=expected)
    raise report.failure("starts_wrong", starts=starts, expected=expected)


# --- 8.3 compact -----------------------------------------------------------------------------------------------


def exactly(size: int) -> int:
    """A budget the history fits exactly: kept as it is (a history at the budget is not over it)."""
    return size


def one_under(size: int) -> int:
    """A budget one character under the history's size: folded."""
    return size - 1


@dataclass(frozen=True)
class Fold(History):
    """A scenario of compact: the history, its budget (characters, or made from the history's size; None: compact's
    default, CONTEXT_LIMIT), and where the fold cuts (None: nothing to fold, `kept` says why: the row of the failure
    when the model is called)."""

    budget: int | Callable[[int], int] | None = None
    split: int | None = None
    kept: str = "folded_within_budget"

    def limit(self, size: int) -> int | None:
        return self.budget(size) if callable(self.budget) else self.budget


SUMMARY = said("The user asked about the weather in Paris and Tokyo and about 4823 × 1979 (9,544,717).",
               fr="L'utilisateur a demandé la météo à Paris et à Tokyo, et combien font 4823 × 1979 (9 544 717).")
MAX_SUMMARIES = 4  # the model answers this many summary calls: a compact calling it once per exchange is counted
SUMMARIES = [reply(text(SUMMARY, **SUMMARY.translations))] * MAX_SUMMARIES
NEXT_LINE = typed(said("Thanks! One more question.", fr="Merci ! Encore une question."))

COMPACT_SCENARIOS = [
    Fold("under_budget", SUMMARIES, TRIP, budget=5_000),
    Fold("at_budget", SUMMARIES, TRIP, budget=exactly),
    Fold("one_long_exchange", SUMMARIES, ONE_LONG_EXCHANGE, budget=100, kept="folded_one_exchange"),
    Fold("several_exchanges", SUMMARIES, THREE_EXCHANGES, budget=300, split=8),
    Fold("wire_history", SUMMARIES, THREE_EXCHANGES, budget=300, split=8, wire=True),
    Fold("just_over", SUMMARIES, TRIP, budget=one_under, split=2),
    Fold("earlier_summary", SUMMARIES, AFTER_A_SUMMARY, budget=150, split=4),
    Fold("default_budget", SUMMARIES, THREE_EXCHANGES, split=8),
]


@contextlib.contextmanager
def print_kept(function, printed: io.StringIO):
    """What the learner's code prints goes to `printed`, here or (under the grader) in the kernel, which a proxy's
    `redirected` asks to do so: a line printed instead of written to output_stream is seen, and said."""
    remote = getattr(function, "redirected", None)
    if remote is not None:
        with remote(stdout=printed):
            yield
        return
    with contextlib.redirect_stdout(printed):
        yield


def folded(history: list, split: int, summary: str) -> list:
    """What compact must return when it folds: the summary, the acknowledgement, the recent exchange word for word."""
    return [{"role": "user", "content": SUMMARY_MESSAGE.format(summary=summary)}, spoken(ACKNOWLEDGED),
            *history[split:]]


def check_compact(compact, report: Report) -> None:
    report.require_function(compact, "compact")
    for scenario in COMPACT_SCENARIOS:
        _compact_once(compact, scenario, report)
    report.situation = None
    report.note("compact_ok", count=len(COMPACT_SCENARIOS))


def _compact_once(compact, scenario: Fold, report: Report) -> None:
    """One call of compact on a history of its own: whether it folds, the call it makes, what it returns and
    writes, and the history it was handed left as it was."""
    history = made(scenario.given, scenario.wire)
    size = history_size(history)
    limit = scenario.limit(size)
    report.enter(scenario.key, size=size, limit=CONTEXT_LIMIT if limit is None else limit, count=len(history))
    handed = made(scenario.given, scenario.wire)
    options = {} if limit is None else {"context_limit": limit}
    output, printed = io.StringIO(), io.StringIO()
    with print_kept(compact, printed):
        turn = play(lambda client: compact(handed, client, output, **options), scenario)
    if isinstance(turn.error, NotImplementedError):
        turn.reraise()
    values = dict(size=size, limit=CONTEXT_LIMIT if limit is None else limit, calls=turn.calls,
                  exchanges=len(course_exchange_starts(history)))
    if scenario.split is None:
        _kept(turn, history, output.getvalue(), scenario.kept, values, report)
    else:
        _folded(turn, history, scenario.split, output.getvalue(), printed.getvalue(), values, report)
    difference = first_difference(handed, history, "messages")
    report.require(difference is None, "changed_the_history", difference=str(difference))


def _kept(turn, history: list, written: str, key: str, values: dict, report: Report) -> None:
    """Nothing to fold: no model call, the history returned as it is, nothing written."""
    report.require(turn.calls == 0, key, **values)
    turn.reraise()
    report.require(isinstance(turn.answer, list), "result_not_list", kind=type(turn.answer).__name__)
    difference = first_difference(turn.answer, history, "result")
    report.require(difference is None, "kept_changed", difference=str(difference))
    report.require(written == "", "wrote_when_kept", written=written)


def _folded(turn, history: list, split: int, written: str, printed: str, values: dict, report: Report) -> None:
    """A fold: one model call; the summary and the acknowledgement before the recent exchange, a history the API
    accepts with the next typed line; the call reading the old messages; the [compact] line written."""
    if turn.calls == 0:
        turn.reraise()  # it raised before it called the model: that first
    report.require(turn.calls > 0, "not_folded", **values)
    report.require(turn.calls == 1, "summary_calls", **values)
    turn.reraise()
    answer = turn.answer
    report.require(isinstance(answer, list), "result_not_list", kind=type(answer).__name__)
    expected = folded(history, split, SUMMARY.now())
    first = answer[0] if answer else ABSENT
    report.require(to_wire(first) == expected[0], "summary_message", yours=shown(first), expected=shown(expected[0]))
    second = answer[1] if len(answer) > 1 else ABSENT
    acknowledged = isinstance(second, dict) and second.get("role") == "assistant" and isinstance(
        second.get("content"), str) and second["content"] in ACKNOWLEDGEMENTS
    report.require(acknowledged, "no_acknowledgement", yours=shown(second), expected=shown(expected[1]))
    kept = answer[2:]
    if kept and isinstance(kept[0], dict) and kept[0].get("role") == "user" and holds_results(kept[0]):
        raise report.failure("kept_a_result", count=len(kept), split=split, kept=shown(kept[0]))
    violation = check_request({"model": MODEL, "max_tokens": MAX_TOKENS,
                               "messages": to_wire([*answer, spoken(NEXT_LINE)])})
    report.require(violation is None, "fold_refused", message=violation.message if violation else "")
    # The acknowledgement is met above in any language: the notebook's is the one its package was imported in.
    difference = first_difference(answer, [expected[0], second, *expected[2:]], "result")
    report.require(difference is None, "kept_wrong", difference=str(difference), split=split)
    _summary_request(turn.requests[0], history, split, report)
    expected_line = COMPACT_LINE.format(split=split)
    if written != expected_line:
        report.require(bool(written) or COMPACT_MARK not in printed, "compact_line_printed",
                       printed=printed.strip(), expected=expected_line)
        report.require(COMPACT_MARK in written, "compact_line_missing", written=written, expected=expected_line)
        raise report.failure("compact_line", written=written, expected=expected_line)


def _summary_request(request: dict, history: list, split: int, report: Report) -> None:
    """The summary call: the summary prompt as its system, no tools, one user message holding the old messages
    rendered one a line (what the notebook's summarise sends, handed messages[:split])."""
    system = request.get("system")
    report.require(isinstance(system, str) and system in SUMMARY_PROMPTS and "tools" not in request, "summary_request",
                   system=shown(request.get("system", ABSENT)), tools=shown(request.get("tools", ABSENT)))
    read = request.get("messages")
    transcript = NEWLINE.join(course_render_message(message) for message in history[:split])
    if read == [{"role": "user", "content": transcript}]:
        return
    everything = NEWLINE.join(course_render_message(message) for message in history)
    report.require(read != [{"role": "user", "content": everything}], "summarised_everything", split=split)
    raise report.failure("summary_read", read=shown(read), expected=shown([{"role": "user", "content": transcript}]),
                         split=split)


# --- 8.4 run ---------------------------------------------------------------------------------------------------

# A session of three lines: the first answered at length, the second through a tool call, then a short answer.
# Exchange 1 alone is over the small budget (a fold made once line 2 has joined the history folds too early);
# exchanges 1 and 2 together are over CONTEXT_LIMIT too, in both languages (a run blind to context_limit folds them
# under the large budget).
SESSION_LINES = (
    said("Tell me about Paris in a few sentences.", fr="Parlez-moi de Paris en quelques phrases."),
    said("What's the weather there right now?", fr="Quel temps y fait-il en ce moment ?"),
    said("Thanks! Should I take an umbrella?", fr="Merci ! Dois-je prendre un parapluie ?"),
)
NEVER_READ = said("This line comes after the empty line.", fr="Cette ligne vient après la ligne vide.")
PARIS_TOLD = text(
    " ".join(["Paris is the capital of France, on the Seine. It is known for its museums, the Louvre first, for its "
              "cafés and its bridges, and for the Eiffel Tower, built for the 1889 World's Fair. Its centre is small "
              "enough to walk across in an afternoon, and its twenty districts spiral out from the Louvre."] * 2),
    fr=" ".join(["Paris est la capitale de la France, sur la Seine. La ville est connue pour ses musées, le Louvre "
                 "en tête, pour ses cafés et ses ponts, et pour la tour Eiffel, bâtie pour l'Exposition universelle"
                 " de 1889. Son centre est assez petit pour le traverser à pied en un après-midi, et ses vingt "
                 "arrondissements s'enroulent depuis le Louvre."] * 2))
TURNS = (  # each turn's replies: its last one answers in words
    (reply(PARIS_TOLD),),
    (reply(LETS_CHECK, tool_use("get_weather", {"city": "Paris"})), reply(LONG_ANSWER)),
    (reply(text("No umbrella needed: it should stay dry today.",
                fr="Pas besoin de parapluie : il ne devrait pas pleuvoir aujourd'hui.")),),
)
SESSION_SUMMARY = reply(text("The user asked about Paris; the assistant described the city.",
                             fr="L'utilisateur a posé des questions sur Paris ; l'assistant a décrit la ville."))
SMALL_BUDGET = 600
LARGE_BUDGET = 100_000
FOLD_AFTER = 2  # the turns answered when the history is folded: then it holds two exchanges, over the small budget
FOLDED = 2 * len(TURNS[0])  # the messages of turn 1: its line, each reply, a results message between two replies
MAX_CALLS = 12  # model calls a session answers at most: a run that never stops calling meets the end


def lines(*typed_lines: str) -> Said:
    """The lines run reads, each ended by a newline, as one Said: each line in the words of each language (a line
    with no words, the empty line, is the same in all)."""
    def read(spoken_in: str) -> str:
        return "".join((line.translations.get(spoken_in, line) if isinstance(line, Said) else line) + NEWLINE
                       for line in typed_lines)
    return said(read(language.SOURCE), **{other: read(other) for other in language.LANGUAGES[1:]})


@dataclass(frozen=True)
class Session(Scenario):
    """A scenario of run: the lines it reads (`given`), its budget (`options`), and whether it must fold, once,
    between turns FOLD_AFTER and FOLD_AFTER + 1. `again` is the row for a model call past the last answer."""

    folds: bool = True
    again: str = "called_after_last_answer"


RUN_SCENARIOS = [
    Session("folds_between_turns", given=lines(*SESSION_LINES), options={"context_limit": SMALL_BUDGET}),
    Session("large_budget", given=lines(*SESSION_LINES, "", NEVER_READ), options={"context_limit": LARGE_BUDGET},
            folds=False, again="went_on_after_empty_line"),
]


@dataclass
class Asked:
    """One request of a session as the model got it, a turn's (`turn`, its number) or a summary's (None), with the
    number of turns answered by then, and the reply it got."""

    turn: int | None
    answered: int
    request: dict
    response: dict


class SessionModel:
    """The model of a session: a turn's request (it offers tools) gets that turn's next reply; a request with no
    tools, a summary's, gets the summary. So a run that folds at the wrong time still plays to the end, and the
    check sees when it folded."""

    def __init__(self, turns: tuple):
        self.script = [(number, answer, answer is replies[-1])
                       for number, replies in enumerate(turns, start=1) for answer in replies]
        self.asked: list[Asked] = []

    def turn_requests(self) -> list[Asked]:
        return [asked for asked in self.asked if asked.turn is not None]

    def answered(self) -> int:
        """The turns whose last reply was sent."""
        return sum(last for _, _, last in self.script[:len(self.turn_requests())])

    def answer(self, request: dict) -> dict:
        if "tools" not in request:
            response = SESSION_SUMMARY(request)
            self.asked.append(Asked(None, self.answered(), request, response))
            return response
        sent = len(self.turn_requests())
        if sent == len(self.script):
            raise TooManyCalls(scripted.WORDS("too_many_calls", calls=len(self.asked) + 1, expected=len(self.asked)))
        number, answer, _ = self.script[sent]
        response = answer(request)
        self.asked.append(Asked(number, self.answered(), request, response))
        return response


def final_words(replies: tuple) -> str:
    """The text of a turn's last reply, in the check's language: what run writes after `Agent> `."""
    return "".join(block["text"] for block in replies[-1]({"messages": []})["content"] if block["type"] == "text")


def canonical(messages: list) -> list:
    """Messages as the API compares them: a str content as one text block, each block its meaningful fields."""
    return [{"role": message.get("role"), "content": canonical_blocks(message.get("content"))}
            for message in to_wire(messages)]


def check_run(run, report: Report) -> None:
    report.require_function(run, "run")
    for session in RUN_SCENARIOS:
        limit = session.options["context_limit"]
        report.enter(session.key, limit=limit)
        model = SessionModel(TURNS)
        client, _ = scripted_client(itertools.repeat(model.answer), call_limit=MAX_CALLS)
        output = io.StringIO()
        try:
            run(io.StringIO(session.given), output, client, **session.options)
        except TooManyCalls:
            raise report.failure(session.again, calls=len(model.asked)) from None
        written = output.getvalue()
        _agent_lines(written, report)
        summaries = [asked for asked in model.asked if asked.turn is None]
        if not session.folds:
            report.require(not summaries, "run_folded_within_budget", limit=limit,
                           answered=summaries[0].answered if summaries else 0)
            continue
        folded_between_turns(model.turn_requests(), summaries, limit, report)
        expected = COMPACT_LINE.format(split=FOLDED)
        report.require(expected in written, "compact_line_not_written", expected=expected.strip(), output=written)
    report.situation = None
    report.note("run_ok", count=len(RUN_SCENARIOS))


def _agent_lines(output: str, report: Report) -> None:
    """An `Agent> ` line for each turn's answer, in order."""
    at = 0
    for number, replies in enumerate(TURNS, start=1):
        line = f"{AGENT} {final_words(replies)}{NEWLINE}"
        found = output.find(line, at)
        report.require(found >= 0, "agent_line_missing", turn=number, line=line.strip(), output=output)
        at = found + len(line)


def folded_between_turns(requests: list, summaries: list, limit: int, report: Report,
                         session: tuple = SESSION_LINES, summarised: Callable = SESSION_SUMMARY) -> None:
    """One summary call, between turns FOLD_AFTER and FOLD_AFTER + 1; the next turn's request made of the summary,
    the acknowledgement, the folded turn's exchange word for word, and the new line.

    `requests`: the agent's turn requests, `summaries` the summary calls, each with its turn, the turns answered by
    then, its request and its response (Asked); `session` and `summarised`: the session's lines and summary reply
    (notebook 11's run plays a session of its own through the same rule)."""
    early = [asked for asked in summaries if asked.answered < FOLD_AFTER]
    report.require(not early, "folded_too_early", answered=early[0].answered if early else 0, limit=limit,
                   expected=FOLD_AFTER)
    late = [asked for asked in summaries if asked.answered > FOLD_AFTER]
    report.require(not late, "folded_after_last_answer", answered=late[0].answered if late else 0)
    report.require(bool(summaries), "never_folded", limit=limit, expected=FOLD_AFTER)
    report.require(len(summaries) == 1, "summaries_between_turns", count=len(summaries), expected=FOLD_AFTER)
    kept_turn = [asked for asked in requests if asked.turn == FOLD_AFTER]
    next_turn = FOLD_AFTER + 1
    sent = canonical(next(asked for asked in requests if asked.turn == next_turn).request["messages"])
    summary = SUMMARY_MESSAGE.format(summary=final_words((summarised,)))
    [expected_start] = canonical([{"role": "user", "content": summary}])
    report.require(sent[0] == expected_start, "turn_after_fold_start", turn=next_turn, first=shown(sent[0]),
                   expected=shown(expected_start))
    start = len(kept_turn[0].request["messages"]) - 1  # where the kept turn's line sits in its requests
    exchange = canonical(kept_turn[-1].request["messages"][start:]
                         + [{"role": "assistant", "content": kept_turn[-1].response["content"]}])
    difference = first_difference(sent[:-1], sent[:2] + exchange, "messages")
    report.require(difference is None, "turn_not_kept", turn=FOLD_AFTER, difference=str(difference))
    [line] = canonical([{"role": "user", "content": session[FOLD_AFTER].now()}])
    report.require(sent[-1] == line, "turn_after_fold_end", turn=next_turn, last=shown(sent[-1]), expected=shown(line))


CHECKERS = {"8.1": check_render_message, "8.2": check_exchange_starts, "8.3": check_compact, "8.4": check_run}
