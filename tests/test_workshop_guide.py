"""The instructor's guide, docs/WORKSHOP.md: its generated half says what the checks say today."""

from __future__ import annotations

from authoring import workshop_guide as guide
from looplab.course import COURSE


def test_the_guide_is_in_sync_with_the_notebooks_the_audit_and_the_catalogues():
    assert guide.main(["--check"]) == 0, "docs/WORKSHOP.md is out of date: run `make notebooks`"


def test_a_reworded_check_makes_the_guide_out_of_date(tmp_path, monkeypatch, capsys):
    stale = tmp_path / "WORKSHOP.md"
    stale.write_text(guide.GUIDE.read_text(encoding="utf-8").replace("it should return a dict", "return a dict"))
    monkeypatch.setattr(guide, "GUIDE", stale)
    monkeypatch.setattr(guide, "ROOT", tmp_path)
    assert guide.main(["--check"]) == 1
    assert "out of date" in capsys.readouterr().out
    assert guide.main([]) == 0 and guide.main(["--check"]) == 0


def test_every_exercise_has_its_mistakes_and_every_message_is_a_check_s_own():
    text = guide.generated()
    for exercise in COURSE.exercises:
        section = text.split(f"### {exercise.id} ")[1].split("\n### ")[0]
        rows = [line for line in section.splitlines() if line.startswith("| ") and not line.startswith("| missed")]
        assert rows, f"no mistakes listed for {exercise.id}"
        templates = {guide.printed(text.said().failed) for text in COURSE.texts(exercise.id).values()}
        for row in rows:
            said = row.split(" | ")[1]
            assert said in templates, f"{exercise.id}: {said!r} is not a message of its check"


def test_the_run_of_show_counts_every_notebook():
    show = "\n".join(guide.run_of_show())
    for notebook in COURSE.notebooks:
        assert f"| `{notebook.stem}` |" in show
    assert f"| all | | | {len(COURSE.exercises)} |" in show
