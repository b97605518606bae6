"""Scripted answers for the `calculator` recording (used by the tests and the viewer demo)."""

from looplab.scripted import calculator, reply, text

ANSWERS = {
    "What is 4823 × 1979?": [
        reply(text("I'll use the calculator for that."), calculator("4823 * 1979")),
        reply(text("4823 × 1979 = 9,544,717.")),
    ],
    "What are 4823 × 1979 and 1234 / 8?": [
        reply(text("I'll work out both at once."), calculator("4823 * 1979"), calculator("1234 / 8")),
        reply(text("4823 × 1979 = 9,544,717, and 1234 / 8 = 154.25.")),
    ],
}
