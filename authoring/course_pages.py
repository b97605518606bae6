"""The parts of the course's pages that the manifest and the checks' data already say, generated.

    python -m authoring docs           # rewrite what changed (`make notebooks` runs this)
    python -m authoring docs --check   # exit 1 naming each stale part (the tests do this)

Why generated: README's course table, the `doctor` sample, DESIGN.md's notebook rows, the list of
what adding a notebook touches and the audit page all restate the manifest (looplab/course.py), the
audit rows (looplab/checks/audit/*.toml) or authoring/adding.py. Typed by hand, they went stale when
a notebook was added and nothing noticed. Each part sits between two marks in its page:

    <!-- begin generated: <name> ... -->
    ...
    <!-- end generated: <name> -->

and everything outside the marks is written by hand.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable
from pathlib import Path

from looplab import language
from looplab.catalogue import words
from looplab.course import COURSE, TITLES

from . import DOCS, ROOT, adding, audit
from .audit import Incomplete

__all__ = ["Incomplete", "main", "stale", "updated"]


def begin_mark(name: str) -> str:
    return f"<!-- begin generated: {name} (by `make notebooks`, authoring/course_pages.py): do not edit -->"


def end_mark(name: str) -> str:
    return f"<!-- end generated: {name} -->"


WORDS = words(__file__)  # authoring/texts/course_pages.toml


def builds_in(spoken: str) -> dict[str, str]:
    """Each notebook's `builds` (what the README's course table says it builds) in `spoken`: the manifest's words
    in English; otherwise its row `builds:<stem>` of looplab/texts/course.toml, the one place of the manifest's
    words in every language (the titles are there too: a check's panel shows them). A row missing, or one whose
    English is not the manifest's, stops the regeneration naming the row and the fix; a French row that translates
    an older English is reported before anything is written (authoring/fingerprints.py)."""
    builds = {notebook.stem: notebook.builds for notebook in COURSE.notebooks}
    if spoken == language.SOURCE:
        return builds
    where = "looplab/texts/course.toml"
    for stem, english in builds.items():
        row = TITLES.rows.get(f"builds:{stem}", {})
        if row.get(language.SOURCE) != english or spoken not in row:
            state = ("has no row" if not row else f"holds another English ({row.get(language.SOURCE)!r})"
                     if row.get(language.SOURCE) != english else f"has no {spoken} table")
            raise Incomplete(f"{where}: [\"builds:{stem}\"] {state}: write text = {english!r} and its "
                             f"[\"builds:{stem}\".{spoken}] text, then `python -m authoring stamp --new`")
        builds[stem] = row[spoken].strip()
    return builds


def course_table(spoken: str = language.SOURCE) -> list[str]:
    with language.using(spoken):
        lines = [WORDS("table_head"), "|---|---|---|"]
    builds = builds_in(spoken)
    for notebook in COURSE.notebooks:
        named: set[str] = set()  # an exercise that rewrites an earlier one's function is shown by its title
        with language.using(spoken):
            exercises = ", ".join(f"{e.id} {e.said_title}" if e.name in named or named.add(e.name)
                                  else f"{e.id} `{e.name}`" for e in notebook.exercises)
        lines.append(f"| `{notebook.stem}` | {builds[notebook.stem]} | {exercises} |")
    return lines


# The sample's machine-specific findings (any laptop's), said in the sample's language by doctor's own words; its
# recordings line is what `doctor` says of this course's recordings in that language.
SAMPLE_LAPTOP = (("python", "python_ok", {"found": "3.11.7"}),
                 ("venv", "venv_ok", {"prefix": "/home/ada/looplab/.venv"}),
                 ("kernel", "kernel_ok", {"folder": "/home/ada/looplab/.venv/share/jupyter/kernels/python3"}),
                 ("widgets", "widgets_ok", {"version": "8.1.9"}),
                 ("mode", "mode_offline", {}))


def doctor_sample(spoken: str = language.SOURCE) -> list[str]:
    from looplab.doctor import WORDS as SAID, Finding, check_recordings

    with language.using(spoken):
        head = [Finding(item, True, SAID(key, **values)).line() for item, key, values in SAMPLE_LAPTOP]
        return ["```text", *head, check_recordings().line(), SAID("ready"), "```"]


def module_path(module: str | None) -> str:
    return f"`{module.replace('.', '/')}.py`" if module else "—"


def notebook_rows() -> list[str]:
    lines = ["| notebook | checks (words, audit rows: `texts/`, `audit/` beside it) | references | answers |",
             "|---|---|---|---|"]
    for notebook in COURSE.notebooks:
        references = module_path(notebook.references) if notebook.references else (
            "shared: " + ", ".join(sorted({module_path(e.reference.partition(":")[0]) for e in notebook.exercises})))
        lines.append(f"| `{notebook.stem}` | {module_path(notebook.checks)} | {references} "
                     f"| `authoring/answers/{notebook.stem}.py` |")
    return lines


def adding_table() -> list[str]:
    lines = ["| what | where |", "|---|---|"]
    lines += [f"| {part.what} | `{part.where}` |" for part in adding.PARTS]
    lines += ["", "When it writes a program of the series, for the series' stage tests, also:", ""]
    lines += [f"- `{part.where}`: {part.what}" for part in adding.PROGRAM_PARTS]
    lines += ["", "`make notebooks` then makes, from those and the manifest (never edit them by hand):", ""]
    lines += [f"- `{part.where}`: {part.what}" for part in adding.DERIVED]
    lines += [f"- and {adding.BUILT_BY_THE_TESTS} are built by the tests, never committed."]
    return lines


def adding_list() -> list[str]:
    return [", ".join(f"`{part.where}`" for part in adding.PARTS)
            + " (the placeholders come from its manifest entry; what each holds: docs/WRITING_NOTEBOOKS.md). "
            + "One that writes a program of the series also: " + ", ".join(f"`{part.where}`" for part in adding.PROGRAM_PARTS)
            + ". Generated from them: " + ", ".join(f"`{part.where}`" for part in adding.DERIVED) + "."]


# page -> its generated parts, name -> what they hold today
PARTS: dict[Path, dict[str, Callable[[], list[str]]]] = {
    ROOT / "README.md": {"course table": course_table, "doctor sample": doctor_sample},
    ROOT / "README.fr.md": {"course table": lambda: course_table("fr"), "doctor sample": lambda: doctor_sample("fr")},
    DOCS / "DESIGN.md": {"notebook rows": notebook_rows, "adding a notebook": adding_list},
    DOCS / "WRITING_NOTEBOOKS.md": {"adding a notebook": adding_table},
    DOCS / "CHECKS_AUDIT.md": {"audit": audit.page_body},
}


def part_pattern(name: str) -> re.Pattern:
    """A generated part between its two marks, the marks included."""
    return re.compile(re.escape(begin_mark(name)) + r"\n.*?" + re.escape(end_mark(name)), re.DOTALL)


def updated(page: Path, text: str) -> tuple[str, list[str]]:
    """The page with each generated part rewritten, and the names of the parts that changed."""
    changed = []
    for name, make in PARTS[page].items():
        pattern = part_pattern(name)
        if not pattern.search(text):
            raise Incomplete(f"{page.relative_to(ROOT)} has no generated part {name!r}: put the two lines "
                             f"{begin_mark(name)!r} and {end_mark(name)!r} where it goes")
        wanted = "\n".join([begin_mark(name), *make(), end_mark(name)])
        new = pattern.sub(lambda _: wanted, text, count=1)
        if new != text:
            changed.append(name)
        text = new
    return text, changed


def missing_marks() -> list[str]:
    """One line for each generated part whose two marks a page lacks (the regeneration stops on any, at once)."""
    found = []
    for page in PARTS:
        text = page.read_text(encoding="utf-8")
        found += [f"{page.relative_to(ROOT)} has no generated part {name!r}: put the two lines {begin_mark(name)!r} "
                  f"and {end_mark(name)!r} where it goes" for name in PARTS[page]
                  if not part_pattern(name).search(text)]
    return found


def stale() -> list[str]:
    """'<page>: <part>' for each generated part that is not what the sources say today."""
    found = []
    for page in PARTS:
        _, changed = updated(page, page.read_text(encoding="utf-8"))
        found += [f"{page.relative_to(ROOT)}: {name}" for name in changed]
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m authoring docs", description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only say which generated parts are out of date")
    args = parser.parse_args(argv)
    if args.check:
        found = stale()
        for line in found:
            print(f"{line} is out of date: run `make notebooks`")
        return 1 if found else 0
    for page in PARTS:
        text, changed = updated(page, page.read_text(encoding="utf-8"))
        if changed:
            page.write_text(text, encoding="utf-8")
            print(f"course_pages: rewrote {page.relative_to(ROOT)} ({', '.join(changed)})", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
