"""The French notebooks: every English text translated and none stale, as deep as the English, the same
program, and on disk exactly what the generator makes (authoring/translated_notebooks.py).

The first part runs the generator and the translation's readers on a fixture (a skeleton filled
mechanically, in a temporary folder); the second holds the course's own translations to the issue's
checks, one test per notebook, so a notebook whose translation is missing or unfinished fails by name.
"""

from __future__ import annotations

import json
import re
import shutil
import tomllib

import nbformat
import pytest

from authoring import notebook_translations as words
from authoring import translated_notebooks as translated
from authoring.learner_notebooks import NOTEBOOKS, SOLUTIONS, learner_version
from looplab.course import COURSE

LANGUAGE = "fr"
STEM = COURSE.stems[0]


# --- the machine, on a fixture ----------------------------------------------------------------------------

PROTOCOL = re.compile(r"(Error: |User> |Agent> |\[tool\] |\[tool-error\] )?")  # texts code reads: they stay first


def frenchified(token: str) -> str:
    """A code token with "FR " before its words: `# FR a comment`, `f"FR two words {x}"`, `"Error: FR ..."`."""
    if token.startswith("#"):
        return "# FR " + token[1:].lstrip()
    opening = re.match(r"[A-Za-z]*('''|\"\"\"|'|\")", token).end()
    opening = PROTOCOL.match(token, opening).end()
    return token[:opening] + "FR " + token[opening:]


def fill(path) -> None:
    """Every todo entry of a skeleton translated mechanically: markdown and code words prefixed with "FR "."""
    text = path.read_text(encoding="utf-8")
    data = tomllib.loads(text)
    parts = ["# a fixture\n"]
    for cell_id, entry in data["cells"].items():
        if "text" in entry:
            parts.append(f"[cells.{cell_id}]\nof = \"{entry['of']}\"\ntext = {words.toml_string('FR ' + entry['text'])}\n")
        for item in entry.get("code", []):
            parts.append(f"[[cells.{cell_id}.code]]\nen = {words.toml_string(item['en'])}\n"
                         f"fr = {words.toml_string(frenchified(item['en']))}\n")
    path.write_text("\n".join(parts), encoding="utf-8")


@pytest.fixture
def course(tmp_path):
    """A copy of the English solution of notebook 1 and its translation, filled mechanically."""
    solutions, translations = tmp_path / "solutions", tmp_path / "translations"
    solutions.mkdir()
    shutil.copy(SOLUTIONS / f"{STEM}.ipynb", solutions)
    fill(words.skeleton(STEM, LANGUAGE, folder=translations, solutions=solutions))
    return solutions, translations


def test_a_skeleton_names_every_text_still_to_translate(tmp_path):
    path = words.skeleton(STEM, LANGUAGE, folder=tmp_path)
    english = words.english_notebook(STEM)
    missing = words.untranslated(english, words.read(STEM, LANGUAGE, tmp_path))
    markdown = [cell["id"] for cell in english["cells"] if cell["cell_type"] == "markdown"]
    tokens = [token for cell in english["cells"] if cell["cell_type"] == "code"
              for token in words.translatable_tokens(words.source_of(cell))]
    assert len(missing) == len(markdown) + len(tokens)
    assert f"cell {markdown[0]} (markdown): still todo" in missing
    assert any(line.endswith(f"still todo: {tokens[0]}") for line in missing)
    before = path.read_text(encoding="utf-8")
    words.skeleton(STEM, LANGUAGE, folder=tmp_path)
    assert path.read_text(encoding="utf-8") == before, "a second skeleton adds nothing"


def test_a_complete_translation_makes_the_same_program_with_other_words(course, capsys):
    solutions, translations = course
    assert translated.write_solutions([STEM], LANGUAGE, solutions=solutions, translations=translations) == [STEM]
    english = nbformat.read(solutions / f"{STEM}.ipynb", as_version=4)
    french = nbformat.read(solutions / LANGUAGE / f"{STEM}.ipynb", as_version=4)
    assert french.metadata["looplab"] == {**english.metadata["looplab"], "lang": LANGUAGE}
    assert [(cell.id, cell.cell_type, cell.metadata) for cell in french.cells] == [
        (cell.id, cell.cell_type, cell.metadata) for cell in english.cells]
    for mine, theirs in zip(french.cells, english.cells):
        if mine.cell_type == "markdown":
            assert mine.source == "FR " + theirs.source
        elif mine.cell_type == "code":
            assert translated.program_shape(mine.source) == translated.program_shape(theirs.source)
            source = mine.source
            if translated.SETUP_TAG in mine.metadata.get("tags", []):  # it gains the line saying its language
                lines = source.split("\n")
                speaks = lines.index(translated.PACKAGE_IMPORT) + 1
                assert lines[speaks].startswith(f'looplab.speak("{LANGUAGE}")  # '), lines[speaks]
                source = "\n".join(lines[:speaks] + lines[speaks + 1:])
            tokens = words.translatable_tokens(theirs.source)
            assert words.translatable_tokens(source) == [frenchified(token) for token in tokens]
            assert mine.outputs == [] and mine.execution_count is None
    learner = learner_version(french)
    stubs = [cell.source for cell in learner.cells if "exercise" in cell.metadata.get("tags", [])]
    assert stubs and all("# VOTRE CODE ICI" in stub and "Exercice " in stub for stub in stubs), stubs[0]
    assert "skipped" not in capsys.readouterr().err


def test_tokens_are_replaced_where_they_stand_and_magics_are_left_alone():
    source = ('%matplotlib inline\nanswer = "two words"  # a comment\nprint(f"{answer} and more", "x")\n'
              '!echo "not python" # shell\nname = "answer"')
    french = words.replaced_tokens(source, {'"two words"': '"deux mots"', "# a comment": "# un commentaire",
                                            'f"{answer} and more"': 'f"{answer} et plus"'})
    assert french == ('%matplotlib inline\nanswer = "deux mots"  # un commentaire\nprint(f"{answer} et plus", "x")\n'
                      '!echo "not python" # shell\nname = "answer"')
    assert translated.program_shape(french) == translated.program_shape(source)


@pytest.mark.parametrize("changed", [
    'answer = "deux mots"\nprint(f"{answer} et plus", "y")',      # a string of code ("x") is words set aside too,
    'answer = "deux mots"\nprint(f"{answer} et plus", "x", 1)',   # but an argument more is another program
    'reponse = "deux mots"\nprint(f"{reponse} et plus", "x")',    # and so is a translated identifier
    'answer = "deux mots"\nprint(f"et plus", "x")',               # or an f-string that lost its value
])
def test_the_program_shape_sets_aside_words_and_nothing_else(changed):
    english = 'answer = "two words"\nprint(f"{answer} and more", "x")'
    same = translated.program_shape(changed) == translated.program_shape(english)
    assert same == changed.endswith('"y")'), changed


def test_an_unfinished_or_absent_translation_is_skipped_with_a_line_saying_so(course, capsys):
    solutions, translations = course
    path = translations / LANGUAGE / f"{STEM}.toml"
    path.write_text(path.read_text(encoding="utf-8") + "\n[cells.b819c708x]\ntext = 'gone'\n", encoding="utf-8")
    cells = words.read(STEM, LANGUAGE, translations)
    english = words.english_notebook(STEM, solutions)
    assert words.unused(english, cells) == ["cell b819c708x: an entry for a cell the English notebook no longer has"]
    first_markdown = next(cell for cell in english["cells"] if cell["cell_type"] == "markdown")
    del cells[first_markdown["id"]]
    assert words.untranslated(english, cells) == [f"cell {first_markdown['id']} (markdown): no translation"]
    path.write_text("", encoding="utf-8")
    assert translated.write_solutions([STEM], LANGUAGE, solutions=solutions, translations=translations) == []
    assert f"{LANGUAGE}/{STEM}: skipped: " in capsys.readouterr().err
    path.unlink()
    assert translated.write_solutions([STEM], LANGUAGE, solutions=solutions, translations=translations) == []
    assert "skipped: no translation yet" in capsys.readouterr().err
    assert not (solutions / LANGUAGE).exists()


def test_a_changed_english_text_shows_its_translation_stale(course):
    solutions, translations = course
    notebook = json.loads((solutions / f"{STEM}.ipynb").read_text(encoding="utf-8"))
    cell = next(cell for cell in notebook["cells"] if cell["cell_type"] == "markdown")
    cell["source"] = words.source_of(cell) + " One more sentence."
    assert words.stale(notebook, words.read(STEM, LANGUAGE, translations)) == [(cell["id"], cell["source"])]
    code = next(cell for cell in notebook["cells"] if cell["cell_type"] == "code"
                and any(token.startswith("#") for token in words.translatable_tokens(words.source_of(cell))))
    token = next(token for token in words.translatable_tokens(words.source_of(code)) if token.startswith("#"))
    code["source"] = words.source_of(code).replace(token, token + " again", 1)
    lines = words.gaps(notebook, words.read(STEM, LANGUAGE, translations))
    assert f"cell {code['id']} (code): an entry for {token}, which the English cell no longer holds" in lines
    assert any(line.startswith(f"cell {code['id']} (code): no translation of ") for line in lines)


def test_depth_is_the_length_of_the_translation_over_the_english(course):
    solutions, translations = course
    english = words.english_notebook(STEM, solutions)
    ratios = words.depths(english, words.read(STEM, LANGUAGE, translations))
    assert ratios and all(1 < ratio < 1.1 for ratio in ratios.values())  # "FR " + the English
    assert words.out_of_band({"a": 0.4, "b": 1.0, "c": 2.5}) == {"a": 0.4, "c": 2.5}


# --- the course's French notebooks: the checks -------------------------------------------------------

def translation_of(stem: str) -> dict:
    cells = words.read(stem, LANGUAGE)
    assert cells is not None, (
        f"{stem}: no French translation (translations/{LANGUAGE}/{stem}.toml): start one with "
        f"`python -m authoring translations skeleton --lang {LANGUAGE} {stem}` (docs/TRANSLATING.md)")
    return cells


@pytest.mark.parametrize("stem", COURSE.stems)
def test_every_text_of_the_notebook_has_a_french_translation(stem):
    """Every markdown cell and every comment and word-holding string of the English solution has a French
    entry that is not todo, and no entry is left for a cell or a token the English no longer has."""
    lines = words.gaps(words.english_notebook(stem), translation_of(stem))
    assert not lines, (f"{stem}: translations/{LANGUAGE}/{stem}.toml is not complete ({len(lines)}):\n"
                       + "\n".join(lines))


@pytest.mark.parametrize("stem", COURSE.stems)
def test_no_french_text_is_stale(stem):
    """Each markdown translation records (`of`) the fingerprint of the English it translates: today's."""
    found = words.stale(words.english_notebook(stem), translation_of(stem))
    assert not found, "\n\n".join(
        f"{stem}: cell {cell_id}: the English changed since its French was written; re-check the French, then set "
        f"of = \"{words.fingerprint(english)}\". Today's English:\n{english}" for cell_id, english in found)


@pytest.mark.parametrize("stem", COURSE.stems)
def test_french_text_is_as_deep_as_the_english(stem):
    """len(French) / len(English) per markdown cell within DEPTH_BAND (docs/TRANSLATING.md says why)."""
    odd = words.out_of_band(words.depths(words.english_notebook(stem), translation_of(stem)))
    low, high = words.DEPTH_BAND
    assert not odd, f"{stem}: French much shorter (< {low}) or longer (> {high}) than the English:\n" + "\n".join(
        f"  cell {cell_id}: {ratio:.2f}" for cell_id, ratio in odd.items())


def french_solution(stem: str) -> nbformat.NotebookNode:
    path = SOLUTIONS / LANGUAGE / f"{stem}.ipynb"
    assert path.exists(), f"no solutions/{LANGUAGE}/{stem}.ipynb: finish its translation, then `make notebooks`"
    return nbformat.read(path, as_version=4)


@pytest.mark.parametrize("stem", COURSE.stems)
def test_the_french_code_is_the_english_program(stem):
    """Every French code cell parses to its English cell's AST once comments and string literals are set aside."""
    english = nbformat.read(SOLUTIONS / f"{stem}.ipynb", as_version=4)
    french = french_solution(stem)
    assert [(cell.id, cell.cell_type) for cell in french.cells] == [(cell.id, cell.cell_type) for cell in english.cells]
    for mine, theirs in zip(french.cells, english.cells):
        if mine.cell_type == "code":
            assert translated.program_shape(mine.source) == translated.program_shape(theirs.source), (
                f"{stem}: cell {mine.id}: the French cell is not the English program:\n{mine.source}")


def without_outputs(notebook: nbformat.NotebookNode) -> dict:
    notebook = json.loads(nbformat.writes(notebook))
    for cell in notebook["cells"]:
        if cell["cell_type"] == "code":
            cell["outputs"], cell["execution_count"] = [], None
    return notebook


@pytest.mark.parametrize("stem", COURSE.stems)
def test_the_french_notebooks_are_what_the_generator_makes(stem):
    """solutions/fr/ (outputs aside: nbval compares those) and notebooks/fr/ are made, never edited."""
    english = nbformat.read(SOLUTIONS / f"{stem}.ipynb", as_version=4)
    missing = words.untranslated(english, translation_of(stem))
    assert not missing, (f"{stem}: its translation is not finished ({len(missing)}, first {missing[0]}), so "
                         f"`make notebooks` does not regenerate its French notebooks")
    french = french_solution(stem)
    expected = translated.translated(english, translation_of(stem), LANGUAGE)
    assert without_outputs(french) == without_outputs(expected), (
        f"solutions/{LANGUAGE}/{stem}.ipynb is not what its English solution and translation make: "
        f"run `make notebooks` (python -m authoring notebooks)")
    learner = nbformat.read(NOTEBOOKS / LANGUAGE / f"{stem}.ipynb", as_version=4)
    assert json.loads(nbformat.writes(learner)) == json.loads(nbformat.writes(learner_version(french))), (
        f"notebooks/{LANGUAGE}/{stem}.ipynb is out of date: run `make notebooks`")
    assert "widgets" not in french.metadata and "widgets" not in learner.metadata
    nbformat.validate(french)


# --- French recordings: the same answers files, read in French ------------------------------------------------

def test_an_answers_file_is_read_in_the_language_recorded(tmp_path, monkeypatch):
    """`text(..., fr=)` gives a reply's French words; FRENCH replaces a whole entry whose calls differ in French."""
    import sys

    import authoring.answers
    from authoring import author_recordings as author

    (tmp_path / "zz_fixture_answers.py").write_text(
        "from looplab.scripted import calculator, reply, text\n"
        "ANSWERS = {'A_QUESTION': [reply(text('Hello', fr='Bonjour'))], 'B_QUESTION': [reply(text('One'))]}\n"
        "FRENCH = {'B_QUESTION': [reply(calculator('1 + 1'))]}\n", encoding="utf-8")
    monkeypatch.setattr(authoring.answers, "__path__", [*authoring.answers.__path__, str(tmp_path)])
    monkeypatch.delitem(sys.modules, "authoring.answers.zz_fixture_answers", raising=False)
    said = lambda answers, key: answers[key][0]({"messages": []})["content"][0]  # noqa: E731

    english, french = author.load_answers("zz_fixture_answers"), author.load_answers("zz_fixture_answers", "fr")
    assert said(english, "A_QUESTION")["text"] == "Hello" and said(english, "B_QUESTION")["text"] == "One"
    assert said(french, "A_QUESTION")["text"] == "Bonjour" and said(french, "B_QUESTION")["name"] == "calculator"
    assert said(author.load_answers("zz_fixture_answers"), "A_QUESTION")["text"] == "Hello", "English again after"
    monkeypatch.delitem(sys.modules, "authoring.answers.zz_fixture_answers", raising=False)


def test_the_status_command_reports_depths_and_what_is_left(capsys):
    """`python -m authoring translations status --lang fr <stem>`: the depth of each cell, then what is left."""
    code = words.main(["status", "--lang", LANGUAGE, STEM])
    out = capsys.readouterr().out
    assert f"{STEM}: depth per markdown cell: " in out
    left = words.status(STEM, LANGUAGE)
    assert code == (1 if left else 0) and all(line in out for line in left)


def test_a_french_recording_is_made_from_the_french_solution_and_the_answers_in_french(tmp_path):
    """`python -m authoring record --lang fr <stem>`, offline: the French questions, the answers' French words,
    byte for byte the committed looplab/recordings/fr/<stem>.json."""
    from authoring import author_recordings as author
    from looplab.recordings import recording_path

    path = SOLUTIONS / LANGUAGE / f"{STEM}.ipynb"
    if not path.exists():
        pytest.fail(f"no solutions/{LANGUAGE}/{STEM}.ipynb: finish its translation, then `make notebooks`")
    author.author_notebook(path, live=False, recordings=tmp_path)
    recorded = (tmp_path / f"{STEM}.json").read_text(encoding="utf-8")
    assert recorded == recording_path(STEM, LANGUAGE).read_text(encoding="utf-8")
    assert json.loads(recorded)["exchanges"][0]["request"]["messages"][0]["content"] in \
        author.notebook_questions(path).values(), "the recording asks the French notebook's question"


@pytest.mark.parametrize("token, holds", [
    ('"What is 2 + 2?"', True), ('f"{name}({args}) -> {out!r}, answering {id}"', True), ('f"(stopped: {why})"', True),
    ('"User> "', True), ('"Error: "', True), ('"calculator"', False), ('"tool_use"', False), ('"stop_reason:"', False),
    ('f"{name}({args})"', False), ('"3917 * 8263"', False), ("f\"{', '.join(names) or 'none'}\"", False),
])
def test_a_string_holds_words_when_a_word_sits_next_to_a_space(token, holds):
    """What a translation must give (authoring/notebook_translations.py, WORDS): the printed words around
    placeholders included, never code such as a tool's name or an API field."""
    assert words.holds_words(token) is holds


def test_an_f_string_is_one_text_and_a_one_word_label_may_be_translated_too():
    source = 'print(f"tools: {n}, answering {x}")  # a comment\nlabel = "better"\n'
    assert words.translatable_tokens(source) == ['f"tools: {n}, answering {x}"', "# a comment"]
    french = words.replaced_tokens(source, {'f"tools: {n}, answering {x}"': 'f"outils : {n}, en réponse à {x}"',
                                                    '"better"': '"meilleure"'})
    assert french == 'print(f"outils : {n}, en réponse à {x}")  # a comment\nlabel = "meilleure"\n'
