"""Checks for notebook 11, the capstone (being written)."""

CHECKERS: dict = {}
