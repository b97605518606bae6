"""Scripted answers for notebook 9 (see authoring/author_recordings.py).

Keyed by the name the notebook gives each question; the subagent's questions are the parent model's own words, in
its `research` call, so they are filed under ASKED:<those words> (written once, here, in the call and the key).
The parent asks the subagent in English in both editions: its system prompt says the knowledge base is English.
The founder arc is written by hand to show what models typically do (the notebook says so): the parent delegates
the facts and does the arithmetic itself; the subagent misses with one word and finds with another.
"""

from looplab.scripted import calculator, reply, text, tool_use

FOUNDED = "Who founded Halden Robotics, and in which year?"

ANSWERS = {
    "MATH_QUESTION": [
        reply(calculator("17 * 23")),
        reply(text("17 × 23 = 391.", fr="17 × 23 = 391.")),
    ],
    "RESEARCH_QUESTION": [
        reply(tool_use("search", {"query": "headquarters"})),
        reply(text("The Halden Robotics headquarters is in Utrecht, next to the central station; the company moved it "
                   "there from Ghent in 2023.",
                   fr="Le siège de Halden Robotics est à Utrecht, à côté de la gare centrale ; l'entreprise l'y a "
                      "installé en 2023, en venant de Gand.")),
    ],
    "FOUNDER_QUESTION": [
        reply(text("I'll ask the research agent.", fr="Je pose la question à l'agent de recherche."),
              tool_use("research", {"question": FOUNDED})),
        reply(calculator("2026 - 2019")),
        reply(text("Halden Robotics was founded by Dara Okonkwo, a former bridge engineer, in 2019: 7 years before "
                   "2026.",
                   fr="Halden Robotics a été fondée en 2019 par Dara Okonkwo, dont le premier métier était "
                      "l'ingénierie des ponts : 7 ans avant 2026.")),
    ],
    "ASKED:" + FOUNDED: [
        reply(tool_use("search", {"query": "creator"})),
        reply(text("Nothing for that word; trying another.", fr="Rien pour ce mot ; j'en essaie un autre."),
              tool_use("search", {"query": "founded"})),
        reply(text("Halden Robotics was founded in 2019 by Dara Okonkwo, a former bridge engineer.",
                   fr="Halden Robotics a été fondée en 2019 par Dara Okonkwo, dont le premier métier était "
                      "l'ingénierie des ponts.")),
    ],
}
