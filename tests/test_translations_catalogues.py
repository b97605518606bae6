"""The package's words in French: every catalogue row translated, never stale, as deep as its English, and said.

Every TOML catalogue of looplab/ is checked: the checks' (looplab/checks/texts/*.toml: rows of Text fields,
and hints) and the Words of every other module (looplab/**/texts/*.toml). For each:
- every row and every exercise's hint list has a French version (a missing one fails naming file and key);
- a French row has every field its English row has (a check row's `failed`, `hint`, `passed`);
- its `of` is the fingerprint of today's English (authoring/catalogue_translations.py computes both): a
  stale one fails naming the key, the English and the French, and says how to re-stamp once re-checked;
- its depth: len(French) / len(English) within DEPTH, for every text of at least SHORT characters. The band
  starts from the Hugging Face course's ~0.6 floor (../shared/reference/classroom.md: a translation much
  shorter than its source has left something out) and was calibrated on the first catalogues translated
  (the Words of client, viewer, doctor, rules...: 118 texts of 20 characters or more, ratios 0.78 to 1.63,
  median 1.12, French running longer as it does). The ceiling, 1.8, flags a translation that explains
  instead of translating. Texts under SHORT characters are a word or two ("Step" -> "Étape", " and " ->
  " et "), where a ratio says nothing;
- the placeholders of a French template are the same set as the English's (`{count}` left out would make
  .format raise, an invented one too).
The check catalogues are translated by another change; until it lands, run this file with
`-k "not checks"` (the parameters say `checks/<file>` or `words/<file>`).

Then the words are said: under LOOPLAB_LANG=fr the client's mode line, NotRecordedError, the hint under a 400
(the API's message stays in English), doctor, hint() and progress(), and the viewer's labels are French.
"""

import ast
import html
import io
import json
import re
import subprocess
import sys
from pathlib import Path

import anthropic
import pytest

from authoring import catalogue_translations as translations
from authoring.notebook_translations import fingerprint
from looplab import language
from looplab.catalogue import _fields
from looplab.course import COURSE

ROOT = Path(__file__).resolve().parent.parent
DEPTH = (0.6, 1.8)
SHORT = 20  # characters: a shorter English text is a word or two, where a ratio means nothing
PLACEHOLDER = re.compile(r"\{(\w+)(?:![rsa])?(?::[^{}]*)?\}")  # {name}, {name!r}, {name:+d}; not {...} or {"a": 1}


def _id(path: Path) -> str:
    return f"{'checks' if translations.is_checks(path) else 'words'}/{path.stem}"


CATALOGUES = pytest.mark.parametrize("path", translations.catalogues(), ids=_id)


def _pairs(path: Path):
    """(key, field, English, French) of every translated text of a catalogue (French None when missing)."""
    table = translations.read(path)
    for key in translations.all_keys(path, table):
        french = translations.translation(path, table, key)
        if key.startswith(translations.HINTS_PREFIX):
            english = table["hints"][key[len(translations.HINTS_PREFIX):]]
            for index, text in enumerate(english):
                yield key, f"hint {index + 1}", text, french[index] if french and index < len(french) else None
        elif not translations.is_checks(path):
            yield key, "text", table[key]["text"], (french or {}).get("text")
        else:
            theirs = _fields(table, key, "fr") if french is not None else {}
            for field, text in _fields(table, key, None).items():
                if isinstance(text, str):  # (a flag, situation_hint, holds no words)
                    yield key, field, text, theirs.get(field)


def _where(path: Path) -> str:
    return str(path.relative_to(ROOT))


@CATALOGUES
def test_every_row_has_its_french(path):
    table = translations.read(path)
    missing = [key for key in translations.all_keys(path, table) if translations.translation(path, table, key) is None]
    assert not missing, f"{_where(path)}: no French ([key.fr], or [hints.fr] for hints) for {missing}"


@CATALOGUES
def test_french_rows_have_every_field_of_the_english(path):
    lacking = [f"{key}: {field}" for key, field, english, french in _pairs(path)
               if french is None and english and _has_french(path, key)]
    assert not lacking, f"{_where(path)}: French rows without a field their English has: {lacking}"


def _has_french(path: Path, key: str) -> bool:
    return translations.translation(path, translations.read(path), key) is not None


@CATALOGUES
def test_no_french_is_stale(path):
    table = translations.read(path)
    problems = []
    for key in translations.all_keys(path, table):
        french = translations.translation(path, table, key)
        if french is None:
            continue  # test_every_row_has_its_french says so
        recorded, english = translations.stored(path, table, key), translations.english(path, table, key)
        if recorded is None:
            problems.append(f"{key}: French with no `of` (once checked: "
                            f"python -m authoring catalogues stamp {_where(path)} {key})")
        elif recorded != fingerprint(english):
            problems.append(f"{key}: stale, the English changed since the French was checked\n"
                            f"    English: {english}\n    French:  {json.dumps(french, ensure_ascii=False)}\n"
                            f"    re-read the French, fix it, then: python -m authoring catalogues stamp "
                            f"{_where(path)} {key}")
    assert not problems, f"{_where(path)}:\n" + "\n".join(problems)


@CATALOGUES
def test_french_is_as_deep_as_the_english(path):
    low, high = DEPTH
    off = [f"{key} ({field}): {len(french) / len(english):.2f}\n    English: {english}\n    French:  {french}"
           for key, field, english, french in _pairs(path)
           if french and len(english) >= SHORT and not low <= len(french) / len(english) <= high]
    assert not off, f"{_where(path)}: French much shorter or longer than its English (band {DEPTH}):\n" + "\n".join(off)


@CATALOGUES
def test_french_templates_name_the_same_values(path):
    differ = [f"{key} ({field}): English {sorted(set(PLACEHOLDER.findall(english)))}, "
              f"French {sorted(set(PLACEHOLDER.findall(french)))}"
              for key, field, english, french in _pairs(path)
              if french and field != "hint" and set(PLACEHOLDER.findall(english)) != set(PLACEHOLDER.findall(french))]
    assert not differ, f"{_where(path)}: French templates naming other values than the English:\n" + "\n".join(differ)


def test_the_titles_catalogue_translates_the_manifests_titles():
    """texts/course.toml's English is the manifest's title: a renamed exercise shows its row out of date here."""
    table = translations.read(ROOT / "looplab" / "texts" / "course.toml")
    titles = {exercise.id: exercise.title for exercise in COURSE.exercises}
    titles |= {notebook.stem: notebook.title for notebook in COURSE.notebooks}
    rows = {key: row["text"] for key, row in table.items() if re.fullmatch(r"\d+\.\d+|\d+_\w+", key)}
    assert rows and rows == {key: titles.get(key) for key in rows}
    from authoring.fingerprints import manifest_rows  # every row the manifest needs: each title, each `builds`

    lacking = manifest_rows()
    assert not lacking, "\n".join(row.line() for row in lacking)


WORDS_CATALOGUES = [path for path in translations.catalogues() if not translations.is_checks(path)]


@pytest.mark.parametrize("path", WORDS_CATALOGUES, ids=_id)
def test_every_key_a_module_says_is_a_row_of_its_catalogue(path):
    """`WORDS("key", ...)` with a key its catalogue lacks would raise in front of a learner: caught here."""
    tree = ast.parse((path.parent.parent / f"{path.stem}.py").read_text(encoding="utf-8"))
    sayers = {target.id for node in ast.walk(tree) if isinstance(node, ast.Assign)
              and isinstance(node.value, ast.Call) and getattr(node.value.func, "id", None) == "words"
              for target in node.targets if isinstance(target, ast.Name)}
    said = {node.args[0].value for node in ast.walk(tree) if isinstance(node, ast.Call)
            and getattr(node.func, "id", None) in sayers and node.args and isinstance(node.args[0], ast.Constant)}
    assert sayers and said <= set(translations.read(path)), f"{_where(path)} lacks {sorted(said - set(translations.read(path)))}"


# --- no English left in the Python of the modules whose words are catalogued ----------------------------

# (scripted.py is not here: the model's words it scripts are written in Python, each with its French,
# `text("...", fr="...")`; robust.py and tools.py neither: their tool results keep the words checks read.)
CATALOGUED = ["client", "allowance", "error_display", "viewer", "history", "doctor", "transport", "recordings",
              "loop", "notebook_source", "__main__", "rules"]
# The grader's modules a teacher reads from: the command line and the exports.
CATALOGUED_GRADER = ["__main__.py", "grading.py", "exports/asked.py", "exports/canvas.py", "exports/class_report.py",
                     "exports/feedback.py", "exports/gradescope.py", "exports/spreadsheet.py", "exports/terminal.py",
                     "rows/class_gradebook.py", "rows/roster.py", "rows/unmatched.py", "submissions/reading.py",
                     "submissions/homes.py", "kernels/sandbox.py"]
# Said in the grader's Python on purpose: a programmer's ValueError (an option's choices are argparse's to check), the
# program's name, and argparse's own words for a missing argument (its msgid: argparse's catalogue translates it).
GRADER_CODE_TEXTS = {"visibility must be one of ", "--isolation must be one of ", "python -m looplab.grade",
                     "the following arguments are required: %s"}
PROSE = re.compile(r"[A-Za-z]+ [a-z]+ [a-z]+")  # three words in a row


def prose_in_functions(path: Path) -> list[tuple[int, str]]:
    """Sentences a module's functions write in Python (docstrings aside; markup, an import line and an indented
    block of code are not sentences)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for function in ast.walk(tree):
        if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        body = function.body[1:] if ast.get_docstring(function) is not None else function.body
        found += [(node.lineno, node.value) for statement in body for node in ast.walk(statement)
                  if isinstance(node, ast.Constant) and isinstance(node.value, str) and PROSE.search(node.value)
                  and not node.value.lstrip().startswith(("<", "import ")) and "\n    " not in node.value]
    return found


@pytest.mark.parametrize("module", CATALOGUED)
def test_no_prose_left_in_the_modules_code(module):
    """Inside its functions, a catalogued module writes keys and markup, not sentences (docstrings aside)."""
    found = prose_in_functions(ROOT / "looplab" / f"{module}.py")
    assert not found, f"looplab/{module}.py says words in Python, move them to texts/{module}.toml: {found}"


@pytest.mark.parametrize("module", CATALOGUED_GRADER)
def test_what_a_teacher_reads_is_in_a_catalogue(module):
    """The same for the grader's modules a teacher reads from: every sentence in the class's language."""
    found = [said for said in prose_in_functions(ROOT / "looplab" / "grade" / module) if said[1] not in GRADER_CODE_TEXTS]
    assert not found, f"looplab/grade/{module} says words in Python, move them to its catalogue: {found}"


# --- the words said in French ---------------------------------------------------------------------------


@pytest.fixture
def french(monkeypatch):
    monkeypatch.setenv(language.OVERRIDE, "fr")


def test_the_clients_mode_line_is_french(french, capsys):
    import looplab
    looplab.client("01_one_tool_call")
    assert "looplab\u00a0: hors ligne, les réponses viennent de l'enregistrement" in capsys.readouterr().out


def test_not_recorded_is_said_in_french(french):
    import looplab
    client = looplab.client("01_one_tool_call", quiet=True)
    with pytest.raises(looplab.NotRecordedError) as raised:
        client.messages.create(model=looplab.MODEL, max_tokens=10, messages=[{"role": "user", "content": "?!"}])
    assert "Cette conversation n'est pas dans l'enregistrement '01_one_tool_call'" in str(raised.value)
    assert raised.value.summary.startswith("Pas enregistré hors ligne")


def test_a_400_keeps_the_apis_english_and_gives_a_french_hint(french):
    import looplab
    from looplab.error_display import brief_traceback
    client = looplab.client("01_one_tool_call", quiet=True, print_hints=False)
    broken = [{"role": "user", "content": "2+2?"}, {"role": "assistant", "content": "4"}]
    with pytest.raises(anthropic.BadRequestError) as raised:
        client.messages.create(model=looplab.MODEL, max_tokens=10, messages=broken)
    lines = brief_traceback(raised.value)
    assert "This model does not support assistant message prefill" in lines[0]  # the API's words, as it writes them
    assert lines[1].startswith("indice de looplab\u00a0: L'historique se termine par un message `assistant`")
    assert any(line.startswith("  ligne ") for line in lines[2:])


def test_doctor_speaks_french():
    run = subprocess.run([sys.executable, "-m", "looplab", "doctor"], capture_output=True, text=True,
                         env={**_environ(), language.OVERRIDE: "fr"})
    assert "prêt pour le cours" in run.stdout or "à corriger" in run.stdout, run.stdout + run.stderr
    assert "enregistrements" in run.stdout


def _environ() -> dict:
    import os
    return {key: value for key, value in os.environ.items() if key != language.SESSION}


def test_hint_and_progress_speak_french(french, capsys):
    """Their words are the checks' own (checks/texts/core.toml, translated by the check texts' change): in
    French once that row is, and the exercises' titles (texts/course.toml) in French already."""
    from looplab.checks import CheckResult, Progress, core, hint
    with language.using("en"):
        english = core.SAY.words("progress", points=2, max_points=6)
    if core.SAY.words("progress", points=2, max_points=6) == english:
        pytest.skip("checks/texts/core.toml has no French yet (the check texts' change translates it)")
    hint("2.3")
    said = capsys.readouterr().out.splitlines()[0]
    assert said == core.SAY.words("hint_number", index=1, count=len(COURSE.hints("2.3")), exercise="2.3",
                                  text=COURSE.hints("2.3")[0])
    progress = Progress({"2.3": CheckResult("2.3", "x", 2, 2, [])})
    shown = repr(progress)
    assert shown.splitlines()[0] == core.SAY.words("progress", points=2, max_points=progress.max_points) != english
    assert "agent_turn avec un plafond ferme" in shown


def test_progress_shows_the_titles_in_french(french):
    from looplab.checks import Progress
    from looplab.checks.core import CheckResult
    shown = Progress({"6.3": CheckResult("6.3", "x", 0, 2, [], "f")})._repr_html_()
    assert "agent_turn avec un garde-fou contre la répétition" in shown


def test_the_viewers_labels_are_french(french):
    from looplab.viewer import HistoryViewer
    messages = [{"role": "user", "content": "2+2?"},
                {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "calculator",
                                                   "input": {"expression": "2+2"}}]},
                {"role": "user", "content": "and then?"}]
    viewer = HistoryViewer(messages)
    page = html.unescape(viewer.static_html())
    for words in ("Visionneuse d'historique, étapes\u00a0: 2.", "Étape 1 sur 2\u00a0: le modèle a demandé calculator",
                  "pas de tool_result", "l'API refuse ceci", "Indice\u00a0: "):
        assert words in page, words
    assert viewer.previous.description == "◀ Précédent" and viewer.slider.description == "Étape"
    assert "Étape 2 sur 2\u00a0: l'API a refusé la requête (400)" in viewer.static_text()


def test_the_agent_program_speaks_french_around_its_prefixes(french):
    """`User> ` and `Agent> ` stay (code reads them); the words after them are French, and so is the prompt."""
    from looplab import loop, scripted
    assert loop.system_prompt().startswith("Vous êtes un assistant")
    client, _ = scripted.scripted_client(scripted.never_stops(), call_limit=2)
    out = io.StringIO()
    loop.run(io.StringIO("2+2?\n\n"), out, client, max_iterations=2)
    assert "\nAgent> (arrêt\u00a0: le modèle demande encore des outils après 2 appels)\nUser> " in out.getvalue()
    with pytest.raises(RuntimeError, match="le modèle demandait encore des outils après 2 appels"):
        loop.agent_turn(scripted.scripted_client(scripted.never_stops(), call_limit=2)[0],
                        [{"role": "user", "content": "2+2?"}], max_iterations=2)
