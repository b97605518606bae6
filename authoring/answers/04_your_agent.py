"""Scripted answers for notebook 4 (see authoring/author_recordings.py).

Keyed by the name the notebook gives each question (`PRODUCT_QUESTION = "..."`): the words are
written once, in the notebook. The n-th reply answers the n-th model call after that question.
agent.py, run as a script by the notebook, asks the first question again: same conversation, same
answers.
"""

from looplab.scripted import calculator, reply, text

ANSWERS = {
    # run's try-it, two lines of one session (and agent.py's single line).
    "PRODUCT_QUESTION": [
        reply(text("I'll use the calculator for that.", fr="Je vais utiliser la calculatrice pour ça."),
              calculator("4823 * 1979")),
        reply(text("4823 × 1979 = 9,544,717.", fr="4823 × 1979 = 9 544 717.")),
    ],
    "FOLLOW_UP_QUESTION": [
        reply(text("Now I'll divide that result by 7.", fr="Je divise maintenant ce résultat par 7."),
              calculator("9544717 / 7")),
        reply(text("9,544,717 ÷ 7 = 1,363,531.", fr="9 544 717 ÷ 7 = 1 363 531.")),
    ],
    # A reply cut short on purpose: the request asks for max_tokens=8.
    "ESSAY_QUESTION": [
        reply(text("In Python, 0.1 + 0.2", fr="En Python, 0.1 + 0.2"), stop_reason="max_tokens"),
    ],
}
