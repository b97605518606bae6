"""`python -m looplab doctor [--lang fr]`: the course's preflight (looplab/doctor.py), in English or in the
language `--lang` names (else LOOPLAB_LANG's). The grader has its own entry point, `python -m looplab.grade`."""

import sys


def language_option(args: list[str]) -> tuple[str | None, list[str]]:
    """(`--lang`'s value or None, the other arguments): `--lang fr` or `--lang=fr`."""
    for index, arg in enumerate(args):
        if arg == "--lang" and index + 1 < len(args):
            return args[index + 1].strip().lower(), args[:index] + args[index + 2:]
        if arg.startswith("--lang="):
            return arg.partition("=")[2].strip().lower(), args[:index] + args[index + 1:]
    return None, list(args)


def main(argv: list[str]) -> int:
    from . import language
    from .doctor import WORDS, main as doctor
    chosen, rest = language_option(argv)
    if rest != ["doctor"] or (chosen is not None and chosen not in language.LANGUAGES):
        print(WORDS("usage"), file=sys.stderr)
        return 2
    if chosen is None:
        return doctor()
    with language.using(chosen):
        return doctor()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
