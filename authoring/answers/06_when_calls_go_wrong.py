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
        reply(text("Let me check the weather."), tool_use("get_weather", {"town": "Tokyo"})),
        reply(text("The tool wants a city argument; trying again."), tool_use("get_weather", {"city": "Tokyo"})),
        reply(text("In Tokyo it is 24°C with clear skies right now.")),
    ],
    "DIVISION_QUESTION": [
        reply(calculator("10 / 0")),
        reply(text("10 / 0 has no answer: dividing by zero is undefined, as the calculator's ZeroDivisionError says.")),
    ],
    "STUBBORN_QUESTION": [
        reply(calculator("7 / 0")),
        reply(text("Let me try the calculator again."), calculator("7 / 0")),
    ],
}
