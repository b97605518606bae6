"""The viewer at a splice: after a context compaction (looplab/compaction.py, notebook 8), the agent's next request
does not extend its call before, its start was replaced. The viewer says so at that step: what was folded away,
what took its place, the input tokens before and after; and it compares an agent's call with the agent's call
before, never with the summary call between them."""

import html
import io

import looplab
from looplab import language
from looplab.compaction import ACKNOWLEDGEMENT, SUMMARY_PROMPT, compact
from looplab.history import steps_from_messages, steps_from_traffic
from looplab.loop import SYSTEM_PROMPT, agent_turn
from looplab.scripted import calculator, reply, scripted_client, text
from looplab.tools import TOOLS
from looplab.viewer import pair_labels, step_html, step_text, usage_line
from tests.notebook_code import notebook_question

LINES = ["What is 4823 × 1979?", "What is the capital of France?", "How many people live there?"]
SUMMARY = "The user asked for 4823 × 1979; the calculator gave 9,544,717."


def compacting_conversation():
    """Three typed lines through the course's loop, the history compacted before each one as notebook 8's agent
    does (a budget so tiny that it folds the first two exchanges before the third line), against a scripted model.

    Its traffic: steps 1-3 the agent's calls (a calculator call, then two answers), step 4 the summary call, step 5
    the agent's call that sends the summary, the acknowledgement, the last exchange and the third line."""
    client, _ = scripted_client([
        reply(text("Let me compute that."), calculator("4823 * 1979")),
        reply(text("4823 × 1979 = 9,544,717.")),
        reply(text("The capital of France is Paris.")),
        reply(text(SUMMARY)),  # the summary call
        reply(text("About two million people.")),
    ], call_limit=5)
    messages, said = [], io.StringIO()
    for line in LINES:
        messages = compact(messages, client, said, context_limit=100)
        messages.append({"role": "user", "content": line})
        agent_turn(client, messages)
    assert said.getvalue() == "[compact] folded 4 messages into a summary\n"
    return client, messages


def step_five(viewer) -> str:
    return viewer.static_text().split("== Step 5 of 5")[1]


# --- traffic written by hand: the shapes a compaction does not make ----------------------------------------


def said(words: str, role: str = "user") -> dict:
    return {"role": role, "content": [{"type": "text", "text": words}]}


def call(messages: list, answer: str | None, input_tokens: int = 100, **request) -> dict:
    """One exchange of a client's traffic: the request, and the answer `answer` (None: the API refused it)."""
    response = None if answer is None else {
        "role": "assistant", "content": said(answer, "assistant")["content"], "stop_reason": "end_turn",
        "usage": {"input_tokens": input_tokens, "output_tokens": 5}}
    refused = {"type": "error", "error": {"type": "invalid_request_error", "message": "no"}}
    error = None if answer is not None else refused
    return {"request": {"model": looplab.MODEL, "max_tokens": 100, "messages": messages, **request},
            "response": response, "error": error}


def dropped_head():
    """A loop that drops its two oldest messages instead of summarising them: the third request keeps the last
    exchange word for word, with nothing in place of the first."""
    first, second = said("Q1"), said("Q2")
    return steps_from_traffic([
        call([first], "A1", input_tokens=1200),
        call([first, said("A1", "assistant"), second], "A2", input_tokens=12345),
        call([second, said("A2", "assistant"), said("Q3")], "A3", input_tokens=2345),
    ])


# --- the splice found ---------------------------------------------------------------------------------------


def test_the_agents_call_after_a_compaction_is_a_splice():
    client, _ = compacting_conversation()
    steps = looplab.show_history(client).steps
    assert [step.splice is not None for step in steps] == [False, False, False, False, True]
    spliced = steps[4]
    splice = spliced.splice
    assert splice.since == 2  # step 3: the agent's call before, not the summary call (step 4)
    assert splice.folded == steps[2].messages[:4] and splice.folded_at == 0  # the first exchange, tool call and all
    assert list(splice.summary) == [0, 1] and list(splice.kept) == [2, 3]
    assert spliced.messages[0] == {"role": "user", "content": f"[Conversation summary: {SUMMARY}]"}
    assert spliced.messages[1] == {"role": "assistant", "content": ACKNOWLEDGEMENT}
    last_exchange = steps[2].messages[4:] + [{"role": "assistant", "content": steps[2].response["content"]}]
    assert spliced.messages[2:4] == last_exchange  # the question of step 3 and its answer, word for word


def test_a_second_compaction_folds_the_first_summary():
    answers = ["Paris.", "About two million.", "Summary one.", "The Seine.", "Summary two.", "Yes."]
    client, _ = scripted_client([reply(text(answer)) for answer in answers], call_limit=6)
    messages: list = []
    for line in ["Capital of France?", "How many people?", "Which river?", "Is it long?"]:
        messages = compact(messages, client, io.StringIO(), context_limit=40)
        messages.append({"role": "user", "content": line})
        agent_turn(client, messages)
    steps = looplab.show_history(client).steps  # agent, agent, summary, agent, summary, agent
    assert [step.splice is not None for step in steps] == [False, False, False, True, False, True]
    last = steps[5].splice
    assert last.since == 3 and last.folded[0]["content"] == "[Conversation summary: Summary one.]"
    assert len(last.folded) == 4 and list(last.summary) == [0, 1] and list(last.kept) == [2, 3]
    assert steps[4].compared_with == 2  # the second summary call is compared with the first


def test_the_splice_step_names_the_folded_messages_the_summary_and_the_tokens():
    client, _ = compacting_conversation()
    viewer = looplab.show_history(client)
    before, after = (viewer.steps[index].usage["input_tokens"] for index in (2, 4))
    text = step_five(viewer)
    assert ("-- splice: this request does not extend the one of step 3: the start of its history was replaced\n"
            "--   folded away: 4 message(s) of the request of step 3\n"
            '       [0] user: "What is 4823 × 1979?"\n'
            '       [1] assistant: text "Let me compute that.", tool_use calculator [A]\n'
            "       [2] user: tool_result [A]\n"
            '       [3] assistant: text "4823 × 1979 = 9,544,717."\n'
            '--   in their place: [0] user: "[Conversation summary: The user asked for 4823 × 1979; the …" · '
            f'[1] assistant: "{ACKNOWLEDGEMENT}"\n'
            f"--   input tokens: {before} before the splice → {after} after\n"
            "-- kept word for word: [2] user · [3] assistant\n") in text
    # The summary and the new line are new, shown in full; the kept exchange is the one line above.
    assert "-- messages[0] user  (new)\n" in text and "-- messages[4] user  (new)\n" in text
    assert "-- messages[2]" not in text and "-- messages[3]" not in text
    assert "splice" not in viewer.static_text().split("== Step 5 of 5")[0]  # the steps before: as they were


def test_both_renderings_show_the_splice_folded_away_collapsed():
    client, _ = compacting_conversation()
    viewer = looplab.show_history(client)
    page = viewer.static_html()
    assert page.count('<div class="looplab-splice"') == 1
    splice = page.split('<div class="looplab-splice"')[1].split('<details class="looplab-earlier">')[0]
    assert "<b>splice: this request does not extend the one of step 3" in splice
    assert ('<details class="looplab-folded"><summary>folded away: 4 message(s) of the request of step 3</summary>'
            "<pre>[0] user: &quot;What is 4823 × 1979?&quot;") in splice
    assert "[2] user: tool_result <b style=" in splice  # the id's letter chip, as in every one-line summary
    assert "in their place: [0] user: &quot;[Conversation summary: " in splice
    assert " before the splice → " in splice
    viewer.slider.value = 5  # the widget: the same, one step at a time
    assert '<div class="looplab-splice"' in viewer.body.value
    viewer.slider.value = 4
    assert '<div class="looplab-splice"' not in viewer.body.value


# --- agent call compared with agent call ----------------------------------------------------------------------


def test_the_summary_call_is_not_the_agents_step_before():
    client, _ = compacting_conversation()
    steps = looplab.show_history(client).steps
    summary_call = steps[3]
    assert summary_call.system == SUMMARY_PROMPT and summary_call.tools is None and len(summary_call.messages) == 1
    assert [step.compared_with for step in steps] == [None, 0, 1, None, 2]
    assert "since step" not in usage_line(steps, 3)  # the summary call: the first of its kind, nothing to grow from
    before, after = steps[2].usage["input_tokens"], steps[4].usage["input_tokens"]
    assert f"({after - before:+d} since step 3)" in usage_line(steps, 4)  # not "since step 4", the summary call
    assert steps[4].system == SYSTEM_PROMPT and steps[4].tools == TOOLS


def test_numbers_are_grouped_as_the_language_writes_them():
    steps = dropped_head()
    text = step_text(steps, 2, pair_labels(steps))
    assert "--   input tokens: 12,345 before the splice → 2,345 after\n" in text
    assert "(-10000 since step 2)" in text  # the growth line, as it always wrote it


# --- a splice without a summary, and what is no splice -----------------------------------------------------


def test_a_request_that_drops_messages_without_a_summary_is_a_splice_without_one():
    steps = dropped_head()
    splice = steps[2].splice
    assert splice.since == 1 and splice.folded == [said("Q1"), said("A1", "assistant")]
    assert list(splice.summary) == [] and list(splice.kept) == [0, 1]
    text = step_text(steps, 2, pair_labels(steps))
    assert "--   folded away: 2 message(s) of the request of step 2\n" in text
    assert '       [0] user: text "Q1"\n       [1] assistant: text "A1"\n' in text
    assert "--   in their place: nothing, they were dropped without a summary\n" in text


def test_a_conversation_that_only_grows_has_no_splice(monkeypatch):
    """Notebook 2's loop through the offline recording: each request extends the one before."""
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    client = looplab.client("02_closing_the_loop", quiet=True)
    question = notebook_question("02_closing_the_loop", "WAREHOUSE_QUESTION")
    agent_turn(client, [{"role": "user", "content": question}])
    viewer = looplab.show_history(client)
    assert len(viewer.steps) >= 2 and all(step.splice is None for step in viewer.steps)
    assert [step.compared_with for step in viewer.steps] == [None] + list(range(len(viewer.steps) - 1))
    assert "splice" not in viewer.static_text() and "kept word for word" not in viewer.static_text()
    assert "looplab-splice" not in viewer.static_html()


def test_a_messages_list_has_no_splice():
    """A list is one history, which the viewer cuts at each answer: even a compacted one only grows."""
    _, messages = compacting_conversation()
    assert messages[0]["content"].startswith("[Conversation summary: ")
    viewer = looplab.show_history(messages)
    assert viewer.steps and all(step.splice is None for step in viewer.steps)
    assert all(step.splice is None for step in steps_from_messages(messages))
    assert "splice" not in viewer.static_text()


def test_a_new_conversation_a_retry_and_an_insertion_are_no_splice():
    first, answer, second = said("Q1"), said("A1", "assistant"), said("Q2")
    new_conversation = steps_from_traffic([call([first], "A1"), call([second], "A2")])
    # The request before was refused (no response to keep): sending its last line alone starts afresh.
    retry = steps_from_traffic([call([said("X"), said("Y", "assistant"), first], None), call([first], "A1")])
    inserted = steps_from_traffic([call([first], "A1"), call([said("note"), first, answer, second], "A2")])
    extended = steps_from_traffic([call([first], "A1"), call([first, answer, second], "A2")])
    for steps in (new_conversation, retry, inserted, extended):
        assert [step.splice for step in steps] == [None, None]


def test_a_call_with_other_system_and_tools_is_not_compared_with_the_agents():
    """The rule that skips the summary call: a step is compared with the latest of its kind, the same system
    prompt or the same tools; a learner who adds a system prompt to the same tools is still compared."""
    tools = [{"name": "calculator", "input_schema": {"type": "object"}}]
    steps = steps_from_traffic([call([said("Q1")], "A1", tools=tools),
                                call([said("Q1")], "A1", system="Be brief.", tools=tools),
                                call([said("transcript")], "summary", system="Summarise."),
                                call([said("Q1")], "A1", system="Be brief.", tools=tools)])
    assert [step.compared_with for step in steps] == [None, 0, None, 1]


# --- in French ------------------------------------------------------------------------------------------------


def test_the_splice_is_said_in_french(monkeypatch):
    monkeypatch.setenv(language.OVERRIDE, "fr")
    steps = dropped_head()
    text = step_text(steps, 2, pair_labels(steps))
    assert ("-- raccord\u00a0: cette requête ne prolonge pas celle de l'étape 2\u00a0: le début de son historique "
            "a été remplacé\n") in text
    assert "--   retirés, messages de la requête de l'étape 2\u00a0: 2\n" in text
    assert "--   à leur place\u00a0: rien, ils ont été retirés sans résumé\n" in text
    assert "--   jetons en entrée\u00a0: 12\u202f345 avant le raccord → 2\u202f345 après\n" in text
    assert "-- gardés mot pour mot\u00a0: [0] user · [1] assistant\n" in text
    page = html.unescape(step_html(steps, 2, pair_labels(steps), standalone=False))
    assert "<b>raccord\u00a0: cette requête ne prolonge pas celle de l'étape 2" in page
    assert "12\u202f345 avant le raccord → 2\u202f345 après" in page
