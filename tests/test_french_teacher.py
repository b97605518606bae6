"""What a French teacher reads around the grader (issue 36): the guides in their language, the solutions released in
it, and the grader's French written as French is typeset. No kernel runs here (tests/test_grade_language.py grades
the French teacher's class and scans everything it wrote for English).
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

from authoring import handout as handout_command
from authoring.workshop_guide import printed
from looplab.course import COURSE
from looplab.grade.shared.status import Status

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
GRADER_CATALOGUES = sorted((ROOT / "looplab" / "grade").glob("**/texts/*.toml"))
NO_BREAK, NARROW_NO_BREAK = "\u00a0", "\u202f"


# --- the guides ---------------------------------------------------------------------------------------------------


def test_each_guide_links_the_other_and_the_french_readme_links_the_french_guide():
    assert "*[Français](WORKSHOP.fr.md)*" in (DOCS / "WORKSHOP.md").read_text(encoding="utf-8")
    assert "*[English](WORKSHOP.md)*" in (DOCS / "WORKSHOP.fr.md").read_text(encoding="utf-8")
    readme = (ROOT / "README.fr.md").read_text(encoding="utf-8")
    assert "[docs/WORKSHOP.fr.md](docs/WORKSHOP.fr.md)" in readme and "(docs/WORKSHOP.md)" not in readme


def test_the_french_guide_names_statuses_as_the_grader_prints_them_in_french():
    """The hand-written half: every status it names in `code` is one the grader prints under --lang fr."""
    guide = (DOCS / "WORKSHOP.fr.md").read_text(encoding="utf-8").partition("<!-- generated")[0]
    english = {member.templates()[0] for member in Status} - {member.templates()[1] for member in Status}
    named = set(re.findall(r"`([^`\n]+)`", guide))
    assert not named & english, named & english
    assert {"le code du cours lui-même", "à revoir", "réussi", "non rendu"} <= named
    for word in ("review", "student", "WITHOUT isolation"):
        assert f"`{word}`" not in guide and f"({word})" not in guide, word


def test_the_guides_show_a_check_s_braces_as_the_learner_reads_them():
    """A check's template doubles its literal braces for str.format; the guide shows the one the learner reads."""
    assert printed("such as {{'expression': {{'type': 'string'}}}}; it is {properties!r}") == (
        "such as {'expression': {'type': 'string'}}; it is …")
    assert printed("{count}× {status}") == "…× …"
    for guide in ("WORKSHOP.md", "WORKSHOP.fr.md"):
        text = (DOCS / guide).read_text(encoding="utf-8")
        assert "{{" not in text and "{'expression': {'type': 'string'}}" in text, guide


def test_a_french_class_gets_the_french_solutions(tmp_path):
    stem = COURSE.notebooks[0].stem
    assert handout_command.main(["--out", str(tmp_path), "--release", stem, "--lang", "fr"]) == 0
    released = tmp_path / "solutions" / "fr" / f"{stem}.ipynb"
    assert released.read_bytes() == (ROOT / "solutions" / "fr" / f"{stem}.ipynb").read_bytes()
    assert b'"lang": "fr"' in released.read_bytes()
    assert not (tmp_path / "solutions" / f"{stem}.ipynb").exists()  # the English one only when asked
    guide = (DOCS / "WORKSHOP.fr.md").read_text(encoding="utf-8")
    assert "--release 02_closing_the_loop --lang fr` écrit la solution\n  française" in guide


# --- the grader's French, typeset ------------------------------------------------------------------------------------


def french_rows():
    for path in GRADER_CATALOGUES:
        for key, row in tomllib.loads(path.read_text(encoding="utf-8")).items():
            french = row.get("fr") if isinstance(row, dict) else None
            if isinstance(french, dict) and isinstance(french.get("text"), str):
                yield f"{path.relative_to(ROOT)} [{key}]", french["text"]


CODE = re.compile(r"`[^`]*`|'[^']*'|\"[^\"]*\"|%\([a-z_]+\)[sr]|https?://\S+")


@pytest.mark.parametrize("where, text", list(french_rows()), ids=lambda value: str(value)[:60])
def test_the_grader_s_french_is_typeset_as_french(where, text):
    """A no-break space before `:` and a narrow one before `;`, `?` and `!` and inside « », a number and its unit
    kept together ("{seconds} s"): never a plain space, which a line can break at, nor none at all."""
    prose = CODE.sub("_", text)
    assert not re.search(r" [:;?!»]|« ", prose), (where, text)
    for mark, space in ((":", NO_BREAK), (";", NARROW_NO_BREAK), ("?", NARROW_NO_BREAK), ("!", NARROW_NO_BREAK)):
        for found in re.finditer(re.escape(mark) + r"(?= |$)", prose):  # a mark that ends a phrase
            before = prose[found.start() - 1] if found.start() else ""
            assert before == space or before in "})_", (where, text, mark)  # after a placeholder: its own business
    assert not re.search(r"\} (s|Mo|Go|octets)(?![\w'])", prose), (where, text)


