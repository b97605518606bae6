"""Scripted answers for notebook 6 (see authoring/author_recordings.py).

Keyed by the name the notebook gives each question. The recovery arc is written by hand to show what a
model typically does with an error result (the notebook says so): a bad call, the flagged error, the
corrected call, the answer. agent_robust.py, run by the notebook, asks RECOVERY_QUESTION again: same
conversation, same answers. The stubborn model repeats its failing call once; the repeat guard stops it
there, so it is never asked a third time.
"""

from looplab.scripted import calculator, reply, text, tool_use

ANSWERS = {
    "RECOVERY_QUESTION": [
        reply(text("Let me check the weather.", fr="Je regarde la météo."),
              tool_use("get_weather", {"town": "Tokyo"})),
        reply(text("The tool wants a city argument; trying again.",
                   fr="L'outil attend un argument city ; je réessaie."), tool_use("get_weather", {"city": "Tokyo"})),
        reply(text("In Tokyo it is 24°C with clear skies right now.",
                   fr="À Tokyo, il fait 24 °C sous un ciel dégagé en ce moment.")),
    ],
    "DIVISION_QUESTION": [
        reply(calculator("10 / 0")),
        reply(text("10 / 0 has no answer: dividing by zero is undefined, as the calculator's ZeroDivisionError says.",
                   fr="10 / 0 n'a pas de réponse : la division par zéro n'est pas définie, comme le dit le "
                      "ZeroDivisionError de la calculatrice.")),
    ],
    "STUBBORN_QUESTION": [
        reply(calculator("7 / 0")),
        reply(text("Let me try the calculator again.", fr="Je réessaie avec la calculatrice."), calculator("7 / 0")),
    ],
}
