"""The viewer with a subagent (notebook 9): a tool whose function runs another agent's turn, with its own system
prompt, its own tools and a history that starts with the question alone. One client carries both agents, so in its
traffic the subagent's calls sit between the parent's call that asked for the tool and the parent's call that sends
the answer back. The viewer says which agent made each step, and links the call, the subagent's steps and the
answer both ways, in the text and the HTML renderings; nothing changes for a conversation without a subagent."""

import html

import pytest

import looplab
from looplab import language
from looplab.history import steps_from_messages, steps_from_traffic
from looplab.scripted import calculator, reply, scripted_client, text, tool_use
from looplab.tools import run_tool
from looplab.viewer import pair_labels, step_html, step_text, usage_line
from tests.test_viewer_splice import compacting_conversation
from tests.notebook_code import notebook_question

PARENT_PROMPT = "You answer Halden Robotics' customers: the calculator for sums, research for the company."
RESEARCHER_PROMPT = "You research one question with search and answer it in one paragraph, for another agent."
LINES = ["How long is my R2 under warranty?", "What is 4823 × 1979?"]
QUESTION = "How long is the warranty of the Halden R2?"  # what the parent hands the subagent
FINDING = "The Halden R2 is under warranty for two years (support handbook, section 4)."
ANSWER = "Your R2 is under warranty for two years."


def schema(name: str, parameter: str) -> dict:
    return {"name": name, "description": f"The {name} tool.",
            "input_schema": {"type": "object", "properties": {parameter: {"type": "string"}}, "required": [parameter]}}


def search(query: str) -> str:
    return "support handbook, section 4: two years of warranty" if "warranty" in query else "no match"


PARENT_TOOLS = [schema("calculator", "expression"), schema("research", "question")]
RESEARCHER_TOOLS = [schema("search", "query")]


def agent_turn(client, system: str, tools: list, functions: dict, messages: list, max_iterations: int = 10) -> str:
    """looplab/subagent.py's agent_turn, in short: one agent's turn, with the prompt, tools and history it is handed."""
    for _ in range(max_iterations):
        response = client.messages.create(model=looplab.MODEL, max_tokens=1024, system=system, tools=tools,
                                          messages=messages)
        messages.append({"role": "assistant", "content": response.content})
        if response.stop_reason != "tool_use":
            return "".join(block.text for block in response.content if block.type == "text")
        messages.append({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": block.id, "content": functions[block.name](**block.input)}
            for block in response.content if block.type == "tool_use"]})
    raise RuntimeError(f"still asking for tools after {max_iterations} calls")


def research(client, question: str, max_iterations: int = 10) -> str:
    """The subagent: its own prompt and tool, a history holding the question alone; only its answer leaves."""
    return agent_turn(client, RESEARCHER_PROMPT, RESEARCHER_TOOLS, {"search": search},
                      [{"role": "user", "content": question}], max_iterations)


def parent_functions(client, max_iterations: int = 10) -> dict:
    return {"calculator": lambda expression: run_tool("calculator", {"expression": expression}),
            "research": lambda question: research(client, question, max_iterations)}


def delegating_conversation():
    """Two lines through the parent against a scripted model: the first delegates to the subagent, which searches
    twice; the second uses the calculator, and no subagent runs.

    Its traffic: step 1 the parent asks for research [A]; steps 2-4 the subagent (search [B], search [C], its
    answer); step 5 the parent's call that sends the answer back; steps 6-7 the calculator line ([D])."""
    client, _ = scripted_client([
        reply(text("Let me ask the researcher."), tool_use("research", {"question": QUESTION})),
        reply(tool_use("search", {"query": "R2 guarantee"})),  # a miss
        reply(tool_use("search", {"query": "R2 warranty"})),
        reply(text(FINDING)),
        reply(text(ANSWER)),
        reply(calculator("4823 * 1979")),
        reply(text("4823 × 1979 = 9,544,717.")),
    ], call_limit=7)
    messages: list = []
    for line in LINES:
        messages.append({"role": "user", "content": line})
        agent_turn(client, PARENT_PROMPT, PARENT_TOOLS, parent_functions(client), messages)
    return client, messages


def interrupted_conversation():
    """The subagent still searching at its cap: `research` raises, so does the parent's turn, and the parent's
    call is never answered."""
    client, _ = scripted_client([
        reply(tool_use("research", {"question": QUESTION})),
        reply(tool_use("search", {"query": "R2 guarantee"})),
        reply(tool_use("search", {"query": "R2 cover"})),
    ], call_limit=3)
    with pytest.raises(RuntimeError):
        agent_turn(client, PARENT_PROMPT, PARENT_TOOLS, parent_functions(client, max_iterations=2),
                   [{"role": "user", "content": LINES[0]}])
    return client


def step_of(viewer, number: int) -> str:
    """One step of the static text, from its title to the next one's."""
    return viewer.static_text().split(f"== Step {number} of ")[1].split("\n\n== Step ")[0]


# --- which agent made each step, and the links ------------------------------------------------------------------


def test_each_step_says_which_agent_made_it():
    client, _ = delegating_conversation()
    steps = looplab.show_history(client).steps
    assert [step.agent for step in steps] == [0, 1, 1, 1, 0, 0, 0]
    assert [step.system for step in steps[1:4]] == [RESEARCHER_PROMPT] * 3
    assert steps[1].messages == [{"role": "user", "content": QUESTION}]  # a history of its own: the question
    # Each step is compared with the last of its agent: the parent's call after the subagent with step 1.
    assert [step.compared_with for step in steps] == [None, None, 1, 2, 0, 4, 5]


def test_the_subagents_steps_are_linked_to_the_call_they_ran_inside():
    client, _ = delegating_conversation()
    steps = looplab.show_history(client).steps
    research_call = next(block for block in steps[0].response["content"] if block["type"] == "tool_use")
    delegation = steps[1].inside
    assert (delegation.call, delegation.tool_id, delegation.tool_name) == (0, research_call["id"], "research")
    assert delegation.steps == (1, 2, 3) and delegation.answer == 4 and delegation.last_answer
    assert steps[2].inside is delegation and steps[3].inside is delegation
    assert steps[0].delegations == [delegation] and steps[4].came_back == [delegation]
    # The parent's own steps ran inside nothing; the calculator ran no subagent.
    assert [step.inside for step in steps[:1] + steps[4:]] == [None] * 4
    assert all(not step.delegations and not step.came_back for step in steps[1:4] + steps[5:])
    result = next(block for block in steps[4].messages[-1]["content"] if block["type"] == "tool_result")
    assert result == {"type": "tool_result", "tool_use_id": research_call["id"], "content": FINDING}


def test_the_growth_of_the_input_compares_like_with_like():
    client, _ = delegating_conversation()
    steps = looplab.show_history(client).steps
    assert "since step" not in usage_line(steps, 1)  # the subagent's first call: the first of its kind
    assert "since step 2)" in usage_line(steps, 2)
    assert "since step 1)" in usage_line(steps, 4)  # the parent's call before, not the subagent's last


# --- the links shown ---------------------------------------------------------------------------------------------


def test_the_text_rendering_links_the_call_the_subagents_steps_and_the_answer():
    client, _ = delegating_conversation()
    viewer = looplab.show_history(client)
    first = step_of(viewer, 1)
    assert first.endswith("\n-- the call research [A] ran a subagent: its 3 step(s) follow (steps 2-4)")
    for number, position in ((2, 1), (3, 2), (4, 3)):
        assert step_of(viewer, number).split("\n")[1] == (
            f"-- subagent, step {position} of 3: inside the parent's call research [A] of step 1; its own history "
            f'started with [0] user: "{QUESTION}"')
    fifth = step_of(viewer, 5)
    came_back = "\n-- [A] came back from the subagent (steps 2-4): its last answer\n"
    assert came_back in fifth
    # Right under the tool_result it names, before the response.
    assert fifth.index("-- messages[2] user  (new)") < fifth.index(came_back) < fifth.index("-- response")
    assert "subagent" not in step_of(viewer, 6) + step_of(viewer, 7)  # the calculator line: no subagent
    assert viewer.static_text().count("subagent") == 5


def test_the_html_rendering_shows_the_same_lines_with_the_letters_chips():
    client, _ = delegating_conversation()
    viewer = looplab.show_history(client)
    labels = pair_labels(viewer.steps)
    page = viewer.static_html()
    assert page.count('<div class="looplab-subagent"') == 5
    pages = page.split('<h4 class="looplab-step-title">')[1:]
    assert "the call research <b style=" in pages[0]
    assert "</b> ran a subagent: its 3 step(s) follow (steps 2-4)</div>" in pages[0]
    assert pages[0].index("looplab-response") < pages[0].index("looplab-subagent")  # under the response
    assert "subagent, step 2 of 3: inside the parent&#x27;s call research <b style=" in pages[2]
    assert f"its own history started with [0] user: &quot;{QUESTION}&quot;" in pages[2]
    assert "</b> came back from the subagent (steps 2-4): its last answer</div>" in pages[4]
    assert all("looplab-subagent" not in page for page in pages[5:])
    # The widget: one step at a time, the same lines.
    for number in (1, 2, 5):
        viewer.slider.value = number
        assert viewer.body.value.count('<div class="looplab-subagent"') == 1
    viewer.slider.value = 6
    assert "looplab-subagent" not in viewer.body.value
    assert step_html(viewer.steps, 3, labels, standalone=True).count("subagent, step 3 of 3") == 1
    assert viewer.static_bundle()["text/plain"] == viewer.static_text()


def test_the_links_are_said_in_french(monkeypatch):
    monkeypatch.setenv(language.OVERRIDE, "fr")
    client, _ = delegating_conversation()
    steps = looplab.show_history(client).steps
    labels = pair_labels(steps)
    assert step_text(steps, 0, labels).endswith(
        "\n-- l'appel research [A] a lancé un sous-agent\u00a0: ses étapes suivent (étapes 2 à 4, 3 en tout)")
    assert step_text(steps, 1, labels).split("\n")[1] == (
        "-- sous-agent, étape 1 sur 3\u00a0: dans l'appel research [A] de l'étape 1 du parent\u202f; son propre "
        f'historique commençait par [0] user\u00a0: "{QUESTION}"')
    came_back = "\n-- [A] revient du sous-agent (étapes 2 à 4)\u00a0: sa dernière réponse\n"
    assert came_back in step_text(steps, 4, labels)
    page = html.unescape(step_html(steps, 4, labels, standalone=False))
    assert "revient du sous-agent (étapes 2 à 4)\u00a0: sa dernière réponse" in page


# --- an unanswered call, an answer reworded, a call beside another -------------------------------------------------


def test_a_subagent_whose_call_was_never_answered_still_renders():
    viewer = looplab.show_history(interrupted_conversation())
    steps = viewer.steps
    assert [step.agent for step in steps] == [0, 1, 1]
    delegation = steps[0].delegations[0]
    assert delegation.steps == (1, 2) and delegation.answer is None and not delegation.last_answer
    assert steps[1].inside is delegation and steps[2].inside is delegation
    assert step_of(viewer, 1).endswith("\n-- the call research [A] ran a subagent: its 2 step(s) follow (steps 2-3); "
                                       "no later step of the parent sends its result")
    assert "\n-- subagent, step 2 of 2: inside the parent's call research [A] of step 1; " in step_of(viewer, 3)
    assert "came back" not in viewer.static_text()
    assert viewer.static_html().count('<div class="looplab-subagent"') == 3


def wire_call(system: str, tools: list, messages: list, content: list) -> dict:
    """One exchange of a client's traffic, written by hand: the request, and a response of these blocks."""
    stop_reason = "tool_use" if any(block["type"] == "tool_use" for block in content) else "end_turn"
    return {"request": {"model": looplab.MODEL, "max_tokens": 100, "system": system, "tools": tools,
                        "messages": messages},
            "response": {"role": "assistant", "content": content, "stop_reason": stop_reason,
                         "usage": {"input_tokens": 100, "output_tokens": 5}}}


def test_a_reworded_answer_beside_a_calculator_call():
    """The calculator and research asked for at once: the subagent's one step is research's, found by its question;
    the tool's function reworded the answer, so the line does not call it the subagent's last answer."""
    asked = [{"type": "tool_use", "id": "toolu_calc", "name": "calculator", "input": {"expression": "1+1"}},
             {"type": "tool_use", "id": "toolu_research", "name": "research", "input": {"question": QUESTION}}]
    line = {"role": "user", "content": LINES[0]}
    question = {"role": "user", "content": QUESTION}
    results = {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "toolu_calc", "content": "2"},
        {"type": "tool_result", "tool_use_id": "toolu_research", "content": f"Research says: {FINDING}"}]}
    steps = steps_from_traffic([
        wire_call(PARENT_PROMPT, PARENT_TOOLS, [line], asked),
        wire_call(RESEARCHER_PROMPT, RESEARCHER_TOOLS, [question], [{"type": "text", "text": FINDING}]),
        wire_call(PARENT_PROMPT, PARENT_TOOLS, [line, {"role": "assistant", "content": asked}, results],
                  [{"type": "text", "text": ANSWER}]),
    ])
    (delegation,) = steps[0].delegations
    assert (delegation.tool_name, delegation.steps, delegation.answer) == ("research", (1,), 2)
    assert not delegation.last_answer
    labels = pair_labels(steps)
    assert step_text(steps, 0, labels).endswith(
        "\n-- the call research [B] ran a subagent: its 1 step(s) follow (step 2)")
    assert "\n-- [B] came back from the subagent (step 2)\n" in step_text(steps, 2, labels)


# --- no subagent, no line -----------------------------------------------------------------------------------------


def assert_no_subagent(viewer) -> None:
    assert all(step.inside is None and not step.delegations and not step.came_back for step in viewer.steps)
    assert "subagent" not in viewer.static_text() and "looplab-subagent" not in viewer.static_html()


def test_an_ordinary_conversation_shows_no_subagent(monkeypatch):
    """Notebook 2's loop through the offline recording: one agent."""
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    client = looplab.client("02_closing_the_loop", quiet=True)
    question = notebook_question("02_closing_the_loop", "WAREHOUSE_QUESTION")
    looplab.loop.agent_turn(client, [{"role": "user", "content": question}])
    viewer = looplab.show_history(client)
    assert len(viewer.steps) >= 2 and all(step.agent == 0 for step in viewer.steps)
    assert_no_subagent(viewer)


def test_a_compactions_summary_call_is_another_agent_but_no_subagent():
    """Notebook 8: the summary call comes between turns, after an answer in words, with no call waiting."""
    client, _ = compacting_conversation()
    viewer = looplab.show_history(client)
    assert [step.agent for step in viewer.steps] == [0, 0, 0, 1, 0]
    assert_no_subagent(viewer)


def test_a_summary_call_after_a_turn_stopped_at_its_cap_is_no_subagent():
    """A turn stopped at its cap leaves a calculator call waiting, its result appended; the next line's compaction
    makes a summary call before the agent's next call sends that result. The summary call sits between, but neither
    started from the call's input nor answered it: it ran inside no call."""
    asked = [{"type": "tool_use", "id": "toolu_calc", "name": "calculator", "input": {"expression": "1+1"}}]
    line = {"role": "user", "content": LINES[1]}
    result = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_calc", "content": "2"}]}
    steps = steps_from_traffic([
        wire_call(PARENT_PROMPT, PARENT_TOOLS, [line], asked),
        wire_call("Summarise.", [], [{"role": "user", "content": "user: ..."}], [{"type": "text", "text": "A sum."}]),
        wire_call(PARENT_PROMPT, PARENT_TOOLS, [line, {"role": "assistant", "content": asked}, result,
                                                {"role": "user", "content": "Next line"}],
                  [{"type": "text", "text": "2."}]),
    ])
    assert [step.agent for step in steps] == [0, 1, 0]
    assert all(step.inside is None and not step.delegations and not step.came_back for step in steps)
    assert "subagent" not in "".join(step_text(steps, index, pair_labels(steps)) for index in range(3))


def test_a_messages_list_shows_no_subagent():
    """The parent's history holds the research call and its answer, but a list is one agent's history."""
    _, messages = delegating_conversation()
    viewer = looplab.show_history(messages)
    assert viewer.steps and all(step.agent == 0 for step in steps_from_messages(messages))
    assert_no_subagent(viewer)
