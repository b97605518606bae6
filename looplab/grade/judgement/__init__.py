"""Judgement: the official checks run in the grader's process on proxies of the learner's objects.

`judge.py` (one check point: the socket, the kernel's cell, each exercise's check) and `proxies.py`
(the learner's function as the checker calls it, the grader's objects as the kernel sees them).
"""
