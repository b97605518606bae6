"""The instructor's guide, docs/WORKSHOP.md: its generated half says what the checks say today."""

from __future__ import annotations

from authoring import workshop_guide as guide
from looplab.course import COURSE


def test_the_guide_is_in_sync_with_the_notebooks_the_audit_and_the_catalogues():
    assert guide.main(["--check"]) == 0, "docs/WORKSHOP.md is out of date: run `make notebooks`"


def test_a_reworded_check_makes_the_guide_out_of_date(tmp_path, monkeypatch, capsys):
    stale = tmp_path / "WORKSHOP.md"
    stale.write_text(guide.GUIDE.read_text(encoding="utf-8").replace("it should return a dict", "return a dict"))
    monkeypatch.setattr(guide, "GUIDES", {"en": stale})
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


# --- the plans and the time model behind them -------------------------------------------------------

from authoring import time_model, workshop_plans  # noqa: E402


def test_every_plan_fits_its_slot_with_its_opening_breaks_and_closing():
    for plan in workshop_plans.plans():
        slot = plan.slot
        assert plan.minutes <= slot.minutes, f"{slot.name}: {plan.minutes} minutes for a {slot.minutes}-minute slot"
        pauses = [step.pause for step in plan.steps if step.pause is not None]
        assert pauses[0] == slot.opening and pauses[-1] == slot.closing
        assert set(slot.breaks) <= set(pauses), f"{slot.name} lost a break"
        for before, after in zip(plan.steps, plan.steps[1:]):
            assert after.start == before.end, f"{slot.name}: a gap or an overlap at {workshop_plans.clock(after.start)}"


def test_the_two_hour_plan_is_two_hours_and_leaves_the_rest_as_homework():
    two_hours = workshop_plans.plans()[0]
    assert two_hours.slot.minutes == 120 and two_hours.minutes <= 120
    assert two_hours.homework, "the whole course does not fit two hours: something must be homework"


def test_each_plan_takes_the_course_in_order_and_nothing_is_lost():
    everything = time_model.course_stretches()
    for plan in workshop_plans.plans():
        assert plan.in_the_room + list(plan.homework) == everything
        assert sorted(plan.cut_list(), key=everything.index) == plan.in_the_room
        cuts = plan.cut_list()
        graded = [stretch.graded for stretch in cuts]
        assert graded == sorted(graded), "ungraded rests are cut before any exercise"


def test_the_guide_shows_every_plan_with_its_checkpoints_and_cut_list():
    text = guide.generated()
    for plan in workshop_plans.plans():
        heading = guide.WORDS("plan_heading", name=guide.WORDS(plan.slot.name), minutes=plan.slot.minutes)
        section = text.split(heading)[1].split("\n### ")[0].split("\n## ")[0]
        for stretch in plan.in_the_room:
            if stretch.graded:
                assert f"checked {stretch.exercise} " in section
        assert "Behind at a checkpoint?" in section


def test_slower_reading_moves_work_to_homework(monkeypatch):
    before = len(workshop_plans.plans()[0].in_the_room)
    monkeypatch.setattr(time_model, "WORDS_PER_MINUTE", 50)
    after = workshop_plans.plans()[0]
    assert len(after.in_the_room) < before and after.minutes <= 120


def test_a_solution_line_is_code_the_learner_writes():
    source = 'def f(x):\n    """Why.\n\n    More."""\n    # a comment\n\n    return x + 1\n'
    assert time_model.solution_lines(source) == 2
    assert time_model.solution_lines("x = (\n") == 1  # a cell that does not parse still counts its lines


def test_a_stretch_costs_its_prose_cells_lines_and_instructions():
    notebook = time_model.COURSE.notebooks[0]
    reading = time_model.Stretch(notebook, None, words=300, cells=4)
    assert reading.minutes == 300 // time_model.WORDS_PER_MINUTE + 1  # 2 + 1 minute of cells
    exercise = time_model.Stretch(notebook, "1.1", words=0, cells=0, lines=10, instructions=5)
    assert exercise.minutes == 3 + 3 + 2


def test_the_french_guide_is_the_same_plan_in_french_words():
    """docs/WORKSHOP.fr.md's generated half is written by the same generator in French: the same checkpoints and
    minutes, its headings, slots and pauses in French, the checks' French words (never a copy of the English)."""
    english, french = guide.generated("en"), guide.generated("fr")
    clocks = lambda text: [line.split(" | ")[0] for line in text.splitlines() if line.startswith("| ") and ":" in line[:8]]
    assert clocks(french) == clocks(english) and clocks(english)
    assert "## Des plans qui tiennent dans le créneau" in french and "### Un atelier de 2 heures\u00a0: 120 minutes" in french
    assert "| pause jusqu'à 1:02 | 10 |" in french and "| break until 1:02 | 10 |" in english
    assert "Plans that fit" not in french and "checked 1.1" not in french


def test_the_guide_shows_the_hint_the_learner_sees_where_the_situations_hint_comes_first():
    """6.1's "run_tool raised" is cured by the point of the case being tested (a division by zero, an unknown
    name...): the check gives that case's hint, and the guide's row for the instruction shows the same one."""
    from authoring import audit, workshop_guide
    from looplab.checks import run_check
    from looplab.course import COURSE

    from tests.test_checks_notebook6 import run_tool_catching_only_type_error as run_tool  # a tool's error raised

    seen = run_check("6.1", run_tool)
    row = next(row for row in audit.audit_rows(COURSE.exercise("6.1")) if "run_tool_raised" in row.scenario)
    shown = workshop_guide.mistake_row(row.instruction, row.scenario, COURSE.texts("6.1"), "general")
    assert seen.hint and seen.hint != COURSE.texts("6.1")["run_tool_raised"].hint
    assert shown.endswith(f"| {workshop_guide.table_cell(seen.hint)} |"), (seen.hint, shown)
