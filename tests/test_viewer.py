"""The history viewer: steps, id pairing, flags, the widget's controls, and its static rendering."""

import anthropic
import pytest

import looplab
from looplab.history import steps_from_messages, unmatched_ids
from looplab.viewer import PAIR_COLOURS, message_summary
from tests.notebook_code import notebook_question

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
    html = viewer.body.value  # step 2: the call, in the history, and its result
    background, ink = PAIR_COLOURS[0]
    chip = f'<b style="background-color:{background};color:{ink};padding:0 3px;border-radius:3px">[A]</b>'
    assert html.count(f'<span class="looplab-pair" data-pair="A">"{tool_id}" {chip}</span>') == 2
    text = viewer.static_text()
    assert text.count(f'"id": "{tool_id}",   <- [A]') == 1  # asked in step 1...
    assert "-- messages[1] assistant  (new): the response of step 1, sent back as it came: " in text
    assert "tool_use calculator [A]\n" in text  # ...sent back in step 2 (one line: step 1 showed it)...
    assert text.count(f'"tool_use_id": "{tool_id}",   <- [A]') == 1  # ...and answered in step 2


def test_new_messages_are_marked(offline):
    round_trip(offline)
    text = looplab.show_history(offline).static_text()
    step_two = text.split("== Step 2 of 2")[1]
    assert "-- sent before, unchanged: [0] user\n" in step_two
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
    assert ("-- error: ⚠ messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: "
            "toolu_A [A].") in text  # the 400 names the id, with its letter
    assert '"toolu_A",   <- [A] ⚠ no tool_result' in text
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
    assert '"id": "toolu_A",   <- [A] ⚠ no tool_result' in text
    assert '"tool_use_id": "toolu_A",   <- [A] ⚠ comes after other content: results must come first' in text
    assert 'class="looplab-pair looplab-orphan" data-pair="A"' in viewer.static_html()


def test_a_whole_message_appended_is_shown_refused(offline):
    """The SDK's whole Message in the list: the next request is refused as the API refuses it."""
    messages = [{"role": "user", "content": QUESTION}]
    reply = ask(offline, messages)
    messages.append(reply)  # the mistake: id, model, usage... go back inside the message
    tool_use = next(block for block in reply.content if block.type == "tool_use")
    messages.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": tool_use.id, "content": "9544717"}]})
    viewer = looplab.show_history(messages)
    last = viewer.steps[-1]
    assert last.outcome == "the API refused the request (400)"
    assert last.error["error"]["message"] == "messages.1.id: Extra inputs are not permitted"
    assert "reply.content" in last.hint
    assert "messages.1.id: Extra inputs are not permitted" in viewer.static_text()


def test_a_tool_with_an_invalid_schema_is_shown_refused(offline):
    tool = {**looplab.tools.TOOLS[0], "input_schema": {**looplab.tools.TOOLS[0]["input_schema"], "required": "expression"}}
    with pytest.raises(anthropic.BadRequestError):
        offline.messages.create(model=looplab.MODEL, max_tokens=1024, tools=[tool],
                                messages=[{"role": "user", "content": QUESTION}])
    step, = looplab.show_history(offline).steps
    assert step.outcome == "the API refused the request (400)"
    assert step.error["error"]["message"].startswith("tools.0.custom.input_schema: JSON schema is invalid.")


def test_a_request_ending_with_a_call_flags_it_as_pending(offline):
    with pytest.raises(anthropic.BadRequestError):
        ask(offline, [{"role": "user", "content": QUESTION}, tool_use_message("toolu_A")])
    viewer = looplab.show_history(offline)
    step, = viewer.steps
    assert step.pending == {"toolu_A"} and step.dangling == set()
    assert '"id": "toolu_A",   <- [A] ⚠ no tool_result yet' in viewer.static_text()
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
        viewer = looplab.show_history(client)
        static, widget = viewer.static_bundle(), viewer._repr_mimebundle_()
        return static["text/plain"], static["text/html"], widget["application/vnd.jupyter.widget-view+json"]

    first, second = render(), render()
    assert first[:2] == second[:2]
    assert first[2]["model_id"] != second[2]["model_id"]


def test_bad_source_is_refused_clearly():
    with pytest.raises(TypeError, match="looplab.client"):
        looplab.show_history("messages")


def test_nbconvert_html_shows_the_static_rendering():
    """A committed notebook read without a kernel (nbconvert, GitHub) still shows the history."""
    from nbconvert import HTMLExporter

    from authoring.learner_notebooks import SOLUTIONS

    page, _ = HTMLExporter().from_filename(str(SOLUTIONS / "01_one_tool_call.ipynb"))
    assert page.count('class="looplab-static"') >= 2
    assert "Step 1 of 1: the model asked for calculator" in page
    assert 'class="looplab-pair looplab-dangling" data-pair="A"' in page


# --- pending calls: the history of a loop that stopped before answering ----------------------------


def capped_too_early(client, messages, max_iterations):
    """Exercise 2.3's typical bug: at the cap it raises BEFORE answering the last reply's calls."""
    for _ in range(max_iterations):
        reply = client.messages.create(model=looplab.MODEL, max_tokens=1024, tools=looplab.tools.TOOLS, messages=messages)
        messages.append({"role": "assistant", "content": reply.content})
        if _ == max_iterations - 1:
            raise RuntimeError("cap reached")
        messages.append({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": block.id, "content": "2"} for block in reply.content if block.type == "tool_use"
        ]})


def test_a_history_ending_with_unanswered_calls_marks_them_pending():
    from looplab.scripted import never_stops, scripted_client

    client, _ = scripted_client(never_stops())
    messages = [{"role": "user", "content": "What is 1 + 1?"}]
    with pytest.raises(RuntimeError):
        capped_too_early(client, messages, max_iterations=2)
    viewer = looplab.show_history(messages)
    last = viewer.steps[-1]
    assert last.outcome == "the model asked for calculator: not answered yet"
    last_id = messages[-1]["content"][-1].id
    assert last.response_pending == {last_id} and viewer.steps[0].response_pending == set()
    assert f'"id": "{last_id}",   <- [B] ○ pending: no tool_result yet' in viewer.static_text()
    pending = 'class="looplab-pair looplab-pending" data-pair="B"'
    assert pending in viewer.static_html() and pending in viewer.body.value  # the static rendering and the widget
    assert viewer.label.value == "<b>Step 2 of 2: the model asked for calculator: not answered yet</b>"


def test_the_last_response_of_a_client_is_pending_until_a_request_answers_it(offline):
    reply = ask(offline, [{"role": "user", "content": QUESTION}])
    tool_id = next(block.id for block in reply.content if block.type == "tool_use")
    viewer = looplab.show_history(offline)
    assert viewer.steps[-1].response_pending == {tool_id}
    round_trip(offline)  # a new conversation: the first call stays unanswered, but is no longer the last
    viewer = looplab.show_history(offline)
    assert [step.response_pending for step in viewer.steps] == [set(), set(), set()]


# --- the whole request: system and tools, folded; usage growing --------------------------------------


def agent_client_history():
    """Notebook 2's cinema question through looplab's loop: two calls, with a system prompt and tools."""
    client = looplab.client("02_closing_the_loop", quiet=True)
    looplab.loop.agent_turn(client, [{"role": "user", "content": notebook_question("02_closing_the_loop", "CINEMA_QUESTION")}])
    return looplab.show_history(client)


def test_each_request_shows_its_system_and_tools_folded_and_each_response_its_usage(monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    viewer = agent_client_history()
    first, second = viewer.static_text().split("== Step 2 of 2")
    assert '-- system: "You are a helpful assistant. For any arithmetic, use the ca…" (143 characters)' in first
    assert "-- tools: calculator (1 definition(s), " in first
    assert "-- system (143 characters) and tools (1 definition(s), " in second and ": sent again, unchanged" in second
    usage = [step.usage["input_tokens"] for step in viewer.steps]
    assert usage[1] > usage[0]  # the history is resent: every call costs more than the one before
    assert f"-- response · usage: {usage[0]} input tokens, " in first
    assert f"-- response · usage: {usage[1]} input tokens (+{usage[1] - usage[0]} since step 1), " in second
    # The widget shows one step at a time: each has its system and tools, folded (a <details> not open).
    for number in (1, 2):
        viewer.slider.value = number
        body = viewer.body.value
        assert '<details class="looplab-system"><summary><b>system</b>: ' in body
        assert '<details class="looplab-tools"><summary><b>tools</b>: calculator' in body
        assert "For any arithmetic, use the calculator tool instead of working it out yourself" in body
        assert "<details open" not in body
        assert "input tokens" in body
    # The static rendering folds them too, and only spells them out where they change.
    html = viewer.static_html()
    assert html.count('<details class="looplab-system">') == 1 and html.count('<details class="looplab-tools">') == 1
    assert html.count('<div class="looplab-resent">system (143 characters) and tools') == 1


def test_a_messages_list_has_no_system_tools_or_usage_to_show():
    text = looplab.show_history([{"role": "user", "content": QUESTION}, tool_use_message("toolu_A")]).static_text()
    assert "-- system" not in text and "-- tools" not in text and "usage:" not in text


# --- readable: folding, the palette, the legend --------------------------------------------------------


def test_the_static_rendering_shows_what_is_new_and_folds_what_was_sent_before(offline):
    messages, tool_id = round_trip(offline)
    with pytest.raises(looplab.NotRecordedError):  # not recorded: a third step all the same
        ask(offline, messages + [{"role": "assistant", "content": "32366171"}, {"role": "user", "content": "Thanks!"}])
    viewer = looplab.show_history(offline)
    step_three = viewer.static_text().split("== Step 3 of 3")[1]
    assert "-- sent before, unchanged: [0] user · [1] assistant [A] · [2] user [A]\n" in step_three
    assert tool_id not in step_three  # the JSON of what was sent before is not repeated
    assert viewer.static_html().count('<details class="looplab-earlier">') == 2  # steps 2 and 3
    viewer.slider.value = 3
    assert tool_id in viewer.body.value and '<details class="looplab-earlier">' in viewer.body.value  # folded, whole


def test_a_flagged_message_sent_before_is_not_folded():
    messages = [{"role": "user", "content": QUESTION}, tool_use_message("toolu_A"), {"role": "user", "content": "so?"}]
    text = looplab.show_history(messages).static_text().split("== Step 2 of 2")[1]
    assert '"id": "toolu_A",   <- [A] ⚠ no tool_result' in text  # in full: the flag shows, just above the 400
    assert text.index('"toolu_A",   <- [A] ⚠') < text.index("-- error: ⚠") < text.index("toolu_A [A]")
    # A message the step before sent too, now flagged: in full, not folded.
    from looplab.history import steps_from_traffic
    from looplab.viewer import step_text

    answered = {"request": {"messages": messages[:2] + [results_message("toolu_A")]}, "response": None, "error": None}
    broken = {"request": {"messages": messages}, "response": None, "error": None}
    steps = steps_from_traffic([answered, broken])
    assert steps[1].previous_length == 2 and steps[1].dangling == {"toolu_A"}
    text = step_text(steps, 1, {"toolu_A": "A"})
    assert "-- sent before, unchanged: [0] user\n-- messages[1] assistant\n" in text
    assert '"id": "toolu_A",   <- [A] ⚠ no tool_result' in text


def test_pair_colours_are_colour_blind_safe_and_never_red():
    import colorsys

    from looplab.viewer import FLAG_COLOUR, pair_colours

    def hue(colour):
        red, green, blue = (int(colour[i:i + 2], 16) / 255 for i in (1, 3, 5))
        return colorsys.rgb_to_hsv(red, green, blue)[0] * 360

    okabe_ito = {"#E69F00", "#56B4E9", "#009E73", "#F0E442", "#0072B2", "#CC79A7"}  # without vermillion #D55E00
    assert {background for background, _ in PAIR_COLOURS} == okabe_ito
    flag_hue = hue(FLAG_COLOUR)
    for background, _ in PAIR_COLOURS:
        assert min(abs(hue(background) - flag_hue), 360 - abs(hue(background) - flag_hue)) >= 30, background
    assert pair_colours("A") == PAIR_COLOURS[0] and pair_colours("G") == PAIR_COLOURS[0]  # the letter tells them apart
    assert pair_colours("AA") == PAIR_COLOURS[26 % len(PAIR_COLOURS)]


def test_a_flag_says_what_is_wrong_in_words_and_a_symbol_not_only_in_colour():
    viewer = looplab.show_history([{"role": "user", "content": QUESTION}, tool_use_message("toolu_A", "toolu_B"),
                                   results_message("toolu_A", "toolu_X")])
    html = viewer.static_html()
    flags = html.split('class="looplab-pair looplab-')[1:]
    assert len(flags) >= 2
    for flag in (part for part in flags if part.startswith(("dangling", "orphan"))):
        assert "⚠" in flag.split("</span>")[0]
    legend = "History viewer: 2 step(s). [A] [B]...: a tool_use id and the tool_result answering it share a letter"
    assert viewer.static_text().count(legend) == 1 and html.count(legend) == 1
    assert "⚠ the API refuses this · ○ pending: no tool_result yet" in viewer.legend.value


def test_the_widget_keeps_one_height_for_every_step(offline):
    round_trip(offline)
    viewer = looplab.show_history(offline)
    height = viewer.body.layout.height
    assert height.endswith("px") and viewer.body.layout.overflow == "auto"
    viewer.slider.value = 1
    assert viewer.body.layout.height == height


# --- where no widget runs: two outputs -----------------------------------------------------------------


def test_displaying_the_viewer_makes_the_widget_and_the_static_rendering(offline, monkeypatch):
    from looplab import viewer as viewer_module

    shown = []
    monkeypatch.setattr(viewer_module, "display", lambda data, raw: shown.append(data))
    round_trip(offline)
    viewer = looplab.show_history(offline)
    viewer._ipython_display_()
    widget, static = shown
    assert "application/vnd.jupyter.widget-view+json" in widget and "text/html" not in widget
    assert widget["text/plain"] == "HistoryViewer(2 step(s))"
    assert static == viewer.static_bundle() and "Step 2 of 2" in static["text/plain"]
    assert repr(viewer) == viewer.static_text()  # a plain Python prompt shows every step too
    assert '<div class="looplab-static">' in static["text/html"]


def test_a_failed_call_is_marked_in_words_and_not_as_a_flag():
    """A tool_result with is_error true (notebook 6): its id says the call failed; the API accepts it, so no ⚠."""
    failed = {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "toolu_A", "content": "Error: ZeroDivisionError", "is_error": True},
        {"type": "tool_result", "tool_use_id": "toolu_B", "content": "2"}]}
    viewer = looplab.show_history([{"role": "user", "content": QUESTION}, tool_use_message("toolu_A", "toolu_B"),
                                   failed, {"role": "assistant", "content": "Done."}])
    text, html = viewer.static_text(), viewer.static_html()
    assert '"tool_use_id": "toolu_A",   <- [A] ✗ failed call: is_error' in text
    assert '"tool_use_id": "toolu_B",   <- [B]\n' in text
    assert html.count('class="looplab-pair looplab-failed"') == 1
    assert "⚠" not in html.split('class="looplab-pair looplab-failed"')[1].split("</span>")[0]
    summary = message_summary(failed)  # the one line of a message sent before
    assert "".join(part if isinstance(part, str) else "[id]" for part in summary) == \
        "user: tool_result [id] ✗ failed, tool_result [id]"
    assert "✗ failed call (is_error)" in viewer.legend.value
