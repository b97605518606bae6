"""Notebook 5's tools and the course's own version of its exercises: a toolbox behind one registry.

Started with the two tools that join the calculator in notebook 5, so that notebook 6's module
(which makes the calculator careless and the harness careful) takes the same ones from here.

The weather tool is a canned table on purpose: the course runs offline, and what notebooks 5 and 6
teach is choosing and calling tools, not weather. Its table and texts are the series' own (stage 007
of the-ai-coffee/ai-agent-from-scratch), so the series' stage tests pass against the learner's
programs: an unknown city is an answer ("No weather data for ..."), not an error.
"""

from __future__ import annotations

# City (lower case, as looked up) -> its canned report.
WEATHER = {
    "paris": "18°C, partly cloudy",
    "london": "14°C, light rain",
    "tokyo": "24°C, clear skies",
}


def get_weather(city: str) -> str:
    """The canned weather for a city; a city the table lacks gets a sentence saying so."""
    report = WEATHER.get(city.strip().lower())
    if report is None:
        return f"No weather data for {city!r}."
    return f"Weather in {city}: {report}"


def count_letters(text: str, letter: str) -> str:
    """How many times a letter occurs in a text, ignoring case (notebook 4's look-ahead tool)."""
    if len(letter) != 1:
        return "Error: letter must be a single character"
    return str(text.lower().count(letter.lower()))
