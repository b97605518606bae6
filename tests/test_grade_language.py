"""The grader speaks each notebook's language: a French notebook is judged, and its feedback written, in
French, with the same points as the same answers in English; the gradebook, the table, the report and the
exports speak `--lang`, by default the notebooks' when they all agree, else English.

Two grader runs of notebook 1 (a few notebooks each): a class mixing English and French notebooks (the
default: English), and a French teacher's class graded with `--lang fr` (issue 36): a Canvas roster whose
assignments are named in French, accented names in folders (`Benoît Lefèvre/`), a flat file under an ASCII
download name (`maelle-le-bihan-...`), a broken file from a learner the roster does not know, a student who
handed nothing in; every export asked for. The French submissions are the generated French solution
(solutions/fr/, French words in its code and prose), whole (chloe), with the same two mistakes as alice's
English one (benoit), and with 1.3 left a stub (maelle). chloe also hands in the French solution of
notebook 2, which takes SYSTEM_PROMPT, a word read once, when looplab.loop is imported: its kernel must
be forked from a template that imported looplab in French, never from one the grader started in English.
Everything the French class's run wrote is then scanned for the English of the grader's catalogues.
"""

from __future__ import annotations

import codecs
import csv
import html
import html.parser
import io
import re
import string
import subprocess
import sys
import tomllib
from pathlib import Path
from types import SimpleNamespace

import nbformat
import pytest

from looplab import language
from looplab.course import COURSE
from looplab.grade import __main__ as command_line
from looplab.grade.exports.feedback import feedback_folder
from looplab.grade.grading import GradingResult, agreed_language
from looplab.grade.shared.gradebook import CSV_COLUMNS, WORDS as GRADEBOOK_WORDS
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


def french_stub_1_3():
    """The French solution with 1.3 left the stub it starts as."""
    notebook = french_solution()
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


def class_files(learners) -> dict:
    """A folder per learner: its path in the class's folder -> the notebook."""
    return {f"{learner}/{stem}.ipynb": notebook for learner in learners for stem, notebook in CLASS[learner].items()}


def write_class(folder: Path, learners) -> Path:
    return write_files(folder, class_files(learners))


def write_files(folder: Path, files: dict) -> Path:
    """Each file: a notebook made by its function, or text as it is (a broken file)."""
    for name, made in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(made, str):
            path.write_text(made, encoding="utf-8")
        else:
            nbformat.write(made(), path)
    return folder


# The French teacher's class: a Canvas export of a French course (its assignments named in French, a column that is
# no assignment), four students: Benoît and Chloé hand their notebooks in in folders (Benoît's named as Moodle or a
# teacher would, with a space and accents), Maëlle as a flat file under the ASCII name her browser gave it, Éloïse
# hands nothing in; and someone the roster does not know hands in a broken file.
FRENCH_ROSTER = """Student,ID,SIS User ID,SIS Login ID,Section,Un appel d'outil (4521),Fermer la boucle (4522),Note actuelle
    Points Possible,,,,,5,6,
"Lefèvre, Benoît",201,s201,benoit@ecole.fr,A,,,
"Le Bihan, Maëlle",202,s202,maelle@ecole.fr,A,,,
"Martin, Chloé",203,s203,chloe@ecole.fr,A,,,
"Núñez, Éloïse",204,s204,eloise@ecole.fr,A,,,
"""
FRENCH_CLASS = {
    f"Benoît Lefèvre/{NB1}.ipynb": lambda: speaking(french_partial()),
    f"chloe/{NB1}.ipynb": french_solution,
    f"chloe/{NB2}.ipynb": lambda: french_solution(NB2),
    f"maelle-le-bihan-{NB1}.ipynb": french_stub_1_3,
    f"inconnu/{NB1}.ipynb": "{pas du json",
}
BENOIT, CHLOE, MAELLE, ELOISE = "benoit@ecole.fr", "chloe@ecole.fr", "maelle@ecole.fr", "eloise@ecole.fr"


def english_columns(row: dict) -> dict:
    """A gradebook row by its English column names, whatever language it was written in."""
    english = {name.casefold(): column for column in CSV_COLUMNS for name in GRADEBOOK_WORDS.rows[column].values()}
    return {english.get(name.casefold(), name): value for name, value in row.items()}


def read_gradebook(path: Path) -> list[dict]:
    """The gradebook's rows by their English column names: a comma CSV in English, a `;` one with a BOM in French."""
    text = path.read_text(encoding="utf-8-sig")
    separator = ";" if ";" in text.partition("\n")[0] else ","
    return [english_columns(row) for row in csv.DictReader(io.StringIO(text, newline=""), delimiter=separator)]


def run(tmp: Path, files: dict, *options: str, jobs: int = 2, roster: str | None = None) -> SimpleNamespace:
    submissions = write_files(tmp / "submissions", files)
    out, feedback, report, wide = tmp / "grades.csv", tmp / "feedback", tmp / "report.html", tmp / "wide.csv"
    if roster is not None:
        (tmp / "roster.csv").write_text(roster, encoding="utf-8")
        options += ("--roster", str(tmp / "roster.csv"), "--canvas", str(tmp / "canvas.csv"))
    done = subprocess.run([sys.executable, "-m", "looplab.grade", str(submissions), "--jobs", str(jobs),
                           "--cell-timeout", "120", "--out", str(out), "--feedback", str(feedback),
                           "--report", str(report), "--wide", str(wide), *options],
                          cwd=tmp, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return SimpleNamespace(run=done, rows=read_gradebook(out), feedback=feedback, tmp=tmp, out=out,
                           report=html.unescape(report.read_text(encoding="utf-8")), report_path=report,
                           wide=wide.read_text(encoding="utf-8-sig"), wide_path=wide, submissions=submissions)


@pytest.fixture(scope="module")
def mixed(tmp_path_factory):
    """alice (English), benoit (French, the same answers) and chloe (French, the solution), graded in one run."""
    return run(tmp_path_factory.mktemp("mixed"), class_files(CLASS))


@pytest.fixture(scope="module")
def all_french(tmp_path_factory):
    """The French teacher's class (FRENCH_CLASS), as the teacher graded it: `--lang fr`, a roster, every export.
    Without a sandbox: its kernel's template, French from the start, is then a new interpreter, not a fork of the
    grader, which imported looplab in English (the mixed class, sandboxed where bubblewrap works, switches its English
    templates to French ones). One job: one template to start (seconds of CPU); the mixed class already grades
    notebooks side by side."""
    return run(tmp_path_factory.mktemp("french"), FRENCH_CLASS, "--isolation", "none", "--lang", "fr", jobs=1,
               roster=FRENCH_ROSTER)


def points(rows, learner: str) -> dict[str, str]:
    """A learner's points by exercise, for the notebooks they handed in (with a roster, the others are rows too)."""
    return {row["exercise"]: row["points"] for row in rows if row["learner"] == learner
            and row["status"] not in Status.NOT_SUBMITTED.templates()}


def feedback_notebook(feedback: Path, learner: str, name: str = f"{NB1}.ipynb"):
    return nbformat.read(feedback / feedback_folder(learner) / name, as_version=4)


def grade_cell(feedback: Path, learner: str, name: str = f"{NB1}.ipynb") -> str:
    return feedback_notebook(feedback, learner, name).cells[-1].source


def printed(feedback: Path, learner: str, name: str = f"{NB1}.ipynb") -> str:
    notebook = feedback_notebook(feedback, learner, name)
    cell = next(cell for cell in notebook.cells if cell.get("id") == "fixture-speaks")
    return "".join(output.get("text", "") for output in cell.outputs)


def test_the_same_answers_earn_the_same_points_in_either_language(mixed, all_french):
    assert points(mixed.rows, "benoit") == points(mixed.rows, "alice")
    assert 0 < sum(map(int, points(mixed.rows, "alice").values())) < sum(map(int, points(mixed.rows, "chloe").values()))
    assert points(all_french.rows, BENOIT) == points(mixed.rows, "benoit")  # the roster's key: the SIS Login ID
    assert points(all_french.rows, CHLOE) == points(mixed.rows, "chloe")
    assert [row["status"] for row in mixed.rows if row["learner"] == "chloe"] == ["solved"] * len(points(mixed.rows, "chloe"))


def test_words_read_at_import_are_the_notebook_s_language(mixed, all_french):
    """Notebook 2's exercises 2.2 and 2.3 check that the agent sends SYSTEM_PROMPT, in the course's language now
    (looplab.loop.system_prompt()); the notebook takes looplab.loop.SYSTEM_PROMPT, read when its kernel's template
    imported looplab. Full marks prove the French kernel's template imported it in French, in a French class and
    in a mixed one (English templates at first)."""
    for graded in (mixed, all_french):
        chloe = "chloe" if graded is mixed else CHLOE
        rows = {row["exercise"]: row for row in graded.rows if row["learner"] == chloe and row["notebook"] == NB2}
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


def test_a_french_class_is_reported_in_french(all_french):
    statuses = {row["status"] for row in all_french.rows}
    assert {"réussi", "non réussi", "pas encore écrit", "non rendu", "JSON invalide"} <= statuses
    assert all(status in {template for member in Status for template in member.templates()} for status in statuses)
    assert '<html lang="fr">' in all_french.report
    for words in ("Sur quel exercice la classe bloque-t-elle\u202f?", "Qui a besoin d'aide\u202f?",
                  "Apprenants × exercices", "taux de réussite", "non rendu", "Fermer la boucle", "Un appel d'outil"):
        assert words in all_french.report, words
    header = all_french.run.stdout.splitlines()[0]
    assert header.startswith("apprenant") and "exercices" in header
    assert "rendu(s) corrigé(s)" in all_french.run.stdout
    # The column names are the class's words; --match reads unmatched.csv's back in either language.
    assert all_french.wide.splitlines()[0].startswith("apprenant;nom;")
    assert all_french.out.read_text(encoding="utf-8-sig").splitlines()[0] == (
        "apprenant;notebook;exercice;points;points max;statut;message;fichier;version du cours;indice;à revoir")
    assert list(all_french.rows[0]) == CSV_COLUMNS


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


# --- the French teacher's class: nothing in English but what an LMS reads ------------------------------------------

ROOT = Path(__file__).resolve().parent.parent
GRADER_CATALOGUES = sorted((ROOT / "looplab" / "grade").glob("**/texts/*.toml"))
# Beyond the grader's: the course's titles, and the checks' words (a check's message and hint reach the gradebook,
# the report and the feedback in the notebook's language).
OTHER_CATALOGUES = [ROOT / "looplab" / "texts" / "course.toml", ROOT / "looplab" / "texts" / "graded_checks.toml",
                    *sorted((ROOT / "looplab" / "checks" / "texts").glob("*.toml"))]
# What stays English in a French class's files, and why: the Canvas file's own column names and its "Points
# Possible" row are Canvas's import format (Canvas matches an import on them); "Note actuelle" is the French
# teacher's own Canvas column, read from the roster. Nothing else.
LMS_WORDS = ("Student", "SIS User ID", "SIS Login ID", "Section", "Points Possible")
# One-word English pieces that are French words too, spelled alike: « carnet de notes », « la note » (a grade),
# « usage » (and the API's `usage` field a feedback notebook's viewer output shows).
FRENCH_TOO = {"note", "notes", "usage", "points"}
# Not words: the paths the teacher gave (submissions/, feedback/, wide.csv...) and code a message quotes ('name').
NOT_WORDS = re.compile(r"\S*/\S*|\S+\.(csv|html|ipynb|json)\b|'[^'\n]*'|`[^`\n]*`")


def literal_pieces(template: str) -> list[str]:
    """The words of a str.format template between its placeholders ("{n} notebook(s) graded" -> [" notebook(s)
    graded"]); a text that is not a template (a hint, never formatted) is one piece."""
    try:
        return [literal for literal, *_ in string.Formatter().parse(template)]
    except ValueError:
        return [template]


def english_of(table: dict, french_key: str = "fr") -> list[tuple[str, str]]:
    """(English, French) of every text of a catalogue: a Words row's `text`, a check row's `failed` and `hint`."""
    pairs = []
    for key, row in table.items():
        if not isinstance(row, dict) or key == "hints":
            continue
        french = row.get(french_key) or {}
        for field in ("text", "failed", "hint"):
            if isinstance(row.get(field), str):
                pairs.append((row[field], french.get(field, "") if isinstance(french, dict) else ""))
    return pairs


def english_phrases() -> dict[str, str]:
    """Every piece of English the catalogues say otherwise in French: the piece -> where it comes from. A piece the
    French row keeps (code, a name, a number) is not English to look for; a piece of one word is looked for only in
    the grader's own catalogues (the checks' one-word pieces are names: calculator, tool_use)."""
    phrases = {}
    for path in GRADER_CATALOGUES + OTHER_CATALOGUES:
        ours = path in GRADER_CATALOGUES
        for english, french in english_of(tomllib.loads(path.read_text(encoding="utf-8"))):
            if english == french:
                continue
            for piece in literal_pieces(english):
                piece = piece.strip(" .,;:()'\"[]\n")
                words = re.findall(r"[A-Za-z]{2,}", piece)
                if (not words or piece in french or (len(words) < 2 and not ours) or not re.search(r"[a-z]{3}", piece)
                        or piece.casefold() in FRENCH_TOO):
                    continue
                phrases[piece] = path.name
    return phrases


class VisibleText(html.parser.HTMLParser):
    """What a teacher reads of a page: its text and its tooltips (the style sheet aside)."""

    def __init__(self):
        super().__init__()
        self.parts, self.in_style = [], False

    def handle_starttag(self, tag, attrs):
        self.in_style = tag == "style"
        self.parts += [value for name, value in attrs if name == "title" and value]

    def handle_endtag(self, tag):
        self.in_style = False

    def handle_data(self, data):
        if not self.in_style:
            self.parts.append(data)


def visible(page: str) -> str:
    reader = VisibleText()
    reader.feed(page)
    return "\n".join(reader.parts)


def produced(graded: SimpleNamespace) -> dict[str, str]:
    """Every text the French class's run left for the teacher or a learner: the terminal, every CSV, the report, and
    each feedback notebook's grade cell and the outputs the grader's run gave its cells."""
    texts = {"stdout": graded.run.stdout, "stderr": graded.run.stderr}
    for name in ("grades.csv", "wide.csv", "unmatched.csv", "canvas.csv"):
        texts[name] = (graded.tmp / name).read_text(encoding="utf-8-sig")
    texts["report.html"] = visible(graded.report_path.read_text(encoding="utf-8"))
    for path in sorted(graded.feedback.rglob("*.ipynb")):
        notebook = nbformat.read(path, as_version=4)
        outputs = [output.get("text", "") or "".join(output.get("data", {}).get("text/plain", ""))
                   for cell in notebook.cells if cell.cell_type == "code" for output in cell.outputs]
        texts[f"{path.relative_to(graded.feedback)}: grade"] = notebook.cells[-1].source
        # the outputs the run gave the cells: what the grader's edition said (the client's mode line, a check cell's
        # words), among what the learner's own program printed, whose JSON ("name": ...) is code
        texts[f"{path.relative_to(graded.feedback)}: outputs"] = re.sub(r'"[^"\n]*"', " ", "\n".join(outputs))
    return texts


def test_a_french_class_reads_no_english_but_the_lms_s_own_words(all_french):
    """Every piece of English of the grader's catalogues (and the course's titles, and the checks' words) that its
    French says otherwise is searched for, as a whole word, in everything the run left; only LMS_WORDS may stay."""
    phrases = english_phrases()
    assert len(phrases) > 300 and "not submitted" in phrases and "Closing the loop" in phrases  # the net is wide
    found = []
    for where, text in produced(all_french).items():
        for word in LMS_WORDS:
            text = text.replace(word, " ")
        text = NOT_WORDS.sub(" ", text)
        found += [f"{where}: {phrase!r} ({source})" for phrase, source in phrases.items()
                  if re.search(rf"(?<![\w-]){re.escape(phrase)}(?![\w-])", text)]
    assert not found, "English in a French class's output:\n" + "\n".join(found)
    assert "Points Possible" in (all_french.tmp / "canvas.csv").read_text(encoding="utf-8-sig")


def excel_reads(path: Path) -> list[list[str]]:
    """A CSV as Excel in a French locale opens it with a double-click: UTF-8 only when the file starts with the
    byte-order mark (else the local code page), cells split on `;` (the comma is its decimal mark)."""
    raw = path.read_bytes()
    text = raw[len(codecs.BOM_UTF8):].decode("utf-8") if raw.startswith(codecs.BOM_UTF8) else raw.decode("cp1252")
    return list(csv.reader(io.StringIO(text, newline=""), delimiter=";"))


def excel_number(cell: str) -> float | None:
    """A cell as Excel in a French locale reads a number: digits, a decimal comma; None for text."""
    return float(cell.replace(",", ".")) if re.fullmatch(r"-?\d+(,\d+)?", cell) else None


def test_a_french_teacher_opens_the_gradebook_in_excel_in_columns_with_accents_and_numbers(all_french):
    wide = excel_reads(all_french.wide_path)
    header, *learners = wide
    assert header[:2] == ["apprenant", "nom"] and header[-3:] == ["total", "maximum", "remarques"]
    assert all(len(row) == len(header) for row in learners)
    by_name = {row[1]: dict(zip(header, row)) for row in learners}
    assert {"Lefèvre, Benoît", "Le Bihan, Maëlle", "Martin, Chloé", "Núñez, Éloïse"} <= set(by_name)  # accents whole
    for row in learners:  # the numbers are numbers: each notebook's points, their total, the course's maximum
        notebooks = [excel_number(row[header.index(stem)]) for stem in COURSE.stems]
        assert None not in notebooks and excel_number(row[-3]) == sum(notebooks) and excel_number(row[-2]) > 0
    assert excel_number(by_name["Martin, Chloé"]["total"]) > excel_number(by_name["Lefèvre, Benoît"]["total"]) > 0
    assert "01_one_tool_call : non rendu" not in by_name["Martin, Chloé"]["remarques"]
    grades = excel_reads(all_french.out)
    assert grades[0][:3] == ["apprenant", "notebook", "exercice"] and all(len(row) == 11 for row in grades)
    assert all(excel_number(row[3]) is not None for row in grades[1:])  # points
    assert {row[0] for row in grades[1:]} >= {BENOIT, MAELLE, CHLOE, ELOISE}
    unmatched = excel_reads(all_french.tmp / "unmatched.csv")
    assert unmatched[0] == ["apprenant", "fichiers", "points", "étudiant"] and unmatched[1][0] == "inconnu"


def test_feedback_is_headed_by_the_roster_s_name(all_french):
    """Benoît's folder carries his name, made a safe folder name; Maëlle's file only an ASCII download name: both
    grade cells say the name the roster has, and the notebook's and exercises' French titles."""
    benoit = grade_cell(all_french.feedback, "Benoît Lefèvre")
    assert feedback_folder("Benoît Lefèvre").startswith("Benoît_Lefèvre~")
    assert benoit.startswith("## Note (correcteur looplab) · Un appel d'outil\n")
    assert f"**Lefèvre, Benoît · {NB1}\u00a0: 2 sur 5**" in benoit
    maelle = grade_cell(all_french.feedback, "maelle-le-bihan", f"maelle-le-bihan-{NB1}.ipynb")
    assert f"**Le Bihan, Maëlle · {NB1}\u00a0: " in maelle and "maelle-le-bihan ·" not in maelle
    chloe = grade_cell(all_french.feedback, "chloe", f"{NB2}.ipynb")
    assert chloe.startswith("## Note (correcteur looplab) · Fermer la boucle\n")
    assert f"**Martin, Chloé · {NB2}\u00a0: " in chloe and "agent_turn avec un plafond ferme" in chloe


def test_the_table_names_students_by_their_names(all_french):
    table = all_french.run.stdout
    for name in ("Lefèvre, Benoît", "Le Bihan, Maëlle", "Martin, Chloé", "inconnu"):  # one line a submission
        assert name in table, name
    assert not any(key in table.split("\n\n")[0] for key in (BENOIT, MAELLE, CHLOE, ELOISE))
    assert re.search(r"en \d+,\d\u00a0s \(\d+,\d\d\u00a0s chacun", table)  # decimal commas
    assert "\u202f; une ligne par apprenant\u00a0: " in table and "\u202f; rapport\u00a0: " in table
    assert "\u202f; Canvas\u00a0: " in table


def test_the_canvas_file_updates_the_french_course_s_assignments(all_french):
    with open(all_french.tmp / "canvas.csv", newline="", encoding="utf-8-sig") as handle:
        canvas = list(csv.reader(handle))
    assert canvas[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "Un appel d'outil (4521)",
                         "Fermer la boucle (4522)"]  # no new column: the French titles are the assignments
    by_login = {row[3]: row[5:] for row in canvas[2:]}
    assert by_login[ELOISE] == ["0", "0"] and int(by_login[CHLOE][1]) > 0
    assert "inconnu" not in by_login


def help_of(capsys, *argv: str) -> str:
    with pytest.raises(SystemExit) as stopped:
        command_line.main(list(argv))
    said = capsys.readouterr()
    assert stopped.value.code in (0, 2)
    return said.out + said.err


ARGPARSE_ENGLISH = ("usage:", "options:", "positional arguments", "show this help message and exit", "error:",
                    "the following arguments are required", "invalid choice", "choose from")


def test_the_command_line_speaks_french_from_its_first_word(capsys, monkeypatch):
    """--help, argparse's own words and the refusals, under --lang fr or LOOPLAB_LANG=fr; English otherwise."""
    french = help_of(capsys, "--lang", "fr", "--help")
    assert french.startswith("utilisation\u00a0: python -m looplab.grade") and "correction\u00a0:" in french
    assert "afficher cette aide et quitter" in french and "le carnet de notes CSV à écrire" in french
    monkeypatch.setenv(language.OVERRIDE, "fr")
    assert help_of(capsys, "-h") == french
    refused = help_of(capsys, "--isolation", "nope", "x")
    assert "erreur\u00a0: argument --isolation\u00a0: choix invalide\u00a0: 'nope'" in refused
    assert "ces arguments sont obligatoires\u00a0: rendus" in help_of(capsys)
    assert "aucun fichier ni dossier de ce nom\u00a0: /nowhere" in help_of(capsys, "/nowhere")
    phrases = [phrase for phrase in english_phrases() if "help" in phrase or "--" in phrase] + list(ARGPARSE_ENGLISH)
    for text in (french, refused):
        assert not [phrase for phrase in phrases if phrase in text], text
    monkeypatch.delenv(language.OVERRIDE)
    english = help_of(capsys, "--help")
    assert english.startswith("usage: python -m looplab.grade") and "show this help message and exit" in english
    import gettext
    assert gettext.textdomain() == "messages"  # gettext as the parser found it
