"""The one step after an edit: rebuild every file the course derives from its sources.

    python scripts/regenerate.py                    # the whole course (this is what `make notebooks` runs)
    python scripts/regenerate.py 03_matching_ids    # one notebook

What a maintainer edits by hand is the source: the solution notebooks (solutions/), the scripted
answers (scripts/answers/) and the package. Everything below is derived, in this order, and is
never edited by hand:

1. a notebook's recording (looplab/recordings/<notebook>.json), only when the notebook now asks
   something its recording does not hold (a reworded question, a new cell): it is re-authored from
   the scripted answers, offline. A recording that still covers its notebook is kept as it is,
   so recordings made live with `make record` survive;
2. the stored outputs of the solution notebooks, re-run offline and normalised (no widget ids,
   no machine paths), so a diff shows only what changed;
3. the learner notebooks (notebooks/), made from the solutions;
4. the generated half of the instructor's guide, docs/WORKSHOP.md (scripts/workshop_guide.py: the run
   of show from the learner notebooks, what goes wrong from the audit and the check catalogues).

(The grader's test fixtures are derived too, but never committed: the tests build them from the
solutions when they run, see tests/grading_fixtures/make_fixtures.py.)

On an unchanged course it changes nothing: it ends by listing the files it changed, and
tests/test_regenerate.py runs it on a copy of the course and finds none.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import sys
from pathlib import Path

import nbformat
from nbclient.exceptions import CellExecutionError

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import looplab  # noqa: E402
from looplab import exercises  # noqa: E402
from looplab.course import COURSE  # noqa: E402
from looplab.recordings import RECORDINGS_DIR  # noqa: E402
from looplab.transport import NotRecordedError  # noqa: E402

NOT_RECORDED = NotRecordedError.__name__
# The files this command may rewrite (a notebook's run also leaves agent.py beside it: not ours to list).
DERIVED = ("looplab/recordings/*.json", "solutions/*.ipynb", "notebooks/*.ipynb", "docs/WORKSHOP.md")


def load_script(path: Path):
    """A script of this repository as a module (scripts/ and tests/ are not packages)."""
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


author = load_script(ROOT / "scripts" / "author_recordings.py")
guide = load_script(ROOT / "scripts" / "workshop_guide.py")


def digests() -> dict[str, str]:
    """Every derived file, by its path, with a digest of its bytes."""
    return {str(path.relative_to(ROOT)): hashlib.sha256(path.read_bytes()).hexdigest()
            for pattern in DERIVED for path in sorted(ROOT.glob(pattern))}


def asks_something_unrecorded(path: Path) -> bool:
    """Did the offline run of this solution notebook stop (or print) a not-recorded error?"""
    notebook = nbformat.read(path, as_version=4)
    return any(output.get("ename") == NOT_RECORDED
               for cell in notebook.cells for output in cell.get("outputs", []))


def store_outputs(stem: str) -> None:
    """Re-run one solution offline, re-authoring its recording first if the notebook outgrew it."""
    path = exercises.SOLUTIONS / f"{stem}.ipynb"
    try:
        exercises.execute(path)
        missed = asks_something_unrecorded(path)
    except CellExecutionError as error:
        if getattr(error, "ename", "") != NOT_RECORDED:
            raise
        missed = True
    if missed:
        print(f"{stem}: the notebook asks something its recording lacks; re-authoring it from "
              f"scripts/answers/{stem}.py (offline)", file=sys.stderr)
        author.author_notebook(path, live=False)
        exercises.execute(path)


def calculator_recording_is_complete() -> bool:
    """The `calculator` recording (used by the tests and the README) answers every scripted question."""
    client = looplab.client("calculator", mode="offline", quiet=True)
    try:
        for question in author.load_answers("calculator"):
            author.run_loop(client, question)
    except NotRecordedError:
        return False
    return True


def regenerate(names: list[str]) -> list[str]:
    """Rebuild the derived files (of the named notebooks, or all); return the paths that changed."""
    before = digests()
    if not names and not calculator_recording_is_complete():
        print("calculator: re-authoring it from scripts/answers/calculator.py (offline)", file=sys.stderr)
        author.author_calculator(live=False, recordings=RECORDINGS_DIR)
    for stem in COURSE.stems:
        if not names or stem in names:
            print(f"running {stem} offline", file=sys.stderr)
            store_outputs(stem)
    exercises.generate(names or None)
    guide.main([])
    after = digests()
    return sorted(path for path in before.keys() | after.keys() if before.get(path) != after.get(path))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help=f"notebooks to rebuild (default: all): {', '.join(COURSE.stems)}")
    args = parser.parse_args(argv)
    unknown = set(args.names) - set(COURSE.stems)
    if unknown:
        parser.error(f"no notebook named {', '.join(sorted(unknown))}; they are: {', '.join(COURSE.stems)}")
    try:
        changed = regenerate(args.names)
    except author.AuthoringFailed as error:
        print(f"regenerate: {error}; the recording was left unchanged", file=sys.stderr)
        return 1
    except CellExecutionError as error:
        ename, evalue = getattr(error, "ename", ""), getattr(error, "evalue", "")
        print(f"regenerate: a solution cell failed offline: {ename}: {evalue}", file=sys.stderr)
        return 1
    print("\n".join(f"changed {path}" for path in changed) if changed else "nothing changed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
