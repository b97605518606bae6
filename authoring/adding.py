"""What adding a notebook touches: the one list, which the docs print and a test holds to the truth.

A new notebook is written in exactly the files of PARTS (their paths follow from its manifest entry);
everything in DERIVED is then made by `make notebooks` (or built by the tests, for the grader's
fixtures) and never written by hand. docs/WRITING_NOTEBOOKS.md and docs/DESIGN.md show these lists
(authoring/course_pages.py generates them there), and tests/test_adding_a_notebook.py adds a
throwaway notebook to a copy of the course, writing only PARTS, runs `make notebooks`, and finds
every other changed file in DERIVED.
"""

from __future__ import annotations

from dataclasses import dataclass

from looplab.course import Notebook

CHECKS_PACKAGE = "looplab.checks."  # a notebook's checks module: looplab.checks.<checks>
REFERENCES_PACKAGE = "looplab."  # its reference module: looplab.<references>


@dataclass(frozen=True)
class Part:
    what: str
    where: str  # a path, with <stem>, <checks> and <references> filled in from the manifest entry


PARTS = (
    Part("its entry in the course manifest: stem, title, what the learner builds, checks module, reference "
         "module, exercises (id, the name its check cell passes, title, points, where the course's own version "
         "lives, `since` once the course is published, `checked_with` for a name its check needs to hold something "
         "else), the names its set-up provides to later notebooks",
         "looplab/course.py"),
    Part("the solution notebook, the source of the learner's copy; metadata "
         '`{"looplab": {"course_version": "<COURSE.version>"}}`', "solutions/<stem>.ipynb"),
    Part("its checks: scenarios, checkers", "looplab/checks/<checks>.py"),
    Part("their words: every text and hint a learner reads, each row in English and French (`[<key>.fr]`, "
         "`[hints.fr]`)", "looplab/checks/texts/<checks>.toml"),
    Part("their audit rows: each instruction, where it is taught, the scenario and the wrong answer that hold it; "
         "the instruction in French too (`fr = { instruction = \"...\" }`: the French workshop guide shows it)",
         "looplab/checks/audit/<checks>.toml"),
    Part("the course's own version of each exercise (each `Exercise.reference`), a module of its own",
         "looplab/<references>.py"),
    Part("its scripted answers (its recordings are made from them), each reply's French beside its English "
         "(`text(\"...\", fr=\"...\")`)", "authoring/answers/<stem>.py"),
    Part("its soundness tests: each check passing the reference and failing the stub and two typical wrong "
         "answers at least", "tests/test_checks_<checks>.py"),
    Part("the manifest's words in every language: its title, what the learner builds and each exercise's title, "
         "English (`text`, the manifest's words) and French (`[\"<key>\".fr]` with `text`), keyed by stem, "
         "`builds:<stem>` and exercise id (an exercise titled by a name alone needs no row); then "
         "`python -m authoring stamp --new` writes each French row's `of`", "looplab/texts/course.toml"),
    Part("its cells' French: every markdown cell, comment and word-holding string of its code (`python -m authoring "
         "translations skeleton --lang fr <stem>` writes the todo list; docs/TRANSLATING.md); the French of its checks' "
         "words, audit rows, titles and answers sits beside their English, in the files above",
         "translations/fr/<stem>.toml"),
)

# Written too when the notebook writes a program of the series (notebooks 5 to 8: agent_toolbox.py...), so that the
# series' own stage tests run against it, from the solution and from unusual right answers.
PROGRAM_PARTS = (
    Part("its row in STAGES: the series' stage, the notebook, the program's file name, its unusual answers' file",
         "tests/test_series_stages.py"),
    Part("unusual right answers to its exercises, each leaning on helpers of the learner's own (`# %% exercise N` "
         "sections)", "tests/unusual_answers/<checks>.py"),
)

# Made by `make notebooks` from the parts above and the manifest (a new notebook changes each of them).
DERIVED = (
    Part("the learner's copy", "notebooks/<stem>.ipynb"),
    Part("its recording (re-authored offline when the notebook asks something it lacks)",
         "looplab/recordings/<stem>.json"),
    Part("the audit page", "docs/CHECKS_AUDIT.md"),
    Part("the workshop guide's run of show and mistakes tables", "docs/WORKSHOP.md"),
    Part("the same, in French", "docs/WORKSHOP.fr.md"),
    Part("the course table and the `doctor` sample", "README.md"),
    Part("the same, in French", "README.fr.md"),
    Part("the notebook rows", "docs/DESIGN.md"),
    Part("its French solution: the English one with the words of translations/fr/<stem>.toml, its outputs stored",
         "solutions/fr/<stem>.ipynb"),
    Part("its French learner's copy", "notebooks/fr/<stem>.ipynb"),
    Part("its French recording", "looplab/recordings/fr/<stem>.json"),
)
# Built by the tests from the solutions when they run, never committed.
BUILT_BY_THE_TESTS = "the grader's fixtures (tests/grading_fixtures/make_fixtures.py)"


def last_part(module: str, package: str) -> str:
    if not module.startswith(package) or "." in module[len(package):]:
        raise ValueError(f"{module!r} should be a module {package}<name> (docs/WRITING_NOTEBOOKS.md)")
    return module[len(package):]


def path_of(part: Part, entry: Notebook) -> str:
    """The file a part is, for this notebook."""
    where = part.where.replace("<stem>", entry.stem)
    if "<checks>" in where:
        where = where.replace("<checks>", last_part(entry.checks, CHECKS_PACKAGE))
    if "<references>" in where:
        if entry.references is None:
            raise ValueError(f"{entry.stem} names no reference module (Notebook.references)")
        where = where.replace("<references>", last_part(entry.references, REFERENCES_PACKAGE))
    return where


def files_written(entry: Notebook) -> set[str]:
    return {path_of(part, entry) for part in PARTS}


def files_derived(entry: Notebook) -> set[str]:
    return {path_of(part, entry) for part in DERIVED}
