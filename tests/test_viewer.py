"""The history viewer: steps, id pairing, flags, the widget's controls, and its static rendering."""

import anthropic
import pytest

import looplab
from looplab.history import steps_from_messages, unmatched_ids

QUESTION = "What is 4823 × 1979?"


def ask(client, messages):
    return client.messages.create(model=looplab.MODEL, max_tokens=1024, tools=looplab.tools.TOOLS, messages=messages)


def round_trip(client):
    """The calculator conversation, built as a learner would, through the real SDK offline."""
    messages = [{"role": "user", "content": QUESTION}]
    reply = ask(client, messages)
    messages.append({"role": "assistant", "content": reply.content})
    tool_use = next(block for block in reply.content if block.type == "tool_use")
    output = looplab.tools.run_tool(tool_use.name, tool_use.input)
    messages.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": tool_use.id, "content": output}]})
    ask(client, messages)
    return messages, tool_use.id


def tool_use_message(*ids):
    return {"role": "assistant", "content": [
        {"type": "tool_use", "id": tool_id, "name": "calculator", "input": {"expression": "1+1"}} for tool_id in ids
    ]}


def results_message(*ids):
    return {"role": "user", "content": [{"type": "tool_result", "tool_use_id": tool_id, "content": "2"} for tool_id in ids]}


def test_one_step_per_model_call_with_outcomes(offline):
    round_trip(offline)
    viewer = looplab.show_history(offline)
    assert len(viewer.steps) == 2
    assert viewer.label.value == "<b>Step 2 of 2: the model answered in words</b>"
    viewer.slider.value = 1
    assert viewer.label.value == "<b>Step 1 of 2: the model asked for calculator</b>"


def test_next_and_previous_move_and_change_the_json(offline):
    round_trip(offline)
    viewer = looplab.show_history(offline)
    viewer.slider.value = 1
    first = viewer.body.value
    assert viewer.previous.disabled and not viewer.next.disabled
    viewer.next.click()
    assert viewer.slider.value == 2 and viewer.body.value != first
    assert viewer.next.disabled
    viewer.next.click()
    assert viewer.slider.value == 2
    viewer.previous.click()
    assert viewer.body.value == first


def test_tool_use_and_its_result_share_a_label_and_colour(offline):
    _, tool_id = round_trip(offline)
    viewer = looplab.show_history(offline)
    html = viewer.body.value
    assert html.count(f'data-pair="A" style="color:#1f77b4;outline:1px solid #1f77b4">"{tool_id}" [A]</span>') == 2
    text = viewer.static_text()
    assert text.count(f'"id": "{tool_id}",   <- [A]') == 2  # asked in step 1, kept in the history in step 2
    assert text.count(f'"tool_use_id": "{tool_id}",   <- [A]') == 1  # answered in step 2


def test_new_messages_are_marked(offline):
    round_trip(offline)
    text = looplab.show_history(offline).static_text()
    step_two = text.split("== Step 2 of 2")[1]
    assert "-- messages[0] user\n" in step_two
    assert "-- messages[1] assistant  (new)" in step_two and "-- messages[2] user  (new)" in step_two


def test_a_viewer_on_a_client_follows_the_loop(offline):
    viewer = looplab.show_history(offline)
    assert viewer.steps == [] and "no model calls yet" in viewer.static_text()
    round_trip(offline)
    assert len(viewer.steps) == 2 and viewer.slider.value == 2


def test_an_api_error_is_a_step_with_the_400_message_and_hint(offline):
    with pytest.raises(anthropic.BadRequestError):
        ask(offline, [{"role": "user", "content": QUESTION}, tool_use_message("toolu_A"), {"role": "user", "content": "so?"}])
    text = looplab.show_history(offline).static_text()
    assert "Step 1 of 1: the API refused the request (400)" in text
    assert "-- error: messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_A." in text
    assert '"toolu_A",   <- [A] no tool_result' in text
    assert "-- hint: " in text


def test_not_recorded_is_a_step_too(offline):
    with pytest.raises(looplab.NotRecordedError):
        ask(offline, [{"role": "user", "content": "Hello?"}])
    assert "Step 1 of 1: not recorded (offline)" in looplab.show_history(offline).static_text()


def test_a_plain_messages_list_flags_dangling_and_orphans():
    messages = [
        {"role": "user", "content": QUESTION},
        tool_use_message("toolu_A", "toolu_B"),
        results_message("toolu_A", "toolu_X"),
    ]
    viewer = looplab.show_history(messages)
    assert [step.outcome for step in viewer.steps] == ["the model asked for calculator ×2", "the API refused the request (400)"]
    last = viewer.steps[-1]
    assert last.dangling == {"toolu_B"} and last.orphans == {"toolu_X"}
    html = viewer.static_html()
    assert 'class="looplab-pair looplab-dangling" data-pair="B"' in html
    assert 'class="looplab-pair looplab-orphan" data-pair="?"' in html
    assert "answers no tool_use in the message before" in viewer.static_text()


def test_a_valid_list_ending_with_the_answer_has_no_error_step():
    messages = [{"role": "user", "content": QUESTION}, tool_use_message("toolu_A"), results_message("toolu_A"),
                {"role": "assistant", "content": [{"type": "text", "text": "2"}]}]
    outcomes = [step.outcome for step in steps_from_messages(messages)]
    assert outcomes == ["the model asked for calculator", "the model answered in words"]


def test_results_in_a_separate_message_count_as_dangling():
    messages = [{"role": "user", "content": "q"}, tool_use_message("toolu_A", "toolu_B"),
                results_message("toolu_A"), results_message("toolu_B")]
    unmatched = unmatched_ids(messages)
    assert unmatched.dangling == {"toolu_B"} and unmatched.orphans == {"toolu_B"}
    assert unmatched.misplaced == {"toolu_B"} and unmatched.pending == set()


def test_a_result_after_text_is_flagged_as_the_api_refuses_it():
    messages = [{"role": "user", "content": QUESTION}, tool_use_message("toolu_A"),
                {"role": "user", "content": [{"type": "text", "text": "Here:"}, *results_message("toolu_A")["content"]]}]
    viewer = looplab.show_history(messages)
    last = viewer.steps[-1]
    assert last.outcome == "the API refused the request (400)"
    assert last.dangling == {"toolu_A"} and last.misplaced == {"toolu_A"} and last.orphans == set()
    text = viewer.static_text()
    assert '"id": "toolu_A",   <- [A] no tool_result' in text
    assert '"tool_use_id": "toolu_A",   <- [A] comes after other content: results must come first' in text


def test_a_request_ending_with_a_call_flags_it_as_pending(offline):
    with pytest.raises(anthropic.BadRequestError):
        ask(offline, [{"role": "user", "content": QUESTION}, tool_use_message("toolu_A")])
    viewer = looplab.show_history(offline)
    step, = viewer.steps
    assert step.pending == {"toolu_A"} and step.dangling == set()
    assert '"id": "toolu_A",   <- [A] no tool_result yet' in viewer.static_text()
    assert 'class="looplab-pair looplab-dangling" data-pair="A"' in viewer.static_html()


def test_sdk_objects_show_as_wire_json(offline):
    messages, _ = round_trip(offline)
    text = looplab.show_history(messages).static_text()
    assert "TextBlock(" not in text and '"type": "tool_use"' in text
    assert '"caller"' not in text  # unset fields are not sent, so not shown


def test_long_strings_fold():
    long_text = "x" * 1000
    viewer = looplab.show_history([{"role": "user", "content": long_text}])
    assert long_text not in viewer.static_text() and "characters)" in viewer.static_text()
    assert "<details><summary>" in viewer.static_html()


def test_static_renderings_are_deterministic(monkeypatch):
    def render():
        monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
        client = looplab.client("calculator", quiet=True)
        round_trip(client)
        bundle = looplab.show_history(client)._repr_mimebundle_()
        return bundle["text/plain"], bundle["text/html"], bundle["application/vnd.jupyter.widget-view+json"]

    first, second = render(), render()
    assert first[:2] == second[:2]
    assert first[2]["model_id"] != second[2]["model_id"]


def test_bad_source_is_refused_clearly():
    with pytest.raises(TypeError, match="looplab.client"):
        looplab.show_history("messages")


def test_nbconvert_html_shows_the_static_rendering():
    """A committed notebook read without a kernel (nbconvert, GitHub) still shows the history."""
    from nbconvert import HTMLExporter

    from looplab.exercises import SOLUTIONS

    page, _ = HTMLExporter().from_filename(str(SOLUTIONS / "01_one_tool_call.ipynb"))
    assert page.count('class="looplab-static"') >= 2
    assert "Step 1 of 1: the model asked for calculator" in page
    assert 'class="looplab-pair looplab-dangling" data-pair="A"' in page
