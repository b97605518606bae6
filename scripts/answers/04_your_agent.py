"""Scripted answers for notebook 4 (see scripts/author_recordings.py).

The n-th reply answers the n-th model call after that user question. agent.py, run as a script by
the notebook, asks the first question again: same conversation, same answers.
"""

from looplab.scripted import calculator, reply, text, tool_use

ANSWERS = {
    # run's try-it, two lines of one session (and agent.py's single line).
    "What is 4823 × 1979?": [
        reply(text("I'll use the calculator for that."), calculator("4823 * 1979")),
        reply(text("4823 × 1979 = 9,544,717.")),
    ],
    "And that divided by 7?": [
        reply(text("Now I'll divide that result by 7."), calculator("9544717 / 7")),
        reply(text("9,544,717 ÷ 7 = 1,363,531.")),
    ],
    # A reply cut short on purpose: the request asks for max_tokens=8.
    "Explain in three paragraphs why 0.1 + 0.2 is not 0.3 in Python.": [
        reply(text("In Python, 0.1 + 0.2"), stop_reason="max_tokens"),
    ],
    # The look ahead: one request each, with a toolbox of two tools.
    "How many times does the letter r appear in 'strawberry'?": [
        reply(text("I'll count them exactly."), tool_use("count_letters", {"text": "strawberry", "letter": "r"})),
    ],
    "What is 365 × 24?": [
        reply(calculator("365 * 24")),
    ],
    "Hi! What can you do?": [
        reply(text("Hi! I can do exact arithmetic and count the letters in a word or text. What would you like to know?")),
    ],
}
