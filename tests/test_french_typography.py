"""Every French text the course produces follows French typography (docs/glossaire.md, "Typographie").

- a no-break space before `:`, a narrow no-break space before `; ! ?` and inside `« »`, in prose (code, placeholders,
  URLs, program texts and the protocol texts code reads set aside: authoring/typography.py, the fixer);
- numbers written the French way in prose: 22,4 s and 1 306, never 22.4 s or 1,306;
- templates that need no agreement with what fills them: no « ce {name} », no « {points}/{max} points ».

The texts: the French sources (tests/test_glossary.py's `french_texts`: translations/fr, the catalogues' French rows,
the French pages), the code entries of translations/fr (what the programs print), and the stored outputs of
solutions/fr/*.ipynb (stream text, text/plain, text/html, text/markdown). A failure lists file, key or cell and the
text around each place; `python -m authoring typography` fixes the spaces of the sources, `make notebooks` then
regenerates the notebooks and the generated pages.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

from authoring import typography
from authoring.typography import NBSP, NNBSP, edits, fixed, token_edits
from looplab import language
from tests.test_glossary import french_texts

ROOT = Path(__file__).resolve().parent.parent
SOLUTIONS = sorted((ROOT / "solutions" / "fr").glob("*.ipynb"))
SOURCES = typography.sources()


def where(path: Path) -> str:
    return str(path.relative_to(ROOT))


# --- the fixer --------------------------------------------------------------------------------------------------

def test_the_rules():
    assert fixed("Tapez une question ; puis : « oui » ? Non !") == \
        f"Tapez une question{NNBSP}; puis{NBSP}: «{NNBSP}oui{NNBSP}»{NNBSP}? Non{NNBSP}!"
    assert fixed("la cellule: elle") == f"la cellule{NBSP}: elle", "the missing space before `: ` is inserted"
    assert fixed(f"déjà{NNBSP}: bon") == f"déjà{NBSP}: bon", "the wrong no-break space is made right"
    assert fixed(" ; {spare} de marge") == f"{NNBSP}; {{spare}} de marge", "a row that continues a sentence"
    assert fixed("un mot\n: la suite") == f"un mot{NBSP}: la suite", "a mark the source wrapped onto its own line"
    assert fixed("- un point\n\n: rien") == "- un point\n\n: rien", "a paragraph's edge is not joined"


@pytest.mark.parametrize("code", [
    "`x ? y : z` et ```\nif a :\n    b ;\n```",  # code spans, fenced code
    "voir https://example.org/a?b=1 et [le guide](docs/a.md?x=1)",  # URLs, link targets
    "Écrivez \"Combien font 2 + 2 ?\" et {'type': 'tool'}, {a : b}",  # program texts, dicts, placeholders
    "à 10:30, puis 0:24",  # times
    "Le résultat commence par Error: puis User> et Agent> , [tool] et [tool-error]",  # protocol texts
    "avec is_error: True, while True: else: try:",  # code written bare before a colon
    "<span style=\"color: red\">texte</span> &amp; &#160;",  # HTML
    "lancez `python -m authoring handout --for linux-x86_64` : voilà",  # only the prose colon after the code
])
def test_code_is_left_alone(code):
    changed = fixed(code)
    assert changed.replace(NBSP, " ").replace(NNBSP, " ") == code or changed.endswith(f"`{NBSP}: voilà")
    assert "`x ? y : z`" in fixed("`x ? y : z`") and "10:30" in fixed("10:30")


def test_a_program_s_error_text_is_left_alone():
    """What a program prints from `Error: ` on is read by the series' tests as it is."""
    assert token_edits('"Error: division par zéro !"') == []
    assert token_edits('f"Error: outil inconnu {name!r} ; essayez"') == []
    token = '"Combien font 2 + 2 ?"'
    assert typography.applied(token, token_edits(token)) == f'"Combien font 2 + 2{NNBSP}?"'
    assert typography.applied("# la suite : ici", token_edits("# la suite : ici")) == f"# la suite{NBSP}: ici"


def test_a_program_in_a_string_is_read_as_a_program():
    """A cell that writes a file holds a program in a string: only its comments and strings are prose."""
    token = '"""\\\n# agent.py : un agent\nwhile True:\n    print("Agent> (fin) Une question ?")\n"""'
    changed = typography.applied(token, token_edits(token))
    assert "while True:\n" in changed and f"agent.py{NBSP}: un" in changed and f"question{NNBSP}?" in changed


@pytest.mark.parametrize("text", [t for _, _, t in french_texts()][:400:7] + ["« a » ; b : c ? d !\nx\n: y"])
def test_the_fixer_is_idempotent_and_changes_only_spaces(text):
    once = fixed(text)
    assert fixed(once) == once
    assert re.sub(r"[ \n\u00a0\u202f]", "", once) == re.sub(r"[ \n\u00a0\u202f]", "", text)


@pytest.mark.parametrize("path", [p for p in SOURCES if p.suffix == ".toml"], ids=where)
def test_the_toml_reader_finds_every_string_where_it_is_written(path):
    """The fixer edits a TOML file in place: its reader must decode every string as tomllib does."""
    source = path.read_text(encoding="utf-8")
    table = tomllib.loads(source)
    strings = typography.TomlScanner(source).scan()
    for string in strings:
        assert typography.nested(table, string.key) == string.value, string.key
    assert len(strings) == _count_strings(table)


def _count_strings(value) -> int:
    if isinstance(value, dict):
        return sum(map(_count_strings, value.values()))
    if isinstance(value, list):
        return sum(map(_count_strings, value))
    return isinstance(value, str)


def test_a_toml_file_is_edited_in_place(tmp_path):
    source = ('# a comment : kept\n[a]\ntext = "en : English"\n[a.fr]\nof = "12345678"\n'
              'text = "le mot : « oui » ?"\nhint = """une ligne \\\n: la suite ; \\u00e9"""\n'
              "[[cells.x.code]]\nen = '\"a\"'\nfr = '''\n\"Combien ?\"'''\n")
    path = tmp_path / "looplab" / "texts" / "a.toml"
    path.parent.mkdir(parents=True)
    path.write_text(source, encoding="utf-8")
    rewritten = typography.rewritten(path, typography.texts_of(path))
    assert rewritten == source.replace("mot : « oui » ?", f"mot{NBSP}: «{NNBSP}oui{NNBSP}»{NNBSP}?").replace(
        "ligne \\\n: la suite ;", f"ligne{NBSP}\\\n: la suite{NNBSP};")
    assert tomllib.loads(rewritten)["a"]["text"] == "en : English", "English rows are not French texts"
    path.write_text(rewritten, encoding="utf-8")
    assert all(not text.changes for text in typography.texts_of(path)), "a second run changes nothing"


# --- every French text ------------------------------------------------------------------------------------------

def _listed(found: list[str], what: str) -> str:
    return f"{len(found)} {what} (`python -m authoring typography` fixes the sources, then `make notebooks`):\n" \
        + "\n".join(found[:60]) + ("\n…" if len(found) > 60 else "")


@pytest.mark.parametrize("path", SOURCES, ids=where)
def test_french_sources_follow_french_typography(path):
    found = [f"{where(path)}: {text.where}: {typography.shown(text.value, edit)}"
             for text in typography.texts_of(path) for edit in text.changes]
    assert not found, _listed(found, "spaces French typography wants otherwise")


def _outputs(notebook: Path) -> list[tuple[str, str]]:
    return typography.output_texts(notebook)


@pytest.mark.parametrize("notebook", SOLUTIONS, ids=lambda p: p.name)
def test_french_notebook_outputs_follow_french_typography(notebook):
    found = [f"{notebook.name}: {place}: {typography.shown(text, edit)}"
             for place, text in _outputs(notebook) for edit in edits(text, printed=True)]
    assert not found, _listed(found, "spaces in the stored outputs")


# --- numbers ----------------------------------------------------------------------------------------------------

def test_english_numbers_are_found_in_prose_only():
    assert typography.english_numbers("1,306 mots en 22.4 s, soit 0.3 par mot") != []
    assert len(typography.english_numbers("1,306 mots en 22.4 s, soit 0.3 par mot")) == 3
    assert typography.english_numbers("l'exercice 2.1, Python 3.11, `0.1 + 0.2`, \"1,250 g\", 1, 2 et 3") == []
    assert typography.english_numbers(f"1{NNBSP}306 mots en 22,4 s") == []


@pytest.mark.parametrize("where_", sorted({place for place, _, _ in french_texts()}))
def test_french_prose_writes_numbers_the_french_way(where_):
    found = [f"{place}: {key}: …{number}…" for place, key, text in french_texts() if place == where_
             for number in typography.english_numbers(text)]
    assert not found, "numbers written the English way (French: 22,4 s, 1 306):\n" + "\n".join(found)


@pytest.mark.parametrize("notebook", SOLUTIONS, ids=lambda p: p.name)
def test_french_outputs_write_numbers_the_french_way(notebook):
    found = [f"{notebook.name}: {place}: …{number}…" for place, text in _outputs(notebook)
             for number in typography.english_numbers(text, printed=True)]
    assert not found, "numbers written the English way in the outputs:\n" + "\n".join(found)


F_STRING = re.compile(r'\bf"[^"\n]*"')  # a hint's line of Python (f"cost=${cost:.6f}"): code shown, not a template


def test_no_french_template_formats_a_number_the_english_way():
    """`{limit:,}` writes 10,000 whatever the language: the code formats the number (looplab/grade/shared/numbers.py)
    and the template names it plain. A hint quoting an f-string of Python shows code, and is left alone."""
    found = [f"{place}: {key}: {text[:100]!r}" for place, key, text in french_texts()
             if not place.endswith(".md") for _ in [0]
             if re.search(r"\{\w+(?:\.\w+)?:[^{}]*[,.]\d*f?\}", F_STRING.sub("", text))]
    assert not found, "French templates whose format spec writes English marks:\n" + "\n".join(found)


def test_the_workshop_guide_writes_numbers_the_french_way():
    from authoring import workshop_guide

    french = workshop_guide.generated("fr")
    english = workshop_guide.generated("en")
    assert not re.search(r"\d,\d{3}\b", french), "a thousands comma in WORKSHOP.fr.md's generated half"
    assert re.search(r"\d\u202f\d{3}\b", french), "French groups thousands with a narrow no-break space"
    assert "0,3" in french and "0.3" in english, "the time model's constants take the language's decimal mark"
    assert re.search(r"\d,\d{3}\b", english)
    with language.using("fr"):
        assert workshop_guide.numbers.integer(1306) == f"1{NNBSP}306"


# --- templates: agreement with what fills them ------------------------------------------------------------------

CATALOGUE_ROWS = [(place, key, text) for place, key, text in french_texts()
                  if place.endswith(".toml") and not place.startswith("translations")]
DETERMINER = re.compile(r"(?<![\w'])(ce|cet|cette|le|la|un|une|du|au)\s+\{(\w+)[^{}]*\}", re.IGNORECASE)
# A score: 0/1 point, 1/3 point (French: under 2 is singular), so « {points}/{max} points » is wrong for 0 and 1.
SCORE_PLURAL = re.compile(r"\{\w+[^{}]*\}\s*/\s*\{\w+[^{}]*\}\s+\w+s\b")


def test_agreement_patterns_are_found():
    assert DETERMINER.search("ce {name} est la version du cours") and DETERMINER.search("le {file} qu'une")
    assert not DETERMINER.search("l'outil {name!r} et {name} est")
    assert SCORE_PLURAL.search("Progression : {points}/{max_points} points")
    assert not SCORE_PLURAL.search("Progression : {points}/{max_points}")


def test_french_templates_need_no_agreement_with_their_placeholders():
    """« ce {name} » reads « ce agent_turn » (cet); « le {x} »/« la {x} » guesses a gender; « {points}/{max} points »
    reads « 0/1 points ». A template names what fills it so as to need no agreement: « la fonction {name} »,
    « points : {points}/{max} »."""
    found = [f"{place}: {key}: {match.group()!r} in {text[:90]!r}" for place, key, text in CATALOGUE_ROWS
             for pattern in (DETERMINER, SCORE_PLURAL) for match in pattern.finditer(text)]
    assert not found, "French templates that must agree with a value they cannot know:\n" + "\n".join(found)
