"""Checks for notebook 9, a subagent as a tool: run_tool over the registry it is handed, agent_turn for any agent,
research (the subagent) and run (the parent with its subagent).

Every call into the learner's code gets inputs of the check's own, made fresh for that call: registries whose names
are the check's (their functions are tools of the course's package, never the checks', so that a grader's kernel can
hold them too), histories, questions, system prompts and scripted models. What each function must do is the course's
reckoning on the same inputs: looplab/subagent.py's run_tool gives each call's text and flag. While 9.2, 9.3 and 9.4
are checked, the notebook's earlier pieces are the course's (run_tool, then agent_turn, then research): a bug in 9.1
never fails 9.4. The texts the series' tests read stay in English in every language: `Error: unknown tool`, the
`[tool]`, `[tool-error]` and `[subagent:tool]` lines, `User> ` and `Agent> `.
"""

from __future__ import annotations

import copy
import io
import itertools
from dataclasses import dataclass
from typing import Any, Callable

from .. import scripted
from ..catalogue import catalogue, fill
from ..client import traffic
from ..knowledge import search
from ..robust import calculator, count_words, explode, last_log_line, read_setting, shout
from ..scripted import TooManyCalls, calculator as calc, reply, said, scripted_client, text, tool_use
from ..subagent import RESEARCH_SCHEMA, SUBAGENT_TAG, WORDS as SUBAGENT_WORDS, run_tool as course_run_tool
from ..toolbox import count_letters, get_price, get_weather
from . import turns
from .core import Report, Scenario, learner_frame, play
from .difference import ABSENT, first_difference, shown
from .notebook6 import UNKNOWN_START
from .notebook6 import ARGUMENTS, NOT_AN_OBJECT, OK, RAISED, UNKNOWN, failed_as_it_should
from .notebook6 import _by_position, _pair
from .notebook8 import lines, print_kept

OWN_TEXTS, HINTS = catalogue(__file__)  # texts/notebook9.toml
# 9.2 is played by the agent_turn harness (turns.py): its rows, in this notebook's words where it has its own.
TEXTS = {**turns.TEXTS, **OWN_TEXTS}
# The rows notebook 6's `_pair` words its failures with: this catalogue has them, said of the registry handed in.
PAIR_ROWS = ("not_a_pair", "result_not_text", "pair_types")

# The lines agent_turn writes, as the series' tests read them: English in every language.
TOOL_LINE = "[{tag}] {name}({input}) -> {text}\n"
TOOL_TAG, ERROR_TAG = "tool", "tool-error"
AGENT = "Agent>"
NEWLINE = "\n"


def in_every_language(key: str) -> set[str]:
    """A text of looplab/subagent.py's catalogue in each of its languages: the notebook's constant is the one of the
    language its package was imported in, which the check's own may not be."""
    return set(SUBAGENT_WORDS.rows[key].values())


SYSTEM_PROMPTS = in_every_language("system_prompt")
RESEARCHER_PROMPTS = in_every_language("researcher_prompt")


def research_definitions() -> list[dict]:
    """The research tool as the parent offers it, {"name": "research", **RESEARCH_SCHEMA}, in each language."""
    made = []
    for language, description in SUBAGENT_WORDS.rows["research_description"].items():
        schema = copy.deepcopy(RESEARCH_SCHEMA)
        schema["description"] = description
        schema["input_schema"]["properties"]["question"]["description"] = SUBAGENT_WORDS.rows["research_question"][
            language]
        made.append({"name": "research", **schema})
    return made


# --- the check's registries: its own names, the course's tools --------------------------------------------------


def entry(function: Callable, description: str, *parameters: str) -> dict:
    """A registry entry in notebook 5's shape: the function, and a schema whose parameters are required strings."""
    properties = {parameter: {"type": "string"} for parameter in parameters}
    return {"function": function, "schema": {"description": description, "input_schema": {
        "type": "object", "properties": properties, "required": list(parameters)}}}


ARITHMETIC = entry(calculator, "Arithmetic with + - * / and parentheses.", "expression")
WEATHER = entry(get_weather, "The weather in a city.", "city")
LETTERS = entry(count_letters, "Counts a letter in a text.", "text", "letter")
# Each registry as a table, handed over as a fresh copy at each call (its functions are the same ones).
DESK = {"calculator": ARITHMETIC,
        "count_words": entry(count_words, "Counts the words of a text.", "text"),
        "status": entry(last_log_line, "The last line of the server's log.")}
ARCHIVE = {"weather": WEATHER, "count_letters": LETTERS,
           "setting": entry(read_setting, "Reads one setting by its name.", "name"),
           "shout": entry(shout, "Shouts a text.", "text"),
           "status": entry(explode, "The status of the archive.")}
SHOP = {"calculator": ARITHMETIC, "price": entry(get_price, "The price of an item on the menu.", "item")}
LIBRARY = {"search": entry(search, "Finds the passages of the knowledge base that hold the query's words.", "query")}
FORECAST = {"weather": WEATHER, "count_letters": LETTERS}


def desk() -> dict:
    """A parent's toolbox, made anew for each call: arithmetic, counting, and the status of a server."""
    return copy.deepcopy(DESK)


def archive() -> dict:
    """Another agent's toolbox: other tools, and a `status` of its own that fails (the same name, another tool)."""
    return copy.deepcopy(ARCHIVE)


def nothing() -> dict:
    """A registry with no tool at all."""
    return {}


def shop() -> dict:
    return copy.deepcopy(SHOP)


def library() -> dict:
    """A researcher's toolbox with a schema of the check's own: not RESEARCHER_REGISTRY, though its tool is search."""
    return copy.deepcopy(LIBRARY)


def forecast() -> dict:
    return copy.deepcopy(FORECAST)


REGISTRIES = (desk, archive, shop, library, forecast)


def registry_shown(registry: dict) -> str:
    """A registry in a failure's words: its names, each entry elided ({'calculator': {...}, ...})."""
    return "{" + ", ".join(f"{name!r}: {{...}}" for name in registry) + "}"


# --- 9.1 run_tool -------------------------------------------------------------------------------------------------

# the kinds of call, notebook 6's (OK, UNKNOWN, ARGUMENTS, NOT_AN_OBJECT, RAISED): its verdict on a failure is reused
CALL_SHOWN = "run_tool({registry}, {name!r}, {tool_input!r})"


@dataclass(frozen=True)
class Call:
    """One call of run_tool: its row, the registry it is handed (made anew), the name and input, the kind of answer."""

    key: str
    registry: Callable[[], dict]
    name: Any
    tool_input: Any
    kind: str


RUN_TOOL_CALLS = [
    Call("desk_succeeds", desk, "calculator", {"expression": "6 * 7"}, OK),
    Call("archive_succeeds", archive, "weather", {"city": "Paris"}, OK),
    Call("keys_in_another_order", archive, "count_letters", {"letter": "r", "text": "strawberry"}, OK),
    Call("a_number", desk, "count_words", {"text": "one agent hands a question to another"}, OK),
    Call("log_line", desk, "status", {}, OK),
    Call("same_name_other_tool", archive, "status", {}, RAISED),
    Call("unknown_here", desk, "weather", {"city": "Paris"}, UNKNOWN),
    Call("unknown_there", archive, "calculator", {"expression": "1 + 1"}, UNKNOWN),
    Call("unknown_anywhere", desk, "teleporter", {"destination": "Mars"}, UNKNOWN),
    Call("empty_registry", nothing, "search", {"query": "founded"}, UNKNOWN),
    Call("wrong_key", archive, "weather", {"town": "Paris"}, ARGUMENTS),
    Call("missing_key", desk, "calculator", {}, ARGUMENTS),
    Call("extra_key", desk, "calculator", {"expression": "1 + 1", "precision": 2}, ARGUMENTS),
    Call("a_string", archive, "weather", "Paris", NOT_AN_OBJECT),
    Call("none_input", desk, "status", None, NOT_AN_OBJECT),
    Call("divides_by_zero", desk, "calculator", {"expression": "1 / 0"}, RAISED),
    Call("type_error_inside", archive, "shout", {"text": "hi"}, RAISED),
    Call("key_error_inside", archive, "setting", {"name": "colour"}, RAISED),
]


def check_run_tool(run_tool, report: Report) -> None:
    report.require_function(run_tool, "run_tool")
    for case in RUN_TOOL_CALLS:
        _run_tool_once(run_tool, case, report)
    report.situation = None
    report.note("run_tool_ok", count=len(RUN_TOOL_CALLS))


def _run_tool_once(run_tool, case: Call, report: Report) -> None:
    """One call of run_tool, with a registry of its own, and what its pair must be."""
    registry = case.registry()
    report.enter(case.key, call=fill(CALL_SHOWN, registry=registry_shown(registry), name=case.name,
                                     tool_input=case.tool_input))
    function = registry[case.name]["function"] if case.name in registry else None
    raw = function(**case.tool_input) if case.kind == OK else None
    expected = (str(raw), False)
    value = _called(run_tool, case, expected, report)
    if case.kind == OK and value != expected and _answers_swapped(run_tool, case, expected):
        raise report.failure("parameters_swapped", expected=shown(expected))
    said, flag = _pair(value, raw, report)
    _named_unknown(said, value, case, registry, report)
    if case.kind == OK:
        if said != expected[0] and said == _by_position(function, case.tool_input):
            raise report.failure("arguments_by_position", value=shown(value), expected=shown(expected))
        report.require(value == expected, "wrong_success", value=shown(value), expected=shown(expected))
        return
    if case.kind == UNKNOWN and flag is False:
        elsewhere = [made for made in REGISTRIES if case.name in made()]
        report.require(not elsewhere, "ran_another_agents_tool", value=shown(value), name=case.name)
    failed_as_it_should(case, function, value, said, flag, report)


def _called(run_tool, case: Call, expected: tuple, report: Report) -> Any:
    """run_tool's answer to the case, handed a registry and an input of its own; what it raised, in words (and, when
    the same call with the first two arguments the other way round answers right, that it takes them in that order)."""
    try:
        return run_tool(case.registry(), case.name, copy.deepcopy(case.tool_input))
    except NotImplementedError:
        raise
    except Exception as error:
        if case.kind == OK and _answers_swapped(run_tool, case, expected):
            raise report.failure("parameters_swapped", expected=shown(expected)) from None
        raise report.failure("run_tool_raised", error=f"{type(error).__name__}: {error}",
                             where=learner_frame(error)) from None


def _answers_swapped(run_tool, case: Call, expected: tuple) -> bool:
    """Does run_tool(name, registry, tool_input) give the right pair? Then its parameters are in that order."""
    try:
        return run_tool(case.name, case.registry(), copy.deepcopy(case.tool_input)) == expected
    except Exception:
        return False


def _named_unknown(said: str, value: Any, case: Call, registry: dict, report: Report) -> None:
    """'unknown tool' only for a name the registry handed in lacks: a name it holds said to be unknown means another
    registry was read (a call that works), or a catch-all turned a failure into 'unknown' (a call that fails)."""
    if case.name in registry and said.startswith(UNKNOWN_START):
        key = "registry_ignored" if case.kind == OK else "called_unknown"
        raise report.failure(key, value=shown(value), name=case.name)


# --- the lines agent_turn writes ----------------------------------------------------------------------------------


def calls_of(responses: list[dict]) -> list[dict]:
    """The tool calls the model's replies made, in order: only those of replies that stopped to use tools run."""
    return [block for response in responses if response["stop_reason"] == "tool_use"
            for block in response["content"] if block["type"] == "tool_use"]


def tool_line(call: dict, registry: dict, prefix: str) -> str:
    """The line agent_turn writes for one call, run as the course's run_tool runs it over this registry."""
    said, failed = course_run_tool(registry, call["name"], call["input"])
    return TOOL_LINE.format(tag=prefix + (ERROR_TAG if failed else TOOL_TAG), name=call["name"], input=call["input"],
                            text=said)


def lines_compared(written: str, printed: str, expected: str, prefix: str, report: Report,
                   untagged: str = "prefix_ignored") -> None:
    """What was written to output_stream is exactly the call lines: not printed, each with its prefix (the row
    `untagged` says so in the words of the exercise), else the first line that differs."""
    if written == expected:
        return
    first = expected.split(NEWLINE)[0]
    report.require(not first or first in written or first not in printed, "lines_printed", line=first)
    if prefix:
        bare = expected.replace(f"[{prefix}", "[")
        report.require(written != bare, untagged, line=bare.split(NEWLINE)[0], expected=first, prefix=prefix)
    mine, theirs = written.split(NEWLINE), expected.split(NEWLINE)
    number, line, wanted = next((number, line, wanted) for number, (line, wanted)
                                in enumerate(itertools.zip_longest(mine, theirs, fillvalue=""), start=1)
                                if line != wanted)
    raise report.failure("line_differs", number=number, line=line, expected=wanted)


# --- 9.2 agent_turn -----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Turn(Scenario):
    """A scenario of agent_turn: the registry it is handed (`toolbox` makes it anew for each use), its system prompt
    (`options`), the tag_prefix (None: none handed, the default ""); `tools` names the registry's tools."""

    toolbox: Callable[[], dict] = nothing
    prefix: str | None = None


def question(words: str, **translations: str) -> dict:
    return {"role": "user", "content": said(words, **translations)}


def searched(query: str) -> dict:
    return tool_use("search", {"query": query})


SHOP_SYSTEM = said("You run the till of a small café. Answer in one sentence.",
                   fr="Vous tenez la caisse d'un petit café. Répondez en une phrase.")
LIBRARY_SYSTEM = said("You look facts up in the knowledge base and report them in one paragraph.",
                      fr="Vous cherchez des faits dans la base de connaissances et les rapportez en un paragraphe.")
WEATHER_SYSTEM = said("You answer questions about the weather.", fr="Vous répondez aux questions sur la météo.")
FOUNDED = text("Halden Robotics was founded in 2019 by Dara Okonkwo, a former bridge engineer.",
               fr="Halden Robotics a été fondée en 2019 par Dara Okonkwo, ancienne ingénieure des ponts.")


def turn(key: str, replies: list, given: list, toolbox: Callable[[], dict], system: str,
         prefix: str | None = None) -> Turn:
    """A scenario of agent_turn, its tools named from the registry it is handed."""
    return Turn(key, replies, given, options={"system": system}, tools=tuple(toolbox()), toolbox=toolbox,
                prefix=prefix)


TURN_SCENARIOS = [
    turn("parent_call", [reply(text("Let me compute.", fr="Je calcule."), calc("19 * 21")),
                         reply(text("19 × 21 cups: 399 cups.", fr="19 × 21 tasses : 399 tasses."))],
         [question("How many cups are 19 × 21?", fr="Combien de tasses font 19 × 21 ?")], shop, SHOP_SYSTEM),
    turn("subagent_searches", [reply(searched("creator")), reply(searched("founded")), reply(FOUNDED)],
         [question("Who founded Halden Robotics?", fr="Qui a fondé Halden Robotics ?")], library, LIBRARY_SYSTEM,
         SUBAGENT_TAG),
    turn("not_in_this_registry", [reply(calc("2026 - 2019")), reply(searched("founded")),
                                  reply(text("It was founded in 2019, by Dara Okonkwo.",
                                             fr="Elle a été fondée en 2019, par Dara Okonkwo."))],
         [question("How old is Halden Robotics?", fr="Quel âge a Halden Robotics ?")], library, LIBRARY_SYSTEM,
         SUBAGENT_TAG),
    turn("failure_beside_success", [reply(calc("1 / 0"), tool_use("price", {"item": "coffee"})),
                                    reply(text("A coffee is 2.50 EUR; 1 / 0 has no answer.",
                                               fr="Un café coûte 2,50 EUR ; 1 / 0 n'a pas de réponse."))],
         [question("What is 1 / 0, and how much is a coffee?", fr="Combien font 1 / 0, et combien coûte un café ?")],
         shop, SHOP_SYSTEM, "helper:"),
    turn("bad_arguments_then_fixed", [reply(tool_use("weather", {"town": "Tokyo"})),
                                      reply(text("Again, with city.", fr="Encore, avec city."),
                                            tool_use("weather", {"city": "Tokyo"})),
                                      reply(text("Clear skies in Tokyo.", fr="Ciel dégagé à Tokyo."))],
         [question("Is it sunny in Tokyo?", fr="Fait-il beau à Tokyo ?")], forecast, WEATHER_SYSTEM),
    turn("answers_in_words", [reply(text("We open at eight.", fr="Nous ouvrons à huit heures."))],
         [question("When do you open?", fr="À quelle heure ouvrez-vous ?")], shop, SHOP_SYSTEM, "helper:"),
    turn("no_tools", [reply(text("Hello! How can I help?", fr="Bonjour ! Comment puis-je vous aider ?"))],
         [question("Hi!", fr="Salut !")], nothing, WEATHER_SYSTEM),
    turn("earlier_exchange", [reply(tool_use("count_letters", {"text": "Mississippi", "letter": "s"})),
                              reply(text("There are 4 s's in Mississippi.", fr="Il y a 4 s dans Mississippi."))],
         [question("Is it sunny in Tokyo?", fr="Fait-il beau à Tokyo ?"),
          {"role": "assistant", "content": said("Yes: clear skies in Tokyo.", fr="Oui : ciel dégagé à Tokyo.")},
          question("How many s's in Mississippi?", fr="Combien de s dans Mississippi ?")], forecast, WEATHER_SYSTEM),
]


def check_agent_turn(agent_turn, report: Report) -> None:
    report.require_function(agent_turn, "agent_turn")
    for scenario in TURN_SCENARIOS:
        _turn_once(agent_turn, scenario, report)
    report.situation = None
    report.note("agent_turn_ok", count=len(TURN_SCENARIOS))


def _turn_once(agent_turn, scenario: Turn, report: Report) -> None:
    """Play one scenario through notebook 2's harness (the requests, the answer, the history in place), the results
    expected from the course's run_tool over the registry handed in; then the tools offered, exactly the registry's
    in its order, and the lines written to output_stream."""
    output, printed, clients = io.StringIO(), io.StringIO(), []
    arguments = {} if scenario.prefix is None else {"tag_prefix": scenario.prefix}

    def handed(client, messages, system):  # the harness's call, agent_turn(client, messages, system=...), as 9.2's
        clients.append(client)
        return agent_turn(client, system, scenario.toolbox(), messages, output, **arguments)

    def output_of(name, tool_input):
        return course_run_tool(scenario.toolbox(), name, tool_input)[0]

    with turns.toolbox(output_of, scenario.tools), print_kept(agent_turn, printed):
        turns.run_scenario(handed, scenario, report)
    exchanges = traffic(clients[0]).exchanges
    _tools_offered([exchange["request"] for exchange in exchanges], scenario.toolbox(), report)
    responses = [exchange["response"] for exchange in exchanges]
    expected = "".join(tool_line(call, scenario.toolbox(), scenario.prefix or "") for call in calls_of(responses))
    lines_compared(output.getvalue(), printed.getvalue(), expected, scenario.prefix or "", report)


def _tools_offered(requests: list[dict], registry: dict, report: Report) -> None:
    """Every request offers the registry's tools, each {"name": name, **entry["schema"]}, in the registry's order."""
    expected = [{"name": name, **entry["schema"]} for name, entry in registry.items()]
    for number, request in enumerate(requests, start=1):
        difference = first_difference(request.get("tools", ABSENT), expected, "tools")
        report.require(difference is None, "tools_not_from_registry", number=number, difference=str(difference))


# --- 9.3 research -------------------------------------------------------------------------------------------------

HEADQUARTERS = text("The headquarters moved from Ghent to Utrecht in 2023; they are next to the central station.",
                    fr="Le siège a quitté Gand pour Utrecht en 2023 ; il est à côté de la gare centrale.")
RESEARCH_SCENARIOS = [  # given: the question research is handed; replies: the subagent's model
    Scenario("research_searches", [reply(text("Let me search.", fr="Je cherche."), searched("creator")),
                                   reply(searched("founded")), reply(FOUNDED)],
             said("Who founded Halden Robotics?", fr="Qui a fondé Halden Robotics ?")),
    Scenario("research_unknown_tool", [reply(calc("2026 - 2023")), reply(searched("headquarters")),
                                       reply(HEADQUARTERS)],
             said("Where are the Halden Robotics headquarters, and since when?",
                  fr="Où se trouve le siège de Halden Robotics, et depuis quand ?")),
]


def check_research(research, report: Report) -> None:
    report.require_function(research, "research")
    for scenario in RESEARCH_SCENARIOS:
        _research_once(research, scenario, report)
    report.situation = None
    report.note("research_ok", count=len(RESEARCH_SCENARIOS))


def _research_once(research, scenario: Scenario, report: Report) -> None:
    """One question, with a model of its own: the subagent's first request (its prompt, its one tool, a history of
    the question alone), its answer returned alone, its lines tagged."""
    asked = scenario.given
    report.enter(scenario.key, question=asked)
    output, printed = io.StringIO(), io.StringIO()
    with print_kept(research, printed):
        played = play(lambda client: research(scenario.given, client, output), scenario)
    if not played.requests or isinstance(played.error, NotImplementedError):
        played.reraise()
        raise report.failure("research_no_call", answer=shown(played.answer))
    turns.refused(played, report)
    _researcher_request(played.requests[0], asked, report)
    if isinstance(played.error, TooManyCalls):
        raise report.failure("research_went_on", calls=played.calls, needed=len(scenario.replies))
    played.reraise()
    _research_answer(played.answer, turns.final_text(played.last), report)
    expected = "".join(tool_line(call, researcher_registry(), SUBAGENT_TAG) for call in calls_of(played.responses))
    lines_compared(output.getvalue(), printed.getvalue(), expected, SUBAGENT_TAG, report, "no_subagent_prefix")
    _errors_in_its_history(played, report)


def researcher_registry() -> dict:
    """RESEARCHER_REGISTRY as the lines are reckoned from: search alone (its schema plays no part in a line)."""
    return {"search": {"function": search}}


def _researcher_request(request: dict, asked: str, report: Report) -> None:
    """The subagent's first request: RESEARCHER_PROMPT, the search tool only, and the question alone. Earlier messages
    before the question are a history kept from call to call: said in one situation, whichever call shows it first
    (the second, or the first when the check runs again in the same notebook)."""
    system = request.get("system", ABSENT)
    report.require(system in RESEARCHER_PROMPTS, "parent_prompt" if system in SYSTEM_PROMPTS else "research_prompt",
                   system=shown(system))
    names = [tool.get("name") for tool in request.get("tools", []) if isinstance(tool, dict)]
    report.require(names == ["search"], "research_tools", names=names)
    messages = request.get("messages")
    expected = [{"role": "user", "content": asked}]
    if messages == expected:
        return
    if isinstance(messages, list) and len(messages) > 1 and messages[-1:] == expected:
        report.enter("research_called_again")
        raise report.failure("history_reused", first=shown(messages[0]))
    raise report.failure("research_history", difference=str(first_difference(messages, expected, "messages")))


def _research_answer(answer: Any, expected: str, report: Report) -> None:
    """The subagent's answer, and only it: not its history, not a transcript holding it."""
    if answer == expected:
        return
    report.require(not isinstance(answer, list), "returned_history", count=len(answer) if isinstance(answer, list)
                   else 0)
    report.require(not (isinstance(answer, str) and expected in answer), "not_only_the_answer", answer=shown(answer),
                   expected=shown(expected))
    raise report.failure("research_answer", answer=shown(answer), expected=shown(expected))


def _errors_in_its_history(played, report: Report) -> None:
    """A call the subagent's registry lacks is answered in the subagent's own history, flagged as an error."""
    for response, request in zip(played.responses, played.requests[1:]):
        last = (request.get("messages") or [{}])[-1]
        content = last.get("content") if isinstance(last, dict) and isinstance(last.get("content"), list) else []
        for call in calls_of([response]):
            if call["name"] in researcher_registry():
                continue
            results = [block for block in content if isinstance(block, dict) and block.get("tool_use_id") == call["id"]]
            report.require(bool(results) and results[0].get("is_error") is True, "unknown_not_flagged",
                           name=call["name"], results=shown(results))


# --- 9.4 run ------------------------------------------------------------------------------------------------------

PARENT_TOOLS = ["calculator", "research"]
NOTHING_MORE = reply(text("I have nothing more to add.", fr="Je n'ai rien à ajouter."))
MAX_CALLS = 20  # model calls a session answers at most, both agents together


@dataclass(frozen=True)
class Session(Scenario):
    """A session of run: the lines it reads (`given`), the parent's replies turn by turn (`turns_of`), the subagent's
    replies (`replies`), the system handed to run (`options`; none: its default), how the input ends (`again`: the
    row for a model call past the last answer)."""

    turns_of: tuple = ()
    again: str = "called_after_last_answer"


FOUNDER_LINE = said("Who founded Halden Robotics, and how many years before 2026 was that?",
                    fr="Qui a fondé Halden Robotics, et combien d'années avant 2026 ?")
THANKS_LINE = said("Thanks!", fr="Merci !")
NEVER_READ = said("This line comes after the empty line.", fr="Cette ligne vient après la ligne vide.")
PRODUCT_LINE = said("What is 12 * 12?", fr="Combien font 12 * 12 ?")
HEADQUARTERS_LINE = said("And where is Halden Robotics based?", fr="Et où est basée Halden Robotics ?")
PARENT_SYSTEM = said("You are the front desk of a research team. Delegate every question about a company.",
                     fr="Vous êtes l'accueil d'une équipe de recherche. Déléguez chaque question sur une entreprise.")
FOUNDER_QUESTION = "Who founded Halden Robotics, and when?"  # the parent asks the subagent in English (SYSTEM_PROMPT)
HEADQUARTERS_QUESTION = "Where are the Halden Robotics headquarters?"
MISSED = "creator"  # the subagent's query that finds nothing: never in the parent's history

RUN_SESSIONS = [
    Session("delegates_then_computes", given=lines(FOUNDER_LINE, THANKS_LINE, "", NEVER_READ),
            options={"system": PARENT_SYSTEM}, again="went_on_after_empty_line",
            replies=[reply(searched(MISSED)), reply(searched("founded")), reply(FOUNDED)],
            turns_of=((reply(text("I'll ask the researcher.", fr="Je demande au chercheur."),
                             tool_use("research", {"question": FOUNDER_QUESTION})),
                       reply(calc("2026 - 2019")),
                       reply(text("Dara Okonkwo founded it in 2019, 7 years before 2026.",
                                  fr="Dara Okonkwo l'a fondée en 2019, 7 ans avant 2026."))),
                      (reply(text("You're welcome!", fr="Avec plaisir !")),))),
    Session("computes_then_delegates", given=lines(PRODUCT_LINE, HEADQUARTERS_LINE),
            replies=[reply(searched("headquarters")), reply(HEADQUARTERS)],
            turns_of=((reply(calc("12 * 12")), reply(text("12 * 12 = 144.", fr="12 * 12 = 144."))),
                      (reply(tool_use("research", {"question": HEADQUARTERS_QUESTION})),
                       reply(text("In Utrecht, next to the central station, since 2023.",
                                  fr="À Utrecht, à côté de la gare centrale, depuis 2023."))))),
]


class TwoAgents:
    """The model of a session, answering both agents from one client: a request with the researcher's prompt gets the
    subagent's next reply (then NOTHING_MORE), any other the parent's next one; past the parent's last, it refuses."""

    def __init__(self, session: Session):
        self.parent = [answer for replies in session.turns_of for answer in replies]
        self.researcher = list(session.replies)
        self.asked = 0
        self.parent_went_on = False

    def answer(self, request: dict) -> dict:
        self.asked += 1
        if is_researchers(request):
            return (self.researcher.pop(0) if self.researcher else NOTHING_MORE)(request)
        if not self.parent:
            self.parent_went_on = True
            raise TooManyCalls(scripted.WORDS("too_many_calls", calls=self.asked, expected=self.asked - 1))
        return self.parent.pop(0)(request)


def is_researchers(request: dict) -> bool:
    return request.get("system") in RESEARCHER_PROMPTS


@dataclass
class Delegation:
    """One research call of the parent: its question, the id of the call, and the subagent's exchanges it led to."""

    question: Any
    call_id: str
    exchanges: list


def check_run(run, report: Report) -> None:
    report.require_function(run, "run")
    for session in RUN_SESSIONS:
        _session_played(run, session, report)
    report.situation = None
    report.note("run_ok", count=len(RUN_SESSIONS))


def _session_played(run, session: Session, report: Report) -> None:
    """One session of run with a scripted model for both agents; then what each agent's requests held, and what was
    written."""
    handed = session.options
    report.enter(session.key)
    model = TwoAgents(session)
    client, record = scripted_client(itertools.repeat(model.answer), call_limit=MAX_CALLS)
    output, printed = io.StringIO(), io.StringIO()
    error = None
    try:
        with print_kept(run, printed):
            run(io.StringIO(session.given), output, client, **handed)
    except TooManyCalls:
        if not model.parent_went_on:
            raise
        raise report.failure(session.again, calls=model.asked) from None
    except NotImplementedError:
        raise
    except Exception as raised:  # said after what the requests show: a shared history ends in the API's 400
        error = raised
    exchanges = list(record.exchanges)
    parents = [exchange for exchange in exchanges if not is_researchers(exchange["request"])]
    _parent_requests(parents, handed.get("system"), report)
    delegations = _delegations(exchanges, report)
    if error is not None:
        raise error
    _parent_saw_one_paragraph(parents, delegations, report)
    _written(output.getvalue(), printed.getvalue(), parents, delegations, session, report)


def _parent_requests(parents: list[dict], system: str | None, report: Report) -> None:
    """Every parent request: the system prompt run was handed (SYSTEM_PROMPT by default), the calculator and research
    (RESEARCH_SCHEMA) as its tools."""
    for number, exchange in enumerate(parents, start=1):
        request = exchange["request"]
        sent = request.get("system", ABSENT)
        if system is None:
            report.require(sent in SYSTEM_PROMPTS, "parent_default_system", number=number, system=shown(sent))
        else:
            difference = first_difference(sent, system, "system")
            report.require(difference is None, "parent_system", number=number, difference=str(difference))
        tools = [tool for tool in request.get("tools", []) if isinstance(tool, dict)]
        names = sorted(str(tool.get("name")) for tool in tools)
        report.require(names == PARENT_TOOLS, "parent_tools", number=number, names=names)
        offered = next(tool for tool in tools if tool.get("name") == "research")
        report.require(offered in research_definitions(), "research_schema", number=number, offered=shown(offered))


def _delegations(exchanges: list[dict], report: Report) -> list[Delegation]:
    """Each research call of the parent met by one run of the subagent, which starts from the question alone; no
    subagent run the parent did not ask for."""
    delegations: list[Delegation] = []
    waiting: list[Delegation] = []  # the research calls of the parent's last reply, not run yet
    previous_was_parents = True
    for exchange in exchanges:
        request, response = exchange["request"], exchange.get("response")
        if not is_researchers(request):
            waiting = [Delegation(call["input"].get("question"), call["id"], []) for call in calls_of([response])
                       if call["name"] == "research"] if response else []
            delegations += waiting
            previous_was_parents = True
            continue
        if previous_was_parents:  # a run of the subagent starts
            report.require(bool(waiting), "research_uninvited", first=shown(request.get("messages")))
            delegation = waiting.pop(0)
            expected = [{"role": "user", "content": delegation.question}]
            difference = first_difference(request.get("messages"), expected, "messages")
            report.require(difference is None, "subagent_history_not_fresh", question=shown(delegation.question),
                           difference=str(difference))
            names = [tool.get("name") for tool in request.get("tools", []) if isinstance(tool, dict)]
            report.require(names == ["search"], "subagent_tools", names=names)
            delegation.exchanges.append(exchange)
        else:
            next(d for d in reversed(delegations) if d.exchanges).exchanges.append(exchange)
        previous_was_parents = False
    return delegations


def _result_for(parents: list[dict], call_id: str) -> Any:
    """The content of the tool_result the parent sent back for one call (ABSENT if it never did)."""
    for exchange in parents:
        for message in exchange["request"].get("messages", []):
            content = message.get("content") if isinstance(message, dict) else None
            for block in content if isinstance(content, list) else []:
                if isinstance(block, dict) and block.get("type") == "tool_result" \
                        and block.get("tool_use_id") == call_id:
                    return turns.result_text(block.get("content"))
    return ABSENT


def _parent_saw_one_paragraph(parents: list[dict], delegations: list[Delegation], report: Report) -> None:
    """Each research call's result, in the parent's next request, is the subagent's answer; the parent's requests hold
    none of the subagent's calls, results or queries."""
    for delegation in delegations:
        result = _result_for(parents, delegation.call_id)
        report.require(bool(delegation.exchanges), "subagent_not_asked", question=shown(delegation.question),
                       result=shown(result))
        answer = turns.final_text(delegation.exchanges[-1]["response"])
        report.require(result == answer, "research_result", result=shown(result), expected=shown(answer))
    for number, exchange in enumerate(parents, start=1):
        messages = exchange["request"].get("messages", [])
        calls = [block.get("name") for message in messages if isinstance(message, dict)
                 and isinstance(message.get("content"), list) for block in message["content"]
                 if isinstance(block, dict) and block.get("type") == "tool_use"]
        strangers = [name for name in calls if name not in PARENT_TOOLS]
        report.require(not strangers and MISSED not in str(messages), "parent_saw_searching", number=number,
                       names=strangers)


def _written(written: str, printed: str, parents: list[dict], delegations: list[Delegation], session: Session,
             report: Report) -> None:
    """The subagent's lines tagged `subagent:`, the parent's calculator line untagged, an `Agent> ` line per turn."""
    for delegation in delegations:
        for call in calls_of([exchange["response"] for exchange in delegation.exchanges]):
            line = tool_line(call, researcher_registry(), SUBAGENT_TAG)
            if line in written:
                continue
            bare = tool_line(call, researcher_registry(), "")
            report.require(bare not in written, "subagent_lines_untagged", line=bare.strip(), expected=line.strip())
            report.require(line.strip() not in printed, "subagent_lines_printed", line=line.strip())
            raise report.failure("subagent_line_missing", line=line.strip(), output=written)
    for call in calls_of([exchange["response"] for exchange in parents]):
        if call["name"] == "calculator":
            line = tool_line(call, {"calculator": {"function": calculator}}, "")
            report.require(line in written, "calculator_line_missing", line=line.strip(), output=written)
    at = 0
    for number, replies in enumerate(session.turns_of, start=1):
        line = f"{AGENT} {turns.final_text(replies[-1]({'messages': []}))}{NEWLINE}"
        found = written.find(line, at)
        report.require(found >= 0, "agent_line_missing", turn=number, line=line.strip(), output=written)
        at = found + len(line)


CHECKERS = {"9.1": check_run_tool, "9.2": check_agent_turn, "9.3": check_research, "9.4": check_run}
