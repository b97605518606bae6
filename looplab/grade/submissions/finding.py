"""Submissions: which notebook files were handed in, and by which learner.

Only paths and names here; nothing is opened, so a broken file is still one submission. (The one thing
known after reading, the hash of a file's bytes, is filled in by reading.py and read by `identical`.)
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, replace
from pathlib import Path

from ...catalogue import words
from . import lms

WORDS = words(__file__)  # texts/finding.toml: the note on identical files, in the report's language


@dataclass
class Submission:
    path: Path
    learner: str
    missing: bool = False  # a learner's folder holding no notebook
    given: Path | None = None  # the folder given to the grader that holds it (None: the file was given itself)
    linked: bool = False  # a symbolic link (to a notebook or a folder) in a folder given: never read
    folder: Path | None = None  # the learner's folder, when the learner is named after it (None: after the file)
    named_after: str = ""  # a loose file named after a learner who has a folder: never read (`not_theirs`)
    digest: str = ""  # the SHA-256 of its bytes, once read (reading.py): identical submissions are named
    # A hub's home (homes.py): `looked_in`, where its course notebooks were looked for when it holds none (`missing`);
    # `unreadable`, why a folder of the home could not be listed (the system's words), `path` being that folder.
    looked_in: str = ""
    unreadable: str = ""

    @property
    def file(self) -> str:
        """The gradebook's name for it: its path from the folder given, that folder's name first.

        `submissions/alice/01_one_tool_call.ipynb` for the folder `submissions` (or `../submissions`, or
        its absolute path), wherever the grader was started; a file given itself is named from the
        folder holding it (`alice/01_one_tool_call.ipynb`). Always with `/`.
        """
        folder = Path(os.path.abspath(self.given if self.given is not None else self.path.parent))
        return (Path(folder.name) / Path(os.path.abspath(self.path)).relative_to(folder)).as_posix()


def learner_in_name(path: Path, stems: list[str]) -> str:
    """The learner a file's own name carries, or "" for a bare course notebook's name (see learner_from_file)."""
    named = lms.from_file_name(path.name)
    if named:
        return named
    name = lms.copy_number(lms.nfc(path.stem))[0]
    for stem in sorted(stems, key=len, reverse=True):
        name = re.sub(re.escape(stem), "", name, flags=re.IGNORECASE)
    return name.strip(" -_.")


def learner_from_file(path: Path, stems: list[str]) -> str:
    """`alice-01_one_tool_call.ipynb` -> `alice`; `alice/01_one_tool_call.ipynb` -> `alice`; a name an LMS
    made -> the learner it names (`smithalice_LATE_12345_678901_01_one_tool_call-1.ipynb` -> `smithalice`);
    a browser's second copy is the same learner (`alice-01_one_tool_call (1).ipynb` -> `alice`)."""
    return learner_in_name(path, stems) or lms.nfc(Path(os.path.abspath(path)).parent.name)  # where it lies, not a link's target


def loose_file(path: Path, stems: list[str], given: Path | None, linked: bool = False) -> Submission:
    """A notebook file that is not in a learner's subfolder: its learner read from its name, else the folder it
    lies in (which is then that learner's folder)."""
    named = learner_in_name(path, stems)
    folder = None if named else Path(os.path.abspath(path)).parent
    return Submission(path, named or lms.nfc(folder.name), given=given, linked=linked, folder=folder)


def learner_of_folder(folder: Path, gradescope_names: dict[str, str]) -> str:
    """A subfolder's learner: its name (in NFC, lms.nfc), or the person a Moodle or Gradescope folder stands for."""
    return lms.from_folder_name(folder.name, gradescope_names) or lms.nfc(folder.name)


def notebooks_in(folder: Path) -> list[tuple[Path, bool]]:
    """The notebooks under a learner's folder, each with whether it is a link: a notebook that is a symbolic
    link, or a linked folder (where notebooks may be), is listed as a link and never followed.

    Why: a link reads another file, as this learner's: `bob/01.ipynb -> ../alice/01.ipynb` would be graded as
    alice's work under bob's name, and a link to an absolute path would show the instructor's files in bob's
    feedback. Walked with a list rather than recursion: a folder can be any depth."""
    found, folders = [], [folder]
    while folders:
        current = folders.pop()
        try:
            entries = list(os.scandir(current))
        except OSError:
            continue
        for entry in entries:
            if entry.name.startswith(".") or entry.name == "__pycache__":
                continue
            path = Path(entry.path)
            if entry.is_symlink():
                if entry.name.endswith(".ipynb") or entry.is_dir():
                    found.append((path, True))
            elif entry.is_dir():
                folders.append(path)
            elif entry.name.endswith(".ipynb") and entry.is_file():
                found.append((path, False))
    return sorted(found)


def collect(paths: list[str], stems: list[str]) -> list[Submission]:
    """The submissions under the paths given (the paths themselves may be links: the instructor gave them)."""
    submissions = []
    for given in paths:
        path = Path(given)
        if path.is_dir():
            gradescope_names = lms.gradescope_names(path)
            for entry in sorted(path.iterdir()):
                if entry.name.startswith(".") or entry.name == "__pycache__":
                    continue
                if entry.is_symlink() and entry.is_dir():
                    submissions.append(Submission(entry, learner_of_folder(entry, gradescope_names), given=path,
                                                  linked=True, folder=Path(os.path.abspath(entry))))
                elif entry.is_symlink() and entry.suffix == ".ipynb":
                    submissions.append(loose_file(entry, stems, path, linked=True))
                elif entry.is_dir():
                    learner, folder = learner_of_folder(entry, gradescope_names), Path(os.path.abspath(entry))
                    found = notebooks_in(entry)
                    submissions += ([Submission(p, learner, given=path, linked=link, folder=folder) for p, link in found]
                                    or [Submission(entry, learner, True, given=path, folder=folder)])
                elif entry.suffix == ".ipynb":
                    submissions.append(loose_file(entry, stems, path))
        elif path.exists():
            submissions.append(loose_file(path, stems, None))
        else:
            raise FileNotFoundError(WORDS("no_such_path", path=given))
    return submissions


def not_theirs(submissions: list[Submission]) -> list[Submission]:
    """The submissions, each loose file named after a learner who has a folder (`class/bob_01_one_tool_call.ipynb`
    beside `class/bob/`) set apart: it becomes a learner of its own (its file name), `named_after` bob, and is
    never read.

    Why: a learner's folder is theirs. Anyone can drop a file named after bob beside his folder, and the rule
    for two copies (the one handed in last counts, class_results.py) would then grade it as bob's, in place of
    his own. The names are compared ignoring case (a roster would make `Bob` and `bob` one student)."""
    owners: dict[str, set[Path]] = {}
    for submission in submissions:
        if submission.folder is not None:
            owners.setdefault(submission.learner.casefold(), set()).add(submission.folder)
    return [replace(submission, learner=submission.path.name, named_after=submission.learner)
            if submission.folder is None and submission.learner.casefold() in owners
            and Path(os.path.abspath(submission.path)).parent not in owners[submission.learner.casefold()]
            else submission for submission in submissions]


def submission_order(submission: Submission) -> tuple:
    """Gradebook order: by learner (any case), then by file."""
    return (submission.learner.lower(), submission.file)


@dataclass
class Identical:
    """Byte-identical submissions from different learners: named for the instructor, never graded differently.

    No grader can tell who copied whom (a hard link, a copy: the same bytes), so every copy keeps the rows it
    earned, as it would graded alone; the instructor is told, once, in the output and the class report."""

    copies: list[tuple[str, str]]  # (learner, file), in gradebook order

    def note(self) -> str:
        learners = len({learner for learner, _ in self.copies})
        return WORDS("identical", count=learners, copies=", ".join(f"{learner} ({file})" for learner, file in self.copies))


def identical(submissions: list[Submission], earned: set[str]) -> list[Identical]:
    """The groups of submissions read with the same bytes (`digest`) by more than one learner, where a copy
    earned points (`earned`: the files that did). Without points, identical files are the untouched notebook
    every learner downloaded, or the same broken file: nothing to look into."""
    groups: dict[str, list[Submission]] = {}
    for submission in submissions:
        if submission.digest:
            groups.setdefault(submission.digest, []).append(submission)
    return [Identical([(s.learner, s.file) for s in group]) for group in groups.values()
            if len({s.learner for s in group}) > 1 and any(s.file in earned for s in group)]
