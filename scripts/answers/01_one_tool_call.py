"""Scripted answers for notebook 1 (see scripts/author_recordings.py)."""

from looplab.scripted import calculator, reply, text

ANSWERS = {
    "What is 4823 × 1979?": [
        reply(text("I'll use the calculator to get this exactly."), calculator("4823 * 1979")),
    ],
    # After the unanswered request was dropped, the model has no memory of it and asks again.
    "So what is the answer?": [
        reply(text("Let me calculate 4823 × 1979 for you."), calculator("4823 * 1979")),
    ],
}
