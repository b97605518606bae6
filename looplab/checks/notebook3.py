"""Checks for notebook 3 (being written)."""

EXERCISES = []
