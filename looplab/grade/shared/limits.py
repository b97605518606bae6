"""What one learner's notebook may cost the grader: its time and memory limits, and why these values.

Offline, an honest notebook of this course is cheap (measured on the solutions: the slowest cell,
the first one's imports or notebook 4's agent script, under 2 s; a check under 0.1 s; a kernel
holds about 115 MB and its data about 185 MB). So every limit here is loose for honest work. What
they bound is the common bug, a loop that never ends: without them it is paid in full again in
every cell that calls it (its demo, the learner's check cell, the grader's check), and a loop that
appends to a list grows for as long as it runs; and one that catches every exception catches the
interrupt too, so every later cell would wait behind it. benchmarks/grading.py --runaway-only measures
what each costs.

Time is CPU time. A limit that decides a grade counts the CPU seconds the notebook's processes used
(the kernel and everything it started: kernels/process_tree.py, from a cgroup where one can be made, else
from /proc), never the seconds that passed: on a loaded machine (two cores, load 7 to 22) a correct
notebook's cells take several times longer by the clock, and a wall-clock limit stopped them. Code
that sleeps or waits for input uses no CPU, so each limit also has a wall-clock bound, WALL_FACTOR
times it: at load 22 on two cores a process gets about a tenth of a core, so an honest cell (under
2 s of CPU) takes up to about 20 s, within the cell's 30 s bound.

A stop is not graded again. Until December 2026 a notebook stopped at a limit was graded a second time,
whole, with every limit doubled, and that run counted: a stop was confirmed before it cost points, which a
wall-clock limit on a loaded machine needed. A CPU-time limit does not: a machine that is busy gives a
correct cell less of the processor, not more CPU seconds to use up (measured: benchmarks/grading_under_load.py),
and the second run made a loop that never ends cost three times its limits (51.8 s at a 20 s cell limit,
issue 33). So a loop that never ends costs about what its limits say, once.
"""

from __future__ import annotations

import os

# For the test suite only: LOOPLAB_GRADE_LIMIT_SCALE multiplies the three limits below that have no
# command-line option (AFTER_A_STOP, CHECK_SECONDS, STUCK_GRACE), as --cell-timeout and --timeout set the
# others, so that its runaway fixtures (tests/test_grade_limits.py) cost seconds rather than tens of seconds.
# Their order holds at any factor; an instructor never sets it (1: the values below).
LIMIT_SCALE = float(os.environ["LOOPLAB_GRADE_LIMIT_SCALE"]) if os.environ.get("LOOPLAB_GRADE_LIMIT_SCALE") else 1

DEFAULT_CELL_TIMEOUT = 10  # CPU seconds a learner's cell may use (--cell-timeout)
WALL_FACTOR = 3  # each limit's wall-clock bound: this many times its CPU seconds (for code that sleeps)
AFTER_A_STOP = 3 * LIMIT_SCALE  # CPU seconds each later cell of a notebook may run once one of its cells was stopped
# A check's own limit while grading (the grader sets LOOPLAB_CHECK_SECONDS; 10 s in the learner's
# notebook). Below AFTER_A_STOP, so a learner's check cell after a stop ends by the check's own limit,
# with the check's words, rather than by the cell's.
CHECK_SECONDS = 2 * LIMIT_SCALE  # CPU seconds of the kernel (checks/core.py time_limit: ITIMER_PROF), WALL_FACTOR x by the clock
DEFAULT_TIMEOUT = 300  # CPU seconds, the whole notebook (--timeout)
# After a stopped cell, how long the kernel has to answer a request: one that does not is still running
# that cell (it caught the interrupt), and the grader stops the notebook there rather than let every
# later cell wait its own limit behind it.
STUCK_GRACE = 2 * LIMIT_SCALE  # CPU seconds (a loop that catches the interrupt goes on spinning), WALL_FACTOR x by the clock
# How often the grader reads a running notebook's CPU time (and, without a cgroup, its memory and tasks).
POLL_SECONDS = 0.05

# Bytes of data (heap and private mappings: setrlimit RLIMIT_DATA) a kernel may hold, about 5x an honest
# one's: a list that grows forever ends in MemoryError at that size. Also what the default --jobs
# budgets per job, so that a class of such loops stays within the machine.
KERNEL_MEMORY = 1 << 30
# Where the grader's watch raises MemoryError in the learner's code (in_kernel.watch_memory), short of the
# hard limit, at which the kernel's own threads would fail and the kernel die with every later exercise.
MEMORY_WATCH = KERNEL_MEMORY * 3 // 4
ADDRESS_SPACE = 4 << 30  # bytes of address space (RLIMIT_AS): an honest kernel maps about 0.8 GB
# Bytes a notebook may write into the sandbox's /dev/shm (POSIX shared memory, a tmpfs: it holds memory),
# where bwrap can size a tmpfs (sandbox.device_folder). An honest notebook of this course writes none.
SHM_LIMIT = 64 << 20
# Bytes of a submitted notebook the grader reads: a file larger than this gets its own row ("too large") and
# is never opened (a 300 MB attachment grew the grader to 1.3 GB). The course's notebooks, executed, are
# well under 1 MB; an image or two still fits.
SUBMISSION_LIMIT = 20 << 20
# Characters of code the grader reads from a submission (it parses code to plan the run, to read what a check
# reads of the source, to compare with the course's code): one code cell, and all of them. A notebook with more
# gets its own row ("too large") and is not run. Why: parsing is work in the grader's own process, on its own
# time; a 3.2 MB cell parsed once per exercise froze every other learner's checks (issue 33). The course's
# longest code cell is under 3,000 characters, a whole notebook's code under 13,000.
CODE_CELL_LIMIT = 64_000
CODE_LIMIT = 256_000
# Levels of lists and objects a submission's JSON may nest: a notebook nests about 8 (a widget's state a few
# more); every step that reads one recurses once a level (submissions/reading.py says why it is bounded).
NESTING_LIMIT = 64
# What a notebook may write into its folders (work, home, temp, IPython: on disk, in the grader's temporary
# folder), all files together: bytes, and files and folders. The grader looks every WRITE_WATCH seconds and
# stops the notebook past either (runner.Grader._watch_writes), before it fills the disk the class is graded
# on. An honest notebook of this course writes a few files of a few kilobytes.
WRITE_LIMIT = 1 << 30
WRITE_ENTRIES = 10_000
WRITE_WATCH = 1.0

# The whole notebook: its kernel and every process it starts (its children, what they start, a
# `setsid` double-forked daemon), counted together. In a memory cgroup (kernels/cgroups.py) the operating
# system caps them (memory.limit_in_bytes / memory.max: the OOM killer kills in the tree); without
# one the grader sums their proportional set sizes every POLL_SECONDS and kills the biggest process
# but the kernel while the sum is over. The kernel's own data limit and memory watch (above) stay,
# so a list that grows in the kernel still ends in MemoryError, not a dead kernel: this is that
# limit plus a quarter for what the kernel maps besides its data (code, libraries, files' pages).
NOTEBOOK_MEMORY = KERNEL_MEMORY + KERNEL_MEMORY // 4
# Tasks (processes and their threads: a kernel runs about a dozen threads) in the whole notebook: a pids
# cgroup's pids.max, else counted in /proc and the newest killed. RLIMIT_NPROC (sandbox.py) counts
# per user, across every kernel, so it only stops a fork bomb from taking the machine.
NOTEBOOK_TASKS = 256
