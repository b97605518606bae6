"""Grade a folder of submitted notebooks into a gradebook, offline, in fresh kernels.

    python -m looplab.grade SUBMISSIONS... --out grades.csv [--feedback DIR] [--jobs N]

SUBMISSIONS are notebook files and folders. In a folder, each subfolder is one learner (named
after the subfolder; every notebook under it is theirs) and each notebook lying directly in it
is named from its file: the file name minus the course notebook's name (`alice-01_one_tool_call`
-> `alice`), or, when nothing is left, the name of the folder holding it
(`alice/01_one_tool_call.ipynb` given on its own -> `alice`). Files other than notebooks are
ignored in folders; hidden folders (such as `.ipynb_checkpoints`) are skipped. Symbolic links in a
folder given are never followed: a notebook that is one, or a linked folder, is a row "a link, not read".
A file over limits.SUBMISSION_LIMIT bytes is a row "too large", never read. `--one-submission` makes
every notebook under the paths one learner's (Gradescope's upload).

How a notebook is graded
------------------------
- Which notebook it is comes from its exercise cells' metadata (`looplab.exercise`): their numbers
  must all belong to one course notebook (the course manifest, looplab/course.py). A notebook
  without any exercise metadata is matched by its file name instead. The object each exercise is checked on is the name
  the manifest gives it, the one the official check cell passes, `check("2.1", tool_result)`.
- It runs top to bottom in a fresh kernel (nbclient), offline whatever the environment says
  (no ANTHROPIC_* variables, LOOPLAB_MODE=offline, HTTP proxies pointed at a closed port, its own
  IPython directory, emptied before the next notebook), in a temporary folder holding a copy of the
  file. Errors don't stop the run. What it prints is capped as it arrives (outputs.py); the folders it
  wrote are emptied whatever tree it left (emptying.py); the gradebook is written whatever fails.
  A cell that computes past `--cell-timeout` (CPU seconds of the notebook's processes, with a
  wall-clock bound 3x as long) is interrupted and the run goes on, the cells after it with a shorter
  limit; a check stops the learner's code sooner than in the notebook; the whole notebook is stopped
  at `--timeout`; a stopped notebook is graded again with every limit doubled, and that run counts
  (limits.py says how long each, and why; process_tree.py and cgroups.py how the time is counted). `--jobs N` (default: one per
  core, at most one per 1 GB of free memory, a kernel's data limit)
  grades N notebooks at a time, each in its own kernel, in a job slot of its own (slots.py: its
  folders, its template).
- Isolation (sandbox.py, `--isolation auto|bwrap|none`): where bubblewrap works, every slot is a
  sandbox: the system, the interpreter, the venv and the course read-only, the slot's own folders
  writable, nothing else visible (not the submissions, the instructor's home, the other slots); no
  network (the grader reaches the kernel over IPC sockets in the slot's folder); a PID namespace of
  its own, whose processes all die when the notebook ends. `auto` says first, and again at the end,
  when kernels are NOT isolated and why. Resource limits (memory, processes, file size, open
  files) apply either way.
- The grader adds its own cells, run without entering the history: one before the learner's first
  cell, which starts the memory watch (in_kernel.py, kernel_cells.py); one right before each
  exercise's check cell (or, if the learner deleted it, before the next exercise), which connects
  the kernel to the grader (looplab/serve.py) while the grader runs the official checks in its own
  process on proxies of the learner's objects as they are at that point (judge.py, over
  looplab/channel.py). Grading where the check cell sits matters: notebook 2 redefines `agent_turn`
  in a later exercise, and a check at the very end would grade the wrong one.
- Points come only from that judgement: the kernel runs the learner's code and sends back what it
  returned and did, as plain data, judged as the learner's answer; what it claims (the course's own
  code, out of time) can only cost points. Everything a submission stores (outputs, scores) and
  everything the learner's own cells print is ignored; nothing in the kernel is a secret or a verdict.
- Which course version it was made with comes from its metadata (`looplab.course_version`, see
  course.SubmissionVersion). Exercises the course added after that version are not checked: their
  rows say "not in this version", 0 of 0 points.
- By default (on Linux) kernels are forked from a template process that has already imported the
  kernel, the SDK and looplab (and formatted one traceback: IPython's first costs most of a
  second), so each notebook pays neither the kernel's start-up imports nor `import anthropic`. Each
  slot has its own template, serving one kernel at a time: forked from the grader itself at start,
  before it has run anything, or started inside the slot's sandbox. A forked kernel is still a fresh
  process: it has never run anyone's code and shares nothing with other kernels. A template a kernel
  killed is started again, and the notebook it held graded once more, so only a notebook that kills
  its own template gets the rows of a dead kernel.
  `--plain-kernels` starts each kernel the usual way instead (about 2 s more per notebook), under a
  small parent (so a kernel that kills its parent never kills the grader), in a sandbox of its own.
  jupyter_client gets these kernels through its public seams: a kernel spec the grader writes, whose
  provisioner (`looplab-fork`, an entry point of this package) forks instead of starting a process.
- The run goes through a plain nbclient NotebookClient: a cell past its limit is interrupted, and
  nbclient's `error_on_timeout` reply, seen by its `on_cell_executed` hook, says which cells were.

The gradebook
-------------
One CSV row per exercise of each graded notebook, one row for a submission that could not be
graded at all (exercise empty). Columns: learner, notebook, exercise, points, max_points, status,
message, file, course_version, hint (the check's hint beside its message, as the learner saw it). The statuses, with their CSV text and what each means, are `Status`
(status.py); README.md's table of them is `Status.readme_table()`. A check's result reaches its row
by the kind the check reports (solved, not written, not solved), never by its wording.

Cells are numbered from 1, counting every cell from the top, markdown included.

`--feedback DIR` writes, for each notebook that ran, the executed copy (the learner's cells with
their new outputs, at most report.OUTPUT_LIMIT characters of them per cell, without the grader's
cells) and the grade as a last markdown cell, to DIR/<learner's folder>/<file name>, the folder never
shared by two learners (report.feedback_folder). Submissions are only ever read. The CSV's `file` is
the submission's path from the folder given, that folder's name first (Submission.file).

Exports, built from the rows alone: `--report FILE` the class report, one self-contained HTML page
(class_report.py); `--canvas FILE --roster FILE` a Canvas gradebook CSV (canvas.py); `--gradescope
FILE` Gradescope's results.json for one submission (gradescope.py, run by grading/gradescope/run_autograder;
refused for several learners; it says itself when kernels were not isolated). Every CSV
cell a spreadsheet would run as a formula gets a leading apostrophe (spreadsheet.py).

What it cannot do: the learner's code runs in the same process as the checks (it has to: the
checks call it), so code written specifically against this grader (reading its key out of the
process, patching the interpreter) is beyond what any in-kernel grader can rule out. Code that
redefines or patches the checks, prints fake results, shadows the names a cell would call, replaces
the display publisher, hides the reports or rewrites the grader's cells (input or AST transformers)
is caught: README.md lists the fixtures that show it. Without isolation it also runs the learner's code as you: grade untrusted
submissions in a throwaway account or container.
"""

from .course import SubmissionVersion, exercise_number, load_course, not_in_version, submission_version
from .gradebook import CSV_COLUMNS, Row, Ungradable
from .grading import GradingOptions, GradingResult, UsageError, grade, grade_submission, one_row
from .judge import Judge
from .kernel_cells import GRADER_MARK, IN_KERNEL_SOURCE, start_cell_source
from .kernels import FORK_SERVER_BOOT, PROVISIONER_NAME, ForkProvisioner, ForkServer, serve_forks
from .outcome import Outcome
from .limits import DEFAULT_CELL_TIMEOUT, DEFAULT_TIMEOUT
from .plan import (
    GraderCell,
    Plan,
    grading_points,
    plan_run,
    read_submission,
)
from .report import GradingProgress, feedback_notebook, summary_table, write_csv, write_feedback
from .rows import plain_syntax_error, rows_for
from .runner import Grader
from .status import CheckKind, Status
from .submissions import Submission, collect, learner_from_file, submission_order

__all__ = [
    "CSV_COLUMNS", "DEFAULT_CELL_TIMEOUT", "DEFAULT_TIMEOUT", "FORK_SERVER_BOOT", "GRADER_MARK", "IN_KERNEL_SOURCE",
    "Judge", "PROVISIONER_NAME", "CheckKind", "ForkProvisioner", "ForkServer", "Grader", "GraderCell",
    "GradingOptions", "GradingProgress", "GradingResult", "Outcome", "Plan", "Row", "Status", "Submission",
    "SubmissionVersion", "Ungradable", "UsageError", "collect", "exercise_number", "feedback_notebook", "grade",
    "grade_submission", "start_cell_source", "grading_points", "learner_from_file", "load_course",
    "not_in_version", "one_row", "plain_syntax_error", "plan_run", "read_submission", "rows_for", "serve_forks",
    "submission_order", "submission_version", "summary_table", "write_csv", "write_feedback",
]
