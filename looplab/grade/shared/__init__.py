"""What every stage of the grader reads: its limits, the gradebook's statuses and rows.

The first place of the flow (shared, submissions, kernels, judgement, rows, exports): it imports
from no stage of the grader, so any stage may import it.
"""
