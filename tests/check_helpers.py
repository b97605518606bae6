"""What every check-soundness test asks: does the check pass this, and fail that for the right reason?"""

from looplab.checks import run_check


def passes(number, obj):
    result = run_check(number, obj)
    assert result.ok, f"{result.failed}\n{result.hint}"
    assert result.points == result.max_points > 0
    return result


def fails(number, obj, *expected):
    """The check fails with no points, and its message (and hint) say each of `expected`."""
    result = run_check(number, obj)
    assert not result.ok, f"exercise {number} should fail"
    assert result.points == 0
    said = f"{result.failed}\n{result.hint}"
    for words in expected:
        assert words in said, f"{words!r} not in:\n{said}"
    return result


def stub(*args, **kwargs):
    """An exercise as the learner receives it."""
    raise NotImplementedError("Exercise: replace this line with your code")
