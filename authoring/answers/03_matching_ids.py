"""Scripted answers for notebook 3, matching ids (the `03_matching_ids` recording).

Keyed by the name the notebook gives each question (`TRAIN_QUESTION = "..."`): the words are
written once, in the notebook. The n-th reply answers the n-th model call after the question. The
train question's second reply is written from the results it receives, matched to the calls by id,
as a model reads them: so when the notebook sends the results with their ids swapped, the answer
swaps the numbers too.
"""

from looplab.scripted import calculator, reply, text


def _euros(output: str) -> str:
    try:
        return f"{float(output):,.0f} €"
    except ValueError:
        return output


def train_answer(request: dict) -> dict:
    """The model's words follow the ids: the result citing the March call is read as March's."""
    messages = request["messages"]
    calls = [block for block in messages[-2]["content"] if block["type"] == "tool_use"]
    results = {block["tool_use_id"]: block["content"] for block in messages[-1]["content"]
               if block["type"] == "tool_result"}
    march, april = (results[call["id"]] for call in calls)
    return reply(text(f"You spend {_euros(march)} in March and {_euros(april)} in April."))(request)


ANSWERS = {
    "TRAIN_QUESTION": [
        reply(text("I'll work out both months at once."), calculator("37 * 23"), calculator("37 * 31")),
        train_answer,
    ],
    # The model copies "1,250" from the question, the calculator refuses the comma, the model reads
    # the error and writes the number again without it.
    "RECIPE_QUESTION": [
        reply(text("I'll compute both amounts."), calculator("1,250 * 6 / 4"), calculator("1250 / 4")),
        reply(text("The calculator wants numbers without a thousands separator, so again:"),
              calculator("1250 * 6 / 4")),
        reply(text("For 6 people you need 1,875 g of flour, which is 312.5 g per person.")),
    ],
    # Three independent products at once, then the total, which needs their results.
    "SHOPPING_QUESTION": [
        reply(text("Let me work out each kind of item."),
              calculator("3 * 4.75"), calculator("2 * 1.20"), calculator("5 * 0.85")),
        reply(text("Now the total."), calculator("14.25 + 2.4 + 4.25")),
        reply(text("The notebooks cost 14.25 €, the pens 2.40 € and the stamps 4.25 €: 20.90 € in total.")),
    ],
}
