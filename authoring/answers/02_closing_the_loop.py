"""Scripted answers for notebook 2, closing the loop (the `02_closing_the_loop` recording).

Keyed by the name the notebook gives each question (`CINEMA_QUESTION = "..."`): the words are
written once, in the notebook. The n-th reply answers the n-th model call after the question. The
product question is asked twice in the notebook (by notebook 1's one_shot, then by hand), and both
get the first reply.
"""

from looplab.scripted import calculator, reply, text

ANSWERS = {
    "PRODUCT_QUESTION": [
        reply(text("I'll use the calculator for that.", fr="Je vais utiliser la calculatrice pour cela."),
              calculator("3917 * 8263")),
        reply(text("3917 × 8263 = 32,366,171.", fr="3917 × 8263 = 32 366 171.")),
    ],
    "CINEMA_QUESTION": [
        reply(calculator("47 * 32")),
        reply(text("The cinema has 1,504 seats.", fr="Le cinéma compte 1 504 fauteuils.")),
    ],
    # One calculation per call, each built on the result before: the loop goes round three times.
    "WAREHOUSE_QUESTION": [
        reply(text("First, the number of boxes.", fr="D'abord, le nombre de cartons."), calculator("1250 * 48")),
        reply(text("Now the number of bottles.", fr="Maintenant, le nombre de bouteilles."),
              calculator("60000 * 36")),
        reply(text("Finally, the truck loads.", fr="Enfin, les chargements de camion."),
              calculator("2160000 / 9600")),
        reply(text("It takes 225 truck loads to empty the warehouse.",
                   fr="Il faut 225 chargements de camion pour vider l'entrepôt.")),
    ],
}
