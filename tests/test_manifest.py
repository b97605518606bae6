"""The manifest (looplab/course.py) refuses what would make two things one, and keeps the reference rule.

Exercise ids are what checks, gradebooks and submissions are matched on, and a notebook's stem names
its files and recording: two of one would silently grade one exercise as the other. And each notebook
after the first four keeps its reference code in one module of its own, named in its entry.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from authoring import adding
from looplab.course import COURSE, SHARED_REFERENCES, Course, Exercise, Notebook

# The notebooks that came before the reference rule: they share looplab/loop.py and looplab/tools.py.
BEFORE_THE_RULE = ("01_one_tool_call", "02_closing_the_loop", "03_matching_ids", "04_your_agent")


def toolbox(number: int, *ids: str, stem: str | None = None) -> Notebook:
    """A throwaway notebook; its references module is one no notebook of the course names (never imported)."""
    return Notebook(stem or f"{number:02d}_toolbox", "Toolbox", "looplab.checks.toolbox",
                    exercises=tuple(Exercise(i, "registry", "registry", 1, "looplab.made_up:registry") for i in ids),
                    references="looplab.made_up")


def test_two_exercises_with_one_id_are_refused():
    with pytest.raises(ValueError) as refused:
        Course(COURSE.versions, COURSE.notebooks + (toolbox(COURSE.next_number, "1.1"),))
    assert f"exercise id '1.1' (01_one_tool_call, {COURSE.next_number:02d}_toolbox)" in str(refused.value)


def test_two_notebooks_with_one_stem_or_one_number_are_refused():
    with pytest.raises(ValueError, match=r"notebook stem '04_your_agent' \(04_your_agent, 04_your_agent\)"):
        Course(COURSE.versions, COURSE.notebooks + (toolbox(4, "9.1", stem="04_your_agent"),))
    with pytest.raises(ValueError, match=r"notebook number 4 \(04_your_agent, 04_toolbox\)"):
        Course(COURSE.versions, COURSE.notebooks + (toolbox(4, "9.1"),))


def test_a_new_notebook_takes_the_next_free_number():
    assert COURSE.next_number == max(notebook.number for notebook in COURSE.notebooks) + 1
    course = Course(COURSE.versions, COURSE.notebooks + (toolbox(COURSE.next_number, f"{COURSE.next_number}.1"),))
    assert course.next_number == COURSE.next_number + 1


def test_a_reference_outside_the_notebooks_own_module_is_refused():
    number = COURSE.next_number
    stray = replace(toolbox(number, f"{number}.1"),
                    exercises=(Exercise(f"{number}.1", "run_tool", "run_tool", 1, "looplab.tools:run_tool"),))
    with pytest.raises(ValueError, match=rf"exercise {number}.1's reference 'looplab.tools:run_tool' is not in its "
                                         "own module looplab.made_up"):
        Course(COURSE.versions, COURSE.notebooks + (stray,))
    shared = replace(toolbox(number, f"{number}.1"), references="looplab.loop",
                     exercises=(Exercise(f"{number}.1", "run", "run", 1, "looplab.loop:run"),))
    with pytest.raises(ValueError, match="looplab.loop holds the references of more than one notebook"):
        Course(COURSE.versions, COURSE.notebooks + (shared,))


def test_notebooks_after_the_first_four_name_a_reference_module_of_their_own():
    without = [notebook.stem for notebook in COURSE.notebooks if notebook.references is None]
    assert set(without) <= set(BEFORE_THE_RULE), (
        f"{without}: a new notebook names its reference module (Notebook.references, docs/WRITING_NOTEBOOKS.md)")
    for notebook in COURSE.notebooks:
        modules = {exercise.reference.partition(":")[0] for exercise in notebook.exercises}
        assert modules <= ({notebook.references} if notebook.references else set(SHARED_REFERENCES))


def test_every_notebook_has_what_the_generated_pages_need():
    for notebook in COURSE.notebooks:
        assert notebook.builds, f"{notebook.stem}: say what the learner builds (Notebook.builds, README's table)"
        assert notebook.checks.startswith(adding.CHECKS_PACKAGE)
        if notebook.references:
            assert adding.files_written(notebook)  # every part's path follows from the entry
