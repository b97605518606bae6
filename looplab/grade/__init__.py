"""Grade a folder of submitted notebooks into a gradebook, offline, in fresh kernels.

    python -m looplab.grade SUBMISSIONS... --out grades.csv [--feedback DIR] [--jobs N]

SUBMISSIONS are notebook files and folders. In a folder, each subfolder is one learner (named
after the subfolder; every notebook under it is theirs) and each notebook lying directly in it
is named from its file: the file name minus the course notebook's name (`alice-01_one_tool_call`
-> `alice`), or, when nothing is left, the name of the folder holding it
(`alice/01_one_tool_call.ipynb` given on its own -> `alice`). Files other than notebooks are
ignored in folders; hidden folders (such as `.ipynb_checkpoints`) are skipped.

How a notebook is graded
------------------------
- Which notebook it is comes from its exercise cells' metadata (`looplab.exercise`): their numbers
  must all belong to one course notebook (the course manifest, looplab/course.py). A notebook without any exercise
  metadata is matched by its file name instead. The object each exercise is checked on is the name
  the manifest gives it, the one the official check cell passes, `check("2.1", tool_result)`.
- It runs top to bottom in a fresh kernel (nbclient), offline whatever the environment says
  (no ANTHROPIC_* variables, LOOPLAB_MODE=offline, HTTP proxies pointed at a closed port, its own
  IPython directory), in a temporary folder holding a copy of the file. Errors don't stop the run.
  A cell that runs past `--cell-timeout` is interrupted and the run goes on; the whole notebook is
  stopped at `--timeout`. `--jobs N` (default: the number of cores) grades N notebooks at a time,
  each in its own kernel.
- The grader adds its own cells, run without entering the history: one before the learner's first
  cell, which records a fingerprint of the check machinery (every function, class and constant of
  the looplab modules, their code, and the builtins); one right before each exercise's check cell
  (or, if the learner deleted it, before the next exercise), which runs the official
  `looplab.checks.run_check` on the learner's object as it is at that point, between two more
  fingerprints; one after the last cell. Grading where the check cell sits matters: notebook 2
  redefines `agent_turn` in a later exercise, and a check at the very end would grade the wrong one.
- Points come only from those cells' results, read from the one output that carries the nonce the
  grader made for this run; everything a submission stores (outputs, scores) and everything the
  learner's own cells print is ignored. If a fingerprint differs from the first one, the notebook
  tampered with the checks and gets 0 everywhere.
- By default (on Linux) kernels are forked from a template process that has already imported the
  kernel, the SDK and looplab (and formatted one traceback: IPython's first costs most of a
  second), so each notebook pays neither the kernel's start-up imports nor `import anthropic`. The
  template is forked from the grader itself at start, before it has run anything. A forked kernel
  is still a fresh process: it has never run anyone's code and shares nothing with other kernels.
  `--plain-kernels` starts each kernel the usual way instead (about 2 s more per notebook).

The gradebook
-------------
One CSV row per exercise of each graded notebook, one row for a submission that could not be
graded at all (exercise empty). Columns: learner, notebook, exercise, points, max_points, status,
message, file. The status, in plain words:

    solved                     full points
    not solved                 the check failed; the message is the check's own explanation
    not written yet            the exercise still raises NotImplementedError (or is still empty)
    not defined                the exercise's function or variable does not exist where it is graded
    syntax error               the exercise cell does not parse, so nothing in it ran
    stopped: cell N ran past the S s limit
                               a cell was interrupted at --cell-timeout; it is reported on the
                               first exercise graded after it (else the last one), which was still
                               graded and failed (if it passed, it is "solved" and the message
                               notes the stop)
    stopped: the notebook ran past the total limit (S s)
                               the run was stopped before this exercise was graded
    the kernel died (in cell N)
                               the kernel exited (os._exit, a crash, memory) before this exercise
                               was graded; "(during the check of exercise X)" if it died in a check
    tampered with the checks   the check machinery changed while the notebook ran; 0 points
    could not be graded        the grader's own cell failed in this kernel; the message says how
    grader error               the grader itself failed (e.g. the kernel would not start)

    invalid JSON               (one row) the file is not JSON
    not a notebook             (one row) JSON, but not a notebook
    not a notebook of this course
                               (one row) its exercises are not those of a course notebook
    no notebook found          (one row) a learner's folder without a notebook
    cannot be read             (one row) the file could not be opened

Cells are numbered from 1, counting every cell from the top, markdown included.

`--feedback DIR` writes, for each notebook that ran, the executed copy (the learner's cells with
their new outputs, without the grader's cells) and the grade as a last markdown cell, to
DIR/<learner>/<file name>. Submissions are only ever read.

What it cannot do: the learner's code runs in the same process as the checks (it has to: the
checks call it), so code written specifically to attack the grader from inside the kernel
(rewriting the grader's cells as they run, patching the interpreter) is beyond what any in-kernel
grader can rule out. Code that redefines or patches the checks, forges their output or prints
fake results is caught. It also runs the learner's code as you: grade untrusted submissions in a
throwaway account or container.
"""

from .course import CourseNotebook, Exercise, _exercise_of, load_course
from .gradebook import CSV_COLUMNS, Row
from .kernel_cells import GRADER_MARK, KERNEL_CODE, MIME, grader_cell_source
from .kernels import FORK_SERVER_BOOT, ForkServer, _serve_forks
from .outcome import Outcome
from .plan import (
    DEFAULT_CELL_TIMEOUT,
    DEFAULT_TIMEOUT,
    Plan,
    Step,
    _grading_points,
    plan_run,
    read_submission,
)
from .report import (
    Progress,
    feedback_notebook,
    summary_table,
    write_csv,
    write_feedback,
)
from .rows import _plain_syntax_error, rows_for
from .runner import Grader, grade_all
from .submissions import Submission, collect, learner_from_file

__all__ = [
    "CSV_COLUMNS", "DEFAULT_CELL_TIMEOUT", "DEFAULT_TIMEOUT", "FORK_SERVER_BOOT", "GRADER_MARK",
    "KERNEL_CODE", "MIME", "CourseNotebook", "Exercise", "ForkServer", "Grader", "Outcome", "Plan",
    "Progress", "Row", "Step", "Submission", "_exercise_of", "_grading_points",
    "_plain_syntax_error", "_serve_forks", "collect", "feedback_notebook", "grade_all", "grader_cell_source",
    "learner_from_file", "load_course", "plan_run", "read_submission", "rows_for", "summary_table", "write_csv",
    "write_feedback",
]
