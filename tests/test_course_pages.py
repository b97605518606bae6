"""The pages that restate the manifest are generated from it, and a stale one fails naming what is stale.

README's course table and `doctor` sample, DESIGN.md's notebook rows, the list of what adding a
notebook touches (DESIGN.md and WRITING_NOTEBOOKS.md) and the audit page are written by
`make notebooks` (authoring/course_pages.py) between marks; this test holds the committed pages to it.
"""

from __future__ import annotations

import pytest

from authoring import course_pages
from looplab.course import COURSE
from looplab.doctor import check_recordings


def test_every_generated_part_is_current():
    assert course_pages.stale() == [], "out of date, run `make notebooks`: " + ", ".join(course_pages.stale())


def test_the_readme_lists_every_notebook_and_the_doctor_sample_counts_them():
    readme = (course_pages.ROOT / "README.md").read_text(encoding="utf-8")
    for notebook in COURSE.notebooks:
        assert f"| `{notebook.stem}` | {notebook.builds} |" in readme
    assert check_recordings().line() in readme
    assert f"{len(COURSE.notebooks)} recordings" in readme


README = course_pages.ROOT / "README.md"


@pytest.fixture
def readme_copy(tmp_path, monkeypatch):
    """A copy of README.md, the only page the generator writes."""
    copy = tmp_path / "README.md"
    monkeypatch.setattr(course_pages, "ROOT", tmp_path)
    monkeypatch.setattr(course_pages, "PARTS", {copy: course_pages.PARTS[README]})
    return copy


def test_a_stale_part_is_named(readme_copy, capsys):
    text = README.read_text(encoding="utf-8")
    readme_copy.write_text(text.replace(f"| `{COURSE.stems[-1]}` |", "| `99_gone` |"), encoding="utf-8")
    assert course_pages.main(["--check"]) == 1
    assert capsys.readouterr().out == "README.md: course table is out of date: run `make notebooks`\n"
    assert course_pages.main([]) == 0 and course_pages.main(["--check"]) == 0
    assert readme_copy.read_text(encoding="utf-8") == text


def test_a_page_without_its_marks_is_named_in_one_line(readme_copy):
    readme_copy.write_text("# no marks here\n", encoding="utf-8")
    with pytest.raises(course_pages.Incomplete, match="README.md has no generated part 'course table'"):
        course_pages.main([])


def test_the_french_readme_table_comes_from_the_manifest_and_its_rows_in_the_manifests_words(monkeypatch):
    """README.fr.md's table is generated like README.md's, from looplab/texts/course.toml's `builds:<stem>` rows
    (the one place of the manifest's words in every language); a notebook whose English `builds` is not its row's
    stops the regeneration, naming the row and the fix."""
    table = "\n".join(course_pages.course_table("fr"))
    assert "2.3 agent_turn with a hard cap" not in table and "1.1 `calculator`" in table
    assert "une calculatrice sûre" in table
    rows = dict(course_pages.TITLES.rows)
    rows["builds:01_one_tool_call"] = {**rows["builds:01_one_tool_call"], "en": "an older English"}
    monkeypatch.setattr(course_pages.TITLES, "rows", rows)
    with pytest.raises(course_pages.Incomplete, match=r'\["builds:01_one_tool_call"\] holds another English'):
        course_pages.course_table("fr")
