"""What sits under the real SDK: small httpx2 transports, each with one job.

    anthropic.Anthropic ──> ObservedTransport ──> one of:
                             log the exchange,      MockTransport(Replay(recording))   offline
                             apply the API's rules  HTTPTransport()                    live
                                                    RecordingTransport(HTTPTransport)  record
                                                   (live and record: AllowanceTransport(HTTPTransport) when the
                                                    environment caps a learner's calls or tokens, allowance.py)

The learner holds a genuine `anthropic.Anthropic` and genuine SDK types; everything the course
adds happens at the HTTP layer, where the SDK cannot tell a recording from the network.
"""

from __future__ import annotations

import hashlib
import json
import sys
from typing import Callable

import anthropic
import httpx2

from .catalogue import words
from .error_display import brief_traceback, hint_line
from .recordings import Recording
from .rules import check_request, error_body

MESSAGES_PATH = "/v1/messages"
WORDS = words(__file__)


class NotRecordedError(anthropic.AnthropicError):
    """Offline, and this conversation was never recorded.

    It derives from the SDK's own base error, so the SDK lets it through unchanged: no
    "Connection error.", no retries. In a notebook it shows its message and the learner's own
    lines, not the frames of the SDK and of this transport (error_display.py).
    """

    def __init__(self, message: str, summary: str | None = None):
        super().__init__(message)
        # The same in one line, for a program that tells its user and goes on (notebook 4's agent.py).
        self.summary = summary or message.splitlines()[0]

    def _render_traceback_(self) -> list[str]:
        return brief_traceback(self)


def _json_response(status_code: int, body: dict, request_id: str) -> httpx2.Response:
    return httpx2.Response(
        status_code,
        json=body,
        headers={"request-id": request_id, "x-should-retry": "false"},
    )


def offline_request_id(body: bytes) -> str:
    """Stable per request, so a notebook shows the same error text on every run."""
    return "req_offline_" + hashlib.sha256(body).hexdigest()[:20]


class Traffic:
    """Every request a client sent and what came back, in order: what the history viewer reads.

    Each exchange is `{"request": wire request, "response": wire Message | None, "error": envelope | None}`.
    """

    def __init__(self) -> None:
        self.exchanges: list[dict] = []
        self._listeners: list[Callable[[], None]] = []

    def subscribe(self, listener: Callable[[], None]) -> None:
        self._listeners.append(listener)

    def record(self, exchange: dict) -> None:
        self.exchanges.append(exchange)
        for listener in list(self._listeners):
            listener()

    def clear(self) -> None:
        self.exchanges.clear()
        for listener in list(self._listeners):
            listener()


class ObservedTransport(httpx2.BaseTransport):
    """Logs each Messages request, answers rule violations with the API's 400, passes the rest on."""

    def __init__(self, inner: httpx2.BaseTransport, traffic: Traffic, print_hints: bool = True):
        self.inner = inner
        self.traffic = traffic
        self.print_hints = print_hints

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        if request.url.path != MESSAGES_PATH or request.method != "POST":
            return self.inner.handle_request(request)
        body_bytes = request.read()
        body = json.loads(body_bytes)
        violation = check_request(body)
        if violation is not None:
            envelope = error_body(violation, offline_request_id(body_bytes))
            self.traffic.record({"request": body, "response": None, "error": envelope, "hint": violation.hint})
            if self.print_hints:
                print(hint_line(violation.hint), file=sys.stderr)
            return _json_response(400, envelope, envelope["request_id"])

        try:
            response = self.inner.handle_request(request)
        except anthropic.AnthropicError as error:
            # Refused here, not by the API: not recorded offline, or past the learner's allowance (allowance.py).
            kind = "not_recorded" if isinstance(error, NotRecordedError) else getattr(error, "kind", None)
            if kind is not None:
                refused = {"type": "error", "error": {"type": kind, "message": str(error)}}
                self.traffic.record({"request": body, "response": None, "error": refused})
            raise
        if body.get("stream"):
            self.traffic.record({"request": body, "response": None, "error": None})
            return response
        response.read()
        payload = _json_or_none(response)
        if response.is_success:
            self.traffic.record({"request": body, "response": payload, "error": None})
        else:
            self.traffic.record({"request": body, "response": None, "error": payload})
        return response

    def close(self) -> None:
        self.inner.close()


def _json_or_none(response: httpx2.Response) -> dict | None:
    try:
        return response.json()
    except ValueError:
        return None


class Replay:
    """An httpx2.MockTransport handler that answers from a recording, or says clearly that it can't."""

    def __init__(self, recording: Recording):
        self.recording = recording

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        if request.url.path != MESSAGES_PATH or request.method != "POST":
            raise NotRecordedError(WORDS("only_messages", path=MESSAGES_PATH, method=request.method,
                                         asked=request.url.path))
        body = json.loads(request.content)
        if body.get("stream"):
            raise NotRecordedError(WORDS("no_streams"))
        answer = self.recording.find(body)
        if answer is None:
            raise NotRecordedError(not_recorded_message(self.recording, body), not_recorded_summary(self.recording, body))
        return _json_response(200, answer, "req_offline_replay")


def not_recorded_message(recording: Recording, request: dict) -> str:
    """What a learner reads: what happened (offline, and not in the recording), where the conversation parts from
    the nearest recorded one, and what to do. The maintainer's route (scripting a new answer) is in docs/RECORDINGS.md's
    recordings section and in authoring/author_recordings.py, not here: a learner cannot take it."""
    lines = [WORDS("not_recorded", recording=recording.name)]
    difference = recording.nearest_difference(request)
    if difference is None:
        lines.append(WORDS("recording_empty", path=recording.path))
    else:
        lines.append(WORDS("differs"))
        lines.append(difference.describe())
    lines.append(WORDS("only_recorded", what=_what_to_ask(recording, request)))
    return "\n".join(lines)


def not_recorded_summary(recording: Recording, request: dict) -> str:
    """One line: which lines the recording answers (with this setup), and how to ask anything."""
    conversations = recording.recorded_lines(request)
    if conversations:
        what = WORDS("summary_answers", recording=recording.name, lines=_recorded(conversations))
    else:
        what = WORDS("summary_none", recording=recording.name)
    return WORDS("summary", what=what)


def _what_to_ask(recording: Recording, request: dict) -> str:
    """The learner's offline way forward: the recorded lines to ask, or the notebook's own settings to keep."""
    conversations = recording.recorded_lines(request)
    if conversations:
        return WORDS("ask_recorded", lines=_recorded(conversations))
    return WORDS("keep_settings")


def _recorded(conversations: list[list[str]]) -> str:
    return WORDS("or").join(WORDS("then").join(f'"{line}"' for line in lines) for lines in conversations)


class RecordingTransport(httpx2.BaseTransport):
    """Passes requests to the real API and writes every successful exchange to the recording.

    Only the JSON bodies are written: never a header, so never the API key.
    """

    def __init__(self, inner: httpx2.BaseTransport, recording: Recording):
        self.inner = inner
        self.recording = recording

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        response = self.inner.handle_request(request)
        if request.url.path != MESSAGES_PATH or request.method != "POST":
            return response
        body = json.loads(request.read())
        if body.get("stream"):
            return response
        response.read()
        if response.is_success:
            self.recording.add(body, response.json())
            self.recording.save()
        return response

    def close(self) -> None:
        self.inner.close()
