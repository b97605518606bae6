"""Every exercise of the course has soundness tests: its check shown failing on at least two wrong answers.

A check that passes the solution proves little; the tests in tests/test_checks_notebookN.py also show
it failing on typical mistakes, with the words the learner needs. This test reads those files (see
`tests.check_helpers.soundness_gaps`) and fails for any exercise in the manifest, a new one included,
with fewer than two distinct wrong answers passed to `fails` (the stub and an empty dict don't count).
"""

from looplab.course import COURSE
from tests.check_helpers import soundness_file, soundness_gaps, wrong_answers_shown_failing


def test_every_exercise_has_at_least_two_wrong_answers_shown_failing():
    gaps = soundness_gaps(COURSE)
    assert not gaps, "\n".join(gaps)


def test_the_count_sees_the_tests_as_they_are_written():
    """Direct calls, parametrize tables in the decorator and in a module-level list all count."""
    counts = {number: len(answers) for notebook in COURSE.notebooks
              for number, answers in wrong_answers_shown_failing(soundness_file(notebook)).items()}
    assert counts["1.2"] >= 9  # test_wrong_tool_definitions_fail: a table in the decorator
    assert counts["4.1"] >= 20  # test_a_typical_mistake_fails_with_the_right_message: WRONG_ANSWERS, a list
    assert set(counts) == {exercise.id for exercise in COURSE.exercises}
