"""Exports: what the instructor and the learners get, written from the rows.

`spreadsheet.py` (every CSV, the gradebook's among them), `feedback.py` (each learner's executed
notebook with its grade), `terminal.py` (the progress bar and the summary table), `canvas.py`,
`gradescope.py`, `class_report.py`, and `asked.py` (the files the command line was asked for).
"""
