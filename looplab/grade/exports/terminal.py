"""The terminal before, while and after grading: the command line's own words, the progress bar on stderr, the
summary table on stdout.

The command line speaks the class's language from its first word: `SpeakingParser` is an argparse parser whose own
words ("usage:", "error:", "invalid choice: ...") are said through gettext, the way argparse's documentation says to
translate them: a GNU catalogue (.mo) of argparse's messages is written from texts/terminal.toml's `argparse_*` rows
into a temporary folder, and gettext is pointed at it (`bindtextdomain`, `textdomain`, the `LANGUAGE` variable it
reads) only while the parser parses, formats its help or says an error; every other word of `--help` (the
description, the groups, each option's help) is the command line's catalogue (texts/__main__.toml).
"""

from __future__ import annotations

import argparse
import contextlib
import gettext
import os
import struct
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

from ... import language
from ...catalogue import words
from ..shared.gradebook import Row

WORDS = words(__file__)  # texts/terminal.toml, in the report's language (--lang)
REVIEW_MARK = WORDS.rows["review"]["en"]  # an exercise whose cells hold the course's reference code, in English (the tests read it)
ARGPARSE = "argparse_"  # the rows holding argparse's own messages: `text` is argparse's msgid, exactly
DOMAIN = "looplab-grade"  # the gettext domain the parser's catalogue is bound to while it speaks


def argparse_catalogue(spoken: str) -> dict[str, str]:
    """argparse's messages (msgid -> the words in `spoken`) that `spoken` says otherwise than argparse does."""
    said = {row[language.SOURCE]: row.get(spoken, row[language.SOURCE])
            for key, row in WORDS.rows.items() if key.startswith(ARGPARSE)}
    return {msgid: text for msgid, text in said.items() if text != msgid}


def mo_file(catalogue: dict[str, str]) -> bytes:
    """GNU gettext's binary catalogue of these messages, as gettext.GNUTranslations reads it: its header, the
    table of originals, the table of translations, then the strings (UTF-8, each ending in NUL)."""
    entries = sorted({"": "Content-Type: text/plain; charset=UTF-8\n", **catalogue}.items())
    originals, translations = [key.encode() for key, _ in entries], [value.encode() for _, value in entries]
    count = len(entries)
    start = 7 * 4 + 16 * count  # the strings come after the header and both tables
    tables, strings = [], b""
    for texts in (originals, translations):
        for text in texts:
            tables.append((len(text), start + len(strings)))
            strings += text + b"\0"
    header = struct.pack("<7I", 0x950412DE, 0, count, 7 * 4, 7 * 4 + 8 * count, 0, start)
    return header + b"".join(struct.pack("<2I", length, offset) for length, offset in tables) + strings


class SpeakingParser(argparse.ArgumentParser):
    """An ArgumentParser that says argparse's own words in `spoken` (None: as argparse says them), through gettext,
    while it parses, formats its usage and help, and says an error (the methods argparse documents)."""

    def __init__(self, *args, spoken: str | None = None, **kwargs):
        self.spoken = spoken
        self._speaking = False
        super().__init__(*args, **kwargs)

    @contextlib.contextmanager
    def speaking(self):
        catalogue = argparse_catalogue(self.spoken) if self.spoken else {}
        if self._speaking or not catalogue:
            yield
            return
        domain, folder, said = gettext.textdomain(), gettext.bindtextdomain(DOMAIN), os.environ.get("LANGUAGE")
        with tempfile.TemporaryDirectory(prefix="looplab-grade-words-") as words_folder:
            mo = Path(words_folder, self.spoken, "LC_MESSAGES", f"{DOMAIN}.mo")
            mo.parent.mkdir(parents=True)
            mo.write_bytes(mo_file(catalogue))
            gettext.bindtextdomain(DOMAIN, words_folder)
            gettext.textdomain(DOMAIN)
            os.environ["LANGUAGE"] = self.spoken
            self._speaking = True
            try:
                yield
            finally:
                self._speaking = False
                if said is None:
                    os.environ.pop("LANGUAGE", None)
                else:
                    os.environ["LANGUAGE"] = said
                gettext.textdomain(domain)
                gettext.bindtextdomain(DOMAIN, folder)

    def parse_args(self, args=None, namespace=None):
        with self.speaking():
            return super().parse_args(args, namespace)

    def parse_known_args(self, args=None, namespace=None):
        with self.speaking():
            return super().parse_known_args(args, namespace)

    def format_usage(self):
        with self.speaking():
            return super().format_usage()

    def format_help(self):
        with self.speaking():
            return super().format_help()

    def error(self, message):
        with self.speaking():
            super().error(message)


class GradingProgress:
    """Submissions graded so far, on stderr: a bar on a terminal, a line each otherwise."""

    def __init__(self, total: int, stream=sys.stderr):
        self.total, self.done, self.stream = total, 0, stream
        self.tty = hasattr(stream, "isatty") and stream.isatty()
        self.started = time.monotonic()

    def update(self, label: str) -> None:
        self.done += 1
        if self.tty:
            width = 30
            filled = int(width * self.done / max(self.total, 1))
            elapsed = time.monotonic() - self.started
            bar = "#" * filled + "." * (width - filled)
            text = "\r" + WORDS("bar", bar=bar, done=self.done, total=self.total, elapsed=f"{elapsed:5.1f}", label=label)
            self.stream.write(text[:120].ljust(120))
            if self.done == self.total:
                self.stream.write("\n")
        else:
            self.stream.write(WORDS("line", done=self.done, total=self.total, label=label) + "\n")
        self.stream.flush()


def summary_table(rows: list[Row], name: Callable[[str], str] | None = None) -> str:
    """One line per submission: the learner (as `name` says them: the roster's name for a student, whose rows are
    keyed by their e-mail or login), the notebook, the points, and each exercise's status."""
    groups: dict[tuple, list[Row]] = {}
    for r in rows:
        groups.setdefault((r.learner, r.file), []).append(r)
    lines = []
    for (learner, file), group in groups.items():
        learner = name(learner) if name else learner
        notebook = group[0].notebook or f"({Path(file).name})"
        if len(group) == 1 and not group[0].exercise:
            score = "-"
            detail = WORDS("said", what=group[0].status, detail=group[0].message) if group[0].message else group[0].status
        else:
            score = f"{sum(r.points for r in group)}/{sum(r.max_points or 0 for r in group)}"
            detail = " · ".join(f"{r.exercise} {r.status}" + (WORDS("review") if r.review else "") for r in group)
        lines.append((learner, notebook, score, detail))
    titles = (WORDS("learner"), WORDS("notebook"), WORDS("points"))
    widths = [max([len(h)] + [len(line[i]) for line in lines]) for i, h in enumerate(titles)]
    header = f"{titles[0]:<{widths[0]}}  {titles[1]:<{widths[1]}}  {titles[2]:>{widths[2]}}  {WORDS('exercises')}"
    out = [header, "-" * min(len(header) + 40, 120)]
    for learner, notebook, score, detail in lines:
        text = f"{learner:<{widths[0]}}  {notebook:<{widths[1]}}  {score:>{widths[2]}}  {detail}"
        out.append(text if len(text) <= 160 else text[:157] + "...")
    return "\n".join(out)
