"""looplab.client: the three modes, semantic matching, the API's own errors and the not-recorded error."""

import json

import anthropic
import httpx2
import pytest
from anthropic.types import Message

import looplab
from looplab.client import current_mode

QUESTION = "What is 4823 × 1979?"


def ask(client, messages, **extra):
    extra.setdefault("tools", looplab.tools.TOOLS)
    return client.messages.create(model=looplab.MODEL, max_tokens=1024, messages=messages, **extra)


def first_exchange(client):
    reply = ask(client, [{"role": "user", "content": QUESTION}])
    tool_use = next(block for block in reply.content if block.type == "tool_use")
    return reply, tool_use


# --- modes -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "env, expected",
    [
        ({}, "offline"),
        ({"ANTHROPIC_API_KEY": "sk-test"}, "live"),
        ({"ANTHROPIC_API_KEY": "sk-test", "LOOPLAB_MODE": "offline"}, "offline"),
        ({"ANTHROPIC_API_KEY": "sk-test", "LOOPLAB_MODE": "record"}, "record"),
        ({"ANTHROPIC_API_KEY": "sk-test", "LOOPLAB_MODE": "Live "}, "live"),
    ],
)
def test_mode_comes_from_the_environment(monkeypatch, env, expected):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("LOOPLAB_MODE", raising=False)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    assert current_mode() == expected


@pytest.mark.parametrize("env", [{"LOOPLAB_MODE": "record"}, {"LOOPLAB_MODE": "live"}, {"LOOPLAB_MODE": "replay"}])
def test_impossible_modes_are_refused_clearly(monkeypatch, env):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    with pytest.raises(ValueError, match="LOOPLAB_MODE"):
        current_mode()


def test_client_is_the_real_sdk_and_says_its_mode(monkeypatch, capsys):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("LOOPLAB_MODE", raising=False)
    client = looplab.client("calculator")
    assert type(client) is anthropic.Anthropic
    line = capsys.readouterr().out
    assert line.count("\n") == 1
    assert "offline" in line and "'calculator'" in line and "ANTHROPIC_API_KEY" in line


# --- offline replay --------------------------------------------------------------------------


def test_offline_answers_a_recorded_request_with_sdk_types(offline):
    reply, tool_use = first_exchange(offline)
    assert isinstance(reply, Message)
    assert reply.stop_reason == "tool_use"
    assert tool_use.name == "calculator" and tool_use.input == {"expression": "4823 * 1979"}


def test_offline_full_round_trip(offline):
    reply, tool_use = first_exchange(offline)
    messages = [
        {"role": "user", "content": QUESTION},
        {"role": "assistant", "content": reply.content},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": tool_use.id, "content": "9544717"}]},
    ]
    final = ask(offline, messages)
    assert final.stop_reason == "end_turn"
    assert "9,544,717" in final.content[0].text


def conversation_encodings(reply, tool_use):
    """The same conversation, encoded each way a learner might write it."""
    result_block = {"type": "tool_result", "tool_use_id": tool_use.id, "content": "9544717"}
    as_dicts = [block.model_dump(exclude_none=True) for block in reply.content]
    reordered = [dict(reversed(list(block.items()))) for block in as_dicts]
    return {
        "block objects": [{"role": "assistant", "content": reply.content}],
        "to_param()": [reply.to_param()],
        "dicts": [{"role": "assistant", "content": as_dicts}],
        "reordered keys": [{"content": reordered, "role": "assistant"}],
        "result content as blocks": [{"role": "assistant", "content": reply.content}],
    }, {
        "string": result_block,
        "text block list": {**result_block, "content": [{"type": "text", "text": "9544717"}]},
        "is_error false": {**result_block, "is_error": False},
        "cache_control": {**result_block, "cache_control": {"type": "ephemeral"}},
    }


def test_matching_is_semantic(offline):
    reply, tool_use = first_exchange(offline)
    assistants, results = conversation_encodings(reply, tool_use)
    questions = [QUESTION, [{"type": "text", "text": QUESTION}]]
    answers = set()
    for question in questions:
        for assistant in assistants.values():
            for result in results.values():
                messages = [{"role": "user", "content": question}, *assistant, {"role": "user", "content": [result]}]
                answers.add(ask(offline, messages).content[0].text)
    assert answers == {"4823 × 1979 = 9,544,717."}


def test_parameters_that_do_not_change_the_conversation_still_match(offline):
    messages = [{"role": "user", "content": QUESTION}]
    for extra in ({"max_tokens": 5}, {"metadata": {"user_id": "learner-7"}}, {"tool_choice": {"type": "auto"}}):
        kwargs = {"model": looplab.MODEL, "max_tokens": 1024, "messages": messages, "tools": looplab.tools.TOOLS}
        kwargs.update(extra)
        assert offline.messages.create(**kwargs).stop_reason == "tool_use"


def test_unrecorded_question_is_one_clear_error(offline):
    with pytest.raises(looplab.NotRecordedError) as caught:
        ask(offline, [{"role": "user", "content": "What is 4823 times 1979?"}])
    text = str(caught.value)
    first_line = text.splitlines()[0]
    assert "not recorded" in first_line and "'calculator'" in first_line
    assert "messages.0.content.0.text" in text
    assert '"What is 4823 × 1979?"' in text and '"What is 4823 times 1979?"' in text
    assert "ANTHROPIC_API_KEY" in text and "live mode" in text
    # what a learner can do offline: the recorded questions, word for word
    assert 'ask one of the recorded questions, "What is 4823 × 1979?" or ' in text
    # the maintainer's route is in docs/RECORDINGS.md and `python -m authoring record --help`, not in a learner's error
    assert "scripts/" not in text and "author_recordings" not in text and "Maintaining" not in text
    assert "Connection error" not in text
    assert not isinstance(caught.value, anthropic.APIConnectionError)


def test_not_recorded_is_never_retried(offline):
    patient = offline.with_options(max_retries=5)
    with pytest.raises(looplab.NotRecordedError):
        ask(patient, [{"role": "user", "content": "Something else"}])
    assert len(looplab.traffic(offline).exchanges) == 1


def test_not_recorded_names_a_different_model_or_tool(offline):
    with pytest.raises(looplab.NotRecordedError, match=r"at model\n.*claude-haiku-5-5.*\n.*claude-opus-5-5"):
        offline.messages.create(
            model="claude-opus-5-5", max_tokens=10, tools=looplab.tools.TOOLS,
            messages=[{"role": "user", "content": QUESTION}],
        )
    with pytest.raises(looplab.NotRecordedError, match="at tools"):
        ask(offline, [{"role": "user", "content": QUESTION}], tools=[])


def test_not_recorded_points_into_a_longer_history(offline):
    reply, tool_use = first_exchange(offline)
    messages = [
        {"role": "user", "content": QUESTION},
        {"role": "assistant", "content": reply.content},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": tool_use.id, "content": "42"}]},
    ]
    with pytest.raises(looplab.NotRecordedError) as caught:
        ask(offline, messages)
    assert "messages.2.content.0.content.0.text" in str(caught.value)
    assert '"9544717"' in str(caught.value) and '"42"' in str(caught.value)


def test_streaming_is_answered_as_not_recorded(offline):
    with pytest.raises(looplab.NotRecordedError, match="stream"):
        ask(offline, [{"role": "user", "content": QUESTION}], stream=True)


def test_an_empty_recording_says_so(monkeypatch, tmp_path):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    client = looplab.client(tmp_path / "nothing.json", quiet=True)
    with pytest.raises(looplab.NotRecordedError, match="no conversations yet"):
        ask(client, [{"role": "user", "content": QUESTION}])


# --- the API's own errors, offline ------------------------------------------------------------


def test_dangling_tool_use_gets_the_api_400(offline, capsys):
    """What the course controls: the status, the type, the API's message and the hint. How the SDK prints the
    error, `str(error)`, is the SDK's (2.17.0 changed it: docs/MAINTAINING.md), so it is not asserted here."""
    reply, tool_use = first_exchange(offline)
    messages = [
        {"role": "user", "content": QUESTION},
        {"role": "assistant", "content": reply.content},
        {"role": "user", "content": "So what is it?"},
    ]
    with pytest.raises(anthropic.BadRequestError) as caught:
        ask(offline, messages)
    error = caught.value
    assert error.status_code == 400
    assert error.type == "invalid_request_error"
    assert error.body["type"] == "error"
    assert error.api_message == (
        f"messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: {tool_use.id}. "
        "Each `tool_use` block must have a corresponding `tool_result` block in the next message."
    )
    assert error.request_id and error.request_id.startswith("req_")
    assert capsys.readouterr().err.startswith(f"looplab hint: Message 1 (assistant) called {tool_use.id}, but ")


def test_the_400_is_the_same_every_run(offline):
    bad = [{"role": "user", "content": QUESTION}, {"role": "assistant", "content": "Sure."}]
    errors = []
    for _ in range(2):
        with pytest.raises(anthropic.BadRequestError) as caught:
            ask(offline, bad)
        errors.append(str(caught.value))
    assert errors[0] == errors[1]
    assert "prefill" in errors[0]


# --- observation -----------------------------------------------------------------------------


def test_traffic_logs_wire_requests_responses_and_errors(offline):
    reply, tool_use = first_exchange(offline)
    with pytest.raises(anthropic.BadRequestError):
        ask(offline, [{"role": "user", "content": QUESTION}, {"role": "assistant", "content": reply.content}])
    log = looplab.traffic(offline).exchanges
    assert len(log) == 2
    assert log[0]["request"]["messages"] == [{"role": "user", "content": QUESTION}]
    assert log[0]["response"]["content"][1]["id"] == tool_use.id
    assert log[1]["response"] is None
    assert log[1]["error"]["error"]["type"] == "invalid_request_error"


def test_traffic_of_a_foreign_client_is_refused():
    with pytest.raises(TypeError, match="looplab.client"):
        looplab.traffic(anthropic.Anthropic(api_key="x"))


# --- live and record, against a stand-in for the network --------------------------------------


class FakeAPI:
    """Stands in for the network: remembers what reached it, answers like the API."""

    def __init__(self):
        self.requests = []

    def __call__(self, request):
        self.requests.append(request)
        body = json.loads(request.content)
        return httpx2.Response(200, json={
            "id": "msg_01Fake", "type": "message", "role": "assistant", "model": body["model"],
            "content": [{"type": "text", "text": f"You said {len(body['messages'])} message(s)."}],
            "stop_reason": "end_turn", "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 5},
        })


SECRET = "sk-ant-api03-very-secret-key"


@pytest.fixture
def with_key(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
    monkeypatch.delenv("LOOPLAB_MODE", raising=False)


def test_live_mode_passes_through_and_is_observed(with_key, tmp_path):
    api = FakeAPI()
    client = looplab.client(tmp_path / "unused.json", upstream=httpx2.MockTransport(api), quiet=True)
    reply = ask(client, [{"role": "user", "content": "hello"}])
    assert reply.content[0].text == "You said 1 message(s)."
    assert api.requests[0].headers["authorization"] == f"Bearer {SECRET}"
    assert len(looplab.traffic(client).exchanges) == 1
    assert not (tmp_path / "unused.json").exists()


def test_live_mode_still_applies_the_rules_before_the_network(with_key, tmp_path):
    api = FakeAPI()
    client = looplab.client(tmp_path / "unused.json", upstream=httpx2.MockTransport(api), quiet=True)
    with pytest.raises(anthropic.BadRequestError):
        ask(client, [{"role": "user", "content": ""}])
    assert api.requests == []


def test_record_mode_writes_bodies_never_headers_or_keys(with_key, monkeypatch, tmp_path):
    monkeypatch.setenv("LOOPLAB_MODE", "record")
    path = tmp_path / "new.json"
    client = looplab.client(path, upstream=httpx2.MockTransport(FakeAPI()), quiet=True)
    ask(client, [{"role": "user", "content": "hello"}])
    ask(client, [{"role": "user", "content": "hello"}, {"role": "assistant", "content": "Hi."},
                 {"role": "user", "content": "again"}])
    text = path.read_text()
    assert SECRET not in text
    assert "authorization" not in text.lower() and "anthropic-version" not in text
    saved = json.loads(text)
    assert saved["model"] == looplab.MODEL
    assert [len(e["request"]["messages"]) for e in saved["exchanges"]] == [1, 3]
    assert text == json.dumps(saved, indent=2, sort_keys=True, ensure_ascii=False) + "\n"

    monkeypatch.delenv("ANTHROPIC_API_KEY")
    monkeypatch.delenv("LOOPLAB_MODE")
    replayed = ask(looplab.client(path, quiet=True), [{"role": "user", "content": "hello"}])
    assert replayed.content[0].text == "You said 1 message(s)."


def test_record_mode_replaces_a_re_recorded_conversation(with_key, tmp_path):
    path = tmp_path / "again.json"
    for _ in range(2):
        client = looplab.client(path, mode="record", upstream=httpx2.MockTransport(FakeAPI()), quiet=True)
        ask(client, [{"role": "user", "content": "hello"}])
    assert len(json.loads(path.read_text())["exchanges"]) == 1


def test_two_writers_of_one_recording_keep_each_others_exchanges(with_key, tmp_path):
    """A notebook and the script it runs can record into the same file at once."""
    path = tmp_path / "shared.json"
    first = looplab.client(path, mode="record", upstream=httpx2.MockTransport(FakeAPI()), quiet=True)
    second = looplab.client(path, mode="record", upstream=httpx2.MockTransport(FakeAPI()), quiet=True)
    ask(first, [{"role": "user", "content": "from the notebook"}])
    ask(second, [{"role": "user", "content": "from the script"}])
    ask(first, [{"role": "user", "content": "from the notebook again"}])
    questions = [e["request"]["messages"][0]["content"] for e in json.loads(path.read_text())["exchanges"]]
    assert sorted(questions) == ["from the notebook", "from the notebook again", "from the script"]
