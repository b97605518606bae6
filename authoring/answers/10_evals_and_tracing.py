"""Scripted answers for notebook 10 (see authoring/author_recordings.py).

Keyed by the name the notebook gives each question; the subagent's question is the parent model's own words, filed
under ASKED:<words>. The small-talk case is answered by a model that reaches for the calculator anyway, so that the
notebook's eval report shows a failure (the notebook says so).
"""

from looplab.scripted import calculator, reply, text, tool_use

FOUNDED = "Who founded Halden Robotics, and in which year?"

ANSWERS = {
    "ARITHMETIC_QUESTION": [
        reply(calculator("6 * 7")),
        reply(text("6 × 7 = 42.", fr="6 × 7 = 42.")),
    ],
    "FOUNDER_QUESTION": [
        reply(tool_use("research", {"question": FOUNDED})),
        reply(calculator("2026 - 2019")),
        reply(text("Dara Okonkwo founded Halden Robotics in 2019: 7 years before 2026.",
                   fr="Dara Okonkwo a fondé Halden Robotics en 2019 : 7 ans avant 2026.")),
    ],
    "ASKED:" + FOUNDED: [
        reply(tool_use("search", {"query": "creator"})),
        reply(tool_use("search", {"query": "founded"})),
        reply(text("Halden Robotics was founded in 2019 by Dara Okonkwo, a former bridge engineer.",
                   fr="Halden Robotics a été fondée en 2019 par Dara Okonkwo, dont le premier métier était "
                      "l'ingénierie des ponts.")),
    ],
    "RESEARCH_QUESTION": [
        reply(tool_use("research", {"question": "Who is the founder of Halden Robotics?"})),
        reply(text("Halden Robotics was founded by Dara Okonkwo, in 2019.",
                   fr="Halden Robotics a été fondée par Dara Okonkwo, en 2019.")),
    ],
    "ASKED:Who is the founder of Halden Robotics?": [
        reply(tool_use("search", {"query": "founded"})),
        reply(text("Halden Robotics was founded in 2019 by Dara Okonkwo.",
                   fr="Halden Robotics a été fondée en 2019 par Dara Okonkwo.")),
    ],
    "SMALL_TALK_QUESTION": [
        reply(calculator("1 + 1")),
        reply(text("Hello! I'm well, thank you. (And 1 + 1 = 2.)", fr="Bonjour ! Je vais bien, merci. (Et 1 + 1 = 2.)")),
    ],
}
