"""Scripted answers for notebook 5 (see authoring/author_recordings.py).

Keyed by the name the notebook gives each question (`WEATHER_QUESTION = "..."`): the words are written
once, in the notebook. The n-th reply answers the n-th model call after that question. The program
agent_toolbox.py and the MCP section ask WEATHER_QUESTION again: same conversation, same answers.

Two questions are asked several ways, and their answers depend on how (a reply is a function of the
request): MISSISSIPPI_QUESTION with a vague description of count_letters and with a better one, and
PARIS_QUESTION with each tool_choice. These replies are written by hand to show what models typically
do; the notebook says so, and live mode shows what the real one does.
"""

from looplab.scripted import calculator, reply, text, tool_use

VAGUE_LETTERS = "Counts things."  # the vague description of count_letters, as the notebook sends it
VAGUE_LETTERS_FR = "Compte des choses."  # the same, as the French notebook sends it (translations/fr/05_toolbox.toml)


def weather(city: str) -> dict:
    return tool_use("get_weather", {"city": city})


def depending_on(read, replies: dict, otherwise):
    """A reply chosen by what `read` finds in the request (a tool's description, the tool_choice)."""
    return lambda request: replies.get(read(request), otherwise)(request)


def letters_description(request: dict):
    return next((tool.get("description") for tool in request.get("tools", []) if tool.get("name") == "count_letters"),
                None)


def choice(request: dict) -> str:
    chosen = request.get("tool_choice") or {"type": "auto"}
    return ":".join(str(chosen.get(key)) for key in ("type", "name") if key in chosen)


ANSWERS = {
    # One question per tool, then two tools in one reply, then none: the course's agent_turn, in the viewer.
    "WEATHER_QUESTION": [
        reply(weather("Tokyo")),
        reply(text("It's 24°C with clear skies in Tokyo right now.",
                   fr="Il fait 24 °C sous un ciel dégagé à Tokyo en ce moment.")),
    ],
    "LETTERS_QUESTION": [
        reply(text("I'll count them exactly.", fr="Je vais les compter exactement."),
              tool_use("count_letters", {"text": "strawberry", "letter": "r"})),
        reply(text("The letter r appears 3 times in 'strawberry'.",
                   fr="La lettre r apparaît 3 fois dans « strawberry ».")),
    ],
    "ARITHMETIC_QUESTION": [
        reply(calculator("365 * 24")),
        reply(text("A year of 365 days has 8,760 hours.", fr="Une année de 365 jours compte 8 760 heures.")),
    ],
    "BOTH_QUESTION": [
        reply(text("Two things at once: the weather, and a multiplication.",
                   fr="Deux choses à la fois : la météo, et une multiplication."), weather("London"),
              calculator("7 * 24 * 60")),
        reply(text("Yes: light rain in London (14°C). And a week has 10,080 minutes.",
                   fr="Oui : pluie légère à Londres (14 °C). Et une semaine compte 10 080 minutes.")),
    ],
    "GREETING_QUESTION": [
        reply(text("Hi! I can do exact arithmetic, tell you the weather in a few cities, and count the letters of "
                   "a word. What would you like to know?",
                   fr="Salut ! Je sais faire des calculs exacts, te donner la météo de quelques villes et compter "
                      "les lettres d'un mot. Qu'aimerais-tu savoir ?")),
    ],
    # The same question, with a vague description of count_letters, then with the registry's own (the French
    # notebook sends the vague one in French: both words of it get the same reply).
    "MISSISSIPPI_QUESTION": [
        depending_on(letters_description, {
            vague: reply(text("'Mississippi' has 3 s's.", fr="« Mississippi » contient 3 s."))
            for vague in (VAGUE_LETTERS, VAGUE_LETTERS_FR)
        }, otherwise=reply(text("Let me count.", fr="Je compte."),
                           tool_use("count_letters", {"text": "Mississippi", "letter": "s"}))),
    ],
    # The same question with each tool_choice: what each does to the reply.
    "PARIS_QUESTION": [
        depending_on(choice, {
            "auto": reply(text("Paris is the capital of France, famous for the Eiffel Tower, its museums and its "
                               "cafés.",
                               fr="Paris est la capitale de la France, célèbre pour la tour Eiffel, ses musées et "
                                  "ses cafés.")),
            "any": reply(weather("Paris")),
            "tool:count_letters": reply(tool_use("count_letters", {"text": "Paris", "letter": "a"})),
            "tool:get_weather": reply(weather("Paris")),
            "none": reply(text("Paris, France's capital on the Seine, is known for its art, its food and the Eiffel "
                               "Tower.",
                               fr="Paris, capitale de la France sur la Seine, est connue pour son art, sa cuisine et "
                                  "la tour Eiffel.")),
        }, otherwise=reply(text("Paris is the capital of France.", fr="Paris est la capitale de la France."))),
    ],
}
