"""Checks for notebook 2, closing the loop: tool_result, agent_turn (played by turns.py), its hard cap."""

from .. import scripted
from ..catalogue import catalogue
from ..model_id import MODEL
from ..recordings import canonical_blocks
from ..scripted import calculator as calc, reply, said, text, thinking, tool_use
from ..tools import TOOLS, is_error, run_tool
from . import turns
from .core import Report, Scenario
from .difference import Difference, shown
from .turns import agent_turn_checker, never_stopping

QUESTION = turns.START["content"]  # words of the check's language: QUESTION.now() where no Scenario reads it
CHAINED = said("A warehouse holds 1250 crates of 48 boxes, and each box holds 36 bottles. "
               "A truck carries 9600 bottles. How many truck loads does it take?",
               fr="Un entrepôt contient 1250 caisses de 48 cartons chacune, et chaque carton contient 36 bouteilles. "
                  "Un camion transporte 9600 bouteilles. "
                  "Combien de chargements de camion faut-il pour vider l'entrepôt ?")
OWN_TEXTS, HINTS = catalogue(__file__)  # texts/notebook2.toml
TEXTS = {**turns.TEXTS, **OWN_TEXTS}  # the harness's rows, in this notebook's words where it has its own


# --- 2.1 tool_result -----------------------------------------------------------------------------------

# The model asks for two calls, one that works and one that fails; the second reply answers their results.
BOTH_CALLS = [reply(text("I'll compute both.", fr="Je calcule les deux."), calc("4823 * 1979"), calc("1 / 0")),
              reply(text("4823 × 1979 = 9,544,717; 1 / 0 has no value.",
                         fr="4823 × 1979 = 9 544 717 ; 1 / 0 n'a pas de valeur."))]
OUTPUTS = ("9544717", "Error: division by zero")  # of those two calls


def check_tool_result(tool_result, report: Report) -> None:
    report.require_function(tool_result, "tool_result")
    client, _ = scripted.scripted_client(BOTH_CALLS)
    messages = [{"role": "user", "content": QUESTION.now()}]
    message = client.messages.create(model=MODEL, max_tokens=64, tools=TOOLS, messages=messages)
    blocks = [block for block in message.content if block.type == "tool_use"]  # real SDK blocks, as agent_turn has
    for block, output in zip(blocks, OUTPUTS):
        report.enter("tool_result_call", output=output)
        result = tool_result(block, output)
        said = dict(result=shown(result), output=output)
        report.require(isinstance(result, dict), "not_a_dict", kind=type(result).__name__, **said)
        report.require(result.get("type") == "tool_result", "wrong_type", kind=result.get("type"))
        report.require("tool_use_id" in result, "no_id", **said)
        report.require(result["tool_use_id"] == block.id, "wrong_id", cited=result["tool_use_id"], id=block.id)
        report.require(canonical_blocks(result.get("content")) == canonical_blocks(output), "wrong_content",
                       content=shown(result.get("content")), **said)
        if is_error(output):
            report.require(result.get("is_error") is True, "flag_missing", **said)
        else:
            report.require("is_error" not in result, "flag_needless", **said)
    report.note("cites_the_call")
    report.note("flags_errors")

    report.enter("sending_results")
    results = [tool_result(block, run_tool(block.name, block.input)) for block in blocks]
    # One dict changed and returned by every call (a default argument, a dict made outside the function) passes
    # each call's test above, but the list then holds that dict twice; the API would refuse it, this says why.
    first = Difference("results[0].tool_use_id", results[0].get("tool_use_id"), blocks[0].id)
    report.require(len({id(result) for result in results}) == len(results), "same_dict", difference=str(first),
                   count=len(results))
    messages += [{"role": "assistant", "content": message.content}, {"role": "user", "content": results}]
    client.messages.create(model=MODEL, max_tokens=64, tools=TOOLS, messages=messages)
    report.note("api_accepts")


# --- 2.2 agent_turn ------------------------------------------------------------------------------------

TEXT_FIRST = Scenario("text_first", [
    reply(text("I'll use the calculator.", fr="Je vais utiliser la calculatrice."), calc("4823 * 1979")),
    reply(text("4823 × 1979 = 9,544,717.", fr="4823 × 1979 = 9 544 717."))], [turns.START])
CHAIN_REPLIES = [reply(text("First, the boxes.", fr="D'abord, les cartons."), calc("1250 * 48")),
                 reply(calc("60000 * 36")),
                 reply(text("Now the truck loads.", fr="Maintenant, les chargements de camion."),
                       calc("2160000 / 9600")),
                 reply(text("It takes 225 truck loads.", fr="Il faut 225 chargements de camion."))]

AGENT_TURN_SCENARIOS = [
    TEXT_FIRST,
    Scenario("thinking_first", [reply(thinking("Big numbers: use the calculator.",
                                               fr="De grands nombres : je prends la calculatrice."), calc("12 * 12")),
                                reply(thinking("The tool says 144.", fr="L'outil donne 144."),
                                      text("12 × 12 = 144.", fr="12 × 12 = 144."))], [turns.START]),
    Scenario("chain", CHAIN_REPLIES, [{"role": "user", "content": CHAINED}]),
    Scenario("two_calls", [reply(text("Two products.", fr="Deux produits."), calc("12 * 12"), calc("7 * 6")),
                           reply(text("12 × 12 = 144 and 7 × 6 = 42.", fr="12 × 12 = 144 et 7 × 6 = 42."))],
             [{"role": "user", "content": said("What are 12 × 12 and 7 × 6?",
                                               fr="Combien font 12 × 12 et 7 × 6 ?")}]),
    Scenario("failing", [reply(text("Let me compute.", fr="Je calcule."), calc("1 / 0")),
                         reply(text("That has no value: you cannot divide by zero.",
                                    fr="Cela n'a pas de valeur : on ne peut pas diviser par zéro."))],
             [{"role": "user", "content": said("What is 1 / 0?", fr="Combien font 1 / 0 ?")}]),
    Scenario("no_tool", [reply(text("Hello! Ask me any arithmetic.",
                                    fr="Bonjour ! Demandez-moi n'importe quel calcul."))],
             [{"role": "user", "content": said("Hello!", fr="Bonjour !")}]),
    Scenario("second_question", [reply(text("Let me compute.", fr="Je calcule."), calc("9544717 * 2")),
                                 reply(text("Twice that is 19,089,434.", fr="Le double fait 19 089 434."))],
             [{"role": "user", "content": QUESTION},
              {"role": "assistant", "content": [{"type": "text", "text": said("4823 × 1979 = 9,544,717.",
                                                                           fr="4823 × 1979 = 9 544 717.")}]},
              {"role": "user", "content": said("And twice that?", fr="Et le double ?")}]),
    Scenario("truncated", [reply(text("I'll work this out step by step.", fr="Je vais procéder étape par étape."),
                                 tool_use("calculator", {}), stop_reason="max_tokens")],
             [{"role": "user", "content": CHAINED}]),
]

# --- 2.3 the cap --------------------------------------------------------------------------------------

CAP_SCENARIOS = [  # None: the default cap, 10
    *(never_stopping(cap) for cap in (1, 3, None)), TEXT_FIRST,
    Scenario("chain_just_enough", CHAIN_REPLIES, [{"role": "user", "content": CHAINED}],
             options={"max_iterations": len(CHAIN_REPLIES)}),
]


CHECKERS = {"2.1": check_tool_result, "2.2": agent_turn_checker(AGENT_TURN_SCENARIOS),
            "2.3": agent_turn_checker(CAP_SCENARIOS)}
