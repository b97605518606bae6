"""Scripted answers for notebook 2, closing the loop (the `02_closing_the_loop` recording).

The n-th reply answers the n-th model call after the question. The round-trip question is asked
twice in the notebook (by notebook 1's one_shot, then by hand), and both get the first reply.
"""

from looplab.scripted import calculator, reply, text

ROUND_TRIP = "What is 3917 × 8263?"
CINEMA = "A cinema has 47 rows of 32 seats. How many seats is that?"
WAREHOUSE = (
    "A warehouse holds 1250 crates of 48 boxes each, and every box holds 36 bottles. "
    "A truck carries 9600 bottles. How many truck loads does it take to empty the warehouse?"
)

ANSWERS = {
    ROUND_TRIP: [
        reply(text("I'll use the calculator for that."), calculator("3917 * 8263")),
        reply(text("3917 × 8263 = 32,366,171.")),
    ],
    CINEMA: [
        reply(calculator("47 * 32")),
        reply(text("The cinema has 1,504 seats.")),
    ],
    # One calculation per call, each built on the result before: the loop goes round three times.
    WAREHOUSE: [
        reply(text("First, the number of boxes."), calculator("1250 * 48")),
        reply(text("Now the number of bottles."), calculator("60000 * 36")),
        reply(text("Finally, the truck loads."), calculator("2160000 / 9600")),
        reply(text("It takes 225 truck loads to empty the warehouse.")),
    ],
}
