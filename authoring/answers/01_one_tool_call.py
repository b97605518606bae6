"""Scripted answers for notebook 1 (see authoring/author_recordings.py).

Keyed by the name the notebook gives each question (`PRODUCT_QUESTION = "..."`): the words are
written once, in the notebook, and the n-th reply answers the n-th model call after that question.
"""

from looplab.scripted import calculator, reply, text

ANSWERS = {
    "PRODUCT_QUESTION": [
        reply(text("I'll use the calculator to get this exactly.",
                   fr="Je vais utiliser la calculatrice pour obtenir le résultat exact."),
              calculator("4823 * 1979")),
    ],
    # After the unanswered request was dropped, the model has no memory of it and asks again.
    "FOLLOW_UP_QUESTION": [
        reply(text("Let me calculate 4823 × 1979 for you.", fr="Je calcule 4823 × 1979 pour vous."),
              calculator("4823 * 1979")),
    ],
}
