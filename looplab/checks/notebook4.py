"""Checks for notebook 4 (being written)."""

EXERCISES = []
