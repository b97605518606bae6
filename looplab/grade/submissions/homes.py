"""A JupyterHub's home folders as a class (`--homes DIR`): a learner per home, named by their hub user, and their
notebooks the course's own, where the class link cloned the course into the home.

Where a hub keeps its homes, by spawner (the grader runs as the hub's admin, who can read them all):

- JupyterHub's simple local-process spawner: `/tmp/NAME` (`home_dir_template`) -> `--homes /tmp`;
- The Littlest JupyterHub: `/home/jupyter-NAME`, system user `jupyter-NAME` -> `--homes /home --user-prefix jupyter-`;
- Zero to JupyterHub: a volume per user. With static storage, one shared volume holds a folder per user
  (`subPath: {username}`) -> `--homes <where it is mounted>`; with dynamic storage (the default), each user's own
  claim, `claim-{username}` (`pvcNameTemplate`), mounted side by side -> `--user-prefix claim-`. KubeSpawner
  writes a username that is not DNS-safe in an escaped form (`ada_l` as `ada-5fl`): such a folder names the learner
  as written, and a roster that does not know that name lists them in unmatched.csv (`--match` says who they are).

Who: each folder of a DIR given, but hidden ones (`.cache`, `.ipynb_checkpoints`), is a hub user's home, named
after it minus `--user-prefix` (a folder without that prefix is not a hub user's: `/home/ubuntu`, skipped). A home
that holds no course folder (`--folder`, where the class link clones the course: `looplab-course`, the name
`python -m authoring hub-link` gives it) gets no row: the link was never opened there, or it is not a learner's home
at all (the simple spawner's /tmp holds much else); the grader names those folders once, and a roster gives its
students there "not submitted".

What: the course notebooks where the link put them, by their own names, `<folder>/notebooks/<stem>.ipynb` and, in
French, `<folder>/notebooks/fr/<stem>.ipynb`; nothing else of the home. Not the clone's other files (a clone of the
course's own repository holds `solutions/`, the answers), not a copy (`01_one_tool_call-Copy1.ipynb`), not a
notebook elsewhere in the home, and never anything under a hidden folder such as `.ipynb_checkpoints` (Jupyter's
autosaved copies): with nbgitpuller, a learner works in the course's file itself. Every path is looked up, never
searched for, so a folder that can be entered but not listed is still read.

One notebook, two languages: the clone holds both `notebooks/01_one_tool_call.ipynb` and its French twin, and a
learner works in one. Of the two, the grader grades the one the learner ran (Jupyter saves a run cell's execution
count and outputs; the course's copy as cloned has none: tests/test_grade_homes.py holds the course to that), both
if they ran both (then two copies of one notebook: class_results.py's rule says which counts), and if they ran
neither (a notebook not started, or typed in and never run) the one in the language of the notebooks they did run,
else English. A file that cannot be read counts as run: its row says what is wrong with it.

Nothing is written: folders are listed, files opened read-only (reading.py, never through a link), and the
command line refuses an output (gradebook, feedback, exports) inside a home. A home, course folder, notebooks
folder or notebook that is a symbolic link gets its own row, `a link, not read`, as in a class folder
(finding.py); one the grader may not enter gets its own row, `cannot be read`, naming the folder and the system's
reason; the other learners' rows are as they would be without it.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from ... import language
from ...catalogue import words
from ..shared.limits import SUBMISSION_LIMIT
from . import lms
from .finding import Submission
from .reading import _json_of, _read_at_most  # the reader's own limits: bounded, never through a link

# texts/homes.toml: why homes cannot be graded as given, and the note on homes without the course, in the report's
# language.
WORDS = words(__file__)
# Where the class link (authoring/hub_link.py, which takes it from here) clones the course in each home: not an
# importable name, or a kernel started in the home would import that folder instead of the installed course.
DEFAULT_FOLDER = "looplab-course"
NAMES_SHOWN = 10  # homes named in the note on those without the course; the rest counted


class HomesError(ValueError):
    """The homes cannot be graded as given (nothing was graded): the command line's refusal says why."""


def notebooks_folder(lang: str) -> PurePosixPath:
    """The notebooks of a language inside the course's folder: `notebooks`, `notebooks/fr`."""
    return PurePosixPath("notebooks") if lang == language.SOURCE else PurePosixPath("notebooks", lang)


def checked_folder(folder: str) -> PurePosixPath:
    """The course folder given (`--folder`) as a path inside a home; HomesError for an absolute one, one climbing
    out (`..`), or one through a hidden folder (`.ipynb_checkpoints`): never graded."""
    path = PurePosixPath(folder.replace(os.sep, "/"))
    if not folder.strip() or path.is_absolute() or any(part == ".." or part.startswith(".") for part in path.parts):
        raise HomesError(WORDS("bad_folder", folder=folder))
    return path


def user_of(name: str, prefix: str) -> str | None:
    """The hub user a folder of the homes is the home of: its name without the prefix, in NFC (lms.nfc); None for a
    hidden folder, a folder without the prefix, or the prefix alone."""
    if name.startswith(".") or name == "__pycache__" or not name.startswith(prefix):
        return None
    return lms.nfc(name[len(prefix):]) or None


@dataclass(frozen=True)
class Homes:
    """The homes given: their folders (`--homes`, each holding a home per hub user), the prefix of a home's name
    before its user's (`--user-prefix`), the course's folder in each home (`--folder`), and the notebooks to grade
    (`--notebook`: after the first day of a workshop, its notebooks, not the stubs of the ones not yet opened)."""

    roots: tuple[Path, ...]
    prefix: str = ""
    folder: str = DEFAULT_FOLDER
    notebooks: tuple[str, ...] = ()  # the course notebooks to grade (`--notebook`), by stem; empty: every one

    def homes(self, root: Path) -> list[tuple[str, Path]]:
        """(hub user, home) of every hub user's home under a root, in name order; HomesError if it cannot be listed."""
        try:
            entries = sorted(os.scandir(root), key=lambda entry: entry.name)
        except OSError as error:
            raise HomesError(WORDS("cannot_list", root=root, error=error.strerror or error)) from None
        found = []
        for entry in entries:
            user = user_of(entry.name, self.prefix)
            try:  # a folder, or a link to one (its own row, never followed: one_home)
                if user is not None and entry.is_dir():
                    found.append((user, Path(entry.path)))
            except OSError:
                continue
        return found

    def home_holding(self, path: Path, folder: bool = False) -> Path | None:
        """The hub user's home an output the command line is asked to write lies in, or None: a path inside a folder of
        the homes named as a hub user's would be (made or not: a user may log in later), as it is or its links
        resolved. A file may lie beside the homes; a folder (`folder`: --feedback) may not be one of them."""
        target = Path(os.path.abspath(path))
        for root in self.roots:
            for base in (Path(os.path.abspath(root)), Path(root).resolve()):
                for real in (target, target.resolve()):
                    parts = real.relative_to(base).parts if base in real.parents else ()
                    if len(parts) >= (1 if folder else 2) and user_of(parts[0], self.prefix) is not None:
                        return base / parts[0]
        return None


@dataclass
class Found:
    """What the homes hold: the submissions (notebooks, and the rows of homes without one), and the homes that hold
    no course folder (not graded: named once, `note`)."""

    homes: Homes
    submissions: list[Submission] = field(default_factory=list)
    without_course: dict[Path, list[str]] = field(default_factory=dict)  # root -> its folders without the course

    def notes(self) -> list[str]:
        """The note on the homes without the course folder, one per root, in the current language."""
        notes = []
        for root, names in self.without_course.items():
            if names:
                shown = ", ".join(names[:NAMES_SHOWN])
                more = WORDS("and_more", count=len(names) - NAMES_SHOWN) if len(names) > NAMES_SHOWN else ""
                notes.append(WORDS("without_course", count=len(names), root=root, folder=self.homes.folder,
                                   names=shown + more))
        return notes


def _kind(path: Path) -> tuple[str, str]:
    """What is at a path, never following a link: ("dir" | "file" | "link" | "other" | "none" | "unreadable", the
    system's reason when unreadable)."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return "none", ""
    except NotADirectoryError:
        return "none", ""
    except OSError as error:
        return "unreadable", error.strerror or str(error)
    if stat.S_ISLNK(mode):
        return "link", ""
    return ("dir" if stat.S_ISDIR(mode) else "file" if stat.S_ISREG(mode) else "other"), ""


def _walk(start: Path, relative: PurePosixPath) -> tuple[str, Path, str]:
    """Down from `start` along `relative`, one folder at a time, never through a link: ("dir", the folder, "") when
    every step is a folder; else what stopped it ("none", "link", "unreadable", "other"), where, and why."""
    here = start
    for part in relative.parts:
        here = here / part
        kind, why = _kind(here)
        if kind != "dir":
            return kind, here, why
    return "dir", here, ""


def _ran(submission: Submission) -> bool:
    """Did the learner run this notebook? A code cell with an execution count or an output: Jupyter saves those, the
    course's copy as cloned has none. A file that cannot be read or parsed counts as run (its row says why)."""
    try:
        data = _json_of(_read_at_most(submission, SUBMISSION_LIMIT, ""), "")
    except Exception:
        return True
    cells = data.get("cells") if isinstance(data, dict) else None
    if not isinstance(cells, list):
        return True
    return any(isinstance(cell, dict) and cell.get("cell_type") == "code"
               and (cell.get("execution_count") is not None or cell.get("outputs")) for cell in cells)


def one_home(user: str, home: Path, root: Path, homes: Homes, stems: list[str]) -> list[Submission] | None:
    """The submissions of one hub user's home; None when it holds no course folder (not a learner of the course)."""
    folder = Path(os.path.abspath(home))

    def row(path: Path, **what) -> Submission:
        return Submission(path, user, given=root, folder=folder, **what)

    kind, why = _kind(home)
    if kind == "link":
        return [row(home, linked=True)]
    if kind == "unreadable":
        return [row(home, unreadable=why)]
    kind, where, why = _walk(home, checked_folder(homes.folder))
    if kind == "link":
        return [row(where, linked=True)]
    if kind == "unreadable":
        return [row(where.parent, unreadable=why)]
    if kind != "dir":
        return None
    course = where
    rows: list[Submission] = []
    closed: set[Path] = set()  # the folders found unreadable: one row each

    def cannot_enter(folder: Path, why: str) -> None:
        if folder not in closed:
            closed.add(folder)
            rows.append(row(folder, unreadable=why))

    candidates: dict[str, list[tuple[str, Submission]]] = {}  # stem -> (language, its regular file)
    for lang in language.LANGUAGES:
        kind, notebooks, why = _walk(course, notebooks_folder(lang))
        if kind == "link":
            rows.append(row(notebooks, linked=True))
        elif kind == "unreadable":
            cannot_enter(notebooks.parent, why)
        elif kind == "dir":
            for stem in stems:
                path = notebooks / f"{stem}.ipynb"
                kind, why = _kind(path)
                if kind == "link":
                    rows.append(row(path, linked=True))
                elif kind == "unreadable":
                    cannot_enter(notebooks, why)
                    break  # the folder cannot be entered: one row for it, not one per notebook
                elif kind == "file":
                    candidates.setdefault(stem, []).append((lang, row(path)))
    twinned = any(len(twins) > 1 for twins in candidates.values())  # else no file need be read now
    ran = {id(submission): _ran(submission) for twins in candidates.values() for _, submission in twins
           } if twinned else {}
    worked_in = {lang for twins in candidates.values() for lang, submission in twins if ran.get(id(submission))}
    home_language = worked_in.pop() if len(worked_in) == 1 else language.SOURCE
    for stem in stems:
        twins = candidates.get(stem, [])
        if len(twins) <= 1:
            rows += [submission for _, submission in twins]
            continue
        chosen = [submission for _, submission in twins if ran[id(submission)]]
        rows += chosen or [next((submission for lang, submission in twins if lang == home_language), twins[0][1])]
    rows = list({submission.path: submission for submission in rows}.values())  # a linked folder met twice: one row
    if not rows:
        looked_in = (PurePosixPath(homes.folder) / notebooks_folder(language.SOURCE)).as_posix() + "/"
        rows.append(row(course / notebooks_folder(language.SOURCE), missing=True, looked_in=looked_in))
    return rows


def collect_homes(homes: Homes, stems: list[str]) -> Found:
    """The submissions of every hub user's home under the roots (HomesError when a root holds no home of a learner
    of the course: a wrong --user-prefix or --folder would otherwise grade nothing, in silence)."""
    checked_folder(homes.folder)
    found = Found(homes)
    for root in homes.roots:
        listed = homes.homes(root)
        if not listed:
            raise HomesError(WORDS("no_homes_prefix", root=root, prefix=homes.prefix) if homes.prefix
                             else WORDS("no_homes", root=root))
        without = found.without_course.setdefault(root, [])
        learners = 0
        for user, home in listed:
            submissions = one_home(user, home, root, homes, stems)
            if submissions is None:
                without.append(home.name)
            else:
                learners += 1
                found.submissions += submissions
        if not learners:
            raise HomesError(WORDS("no_course", root=root, folder=homes.folder, count=len(listed)))
    return found
