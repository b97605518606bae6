"""Submissions: which notebook files were handed in, and by which learner.

Only paths and names here; nothing is opened, so a broken file is still one submission.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from . import lms


@dataclass
class Submission:
    path: Path
    learner: str
    missing: bool = False  # a learner's folder holding no notebook
    given: Path | None = None  # the folder given to the grader that holds it (None: the file was given itself)
    linked: bool = False  # a symbolic link (to a notebook or a folder) in a folder given: never read

    @property
    def file(self) -> str:
        """The gradebook's name for it: its path from the folder given, that folder's name first.

        `submissions/alice/01_one_tool_call.ipynb` for the folder `submissions` (or `../submissions`, or
        its absolute path), wherever the grader was started; a file given itself is named from the
        folder holding it (`alice/01_one_tool_call.ipynb`). Always with `/`.
        """
        folder = Path(os.path.abspath(self.given if self.given is not None else self.path.parent))
        return (Path(folder.name) / Path(os.path.abspath(self.path)).relative_to(folder)).as_posix()


def learner_from_file(path: Path, stems: list[str]) -> str:
    """`alice-01_one_tool_call.ipynb` -> `alice`; `alice/01_one_tool_call.ipynb` -> `alice`; a name an LMS
    made -> the learner it names (`smithalice_LATE_12345_678901_01_one_tool_call-1.ipynb` -> `smithalice`);
    a browser's second copy is the same learner (`alice-01_one_tool_call (1).ipynb` -> `alice`)."""
    named = lms.from_file_name(path.name)
    if named:
        return named
    name = lms.copy_number(path.stem)[0]
    for stem in sorted(stems, key=len, reverse=True):
        name = re.sub(re.escape(stem), "", name, flags=re.IGNORECASE)
    name = name.strip(" -_.")
    return name or Path(os.path.abspath(path)).parent.name  # the folder it lies in, not where a link points


def learner_of_folder(folder: Path, gradescope_names: dict[str, str]) -> str:
    """A subfolder's learner: its name, or the person a Moodle or Gradescope folder stands for."""
    return lms.from_folder_name(folder.name, gradescope_names) or folder.name


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
                if entry.is_symlink() and (entry.is_dir() or entry.suffix == ".ipynb"):
                    learner = (learner_of_folder(entry, gradescope_names) if entry.is_dir()
                               else learner_from_file(entry, stems))
                    submissions.append(Submission(entry, learner, given=path, linked=True))
                elif entry.is_dir():
                    learner = learner_of_folder(entry, gradescope_names)
                    found = notebooks_in(entry)
                    submissions += ([Submission(p, learner, given=path, linked=link) for p, link in found]
                                    or [Submission(entry, learner, True, given=path)])
                elif entry.suffix == ".ipynb":
                    submissions.append(Submission(entry, learner_from_file(entry, stems), given=path))
        elif path.exists():
            submissions.append(Submission(path, learner_from_file(path, stems)))
        else:
            raise FileNotFoundError(f"no such file or folder: {given}")
    return submissions


def submission_order(submission: Submission) -> tuple:
    """Gradebook order: by learner (any case), then by file."""
    return (submission.learner.lower(), submission.file)
