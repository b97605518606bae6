"""`python -m looplab doctor`: the course's preflight (looplab/doctor.py). The grader has its own
entry point, `python -m looplab.grade`."""

import sys


def main(argv: list[str]) -> int:
    from .doctor import WORDS, main as doctor
    if argv != ["doctor"]:
        print(WORDS("usage"), file=sys.stderr)
        return 2
    return doctor()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
