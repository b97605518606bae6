r"""Learners' names, and which copy came last, from the names an LMS bulk download gives its files.

An instructor downloads a class's hand-ins in one zip, and each LMS names them its own way. Read
naively, one person becomes several "learners" (`smithalice_LATE_12345_678901_...`, `... (1).ipynb`).
What is read here, from names only (nothing is opened):

- Canvas, "Download Submissions": `smithalice_12345_678901_01_one_tool_call.ipynb`, or with `_LATE_`
  after the name: the student's name (last name then first, lower case), their Canvas user id, the
  submission's id (it grows with time, so it orders copies), then the file's own name, to which Canvas
  adds `-1`, `-2` for a second file of the same name;
- Moodle, "Download all submissions": a folder `Alice Smith_123456_assignsubmission_file_` per
  student, or that prefix on each file name;
- Gradescope, "Export Submissions": a folder `submission_12345678` per submission (its id orders copies),
  and, beside them, `submission_metadata.yml`, which names each submission's submitters;
- a browser's second download of a file: `01_one_tool_call (1).ipynb`.

Names are read in any script. Canvas's zipper removes only the non-word characters of a student's
sortable name and lowers its case, so Unicode letters stay: `núñezjosé_...`, `παπαδάκηςνίκος_...`,
`王小明_...` are Canvas names as much as `smithalice_...`. And every name is first normalised to NFC
(`nfc`): macOS unzips file names in NFD, where `é` is `e` and a combining accent that `\w` does not
match, so a pattern, or a comparison with the class list, would see two different people.

Two copies of one notebook by one learner: the one handed in last counts (`handed_order`), read from
names only, never from a file's modification time: unzipping and copying set that to anything, and a
learner can date a file 2100 so that it "comes last".
"""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

# The name: letters of any script and digits (`[^\W_]`), or Canvas's hyphens, starting with a letter, in lower
# case (`canvas_match` checks that: a pattern cannot say "no upper case" for every script).
CANVAS = re.compile(r"^(?P<name>[^\W\d_](?:[^\W_]|-)*)(?:_LATE)?_(?P<user>\d+)_(?P<submission>\d+)_(?P<rest>.+)$")
MOODLE = re.compile(r"^(?P<name>.+?)_(?P<participant>\d+)_assignsubmission_[a-z]+_(?P<rest>.*)$")
GRADESCOPE = re.compile(r"^submission_(?P<submission>\d+)$")
BROWSER_COPY = re.compile(r" \((?P<number>\d+)\)$")  # "name (1)"
CANVAS_COPY = re.compile(r"-(?P<number>\d+)$")  # Canvas's "name-1", only on a name Canvas made
GRADESCOPE_METADATA = "submission_metadata.yml"


def nfc(name: str) -> str:
    """A name as the grader compares it: Unicode's composed form (NFC), so an `é` unzipped on macOS (NFD:
    `e` and a combining accent) is the `é` typed in the class list."""
    return unicodedata.normalize("NFC", name)


def canvas_match(name: str) -> re.Match | None:
    """A Canvas download name read by CANVAS (after `nfc`); None for another name, or one with upper case
    letters (Canvas lowers the student's name)."""
    found = CANVAS.match(nfc(name))
    return found if found and found["name"] == found["name"].lower() else None


def from_file_name(name: str) -> str | None:
    """The learner (as the LMS names them) a Canvas or Moodle file name carries, or None for a name no LMS made.

    Which of a learner's copies came last is `handed_order`'s to say."""
    name = nfc(name)
    canvas = canvas_match(name)
    if canvas:
        return canvas["name"]
    moodle = MOODLE.match(name)
    if moodle and moodle["rest"]:
        return moodle["name"]
    return None


def from_folder_name(name: str, gradescope_names: dict[str, str] | None = None) -> str | None:
    """The learner a Moodle or Gradescope folder name stands for, or None for a folder no LMS made."""
    name = nfc(name)
    moodle = MOODLE.match(name)
    if moodle and not moodle["rest"]:
        return moodle["name"]
    if GRADESCOPE.match(name) and gradescope_names and name in gradescope_names:
        return gradescope_names[name]
    return None


def gradescope_names(folder: Path) -> dict[str, str]:
    """`submission_12345678` -> its submitters' names (joined with ' & '), from the export's metadata.

    The metadata is YAML; only its `submission_N:` keys and their `:name:` lines are read, so no YAML
    library is needed. No metadata file: an empty dict.
    """
    path = folder / GRADESCOPE_METADATA
    if not path.is_file():
        return {}
    names: dict[str, list[str]] = {}
    current = None
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        key = re.match(r"^(submission_\d+):\s*$", line)
        if key:
            current = key[1]
            names[current] = []
            continue
        name = re.match(r"^\s*-?\s*:name:\s*['\"]?(?P<name>.*?)['\"]?\s*$", line)
        if name and current:
            names[current].append(nfc(name["name"]))
    return {key: " & ".join(people) for key, people in names.items() if people}


def copy_number(stem: str, made_by_canvas: bool = False) -> tuple[str, int]:
    """'01_one_tool_call (2)' -> ('01_one_tool_call', 2); Canvas's '...-1' -> 1; no mark -> 0."""
    for mark in (BROWSER_COPY, CANVAS_COPY) if made_by_canvas else (BROWSER_COPY,):
        found = mark.search(stem)
        if found:
            return stem[:found.start()], int(found["number"])
    return stem, 0


def handed_order(file: str) -> tuple[int, int]:
    """How late a file was handed in, from its path alone: (the LMS's submission id, the copy number).

    Compared between two copies of one notebook by one learner: the larger was handed in later.
    Equal (no LMS, no copy mark): the gradebook's order decides.
    """
    path = Path(file)
    order = 0
    for part in path.parts:
        gradescope = GRADESCOPE.match(part)
        if gradescope:
            order = int(gradescope["submission"])
    canvas = canvas_match(path.name)
    if canvas:
        order = int(canvas["submission"])
    return order, copy_number(nfc(path.stem), made_by_canvas=bool(canvas))[1]
