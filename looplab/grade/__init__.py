"""The instructors' grader: a folder of submitted notebooks graded offline, each in a fresh, isolated
kernel, judged in the grader's own process, into a CSV gradebook and the exports asked for.

    python -m looplab.grade SUBMISSIONS... --out grades.csv [--feedback DIR] [--jobs N]

What it promises (the statuses, the limits, the isolation, what it cannot rule out) is docs/GRADING.md's
"Grading"; how it is built is docs/DESIGN.md's: one flow through subpackages in their order, shared
(limits, statuses, rows) -> submissions -> kernels -> judgement -> rows -> exports, each importing
only from those before it (tests/test_grade_shape.py), with grading.py the one orchestrator and
__main__.py the command line. Below: what other code (the tests, a script) grades with.
"""

from ..long_lived import imported_for_good

with imported_for_good():  # a third less CPU for them (looplab/long_lived.py)
    from ..quick_jsonschema import import_jsonschema

    import_jsonschema()  # before nbformat imports it: 1.5 to 2 s of CPU less for every grader run (quick_jsonschema.py)

    from ..course import exercise_number
    from .exports.feedback import feedback_notebook, write_feedback
    from .exports.spreadsheet import write_csv
    from .exports.terminal import GradingProgress, summary_table
    from .grading import GradingOptions, GradingResult, UsageError, grade, grade_submission, one_row
    from .kernels.kernel_cells import start_cell_source
    from .kernels.outcome import Outcome
    from .rows.from_run import plain_syntax_error, rows_for
    from .shared.gradebook import CSV_COLUMNS, Row, Ungradable
    from .shared.limits import DEFAULT_CELL_TIMEOUT, DEFAULT_TIMEOUT
    from .shared.status import CheckKind, Status
    from .submissions.finding import Submission, collect, learner_from_file, submission_order
    from .submissions.plan import GRADER_MARK, GraderCell, Plan, grading_points, plan_run
    from .submissions.reading import load_course, read_submission
    from .submissions.versions import SubmissionVersion, not_in_version, submission_version

__all__ = [
    "CSV_COLUMNS", "DEFAULT_CELL_TIMEOUT", "DEFAULT_TIMEOUT", "GRADER_MARK", "CheckKind", "GraderCell",
    "GradingOptions", "GradingProgress", "GradingResult", "Outcome", "Plan", "Row", "Status", "Submission",
    "SubmissionVersion", "Ungradable", "UsageError", "collect", "exercise_number", "feedback_notebook", "grade",
    "grade_submission", "grading_points", "learner_from_file", "load_course", "not_in_version", "one_row",
    "plain_syntax_error", "plan_run", "read_submission", "rows_for", "start_cell_source", "submission_order",
    "submission_version", "summary_table", "write_csv", "write_feedback",
]
