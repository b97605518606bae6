"""What one learner's notebook may cost the grader: its time and memory limits, and why these values.

Offline, an honest notebook of this course is cheap (measured on the solutions: the slowest cell,
the first one's imports or notebook 4's agent script, under 2 s; a check under 0.1 s; a kernel
holds about 115 MB and its data about 185 MB). So every limit here is loose for honest work. What
they bound is the common bug, a loop that never ends: without them it is paid in full again in
every cell that calls it (its demo, the learner's check cell, the grader's check), and a loop that
appends to a list grows for as long as it runs; and one that catches every exception catches the
interrupt too, so every later cell would wait behind it. benchmarks/grading.py --runaway-only measures
what each costs.
"""

from __future__ import annotations

DEFAULT_CELL_TIMEOUT = 10  # seconds a learner's cell may run (--cell-timeout)
AFTER_A_STOP = 3  # seconds each later cell of a notebook may run once one of its cells was stopped
# A check's own limit while grading (the grader sets LOOPLAB_CHECK_SECONDS; 10 s in the learner's
# notebook). Below AFTER_A_STOP, so a learner's check cell after a stop ends by the check's own limit,
# with the check's words, rather than by the cell's.
CHECK_SECONDS = 2
DEFAULT_TIMEOUT = 300  # seconds, the whole notebook
# After a stopped cell, how long the kernel has to answer a request: one that does not is still running
# that cell (it caught the interrupt), and the grader stops the notebook there rather than let every
# later cell wait its own limit behind it.
STUCK_GRACE = 2

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
# What a notebook may write into its folders (work, home, temp, IPython: on disk, in the grader's temporary
# folder), all files together: bytes, and files and folders. The grader looks every WRITE_WATCH seconds and
# stops the notebook past either (runner.Grader._watch_writes), before it fills the disk the class is graded
# on. An honest notebook of this course writes a few files of a few kilobytes.
WRITE_LIMIT = 1 << 30
WRITE_ENTRIES = 10_000
WRITE_WATCH = 1.0
