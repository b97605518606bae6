"""The grader speaks each notebook's language: a French notebook is judged, and its feedback written, in
French, with the same points as the same answers in English; the gradebook, the table, the report and the
exports speak `--lang`, by default the notebooks' when they all agree, else English.

Two grader runs of notebook 1 (a few notebooks each): a class mixing English and French notebooks (the
default: English), and its French notebooks alone (the default: French). The French submissions are the
generated French solution (solutions/fr/, French words in its code and prose), whole (chloe) and with
the same two mistakes as alice's English one (benoit). chloe also hands in the French solution of
notebook 2, which takes SYSTEM_PROMPT, a word read once, when looplab.loop is imported: its kernel must
be forked from a template that imported looplab in French, never from one the grader started in English.
"""

from __future__ import annotations

import csv
import html
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import nbformat
import pytest

from looplab import language
from looplab.grade import __main__ as command_line
from looplab.grade.grading import GradingResult, agreed_language
from looplab.grade.shared.status import Status
from looplab.grade.submissions.finding import collect
from looplab.grade.submissions.reading import load_course

FIXTURES = Path(__file__).resolve().parent / "grading_fixtures"
sys.path.insert(0, str(FIXTURES))
import make_fixtures  # noqa: E402

NB1, NB2 = make_fixtures.NB1, make_fixtures.NB2
# The kernel says which language it speaks (the client's mode line and the viewer read the same switch).
SPEAKS = "import looplab.language\nprint('kernel speaks', looplab.language.current())"


def french_solution(stem: str = NB1):
    """The generated French solution of a notebook, 1 unless said (its metadata says looplab.lang = "fr")."""
    notebook = nbformat.read(make_fixtures.SOLUTIONS / "fr" / f"{stem}.ipynb", as_version=4)
    assert notebook.metadata["looplab"]["lang"] == "fr"
    return notebook


def french_partial():
    """The French solution with make_fixtures.partial_1's two mistakes: 1.2 names its tool 'calc', 1.3 a stub."""
    notebook = french_solution()
    cell = notebook.cells[make_fixtures.exercise_index(notebook, "1.2")]
    assert '"name": "calculator"' in cell.source
    cell.source = cell.source.replace('"name": "calculator"', '"name": "calc"', 1)
    make_fixtures.stub_exercise(notebook, "1.3")
    return notebook


def speaking(notebook):
    """The notebook with a last cell that prints the language its kernel speaks."""
    notebook.cells.append(make_fixtures.code_cell(SPEAKS, "fixture-speaks"))
    return notebook


# learner -> their notebooks (the file's stem -> the notebook)
CLASS = {
    "alice": {NB1: lambda: speaking(make_fixtures.partial_1())},  # English
    "benoit": {NB1: lambda: speaking(french_partial())},  # French
    "chloe": {NB1: french_solution, NB2: lambda: french_solution(NB2)},  # French
}


def write_class(folder: Path, learners) -> Path:
    for learner in learners:
        for stem, notebook in CLASS[learner].items():
            path = folder / learner / f"{stem}.ipynb"
            path.parent.mkdir(parents=True, exist_ok=True)
            nbformat.write(notebook(), path)
    return folder


def run(tmp: Path, learners, *options: str, jobs: int = 2) -> SimpleNamespace:
    submissions = write_class(tmp / "submissions", learners)
    out, feedback, report, wide = tmp / "grades.csv", tmp / "feedback", tmp / "report.html", tmp / "wide.csv"
    done = subprocess.run([sys.executable, "-m", "looplab.grade", str(submissions), "--jobs", str(jobs),
                           "--cell-timeout", "120", "--out", str(out), "--feedback", str(feedback),
                           "--report", str(report), "--wide", str(wide), *options],
                          cwd=tmp, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    with open(out, newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    return SimpleNamespace(run=done, rows=rows, feedback=feedback,
                           report=html.unescape(report.read_text(encoding="utf-8")),
                           wide=wide.read_text(encoding="utf-8"), submissions=submissions)


@pytest.fixture(scope="module")
def mixed(tmp_path_factory):
    """alice (English), benoit (French, the same answers) and chloe (French, the solution), graded in one run."""
    return run(tmp_path_factory.mktemp("mixed"), CLASS)


@pytest.fixture(scope="module")
def all_french(tmp_path_factory):
    """The class's French notebooks alone, without --lang. Without a sandbox: its kernel's template, French from the
    start, is then a new interpreter, not a fork of the grader, which imported looplab in English (the mixed class,
    sandboxed where bubblewrap works, switches its English templates to French ones). One job: one template to
    start (seconds of CPU); the mixed class already grades notebooks side by side."""
    return run(tmp_path_factory.mktemp("french"), ["benoit", "chloe"], "--isolation", "none", jobs=1)


def points(rows, learner: str) -> dict[str, str]:
    return {row["exercise"]: row["points"] for row in rows if row["learner"] == learner}


def grade_cell(feedback: Path, learner: str) -> str:
    notebook = nbformat.read(feedback / learner / f"{NB1}.ipynb", as_version=4)
    return notebook.cells[-1].source


def printed(feedback: Path, learner: str) -> str:
    notebook = nbformat.read(feedback / learner / f"{NB1}.ipynb", as_version=4)
    cell = next(cell for cell in notebook.cells if cell.get("id") == "fixture-speaks")
    return "".join(output.get("text", "") for output in cell.outputs)


def test_the_same_answers_earn_the_same_points_in_either_language(mixed, all_french):
    assert points(mixed.rows, "benoit") == points(mixed.rows, "alice")
    assert 0 < sum(map(int, points(mixed.rows, "alice").values())) < sum(map(int, points(mixed.rows, "chloe").values()))
    assert points(all_french.rows, "benoit") == points(mixed.rows, "benoit")
    assert points(all_french.rows, "chloe") == points(mixed.rows, "chloe")
    assert [row["status"] for row in mixed.rows if row["learner"] == "chloe"] == ["solved"] * len(points(mixed.rows, "chloe"))


def test_words_read_at_import_are_the_notebook_s_language(mixed, all_french):
    """Notebook 2's exercises 2.2 and 2.3 check that the agent sends SYSTEM_PROMPT, in the course's language now
    (looplab.loop.system_prompt()); the notebook takes looplab.loop.SYSTEM_PROMPT, read when its kernel's template
    imported looplab. Full marks prove the French kernel's template imported it in French, in a French class and
    in a mixed one (English templates at first)."""
    for graded in (mixed, all_french):
        rows = {row["exercise"]: row for row in graded.rows if row["learner"] == "chloe" and row["notebook"] == NB2}
        assert {"2.2", "2.3"} <= set(rows), rows
        assert all(row["points"] == row["max_points"] for row in rows.values()), rows


def test_each_kernel_speaks_its_notebook_s_language(mixed):
    assert "kernel speaks en" in printed(mixed.feedback, "alice")
    assert "kernel speaks fr" in printed(mixed.feedback, "benoit")


def test_each_feedback_notebook_is_in_its_notebook_s_language(mixed):
    english, french_cell = grade_cell(mixed.feedback, "alice"), grade_cell(mixed.feedback, "benoit")
    assert english.startswith("## Grade (looplab grader)") and "| exercise | points | status | details |" in english
    assert french_cell.startswith("## Note (correcteur looplab)") and "| exercice | points | statut | détails |" in french_cell
    assert "pas encore écrit" in french_cell and "non réussi" in french_cell and "not written yet" in english
    assert "réussi" in grade_cell(mixed.feedback, "chloe")


def test_a_mixed_class_is_reported_in_english_by_default(mixed):
    statuses = {row["status"] for row in mixed.rows}
    assert {"solved", "not solved", "not written yet"} <= statuses
    assert '<html lang="en">' in mixed.report and "Which exercise is the class stuck on?" in mixed.report
    assert "learner" in mixed.run.stdout.splitlines()[0]


def test_an_all_french_class_is_reported_in_french_by_default(all_french):
    statuses = {row["status"] for row in all_french.rows}
    assert {"réussi", "non réussi", "pas encore écrit"} <= statuses
    assert all(status in {template for member in Status for template in member.templates()} for status in statuses)
    assert '<html lang="fr">' in all_french.report
    for words in ("Sur quel exercice la classe bloque-t-elle ?", "Qui a besoin d'aide ?", "Apprenants × exercices",
                  "taux de réussite", "non rendu"):
        assert words in all_french.report, words
    header = all_french.run.stdout.splitlines()[0]
    assert header.startswith("apprenant") and "exercices" in header
    assert "rendu(s) corrigé(s)" in all_french.run.stdout
    # The CSV's column names are read back (--match reads unmatched.csv's; scripts read the gradebook's): English.
    assert all_french.wide.splitlines()[0].startswith("learner,")
    assert list(all_french.rows[0]) == ["learner", "notebook", "exercise", "points", "max_points", "status", "message",
                                        "file", "course_version", "hint", "review"]


def test_the_report_language_is_the_notebooks_when_they_agree(tmp_path):
    course = load_course()
    folder = write_class(tmp_path, ["alice", "benoit", "chloe"])
    assert agreed_language(collect([str(folder / "benoit"), str(folder / "chloe")], list(course))) == "fr"
    assert agreed_language(collect([str(folder / "alice")], list(course))) == "en"
    assert agreed_language(collect([str(folder)], list(course))) == "en"  # mixed: English
    (folder / "broken").mkdir()
    (folder / "broken" / f"{NB1}.ipynb").write_text("{not json")  # a file that cannot be read has no say
    assert agreed_language(collect([str(folder / "benoit"), str(folder / "broken")], list(course))) == "fr"


def test_lang_chooses_the_language_of_the_rows_and_exports(tmp_path, monkeypatch):
    """--lang reaches the grading options, and the exports are written in the language of the rows."""
    seen = {}

    def grade(paths, options):
        seen["lang"] = options.lang
        return GradingResult([], 0, language=options.lang)

    monkeypatch.setattr(command_line, "grade", grade)
    folder = write_class(tmp_path / "submissions", ["alice"])
    report = tmp_path / "report.html"
    assert command_line.main([str(folder), "--lang", "fr", "--out", str(tmp_path / "grades.csv"), "--quiet",
                              "--report", str(report), "--isolation", "none"]) == 0
    assert seen["lang"] == "fr" and '<html lang="fr">' in report.read_text(encoding="utf-8")
    assert language.current() == "en"  # the block ended with the run
    with pytest.raises(SystemExit):
        command_line.main([str(folder), "--lang", "de"])


def test_statuses_speak_the_current_language():
    assert Status.SOLVED.text() == "solved" and Status.NOT_SUBMITTED.label == "not submitted"
    with language.using("fr"):
        assert Status.SOLVED.text() == "réussi"
        assert Status.KERNEL_DIED.text(where="dans la cellule 4") == "le noyau s'est arrêté (dans la cellule 4)"
        assert Status.NOT_SUBMITTED.label == "not submitted"  # docs/GRADING.md's table stays English


def test_notebooks_judged_side_by_side_keep_their_own_language():
    """`using` is a context variable: each asyncio task keeps its notebook's language across its awaits, and
    the judge's thread (asyncio.to_thread, as the runner starts it) speaks its task's."""
    import asyncio
    import concurrent.futures

    async def notebook(said: str, heard: list) -> None:
        with language.using(said):
            for _ in range(3):
                await asyncio.sleep(0)
                heard.append((said, language.current(), await asyncio.to_thread(language.current)))

    async def both() -> list:
        heard: list = []
        await asyncio.gather(notebook("fr", heard), notebook("en", heard))
        return heard

    # In a thread of its own: a test run before this one in the same worker (Playwright's sync API) may have
    # left an event loop running in this thread, where asyncio.run refuses to start another.
    with concurrent.futures.ThreadPoolExecutor(1) as fresh:
        heard = fresh.submit(asyncio.run, both()).result()
    assert len(heard) == 6 and all(said == current == judged for said, current, judged in heard)
    assert language.current() == "en"


def test_a_template_is_a_fork_of_the_grader_only_where_the_grader_s_words_are_its_language():
    """A fork keeps the words its parent read at import: this process imported looplab in English, so a French
    template must be a new interpreter (slots.py), and an English one may be a fork."""
    from looplab.grade.kernels.fork_server import imported_in
    import looplab.loop  # noqa: F401  (imported in English: the tests run without LOOPLAB_LANG)
    assert language.current() == "en"
    assert imported_in("en") and not imported_in("fr")
