"""Adding a notebook touches exactly the files docs/WRITING_NOTEBOOKS.md lists; everything else follows.

Two proofs, with a throwaway notebook that takes the course's next free number (so it never clashes
with a real notebook):

- in a copy of the repository, it is added the documented way: only the files of
  authoring/adding.py's PARTS (the list the docs print) are written, then `make notebooks` runs
  (`python -m authoring notebooks <stem>`); every other file that changed must be one the list says
  is derived (its learner copy, its recording, the generated pages), and the generated pages are
  current afterwards;
- in a temporary folder, the same notebook as a fork would ship it (its manifest entry in a module of
  its own, selected with LOOPLAB_COURSE, see looplab.course): the manifest agreement test, the
  learner-notebook generator, `check`/`hint`, the grader in a real kernel, and the soundness
  coverage (which wants the new check shown failing on two wrong answers) all take it in.
"""

from __future__ import annotations

import csv
import hashlib
import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import nbformat
import pytest

from authoring import adding
from authoring.learner_notebooks import BEGIN, END, generate, manifest_disagreements
from tests.test_regenerate import copy_of_the_course
from looplab.course import COURSE, Course, Notebook

ROOT = Path(__file__).resolve().parent.parent
NUMBER = COURSE.next_number  # the next free number: a real notebook of that number would make this one the next
STEM = f"{NUMBER:02d}_doubling"
ID = f"{NUMBER}.1"

# 1. The manifest entry (what a maintainer adds to looplab/course.py's COURSE; the fork builds a Course from it).
ENTRY = f'''
Notebook(
    "{STEM}", "Doubling", "{{checks}}",
    builds="a function that doubles",
    references="{{references}}",
    exercises=(Exercise("{ID}", "double", "double", 1, "{{references}}:double"),),
)'''
COURSE_MODULE = f'''
from looplab.course import COURSE, Course, Exercise, Notebook

FIVE = {textwrap.indent(ENTRY.format(checks="checks_doubling", references="reference_doubling"), "").strip()}
EXTENDED = Course(COURSE.versions, COURSE.notebooks + (FIVE,))
'''

# 2. Its checks module: scenarios and checker; 3. their words, beside it in texts/<module>.toml.
CHECKS_MODULE = f'''
from looplab.catalogue import catalogue
from looplab.checks.core import Report

TEXTS, HINTS = catalogue(__file__)
CASES = [(2, 4), (-3, -6), (0.5, 1.0)]


def check_double(double, report: Report) -> None:
    for number, expected in CASES:
        report.require(double(number) == expected, "wrong_double", number=number, got=double(number), expected=expected)
    report.note("doubled")


CHECKERS = {{"{ID}": check_double}}
'''
CATALOGUE = f'''
[wrong_double]
failed = "double({{number!r}}) returned {{got!r}}; expected {{expected!r}}"
hint = "Multiply by two."
[wrong_double.fr]
failed = "double({{number!r}}) a renvoyé {{got!r}} ; attendu : {{expected!r}}"
hint = "Multipliez par deux."

[doubled]
passed = "doubles whole, negative and decimal numbers"
[doubled.fr]
passed = "double les nombres entiers, négatifs et décimaux"

[hints]
"{ID}" = ["Multiply by two.", "return 2 * number"]

[hints.fr]
"{ID}" = ["Multipliez par deux.", "return 2 * number"]
'''
# 4. Its audit rows, beside them in audit/<module>.toml.
AUDIT = f'''
[["{ID}"]]
instruction = "return twice the number"
taught = "{NUMBER:02d} §exercise, \\"Write `double`...\\""
scenario = "`wrong_double`"
wrong_answer = "`test_adding_instead_of_doubling_fails`"
fr = {{ instruction = "renvoyer le double du nombre" }}
'''
# 5. Its reference module: the course's own version of each exercise.
REFERENCE_MODULE = '''
def double(number):
    """The course's own version (the manifest's reference)."""
    return 2 * number
'''
# 6. Its scripted answers (its recording is made from them).
ANSWERS = '''
from looplab.scripted import reply, text

ANSWERS = {"DOUBLE_QUESTION": [reply(text("Twice 21 is 42.", fr="Le double de 21 est 42."))]}
'''
# 8. The manifest's words in every language: its title and what it builds (its exercise is titled by its name).
MANIFEST_WORDS = f'''
["{STEM}"]
text = "Doubling"
["{STEM}".fr]
text = "Le double"

["builds:{STEM}"]
text = "a function that doubles"
["builds:{STEM}".fr]
text = "une fonction qui double"
'''


def cells_in_french(solution: nbformat.NotebookNode) -> str:
    """9. translations/fr/<stem>.toml: its markdown cells and the words of its code, by cell id."""
    markdown, question = solution.cells[0], solution.cells[2]
    return (f"[cells.{markdown.id}]\ntext = '''\n# Le double\n\nUn notebook jetable : un exercice, une "
            f"vérification.'''\n\n[[cells.{question.id}.code]]\nen = '\"What is twice 21?\"'\n"
            f"fr = '\"Combien font deux fois 21\u202f?\"'\n")


# 7. Its soundness tests: the check shown failing on typical wrong answers.
SOUNDNESS_TESTS_WITH_ONE_WRONG_ANSWER = f'''
import pytest

from tests.check_helpers import fails, stub


def test_the_stub_is_not_written_yet():
    fails("{ID}", stub, "not written yet")


def test_adding_instead_of_doubling_fails():
    fails("{ID}", lambda number: number + 2, "double(-3) returned -1")

# fails("{ID}", lambda number: number * 3)   a comment is not a test
'''
SECOND_WRONG_ANSWER = f'''

@pytest.mark.parametrize("wrong", [lambda number: abs(2 * number)])
def test_more_wrong_answers_fail(wrong):
    fails("{ID}", wrong, "expected -6")
'''


def solution_notebook(asks_the_model: bool = False) -> nbformat.NotebookNode:
    """8. Its solution notebook, with the cells a course notebook has (and, in the copy, one question)."""
    setup = "import looplab\nfrom looplab import check"
    cells = [nbformat.v4.new_markdown_cell("# Doubling\n\nA throwaway notebook: one exercise, one check."),
             nbformat.v4.new_code_cell(setup + (f'\n\nclient = looplab.client("{STEM}")' if asks_the_model else ""),
                                       metadata={"tags": ["setup"]})]
    if asks_the_model:
        cells.append(nbformat.v4.new_code_cell(
            'DOUBLE_QUESTION = "What is twice 21?"\n'
            'reply = client.messages.create(model=looplab.MODEL, max_tokens=64,\n'
            '                               messages=[{"role": "user", "content": DOUBLE_QUESTION}])\n'
            'reply.content[0].text'))
    cells += [
        nbformat.v4.new_code_cell(
            f"def double(number):\n    {BEGIN}\n    return 2 * number\n    {END}\n\n\ndouble(21)",
            metadata={"tags": ["exercise"], "looplab": {"exercise": ID}}),
        nbformat.v4.new_code_cell(f'check("{ID}", double)', metadata={"tags": ["check"]}),
    ]
    return nbformat.v4.new_notebook(cells=cells, metadata={
        "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
        "looplab": {"course_version": COURSE.version}})


def fork_files() -> dict[str, str]:
    """The fork's files, by their name in its folder (tests/test_grade_versions.py extends the same fork)."""
    return {"course_doubling.py": COURSE_MODULE, "checks_doubling.py": CHECKS_MODULE,
            "texts/checks_doubling.toml": CATALOGUE, "reference_doubling.py": REFERENCE_MODULE}


def write_fork(folder: Path) -> None:
    for name, source in fork_files().items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(textwrap.dedent(source), encoding="utf-8")
    (folder / "solutions").mkdir()
    nbformat.write(solution_notebook(), folder / "solutions" / f"{STEM}.ipynb")


FORK_MODULES = ("course_doubling", "checks_doubling", "reference_doubling")


@pytest.fixture(scope="module")
def fork(tmp_path_factory):
    """A temporary folder holding the new notebook's files, and the course that includes them."""
    folder = tmp_path_factory.mktemp("fork")
    write_fork(folder)
    sys.path.insert(0, str(folder))
    try:
        import course_doubling
        yield folder, course_doubling.EXTENDED
    finally:
        sys.path.remove(str(folder))
        for name in FORK_MODULES:
            sys.modules.pop(name, None)


# --- the documented way, in a copy of the repository ----------------------------------------------------

def digests(folder: Path) -> dict[str, str]:
    """Every file of the copy but the caches (compiled Python; `.cache/`, what each notebook was made from)."""
    return {path.relative_to(folder).as_posix(): hashlib.sha256(path.read_bytes()).hexdigest()
            for path in sorted(folder.rglob("*"))
            if path.is_file() and "__pycache__" not in path.parts and ".cache" not in path.parts}


def add_the_manifest_entry(course_py: Path, entry: str) -> None:
    """Append the entry to COURSE's notebooks, as a maintainer would type it."""
    text = course_py.read_text(encoding="utf-8")
    start = text.index("\nCOURSE = Course(")
    end = text.index("\n    ),\n)\n", start)
    course_py.write_text(text[:end] + textwrap.indent(entry, " " * 8) + "," + text[end:], encoding="utf-8")


@pytest.fixture(scope="module")
def added_the_documented_way(tmp_path_factory):
    """A copy of the course, the notebook added by writing only the listed files, then `make notebooks`."""
    copy = copy_of_the_course(tmp_path_factory.mktemp("course"))
    (copy / "tests").mkdir()
    before = digests(copy)

    entry = ENTRY.format(checks="looplab.checks.doubling", references="looplab.doubling")
    add_the_manifest_entry(copy / "looplab" / "course.py", entry)
    nbformat.write(solution_notebook(asks_the_model=True), copy / "solutions" / f"{STEM}.ipynb")
    sources = {"looplab/checks/doubling.py": CHECKS_MODULE, "looplab/checks/texts/doubling.toml": CATALOGUE,
               "looplab/checks/audit/doubling.toml": AUDIT, "looplab/doubling.py": REFERENCE_MODULE,
               f"authoring/answers/{STEM}.py": ANSWERS,
               "tests/test_checks_doubling.py": SOUNDNESS_TESTS_WITH_ONE_WRONG_ANSWER + SECOND_WRONG_ANSWER}
    for relative, source in sources.items():
        (copy / relative).write_text(textwrap.dedent(source), encoding="utf-8")
    with (copy / "looplab" / "texts" / "course.toml").open("a", encoding="utf-8") as manifest_words:
        manifest_words.write(MANIFEST_WORDS)
    solution = nbformat.read(copy / "solutions" / f"{STEM}.ipynb", as_version=4)
    (copy / "translations" / "fr" / f"{STEM}.toml").write_text(cells_in_french(solution), encoding="utf-8")
    written = {path for path, digest in digests(copy).items() if before.get(path) != digest}

    env = {**os.environ, "PYTHONPATH": str(copy)}  # the kernels import the copy's looplab, too
    env.pop("ANTHROPIC_API_KEY", None)
    env.pop("LOOPLAB_COURSE", None)
    for command in (["stamp", "--new"], ["notebooks", STEM]):  # the fingerprints of the French, then the rest
        run = subprocess.run([sys.executable, "-m", "authoring", *command], cwd=copy, env=env,
                             capture_output=True, text=True, timeout=600)
        assert run.returncode == 0, run.stdout + run.stderr[-3000:]
    changed = {path for path, digest in digests(copy).items() if before.get(path) != digest}
    return copy, env, written, changed


def the_copy_s_entry(copy: Path, env: dict) -> Notebook:
    """The new notebook's entry, as the copy's manifest holds it (read in the copy: this process has ours)."""
    script = ("import json\nfrom looplab.course import COURSE\n"
              f"n = COURSE.notebook({STEM!r})\nprint(json.dumps([n.stem, n.title, n.checks, n.references]))")
    run = subprocess.run([sys.executable, "-c", script], cwd=copy, env=env, capture_output=True, text=True,
                         check=True)
    stem, title, checks, references = json.loads(run.stdout)
    return Notebook(stem, title, checks, exercises=(), references=references)


def test_adding_it_the_documented_way_writes_exactly_the_listed_files(added_the_documented_way):
    copy, env, written, _ = added_the_documented_way
    assert written == adding.files_written(the_copy_s_entry(copy, env))


def test_everything_else_it_changed_is_derived_by_make_notebooks(added_the_documented_way):
    copy, env, written, changed = added_the_documented_way
    assert changed - written == adding.files_derived(the_copy_s_entry(copy, env))


def test_after_make_notebooks_the_generated_pages_name_it_and_are_current(added_the_documented_way):
    copy, env, _, _ = added_the_documented_way
    for command in (["docs", "--check"], ["guide", "--check"]):
        run = subprocess.run([sys.executable, "-m", "authoring", *command], cwd=copy, env=env,
                             capture_output=True, text=True, timeout=300)
        assert run.returncode == 0, run.stdout + run.stderr
    readme = (copy / "README.md").read_text(encoding="utf-8")
    assert f"| `{STEM}` | a function that doubles | {ID} `double` |" in readme
    assert f"ok   recordings  {len(COURSE.notebooks) + 1} recordings" in readme
    assert f"## {ID} double\n" in (copy / "docs" / "CHECKS_AUDIT.md").read_text(encoding="utf-8")
    assert f"| `{STEM}` |" in (copy / "docs" / "WORKSHOP.md").read_text(encoding="utf-8")
    assert "What is twice 21?" in (copy / "looplab" / "recordings" / f"{STEM}.json").read_text(encoding="utf-8")


def test_a_missing_audit_section_stops_make_notebooks_with_one_line_naming_the_exercise(added_the_documented_way):
    copy, env, _, _ = added_the_documented_way
    audit = copy / "looplab" / "checks" / "audit" / "doubling.toml"
    rows = audit.read_text(encoding="utf-8")
    audit.write_text("", encoding="utf-8")
    try:
        run = subprocess.run([sys.executable, "-m", "authoring", "docs"], cwd=copy, env=env,
                             capture_output=True, text=True, timeout=300)
    finally:
        audit.write_text(rows, encoding="utf-8")
    assert run.returncode == 1
    assert "Traceback" not in run.stderr and f"no rows for exercise {ID} (double)" in run.stderr


# --- the same notebook in a fork ----------------------------------------------------------------------


def test_the_extended_course_lists_the_new_notebook_last(fork):
    _, course = fork
    assert course.stems == COURSE.stems + [STEM]
    assert course.exercise(ID).points == 1
    # what the new exercise may lean on comes from the course's order: every earlier piece, derived (what the last
    # exercise alone is checked with, its `checked_with`, is its own: 7.5's STORE)
    last = COURSE.exercises[-1]
    assert set(course.earlier_pieces(ID)) >= set(course.earlier_pieces(last.id)) - set(last.checked_with) | {last.name}


def test_the_solution_notebook_agrees_with_its_manifest_entry(fork):
    folder, course = fork
    solution = nbformat.read(folder / "solutions" / f"{STEM}.ipynb", as_version=4)
    assert manifest_disagreements(solution, course.notebook(STEM), course) == []


def test_the_generator_makes_its_learner_notebook(fork):
    folder, course = fork
    written = generate([STEM], course=course, solutions=folder / "solutions", notebooks=folder / "notebooks")
    assert written == [folder / "notebooks" / f"{STEM}.ipynb"]
    learner = nbformat.read(written[0], as_version=4)
    assert f'raise NotImplementedError("Exercise {ID}' in learner.cells[2].source
    assert BEGIN not in learner.cells[2].source


def test_its_check_passes_the_solution_and_fails_the_stub_and_a_wrong_answer(fork):
    from looplab.checks import run_check
    from looplab.checks.core import NOT_SOLVED, NOT_WRITTEN

    _, course = fork
    assert run_check(ID, lambda number: 2 * number, course=course).points == 1

    def stub(number):
        raise NotImplementedError(f"Exercise {ID}: replace this line with your code")

    assert run_check(ID, stub, course=course).kind == NOT_WRITTEN
    wrong = run_check(ID, lambda number: number + number if number > 0 else number, course=course)
    assert wrong.kind == NOT_SOLVED and "double(-3) returned -3; expected -6" in wrong.failed
    assert course.hints(ID) == ["Multiply by two.", "return 2 * number"]


def test_the_grader_grades_it_in_a_real_kernel(fork, tmp_path):
    """The whole extended course in another process, chosen with LOOPLAB_COURSE, as a fork would ship it."""
    folder, _ = fork
    submissions = tmp_path / "submissions"
    (submissions / "ada").mkdir(parents=True)
    (submissions / "bob").mkdir()
    solution = nbformat.read(folder / "solutions" / f"{STEM}.ipynb", as_version=4)
    nbformat.write(solution, submissions / "ada" / f"{STEM}.ipynb")
    generate([STEM], course=fork[1], solutions=folder / "solutions", notebooks=submissions / "bob")
    env = dict(os.environ, LOOPLAB_COURSE="course_doubling:EXTENDED",
               PYTHONPATH=os.pathsep.join([str(folder), str(ROOT), os.environ.get("PYTHONPATH", "")]))
    out = tmp_path / "grades.csv"
    # one slot: one kernel template to start (seconds of CPU); notebooks graded side by side are tests/test_grade.py's
    run = subprocess.run([sys.executable, "-m", "looplab.grade", str(submissions), "--out", str(out), "--quiet",
                          "--jobs", "1", "--cell-timeout", "10"],
                         cwd=tmp_path, env=env, capture_output=True, text=True, timeout=180)
    assert run.returncode == 0, run.stderr
    with open(out, newline="", encoding="utf-8") as handle:
        rows = [(row["learner"], row["notebook"], row["exercise"], row["points"], row["status"])
                for row in csv.DictReader(handle)]
    assert rows == [("ada", STEM, ID, "1", "solved"), ("bob", STEM, ID, "0", "not written yet")]


def test_a_new_exercise_needs_two_wrong_answers_shown_failing(fork):
    """tests/test_soundness_coverage.py fails for an exercise of the manifest without soundness tests."""
    from tests.check_helpers import soundness_file, soundness_gaps

    folder, course = fork
    alone = Course(course.versions, (course.notebook(STEM),))
    tests = folder / "tests"
    tests.mkdir()
    soundness = soundness_file(course.notebook(STEM), tests)
    assert soundness_gaps(alone, tests) == [
        f"exercise {ID} has 0 wrong answers shown failing in {soundness} (no such file): add at least 2, "
        f"each a test calling fails(\"{ID}\", <a typical wrong answer>, <words its message must say>)"]

    soundness.write_text(SOUNDNESS_TESTS_WITH_ONE_WRONG_ANSWER)
    [gap] = soundness_gaps(alone, tests)
    assert gap.startswith(f"exercise {ID} has 1 wrong answer shown failing in {soundness}: add at least 2")

    soundness.write_text(SOUNDNESS_TESTS_WITH_ONE_WRONG_ANSWER + SECOND_WRONG_ANSWER)
    assert soundness_gaps(alone, tests) == []


def test_make_notebooks_lists_every_input_to_fix_at_once_and_writes_nothing(added_the_documented_way):
    """A French check row missing, a French title stale and a row the manifest needs gone: one run names all three,
    each with its file, its key and the command that fixes it, and changes no file."""
    copy, env, _, _ = added_the_documented_way
    catalogue, manifest_words = copy / "looplab/checks/texts/doubling.toml", copy / "looplab/texts/course.toml"
    kept = {path: path.read_text(encoding="utf-8") for path in (catalogue, manifest_words)}
    catalogue.write_text(re.sub(r"\[doubled\.fr\]\n[^\[]*", "", kept[catalogue]), encoding="utf-8")  # its French, gone
    stale = re.sub(rf'(\["{STEM}"\.fr\][^\[]*?of = ")[0-9a-f]+"', r'\g<1>00000000"', kept[manifest_words])
    manifest_words.write_text(re.sub(rf'\["builds:{STEM}"\][^\[]*\["builds:{STEM}"\.fr\][^\[]*', "", stale),
                              encoding="utf-8")  # the whole row, English and French
    before = digests(copy)
    try:
        run = subprocess.run([sys.executable, "-m", "authoring", "notebooks"], cwd=copy, env=env,
                             capture_output=True, text=True, timeout=300)
        after = digests(copy)
    finally:
        for path, text in kept.items():
            path.write_text(text, encoding="utf-8")
    assert run.returncode == 1 and "Traceback" not in run.stderr, run.stderr
    assert "nothing was written" in run.stderr and after == before
    lines = run.stderr.splitlines()
    assert any(line.startswith("missing  looplab/checks/texts/doubling.toml  doubled: ") and "stamp --new" in line
               for line in lines), run.stderr
    assert any(line.startswith(f"stale    looplab/texts/course.toml  {STEM}: ")
               and f"python -m authoring stamp looplab/texts/course.toml {STEM}" in line for line in lines), run.stderr
    assert any(line.startswith(f"missing  looplab/texts/course.toml  builds:{STEM}: add") for line in lines), run.stderr
