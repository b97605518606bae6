"""The maintainer's tools: everything that builds the course from its sources, in one package.

Learners install `looplab/` only (the wheel's packages are `looplab*`); nothing here ships to them,
so this is the one place that may know the repository's folders. Every tool is a module run the
same way, from the repository's root, with the virtual environment's Python:

    python -m authoring notebooks        # `make notebooks`: rebuild every derived file (regenerate.py)
    python -m authoring record [...]     # `make record`: re-author recordings (author_recordings.py)
    python -m authoring handout [...]    # `make handout`: what learners get (handout.py)
    python -m authoring guide [--check]  # only docs/WORKSHOP.md's generated half (workshop_guide.py)
    python -m authoring docs [--check]   # only the pages generated from the manifest (course_pages.py)

Modules import one another as `authoring.<module>`; nothing is loaded by file path.
(scripts/ keeps what runs before the virtual environment exists, on any python3: bootstrap.py, drift.py.)
"""

from __future__ import annotations

from pathlib import Path

from looplab.quick_jsonschema import import_jsonschema

# Before nbformat imports it (five of these modules read or run notebooks): 1.2 s of CPU less in each run of a
# tool that does, as in the grader (looplab/grade/__init__.py; why: looplab/quick_jsonschema.py).
import_jsonschema()

ROOT = Path(__file__).resolve().parent.parent
SOLUTIONS = ROOT / "solutions"  # the source of every notebook
NOTEBOOKS = ROOT / "notebooks"  # the learner copies, generated
DOCS = ROOT / "docs"
