"""Checks for notebook 3, matching ids: run_tools, unanswered_tool_uses, agent_turn for parallel calls.

The id is the only thread between a call and its result, so a result citing the right id must hold
that call's output, in any order. agent_turn is played by the harness of notebook 2 (turns.py).
"""

from anthropic.types import Message

from .. import scripted
from ..catalogue import catalogue
from ..history import to_wire
from ..model_id import MODEL
from ..scripted import calculator as calc, reply, said, spoken, text, thinking, tool_use
from . import turns
from .core import Report, Scenario
from .turns import DEFAULT_CAP, agent_turn_checker, never_stopping, outline_with_ids, verify_results

QUESTION = said("Please work these out for me.", fr="Pouvez-vous me faire ces calculs ?")
HISTORY = [{"role": "user", "content": QUESTION}]  # in the check's language: spoken(HISTORY) where no Scenario reads it
DONE = reply(text("Done.", fr="C'est fait."))  # what the model says to a results message of 3.1
OWN_TEXTS, HINTS = catalogue(__file__)  # texts/notebook3.toml
TEXTS = {**turns.TEXTS, **OWN_TEXTS}  # the harness's rows, in this notebook's words where it has its own


# --- 3.1 run_tools -------------------------------------------------------------------------------------

RUN_TOOLS_SCENARIOS = [  # given: the blocks of the reply run_tools is handed
    Scenario("two_calls_after_text", given=[text("I'll work out both months at once.",
                                                 fr="Je calcule les deux mois d'un coup."),
                                            calc("37 * 23"), calc("37 * 31")]),
    Scenario("three_calls", given=[calc("3 * 4.75"), calc("2 * 1.2"), calc("5 * 0.85")]),
    Scenario("thinking_then_two",
             given=[thinking("Two products; I can ask for both at once.",
                             fr="Deux produits ; je peux demander les deux d'un coup."),
                    calc("4823 * 1979"), calc("1234 / 8")]),
    Scenario("one_fails", given=[text("Let me compute both.", fr="Je calcule les deux."), calc("1,250 * 6 / 4"),
                                 calc("1250 / 4")]),
    Scenario("division_by_zero", given=[calc("12 / 0"), calc("12 / 4")]),
    Scenario("unknown_tool", given=[text("I'll use a percentage tool.", fr="Je vais utiliser un outil de pourcentage."),
                                    tool_use("percentage", {"value": 1250, "percent": 15}), calc("1250 * 15 / 100")]),
    Scenario("no_call", given=[text("That is 9,544,717.", fr="Cela fait 9 544 717.")]),
]


def scripted_message(*blocks: dict, stop_reason: str | None = None) -> Message:
    """An SDK Message as the API would return it, from scripted blocks (ids made from the request)."""
    request = {"model": MODEL, "messages": spoken(HISTORY)}
    return Message.model_validate(reply(*blocks, stop_reason=stop_reason)(request))


def check_run_tools(run_tools, report: Report) -> None:
    report.require_function(run_tools, "run_tools")
    for scenario in RUN_TOOLS_SCENARIOS:
        report.enter(scenario.key)
        message = scripted_message(*scenario.given)
        calls = [block for block in to_wire(message.content) if block["type"] == "tool_use"]
        try:
            results = run_tools(message)
        except AttributeError as error:
            turns.block_confusion(error, report)  # a block taken by position gets a precise failure
            raise
        verify_results(calls, results, report, report.situation, report.words("run_tools_call"))
        if calls:  # the API must accept them as the next user message
            client, _ = scripted.scripted_client([DONE], call_limit=1)
            client.messages.create(model=MODEL, max_tokens=64, messages=spoken(HISTORY) + [
                {"role": "assistant", "content": message.content}, {"role": "user", "content": results}])
        report.note("results_ok" if calls else "no_results", count=len(calls))
    report.note("flags_ok")


# --- 3.2 unanswered_tool_uses ----------------------------------------------------------------------------

def _user(*blocks):
    return {"role": "user", "content": list(blocks)}


def _assistant(*blocks):
    return {"role": "assistant", "content": list(blocks)}


class _SDKContent(list):
    """The blocks of an assistant message that agent_turn appended: SDK block objects, made from these scripted
    blocks when the check reads the history (`_as_appended`), so that their words are the check's language."""


def _sdk_assistant(*blocks):
    """An assistant message as agent_turn appends it: message.content holds SDK block objects (`_as_appended`)."""
    return {"role": "assistant", "content": _SDKContent(blocks)}


def _as_appended(history: list) -> list:
    """A scenario's history (read in the check's language), its _sdk_assistant messages holding SDK blocks."""
    return [{**message, "content": scripted_message(*message["content"]).content}
            if isinstance(message.get("content"), _SDKContent) else message for message in history]


def _call(tool_id, expression="1 + 1"):
    return calc(expression, id=tool_id)


def _result(tool_id, output="2"):
    return {"type": "tool_result", "tool_use_id": tool_id, "content": output}


QUESTION_MESSAGE = {"role": "user", "content": said("What are 1 + 1, 2 + 2 and 3 + 3?",
                                                   fr="Combien font 1 + 1, 2 + 2 et 3 + 3 ?")}

UNANSWERED_SCENARIOS = [  # given: the history unanswered_tool_uses is handed; expected: the ids it should return
    Scenario("complete_dicts", expected=[], given=[
        QUESTION_MESSAGE, _assistant(text("Let me add.", fr="J'additionne."), _call("toolu_A")),
        _user(_result("toolu_A")), _assistant(text("1 + 1 = 2.", fr="1 + 1 = 2."))]),
    Scenario("string_contents", expected=[], given=[
        {"role": "user", "content": said("Hi", fr="Bonjour")},
        {"role": "assistant", "content": said("Hello! Ask me some arithmetic.",
                                              fr="Bonjour ! Demandez-moi un calcul.")},
        {"role": "user", "content": said("Later.", fr="Plus tard.")}]),
    Scenario("call_at_end", expected=["toolu_A"], given=[QUESTION_MESSAGE, _assistant(_call("toolu_A"))]),
    Scenario("one_result_missing", expected=["toolu_B"], given=[
        QUESTION_MESSAGE, _assistant(_call("toolu_A"), _call("toolu_B", "2 + 2")), _user(_result("toolu_A")),
        _assistant(text("Done.", fr="C'est fait."))]),
    Scenario("sdk_one_missing", expected=["toolu_B"], given=[
        QUESTION_MESSAGE, _sdk_assistant(text("Three sums.", fr="Trois sommes."), _call("toolu_A"),
                                         _call("toolu_B", "2 + 2"), _call("toolu_C", "3 + 3")),
        _user(_result("toolu_C", "6"), _result("toolu_A"))]),
    Scenario("split_results", expected=["toolu_B"], given=[
        QUESTION_MESSAGE, _assistant(_call("toolu_A"), _call("toolu_B", "2 + 2")), _user(_result("toolu_A")),
        _user(_result("toolu_B", "4"))]),
    Scenario("too_late", expected=["toolu_A"], given=[
        QUESTION_MESSAGE, _assistant(_call("toolu_A")), _user(text("Take your time.", fr="Prenez votre temps.")),
        _assistant(text("Still working.", fr="Je calcule encore.")), _user(_result("toolu_A"))]),
    Scenario("earlier_unanswered", expected=["toolu_C"], given=[
        QUESTION_MESSAGE, _sdk_assistant(_call("toolu_A"), _call("toolu_B", "2 + 2")),
        _user(_result("toolu_A"), _result("toolu_B", "4")), _sdk_assistant(_call("toolu_C", "3 + 3")),
        _user(text("Never mind.", fr="Laissez tomber.")), _assistant(text("All right.", fr="D'accord.")),
        {"role": "user", "content": said("Thanks.", fr="Merci.")}]),
    Scenario("mixed", expected=["toolu_B", "toolu_D"], given=[
        QUESTION_MESSAGE, _assistant(_call("toolu_A")), _user(_result("toolu_A")),
        _sdk_assistant(text("Two more.", fr="Encore deux."), _call("toolu_B", "2 + 2"), _call("toolu_C", "3 + 3")),
        _user(_result("toolu_C", "6")), _sdk_assistant(_call("toolu_D", "4 + 4"))]),
    Scenario("complete_sdk", expected=[], given=[
        QUESTION_MESSAGE, _sdk_assistant(thinking("Two sums.", fr="Deux sommes."), _call("toolu_A"),
                                         _call("toolu_B", "2 + 2")),
        _user(_result("toolu_B", "4"), _result("toolu_A")), _sdk_assistant(text("2 and 4.", fr="2 et 4."))]),
]


def check_unanswered_tool_uses(unanswered_tool_uses, report: Report) -> None:
    report.require_function(unanswered_tool_uses, "unanswered_tool_uses")
    for scenario in UNANSWERED_SCENARIOS:
        report.enter(scenario.key)
        got = unanswered_tool_uses(_as_appended(scenario.given))
        report.require(isinstance(got, list), "not_a_list", kind=type(got).__name__)
        report.require(all(isinstance(item, str) for item in got), "not_ids", got=got)
        report.require(sorted(got) == sorted(scenario.expected), "wrong_ids", report.text(scenario.key).hint, got=got,
                       expected=scenario.expected, outline=outline_with_ids(_as_appended(scenario.given), report))


# --- 3.3 agent_turn -------------------------------------------------------------------------------------

AGENT_SCENARIOS = [  # asked after QUESTION; each answer is the last reply's text
    Scenario("two_calls", [
        reply(text("I'll work out both months at once.", fr="Je calcule les deux mois d'un coup."), calc("37 * 23"),
              calc("37 * 31")),
        reply(text("You spend 851 € in March and 1,147 € in April.",
                   fr="Vous dépensez 851 € en mars et 1 147 € en avril."))], HISTORY),
    Scenario("three_then_one", [
        reply(calc("3 * 4.75"), calc("2 * 1.2"), calc("5 * 0.85")),
        reply(text("Now the total.", fr="Maintenant, le total."), calc("14.25 + 2.4 + 4.25")),
        reply(text("14.25 €, 2.40 € and 4.25 €: 20.90 € in total.",
                   fr="14,25 €, 2,40 € et 4,25 € : 20,90 € en tout."))], HISTORY),
    Scenario("fails_then_corrected", [
        reply(text("Let me compute both.", fr="Je calcule les deux."), calc("1,250 * 6 / 4"), calc("1250 / 4")),
        reply(text("No thousands separator, then.", fr="Sans séparateur de milliers, cette fois."),
              calc("1250 * 6 / 4")),
        reply(text("1,875 g for 6 people, that is 312.5 g each.",
                   fr="1 875 g pour 6 personnes, soit 312,5 g par personne."))], HISTORY),
    Scenario("unknown_tool_turn", [
        reply(tool_use("percentage", {"value": 1250, "percent": 15}), calc("1250 / 4")),
        reply(text("No percentage tool, so the calculator it is.",
                   fr="Pas d'outil de pourcentage : ce sera donc la calculatrice."), calc("1250 * 15 / 100")),
        reply(text("15% of 1,250 is 187.5.", fr="15 % de 1 250, cela fait 187,5."))], HISTORY),
    Scenario("thinking_first", [reply(thinking("Big product: use the tool.",
                                               fr="Un grand produit : j'utilise l'outil."),
                                      calc("4823 * 1979")),
                                reply(text("4823 × 1979 = 9,544,717.", fr="4823 × 1979 = 9 544 717."))], HISTORY),
    # Cut off in the middle of a second call: its input may be incomplete, so it must not run.
    Scenario("cut_off", [reply(text("Let me compute.", fr="Je calcule."), calc("12 * 12")),
                         reply(text("12 × 12 = 144. Let me check that with", fr="12 × 12 = 144. Je vérifie avec"),
                               calc("144 / 12"), stop_reason="max_tokens")], HISTORY),
    Scenario("no_tool", [reply(text("Hello! Ask me any arithmetic.",
                                    fr="Bonjour ! Demandez-moi n'importe quel calcul."))], HISTORY),
    # The scripted model answers one call past the cap, then refuses.
    *(never_stopping(cap, call_limit=(cap or DEFAULT_CAP) + 1) for cap in (3, None)),
]


CHECKERS = {"3.1": check_run_tools, "3.2": check_unanswered_tool_uses, "3.3": agent_turn_checker(AGENT_SCENARIOS)}
