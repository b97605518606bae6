"""Rows: a run and its judgement turned into the gradebook's rows, and the class read from rows.

`from_run.py` (a notebook's rows from its Outcome), `class_results.py` (which submission counts for
each learner and notebook), `roster.py` (the class list), `class_gradebook.py` (every student, every
notebook; the wide table). Nothing here runs code or writes files.
"""
