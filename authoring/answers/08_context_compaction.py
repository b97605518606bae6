"""Scripted answers for notebook 8 (see authoring/author_recordings.py).

Keyed by the name the notebook gives each question. A trip planned over three questions (the weather, a total,
another city's weather), long enough together to pass the notebook's budget: the history is folded before the
fourth, which asks about what was said before the fold and is answered from the summary. The summary is filed
under SUMMARY_OF:BUDGET_QUESTION: the notebook folds the first two exchanges, the last question they hold being
BUDGET_QUESTION, both in its story and in the session (and agent_compaction.py repeats the session: same requests).
"""

from looplab.scripted import calculator, reply, text, tool_use

ANSWERS = {
    "TRIP_QUESTION": [
        reply(text("Let me look up the weather in Paris.", fr="Je regarde la météo à Paris."),
              tool_use("get_weather", {"city": "Paris"})),
        reply(text("Paris should be pleasant: 18°C and partly cloudy. A light jacket for the evenings is enough, "
                   "and you can plan to walk around most of the day.",
                   fr="Paris devrait être agréable : 18 °C et un ciel partiellement nuageux. Une veste légère pour le "
                      "soir suffira, et vous pouvez prévoir de marcher une bonne partie de la journée.")),
    ],
    "BUDGET_QUESTION": [
        reply(text("I'll add it up.", fr="Je fais le calcul."), calculator("89 * 2 + 2 * 34.50")),
        reply(text("The total is 247 euros: 178 euros for the two nights at the hotel, and 69 euros for the two "
                   "train tickets.",
                   fr="Le total est de 247 euros : 178 euros pour les deux nuits d'hôtel, et 69 euros pour les deux "
                      "billets de train.")),
    ],
    "LONDON_QUESTION": [
        reply(tool_use("get_weather", {"city": "London"})),
        reply(text("London would be cooler and wetter: 14°C with light rain, which there tends to come as short "
                   "showers through the afternoon. If you choose London over Paris, pack an umbrella, a waterproof "
                   "jacket and a warmer layer for the evenings. Many of its big museums are free, which would help "
                   "the budget, and the trains from the airports run often.",
                   fr="Londres serait plus frais et plus humide : 14 °C avec une pluie légère, qui y tombe souvent en "
                      "courtes averses l'après-midi. Si vous choisissez Londres plutôt que Paris, prenez un parapluie, "
                      "une veste imperméable et une couche plus chaude pour le soir. Beaucoup de ses grands musées "
                      "sont gratuits, ce qui aiderait le budget, et les trains depuis les aéroports sont fréquents.")),
    ],
    "RECALL_QUESTION": [
        reply(text("For the Paris weekend, the total was 247 euros (hotel and train), and the weather there should "
                   "be 18°C and partly cloudy.",
                   fr="Pour le week-end à Paris, le total était de 247 euros (hôtel et train), et il devrait y faire "
                      "18 °C sous un ciel partiellement nuageux.")),
    ],
    "SUMMARY_OF:BUDGET_QUESTION": [
        reply(text("The user is planning a weekend in Paris, where the weather will be 18°C and partly cloudy. Their "
                   "budget: a hotel at 89 euros a night for 2 nights (178 euros) and 2 train tickets at 34.50 euros "
                   "(69 euros), 247 euros in total.",
                   fr="L'utilisateur prépare un week-end à Paris, où il fera 18 °C sous un ciel partiellement nuageux. "
                      "Son budget : un hôtel à 89 euros la nuit pour 2 nuits (178 euros) et 2 billets de train à "
                      "34,50 euros (69 euros), soit 247 euros au total.")),
    ],
}
