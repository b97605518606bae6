"""Scripted answers for notebook 11 (see authoring/author_recordings.py).

Keyed by the name the notebook gives each question; the researcher's questions are the parent model's own words,
filed under ASKED:<words>, and the summary call under SUMMARY_OF:<the last named question its transcript holds>.
The demo folds its first exchange before its third line, so the summary is of FOUNDER_QUESTION alone.
"""

from looplab.scripted import calculator, reply, text, tool_use

FOUNDED_WHERE = "Who founded Halden Robotics, and where is its headquarters now?"
PRODUCT_CAT = "What was Halden Robotics' first product, and what is the office cat called?"

ANSWERS = {
    "FOUNDER_QUESTION": [
        reply(tool_use("research", {"question": FOUNDED_WHERE})),
        reply(text("Dara Okonkwo founded Halden Robotics in 2019; its headquarters have been in Utrecht, next to the "
                   "central station, since 2023.",
                   fr="Dara Okonkwo a fondé Halden Robotics en 2019 ; son siège est à Utrecht, près de la gare "
                      "centrale, depuis 2023.")),
    ],
    "ASKED:" + FOUNDED_WHERE: [
        reply(tool_use("search", {"query": "founded"})),
        reply(tool_use("search", {"query": "headquarters"})),
        reply(text("Halden Robotics was founded in 2019 by Dara Okonkwo, a former bridge engineer. In 2023 its "
                   "headquarters moved from Ghent to Utrecht, next to the central station.",
                   fr="Halden Robotics a été fondée en 2019 par Dara Okonkwo, dont le premier métier était l'ingénierie des ponts. En 2023, "
                      "son siège a quitté Gand pour Utrecht, près de la gare centrale.")),
    ],
    "ALLOWANCE_QUESTION": [
        reply(calculator("25 * 180")),
        reply(text("25 days at $180 each: the whole allowance is worth $4,500.",
                   fr="25 jours à 180 $ chacun : l'ensemble vaut 4 500 $.")),
    ],
    "SUMMARY_OF:FOUNDER_QUESTION": [
        reply(text("The user asked who founded Halden Robotics and where it is based: Dara Okonkwo founded it in "
                   "2019, and its headquarters have been in Utrecht since 2023.",
                   fr="L'utilisateur a demandé qui a fondé Halden Robotics et où se trouve son siège : Dara Okonkwo "
                      "l'a fondée en 2019, et son siège est à Utrecht depuis 2023.")),
    ],
    "LAST_QUESTION": [
        reply(tool_use("research", {"question": PRODUCT_CAT})),
        reply(text("Its first product was Pathfinder, a warehouse robot that maps shelves at night, and the office "
                   "cat is called Tinker.",
                   fr="Son premier produit était Pathfinder, un robot d'entrepôt qui cartographie les rayonnages la "
                      "nuit, et la chatte du bureau s'appelle Tinker.")),
    ],
    "ASKED:" + PRODUCT_CAT: [
        reply(tool_use("search", {"query": "first product office cat"})),
        reply(text("Halden Robotics' first product, Pathfinder, is a warehouse robot that maps shelves at night. The "
                   "office cat, Tinker, sleeps on the server rack.",
                   fr="Le premier produit de Halden Robotics, Pathfinder, est un robot d'entrepôt qui cartographie les "
                      "rayonnages la nuit. La chatte du bureau, Tinker, dort sur la baie de serveurs.")),
    ],
    "SDK_QUESTION": [
        reply(calculator("19 * 23")),
        reply(text("19 × 23 = 437.", fr="19 × 23 = 437.")),
    ],
}
