"""The shipped recordings are honest: the API's exact wire format, valid histories, one model, no secrets."""

import json

import pytest
from anthropic.types import Message

import looplab
from looplab.recordings import RECORDINGS_DIR, Recording, exchange_key
from looplab.rules import check_request

RECORDING_FILES = sorted(RECORDINGS_DIR.glob("*.json"))


def all_exchanges():
    return list(_exchanges())


def _exchanges():
    for path in RECORDING_FILES:
        for index, exchange in enumerate(json.loads(path.read_text(encoding="utf-8"))["exchanges"]):
            yield pytest.param(exchange, id=f"{path.stem}-{index}")


def test_there_are_recordings():
    assert RECORDING_FILES, f"no recordings in {RECORDINGS_DIR}"


@pytest.mark.parametrize("exchange", all_exchanges())
def test_every_response_is_a_valid_api_message(exchange):
    message = Message.model_validate(exchange["response"])
    assert message.stop_reason is not None
    assert message.model == looplab.MODEL


@pytest.mark.parametrize("exchange", all_exchanges())
def test_every_request_obeys_the_conversation_rules(exchange):
    request = exchange["request"]
    assert check_request(request) is None
    assert request["model"] == looplab.MODEL
    assert set(request) <= {"model", "max_tokens", "messages", "system", "tools", "tool_choice", "metadata"}


@pytest.mark.parametrize("exchange", all_exchanges())
def test_tool_calls_in_a_response_match_its_stop_reason(exchange):
    response = exchange["response"]
    asks_for_tools = any(block["type"] == "tool_use" for block in response["content"])
    assert asks_for_tools == (response["stop_reason"] == "tool_use")


@pytest.mark.parametrize("path", RECORDING_FILES, ids=lambda p: p.stem)
def test_recording_files_are_pretty_stable_and_secret_free(path):
    text = path.read_text(encoding="utf-8")
    data = json.loads(text)
    assert text == json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    assert data["model"] == looplab.MODEL
    for secret_marker in ("sk-ant", "authorization", "x-api-key", "anthropic-version", "Bearer"):
        assert secret_marker not in text


@pytest.mark.parametrize("path", RECORDING_FILES, ids=lambda p: p.stem)
def test_no_two_exchanges_answer_the_same_conversation(path):
    recording = Recording.load(path)
    keys = [exchange_key(e["request"]) for e in recording.exchanges]  # a conversation, with its tools' wording
    assert len(keys) == len(set(keys))


def test_the_model_id_lives_in_one_constant():
    assert looplab.MODEL == "claude-haiku-5-5"
