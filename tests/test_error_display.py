"""API errors and NotRecordedError read in a few lines in a notebook, and keep their ename and evalue.

The kernel-level test runs a tiny notebook with nbclient, as the solutions are run, and reads the
error outputs a learner would see; the others call the rendering directly, outside IPython.
"""

import re

import anthropic
import httpx2
import nbformat
import pytest
from nbclient import NotebookClient

import looplab
from looplab.error_display import brief_traceback, show_api_errors_briefly

QUESTION = "What is 4823 × 1979?"
FOLLOW_UP = "So what is the answer?"
MOST_LINES = 6  # the error, the hint, and a few of the learner's own lines
API_MESSAGE = "`tool_use` ids were found without `tool_result` blocks immediately after"

SETUP = """\
import looplab
from looplab import MODEL
from looplab.tools import TOOLS
client = looplab.client("calculator")

def ask(messages):
    return client.messages.create(model=MODEL, max_tokens=1024, tools=TOOLS, messages=messages)
"""
DELIBERATE_400 = f"""\
reply = ask([{{"role": "user", "content": "{QUESTION}"}}])
messages = [
    {{"role": "user", "content": "{QUESTION}"}},
    {{"role": "assistant", "content": reply.content}},
    {{"role": "user", "content": "{FOLLOW_UP}"}},
]
ask(messages)
"""
NOT_RECORDED = 'ask([{"role": "user", "content": "What is 2 + 2?"}])'
OTHER_ERROR = "1 / 0"


def plain(lines: list[str]) -> list[str]:
    """The traceback's lines without IPython's colours."""
    return re.sub(r"\x1b\[[0-9;]*m", "", "\n".join(lines)).splitlines()


@pytest.fixture(scope="module")
def outputs():
    """The outputs of each cell of a notebook that shows a deliberate 400, a question not recorded, a ZeroDivisionError."""
    with pytest.MonkeyPatch.context() as patch:
        patch.delenv("ANTHROPIC_API_KEY", raising=False)
        patch.setenv("LOOPLAB_MODE", "offline")
        notebook = nbformat.v4.new_notebook(cells=[
            nbformat.v4.new_code_cell(source) for source in (SETUP, DELIBERATE_400, NOT_RECORDED, OTHER_ERROR)])
        NotebookClient(notebook, timeout=120, kernel_name="python3", allow_errors=True).execute()
    return [cell.outputs for cell in notebook.cells]


def error_of(cell_outputs):
    (error,) = [output for output in cell_outputs if output.output_type == "error"]
    return error


def test_a_deliberate_400_shows_the_apis_message_in_a_few_lines(outputs):
    error = error_of(outputs[1])
    lines = plain(error.traceback)
    assert len(lines) <= MOST_LINES, "\n".join(lines)
    assert lines[0].startswith("BadRequestError (400): messages.1: " + API_MESSAGE)
    assert lines[1].startswith("looplab hint: Message 1 (assistant) called toolu_")
    assert lines[2:] == ["  line 7 of the cell: ask(messages)",
                         "  line 7, in ask: return client.messages.create(model=MODEL, max_tokens=1024, tools=TOOLS, messages=messages)"]
    assert not any("site-packages" in line or "_base_client" in line for line in lines)


def test_a_deliberate_400_keeps_its_ename_and_evalue(outputs, offline):
    """The brief lines change what is shown, never the error: its evalue is the SDK's own `str()` of the same 400,
    raised here, whatever the pinned SDK prints (2.17.0 changed that: docs/MAINTAINING.md)."""
    error = error_of(outputs[1])
    assert error.ename == "BadRequestError"
    assert error.evalue == str(the_deliberate_400_here(offline))


def the_deliberate_400_here(client) -> anthropic.BadRequestError:
    """DELIBERATE_400's request sent from this process: the same bytes, so the same request id and the same error."""
    reply = client.messages.create(model=looplab.MODEL, max_tokens=1024, tools=looplab.tools.TOOLS,
                                   messages=[{"role": "user", "content": QUESTION}])
    with pytest.raises(anthropic.BadRequestError) as caught:
        client.messages.create(model=looplab.MODEL, max_tokens=1024, tools=looplab.tools.TOOLS, messages=[
            {"role": "user", "content": QUESTION},
            {"role": "assistant", "content": reply.content},
            {"role": "user", "content": FOLLOW_UP},
        ])
    assert caught.value.api_message.startswith("messages.1: " + API_MESSAGE)
    return caught.value


def test_the_hint_shows_once_in_the_error_not_again_on_stderr(outputs):
    streams = "".join(output.get("text", "") for output in outputs[1] if output.output_type == "stream")
    assert "looplab hint" not in streams


def test_not_recorded_shows_its_message_without_transport_frames(outputs):
    error = error_of(outputs[2])
    assert error.ename == "NotRecordedError"
    lines = plain(error.traceback)
    message_lines = len(error.evalue.splitlines())
    assert len(lines) <= message_lines + 2, "\n".join(lines)
    assert lines[0] == "NotRecordedError: " + error.evalue.splitlines()[0]
    assert "ANTHROPIC_API_KEY" in "\n".join(lines)
    assert "ask one of the recorded questions" in "\n".join(lines)  # learner words, no maintainer's route
    assert not any("scripts/" in line or "author_recordings" in line for line in lines)
    assert lines[-2:] == ["  line 1 of the cell: " + NOT_RECORDED,
                          "  line 7, in ask: return client.messages.create(model=MODEL, max_tokens=1024, tools=TOOLS, messages=messages)"]
    assert not any("transport.py" in line or "site-packages" in line for line in lines)


def test_other_errors_keep_ipythons_traceback(outputs):
    error = error_of(outputs[3])
    assert error.ename == "ZeroDivisionError"
    assert any("Traceback" in line for line in plain(error.traceback))


# --- outside IPython -------------------------------------------------------------------------------


def test_outside_ipython_nothing_is_registered_and_hints_still_print(offline, capsys):
    assert show_api_errors_briefly() is False
    reply = offline.messages.create(model=looplab.MODEL, max_tokens=1024, tools=looplab.tools.TOOLS,
                                    messages=[{"role": "user", "content": QUESTION}])
    with pytest.raises(anthropic.BadRequestError):
        offline.messages.create(model=looplab.MODEL, max_tokens=1024, tools=looplab.tools.TOOLS, messages=[
            {"role": "user", "content": QUESTION}, {"role": "assistant", "content": reply.content}])
    assert "looplab hint:" in capsys.readouterr().err


def test_brief_traceback_of_a_400_the_rules_do_not_know_has_no_hint():
    request = httpx2.Request("POST", "https://api.anthropic.com/v1/messages", json={})
    response = httpx2.Response(
        529, request=request, json={"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})
    try:
        raise anthropic.OverloadedError("Error code: 529", response=response, body=response.json())
    except anthropic.APIStatusError as error:
        lines = brief_traceback(error)
    assert lines[0] == "OverloadedError (529): Overloaded"
    assert len(lines) == 2 and lines[1].startswith("  line ") and "raise anthropic.OverloadedError" in lines[1]


def test_not_recorded_error_renders_itself(offline):
    with pytest.raises(looplab.NotRecordedError) as caught:
        offline.messages.create(model=looplab.MODEL, max_tokens=10, messages=[{"role": "user", "content": "Hi"}])
    lines = caught.value._render_traceback_()
    assert lines[0].startswith("NotRecordedError: This conversation is not recorded in the recording 'calculator'")
    assert any("offline.messages.create" in line for line in lines)
    assert not any("transport.py" in line for line in lines)
