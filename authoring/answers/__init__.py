"""Scripted answers, one module a recording: `<stem>.py` (and calculator.py), each with its ANSWERS.

Imported by name (`authoring.author_recordings.load_answers`), never run; see docs/WRITING_NOTEBOOKS.md.
"""
