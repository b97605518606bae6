"""Where the grader writes, without a kernel: feedback folders, their outputs' size, the gradebook's `file`."""

from __future__ import annotations

import inspect
import os
import re
from pathlib import Path

import nbformat
from hypothesis import given
from hypothesis import strategies as st

from looplab import grade
from authoring.learner_notebooks import SOLUTIONS
from looplab.grade.exports.feedback import feedback_folder
from looplab.grade.kernels.outputs import OUTPUT_LIMIT, capped_outputs, output_size
from tests.test_grade import NB1, SUBMISSIONS


def test_names_that_make_the_same_safe_name_get_their_own_feedback_folders():
    assert feedback_folder("O_Brien") == "O_Brien"
    assert re.fullmatch(r"O_Brien~[0-9a-f]{8}", feedback_folder("O Brien"))
    assert feedback_folder("O Brien") != feedback_folder("O_Brien") != feedback_folder("O'Brien")
    assert feedback_folder("O Brien") == feedback_folder("O Brien")  # the same folder on every run
    for name in ("..", ".", ".hidden", "", "a/../../b"):
        assert not feedback_folder(name).startswith(".") and "/" not in feedback_folder(name)


@given(st.text(max_size=12), st.text(max_size=12))
def test_two_learners_never_share_a_feedback_folder(one, other):
    if one != other:
        assert feedback_folder(one) != feedback_folder(other)
    assert re.fullmatch(r"[\w.~-]+", feedback_folder(one)) and not feedback_folder(one).startswith(".")


def feedback_for(tmp_path, learner: str, taken: dict) -> Path:
    course = grade.load_course()
    submission = grade.Submission(SUBMISSIONS / "complete" / f"{NB1}.ipynb", learner)
    notebook, identified = grade.read_submission(submission, course)
    plan = grade.plan_run(submission, notebook, identified)
    return grade.write_feedback(tmp_path, plan, grade.Outcome(), [], taken)


def test_each_learner_gets_their_own_feedback_notebook(tmp_path):
    taken: dict = {}
    written = [feedback_for(tmp_path, learner, taken) for learner in ("O Brien", "O_Brien", "o_brien")]
    assert len(set(written)) == 3 and all(path.is_file() for path in written)
    assert written[0].parent.name.startswith("O_Brien~") and written[1].parent.name == "O_Brien"
    assert written[2].name == f"{NB1}-2.ipynb"  # o_brien/ is O_Brien/ on a disk that ignores case


def test_a_cell_that_printed_for_seconds_keeps_its_head_and_tail(tmp_path):
    printed = "".join(f"line {n}\n" for n in range(2_000_000))  # about 20 MB, as a loop printing for seconds
    outputs = [nbformat.v4.new_output("stream", name="stdout", text="before\n"),
               nbformat.v4.new_output("stream", name="stdout", text=printed),
               nbformat.v4.new_output("execute_result", data={"text/plain": "'done'"}, execution_count=3)]
    kept = capped_outputs(outputs)
    assert sum(output_size(output) for output in kept) < OUTPUT_LIMIT + 500
    text = "".join(output.get("text", "") for output in kept)
    assert text.startswith("before\nline 0\nline 1\n") and text.endswith("line 1999999\n")
    cut = sum(map(output_size, outputs)) - sum(output_size(o) for o in kept if "cut by the looplab grader" not in
                                               o.get("text", ""))
    assert f"[... {cut:,} characters of this cell's output cut by the looplab grader" in text
    assert kept[-1] == outputs[-1]  # the result, small, is kept whole
    for output in kept:
        nbformat.validate(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(outputs=[output])]))


def test_outputs_under_the_limit_are_kept_as_they_are():
    outputs = [nbformat.v4.new_output("stream", name="stdout", text="x" * 1000),
               nbformat.v4.new_output("display_data", data={"image/png": "A" * 5000})]
    assert capped_outputs(outputs) is outputs


def test_a_feedback_notebook_is_capped_cell_by_cell(tmp_path):
    course = grade.load_course()
    submission = grade.Submission(SUBMISSIONS / "complete" / f"{NB1}.ipynb", "alice")
    notebook, identified = grade.read_submission(submission, course)
    plan = grade.plan_run(submission, notebook, identified)
    index = next(i for i, cell in enumerate(plan.notebook.cells) if cell.cell_type == "code" and
                 not isinstance(plan.origin[i], grade.GraderCell))
    plan.notebook.cells[index].outputs = [nbformat.v4.new_output("stream", name="stdout", text="y" * (5 * OUTPUT_LIMIT))]
    written = nbformat.read(grade.write_feedback(tmp_path, plan, grade.Outcome(), [], {}), as_version=4)
    nbformat.validate(written)
    assert max(sum(map(output_size, cell.outputs)) for cell in written.cells if cell.cell_type == "code") \
        < OUTPUT_LIMIT + 500


def test_the_gradebooks_file_starts_at_the_folder_given_wherever_the_grader_runs(tmp_path, monkeypatch):
    stems = [path.stem for path in sorted(SOLUTIONS.glob("*.ipynb"))]
    expected = f"submissions/partial/{NB1}.ipynb"
    for cwd, given in [(SUBMISSIONS.parent, "submissions"), (tmp_path, str(SUBMISSIONS)),
                       (SUBMISSIONS / "partial", ".."), (SUBMISSIONS, os.curdir)]:
        monkeypatch.chdir(cwd)
        files = {s.file for s in grade.collect([given], stems)}
        assert expected in files, (cwd, given)
    monkeypatch.chdir(tmp_path)
    [alone] = grade.collect([str(SUBMISSIONS / "partial" / f"{NB1}.ipynb")], stems)
    assert alone.file == f"partial/{NB1}.ipynb"
    assert grade.collect([str(SUBMISSIONS)], stems)[0].file.count("/") >= 1


# --- outputs kept as they stream in (outputs.py) ---------------------------------------------------------------


def stream(text: str, name: str = "stdout"):
    return nbformat.v4.new_output("stream", name=name, text=text)


def test_a_cell_printing_for_seconds_is_kept_capped_while_it_prints():
    """300 MB sent 100 KB at a time: the grader never holds more than the cell's limit (and its note)."""
    from looplab.grade.kernels.outputs import NotebookOutputs

    kept = NotebookOutputs()
    line = "x" * 99_999 + "\n"
    for number in range(3_000):
        shown = kept.add(3, stream(f"{number:05d}" + line[5:]))
        assert sum(map(output_size, shown)) < OUTPUT_LIMIT + 500
    text = "".join(output["text"] for output in shown)
    assert text.startswith("00000xxx") and text.endswith("x\n") and "02999" in text[-OUTPUT_LIMIT // 2 - 1:]
    assert f"[... {3_000 * 100_000 - OUTPUT_LIMIT:,} characters of this cell's output cut by the looplab grader" in text
    assert capped_outputs(shown) == shown  # a list capped while streaming is not cut again in the feedback


def test_the_streamed_cap_and_the_feedback_s_cap_keep_the_same():
    from looplab.grade.kernels.outputs import CellOutputs

    outputs = [stream("before\n"), stream("".join(f"line {n}\n" for n in range(100_000))),
               nbformat.v4.new_output("display_data", data={"image/png": "A" * 5000}), stream("after\n", "stderr")]
    streamed = CellOutputs()
    for output in outputs:
        streamed.add(nbformat.from_dict(output))
    assert streamed.outputs() == capped_outputs(outputs)
    assert capped_outputs(capped_outputs(outputs)) == capped_outputs(outputs)


def test_a_notebook_keeps_its_outputs_within_its_own_limit():
    from looplab.grade.kernels.outputs import NOTEBOOK_OUTPUT_LIMIT, NotebookOutputs

    kept = NotebookOutputs()
    for cell in range(2 * NOTEBOOK_OUTPUT_LIMIT // OUTPUT_LIMIT):
        kept.add(cell, stream("y" * (2 * OUTPUT_LIMIT)))
    assert sum(cell.size for cell in kept.cells.values()) <= NOTEBOOK_OUTPUT_LIMIT
    assert kept.cells[max(kept.cells)].outputs()[0]["text"].startswith("\n[... ")  # past the limit: only the note
    shown = kept.add(99, nbformat.v4.new_output("display_data", data={"application/json": {"text": "{}"}}))
    assert shown[0]["text"].startswith("\n[... ")  # any output, a grader's cell's too: the grader reads none of them


def test_the_capped_client_wraps_nbclient_s_public_output_hooks():
    """The adapter relies on these public parts of nbclient's NotebookClient (a new nbclient that renames one
    fails here, not in a grading run)."""
    from nbclient import NotebookClient

    from looplab.grade.kernels.outputs import capped_client

    for name in ("output", "clear_output", "clear_display_id_mapping", "reset_execution_trackers"):
        assert callable(getattr(NotebookClient, name)), name
    assert "self.clear_before_next_output" in inspect.getsource(NotebookClient.output)  # a clear_output(wait=True)
    client = capped_client()(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("print()")]))
    client.clear_before_next_output = False  # as nbclient sets it when a cell starts
    outs = []
    message = {"msg_type": "stream", "header": {"msg_type": "stream"}, "parent_header": {"msg_id": "1"},
               "content": {"name": "stdout", "text": "z" * 100_000}}
    for _ in range(10):
        client.output(outs, message, None, 0)
    assert sum(map(output_size, outs)) < OUTPUT_LIMIT + 500 and "cut by the looplab grader" in outs[1]["text"]


# --- the grade cell, escaped ---------------------------------------------------------------------------------


def test_a_learner_s_name_and_error_texts_cannot_put_html_in_the_feedback(tmp_path):
    """Converted with nbconvert, as an instructor would to read it: no tag of the learner's survives."""
    from nbconvert import HTMLExporter

    course = grade.load_course()
    name = "<img src=x onerror=alert(1)>"
    submission = grade.Submission(SUBMISSIONS / "complete" / f"{NB1}.ipynb", name)
    notebook, identified = grade.read_submission(submission, course)
    plan = grade.plan_run(submission, notebook, identified)
    rows = [grade.Row(name, NB1, "1.1", 0, 2, "not solved", "<script>alert(2)</script> | [x](javascript:alert(3))",
                      submission.file, hint="<b onmouseover=alert(4)>$x$</b>")]
    written = grade.write_feedback(tmp_path, plan, grade.Outcome(), rows, {})
    page, _ = HTMLExporter().from_filename(str(written))
    grade_cell = page[page.index("Grade (looplab grader)"):]
    for tag in ("<img", "<script", "<b ", "href=\"javascript"):
        assert tag not in grade_cell, tag
    assert "&lt;img src=x onerror=alert(1)&gt;" in grade_cell  # shown as written
    assert "&lt;script&gt;alert(2)&lt;/script&gt;" in grade_cell
