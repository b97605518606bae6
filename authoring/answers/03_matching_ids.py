"""Scripted answers for notebook 3, matching ids (the `03_matching_ids` recording).

Keyed by the name the notebook gives each question (`TRAIN_QUESTION = "..."`): the words are
written once, in the notebook. The n-th reply answers the n-th model call after the question. The
train question's second reply is written from the results it receives, matched to the calls by id,
as a model reads them: so when the notebook sends the results with their ids swapped, the answer
swaps the numbers too.
"""

from looplab.scripted import calculator, reply, text


def _euros(output: str, thousands: str = ",") -> str:
    """A result as euros, its thousands grouped as the language writes them: 1,147 € in English, 1 147 € in French."""
    try:
        return f"{float(output):,.0f} €".replace(",", thousands)
    except ValueError:
        return output


def train_answer(request: dict) -> dict:
    """The model's words follow the ids: the result citing the March call is read as March's."""
    messages = request["messages"]
    calls = [block for block in messages[-2]["content"] if block["type"] == "tool_use"]
    results = {block["tool_use_id"]: block["content"] for block in messages[-1]["content"]
               if block["type"] == "tool_result"}
    march, april = (results[call["id"]] for call in calls)
    return reply(text(f"You spend {_euros(march)} in March and {_euros(april)} in April.",
                      fr=f"Vous dépensez {_euros(march, ' ')} en mars et {_euros(april, ' ')} en avril."))(request)


ANSWERS = {
    "TRAIN_QUESTION": [
        reply(text("I'll work out both months at once.", fr="Je calcule les deux mois d'un coup."),
              calculator("37 * 23"), calculator("37 * 31")),
        train_answer,
    ],
    # The model copies "1,250" from the question, the calculator refuses the comma, the model reads
    # the error and writes the number again without it. The French question writes "1,250 kg" (a decimal
    # comma, as French writes 1.25), so the same calls fit: the copied "1,250", and 1250 once in grams.
    "RECIPE_QUESTION": [
        reply(text("I'll compute both amounts.", fr="Je calcule les deux quantités."),
              calculator("1,250 * 6 / 4"), calculator("1250 / 4")),
        reply(text("The calculator wants numbers without a thousands separator, so again:",
                   fr="La calculatrice refuse la virgule dans un nombre ; je recommence donc, en grammes :"),
              calculator("1250 * 6 / 4")),
        reply(text("For 6 people you need 1,875 g of flour, which is 312.5 g per person.",
                   fr="Pour 6 personnes, il vous faut 1 875 g de farine, soit 312,5 g par personne.")),
    ],
    # Three independent products at once, then the total, which needs their results.
    "SHOPPING_QUESTION": [
        reply(text("Let me work out each kind of item.", fr="Je calcule chaque sorte d'article."),
              calculator("3 * 4.75"), calculator("2 * 1.20"), calculator("5 * 0.85")),
        reply(text("Now the total.", fr="Maintenant, le total."), calculator("14.25 + 2.4 + 4.25")),
        reply(text("The notebooks cost 14.25 €, the pens 2.40 € and the stamps 4.25 €: 20.90 € in total.",
                   fr="Les cahiers coûtent 14,25 €, les stylos 2,40 € et les timbres 4,25 € : 20,90 € en tout.")),
    ],
}
