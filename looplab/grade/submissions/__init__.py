"""Submissions in: which notebook files were handed in and by whom, each read and its run planned.

`finding.py` (the files under the paths given, and their learners), `lms.py` (the names an LMS
download gives them), `reading.py` (a file read into a notebook of the course, or Ungradable),
`versions.py` (the course version it is graded as), `plan.py` (where the grader's cells go).
Nothing here starts a kernel.
"""
