"""Checks for notebook 2 (being written)."""

EXERCISES = []
