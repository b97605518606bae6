"""`python -m looplab doctor`: the course's preflight (looplab/doctor.py). The grader has its own
entry point, `python -m looplab.grade`."""

import sys

USAGE = "usage: python -m looplab doctor    (checks that this machine is ready for the course)"


def main(argv: list[str]) -> int:
    if argv != ["doctor"]:
        print(USAGE, file=sys.stderr)
        return 2
    from .doctor import main as doctor
    return doctor()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
