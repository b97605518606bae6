"""Scripted answers for notebook 7 (see authoring/author_recordings.py).

Keyed by the name the notebook gives each question. Without tools, the model says it does not know the
company. The refining arc is written by hand to show what models typically do with a keyword search that
misses (the notebook says so): a search with the question's word, the miss, a search with another word, the
answer from the chunk. agent_knowledge.py, run by the notebook, asks REFINE_QUESTION again: same
conversation, same answers.
"""

from looplab.scripted import reply, text, tool_use

ANSWERS = {
    "NO_TOOL_QUESTION": [
        reply(text("I don't have any information about Halden Robotics or its vacation policy, so I can't tell you "
                   "how many days its staff get. Their HR team or employee handbook would know.",
                   fr="Je n'ai aucune information sur Halden Robotics ni sur sa politique de congés : je ne peux donc "
                      "pas vous dire combien de jours reçoit son personnel. Son service RH ou son livret d'accueil "
                      "le saurait.")),
    ],
    "REFINE_QUESTION": [
        reply(text("Let me search the knowledge base.", fr="Je cherche dans la base de connaissances."),
              tool_use("search", {"query": "holidays"})),
        reply(text("Nothing for that word; I'll try another.", fr="Rien pour ce mot ; j'en essaie un autre."),
              tool_use("search", {"query": "vacation"})),
        reply(text("Permanent staff at Halden Robotics get 25 days of paid vacation a year, plus two wellbeing days.",
                   fr="Le personnel permanent de Halden Robotics a 25 jours de congés payés par an, plus deux jours "
                      "de bien-être.")),
    ],
    "MEANING_QUESTION": [
        reply(tool_use("retrieve", {"query": "time off for staff"})),
        reply(text("Permanent staff get 25 days of paid vacation each year, plus two wellbeing days.",
                   fr="Le personnel permanent a 25 jours de congés payés par an, plus deux jours de bien-être.")),
    ],
}
