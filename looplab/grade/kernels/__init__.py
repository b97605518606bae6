"""Kernels run: a planned notebook executed in a fresh, offline, isolated kernel, within its limits.

`runner.py` (the Grader: a notebook's cells run in a slot, each watched for its CPU limit) over
`slots.py` (a `--jobs` place), `fork_server.py` (the warm template and its provisioner),
`sandbox.py` (bubblewrap, setrlimit), `cgroups.py` and `process_tree.py` (a notebook's processes:
their CPU time, memory and end), `emptying.py` (any tree a notebook left, removed), `outputs.py`
(what is kept of its outputs), `kernel_cells.py` and `in_kernel.py` (the grader's first cell), and
`capacity.py` (how many kernels the machine holds). What a run left is an `Outcome` (outcome.py).
What happens at a check point is the judgement's: the runner is handed it (grading.py).
"""
