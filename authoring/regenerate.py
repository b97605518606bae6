"""The one step after an edit: rebuild every file the course derives from its sources.

    python -m authoring notebooks                    # the whole course (this is what `make notebooks` runs)
    python -m authoring notebooks 03_matching_ids    # one notebook

What a maintainer edits by hand is the source: the solution notebooks (solutions/), the scripted
answers (authoring/answers/), the manifest, the checks and their words and audit rows, and the package. First,
every input is checked, and every problem is listed at once before anything is written (`inputs_checked`:
French texts missing, unstamped or stale, rows the manifest needs, pages without their marks). Then
everything below is derived, in this order, and is never edited by hand; a notebook runs again only when
something its outputs depend on changed (made_from.py; `--all` runs them all):

1. a notebook's recording (looplab/recordings/<notebook>.json), only when the notebook now asks
   something its recording does not hold (a reworded question, a new cell): it is re-authored from
   the scripted answers, offline. A recording that still covers its notebook is kept as it is,
   so recordings made live with `make record` survive;
2. the stored outputs of the solution notebooks, re-run offline and normalised (no widget ids,
   no machine paths), so a diff shows only what changed; the kernels are forked from one warm
   template per language (learner_notebooks.ForkedKernels), and nbval re-runs every solution in
   a fresh kernel against the same outputs;
3. the learner notebooks (notebooks/), made from the solutions;
3'. the same three for every other language of the course, for each notebook whose translation is complete
   (translated_notebooks.py): solutions/fr/<stem>.ipynb from the English solution and
   translations/fr/<stem>.toml, its recording looplab/recordings/fr/<stem>.json when it outgrew it, its
   stored outputs, notebooks/fr/<stem>.ipynb. A notebook without a finished translation is skipped with
   a line saying so (the suite fails on it until it is translated);
4. the pages generated from the manifest and the checks' data (authoring/course_pages.py): the audit
   page docs/CHECKS_AUDIT.md (from looplab/checks/audit/*.toml), README's course table and `doctor`
   sample, the notebook rows and "adding a notebook" lists of docs/DESIGN.md and
   docs/WRITING_NOTEBOOKS.md;
5. the generated half of the instructor's guide, docs/WORKSHOP.md (authoring/workshop_guide.py: the run
   of show from the learner notebooks, what goes wrong from the audit and the check catalogues).

(The grader's test fixtures are derived too, but never committed: the tests build them from the
solutions when they run, see tests/grading_fixtures/make_fixtures.py.)

On an unchanged course it changes nothing: it ends by listing the files it changed, and
tests/test_regenerate.py runs it on a copy of the course and finds none.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
from pathlib import Path

import nbformat
from nbclient.exceptions import CellExecutionError

import looplab
from looplab import language
from looplab.course import COURSE
from looplab.recordings import RECORDINGS_DIR
from looplab.transport import NotRecordedError

from . import ROOT
from . import audit
from . import author_recordings as author
from . import course_pages
from . import fingerprints
from . import learner_notebooks
from . import made_from
from . import translated_notebooks as translated
from . import workshop_guide as guide

NOT_RECORDED = NotRecordedError.__name__
# The files this command may rewrite (a notebook's run also leaves agent.py beside it: not ours to list).
DERIVED = ("looplab/recordings/*.json", "solutions/*.ipynb", "notebooks/*.ipynb", "docs/*.md", "README*.md",
           *(f"{folder}/{language}/*.{ext}" for language in translated.TRANSLATED
             for folder, ext in (("looplab/recordings", "json"), ("solutions", "ipynb"), ("notebooks", "ipynb"))))


def digests() -> dict[str, str]:
    """Every derived file, by its path, with a digest of its bytes."""
    return {str(path.relative_to(ROOT)): hashlib.sha256(path.read_bytes()).hexdigest()
            for pattern in DERIVED for path in sorted(ROOT.glob(pattern))}


def asks_something_unrecorded(path: Path) -> bool:
    """Did the offline run of this solution notebook stop (or print) a not-recorded error?"""
    notebook = nbformat.read(path, as_version=4)
    return any(output.get("ename") == NOT_RECORDED
               for cell in notebook.cells for output in cell.get("outputs", []))


def store_outputs(stem: str, language: str = translated.SOURCE,
                  kernels: learner_notebooks.ForkedKernels | None = None) -> None:
    """Re-run one solution offline (in a kernel forked from `kernels`' template if given), re-authoring its
    recording first if the notebook outgrew it."""
    path = translated.solutions_in(language) / f"{stem}.ipynb"
    try:
        learner_notebooks.execute(path, kernels)
        missed = asks_something_unrecorded(path)
    except CellExecutionError as error:
        if getattr(error, "ename", "") != NOT_RECORDED:
            raise
        missed = True
    if missed:
        print(f"{path.relative_to(ROOT)}: the notebook asks something its recording lacks; re-authoring it "
              f"from authoring/answers/{stem}.py (offline)", file=sys.stderr)
        author.author_notebook(path, live=False)
        learner_notebooks.execute(path, kernels)


def calculator_recording_is_complete() -> bool:
    """The `calculator` recording (used by the tests and the README) answers every scripted question."""
    with language.using(language.SOURCE):  # the English one, whatever LOOPLAB_LANG the shell sets
        client = looplab.client("calculator", mode="offline", quiet=True)
    try:
        for question in author.load_answers("calculator"):
            author.run_loop(client, question)
    except NotRecordedError:
        return False
    return True


class NotReady(Exception):
    """Inputs the regeneration cannot make its files from: every one of them, each with its file, key and fix."""

    def __init__(self, lines: list[str]):
        super().__init__(f"{len(lines)} input(s) to fix first; nothing was written:\n" + "\n".join(lines))


def inputs_checked() -> None:
    """Check every input before anything is written: French texts missing, unstamped or stale (fingerprints.py),
    rows the manifest needs (titles, `builds`, audit rows), a page without its marks, a stray audit table. All
    of them are reported at once (NotReady). A notebook whose cells are not all translated yet is not one: its
    French edition is skipped, with one line (translated_notebooks.py)."""
    stopping, _ = fingerprints.problems()
    lines = [row.line() for row in stopping] + course_pages.missing_marks() + audit.stray_tables()
    if lines:
        raise NotReady(lines)


def regenerate(names: list[str], run_all: bool = False) -> list[str]:
    """Rebuild the derived files (of the named notebooks, or all); return the paths that changed. A notebook whose
    outputs were made from today's inputs is not run again (made_from.py), unless `run_all`."""
    inputs_checked()
    before = digests()
    if not names and not calculator_recording_is_complete():
        print("calculator: re-authoring it from authoring/answers/calculator.py (offline)", file=sys.stderr)
        author.author_calculator(live=False, recordings=RECORDINGS_DIR)
    package = made_from.package_files()
    kept = (lambda stem, spoken: False) if run_all else (lambda stem, spoken: made_from.up_to_date(stem, spoken, package))
    english = [stem for stem in COURSE.stems if (not names or stem in names) and not kept(stem, translated.SOURCE)]
    if english:
        with learner_notebooks.forked_kernels(translated.SOURCE, len(english)) as kernels:  # one template a language
            for stem in english:
                print(f"running {stem} offline", file=sys.stderr)
                store_outputs(stem, kernels=kernels)
                made_from.remember(stem, translated.SOURCE)
    learner_notebooks.generate(names or None)
    for spoken in translated.TRANSLATED:
        written = translated.write_solutions(names, spoken, kept=lambda stem: kept(stem, spoken))
        if written:
            with learner_notebooks.forked_kernels(spoken, len(written)) as kernels:
                for stem in written:
                    print(f"running {spoken}/{stem} offline", file=sys.stderr)
                    store_outputs(stem, spoken, kernels)
                    made_from.remember(stem, spoken)
        made = [stem for stem in COURSE.stems if (not names or stem in names)
                and (translated.solutions_in(spoken) / f"{stem}.ipynb").exists()]
        if made:  # (an empty list of names means every notebook)
            learner_notebooks.generate(made, solutions=translated.solutions_in(spoken),
                                       notebooks=translated.notebooks_in(spoken))
    course_pages.main([])
    guide.main([])
    after = digests()
    return sorted(path for path in before.keys() | after.keys() if before.get(path) != after.get(path))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m authoring notebooks", description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help=f"notebooks to rebuild (default: all): {', '.join(COURSE.stems)}")
    parser.add_argument("--all", action="store_true", dest="run_all",
                        help="run every notebook named, even those whose outputs were made from today's inputs")
    args = parser.parse_args(argv)
    unknown = set(args.names) - set(COURSE.stems)
    if unknown:
        parser.error(f"no notebook named {', '.join(sorted(unknown))}; they are: {', '.join(COURSE.stems)}")
    try:
        changed = regenerate(args.names, args.run_all)
    except (course_pages.Incomplete, NotReady) as error:
        print(f"regenerate: {error}", file=sys.stderr)
        return 1
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
