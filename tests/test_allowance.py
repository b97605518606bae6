"""Live mode on a hub: one key for the room, a cap per learner on model calls and on tokens (looplab/allowance.py).

The API is a fake that answers like it: POST /v1/messages gets a valid Message with its `usage` (looplab.scripted
builds it), or a stream of the API's events, or, for its first N requests, the API's 429 (a `rate_limit_error`
envelope and a `retry-after` header). Some tests reach it through a real socket, with the SDK's own HTTP transport
and `base_url` (ANTHROPIC_BASE_URL), as a hub's kernels reach the API; the others through httpx2.MockTransport.
No key is spent: every test points the SDK at the fake, and the key is made up.

A "learner" is a home folder (a hub gives each learner theirs): the count is ~/.looplab/usage.json in it.
"""

from __future__ import annotations

import contextlib
import gzip
import json
import os
import re
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import anthropic
import httpx2
import nbformat
import pytest
from nbclient import NotebookClient

import looplab
from looplab import language, scripted
from looplab.history import steps_from_traffic
from looplab.allowance import (MAX_CALLS, MAX_TOKENS, USAGE_FILE, Allowance, AllowanceError, AllowanceReached,
                               Ledger)

ROOT = Path(__file__).resolve().parent.parent
ROOM_KEY = "sk-ant-test-the-rooms-key"
NOWHERE = "http://127.0.0.1:9"  # the discard port: where a client not pointed at a fake would send, never the API
USAGE = {"input_tokens": 60, "output_tokens": 20}  # what each answer of the fake costs: 80 tokens


class FakeAPI:
    """Answers like the Messages API and remembers every request that reached it.

    The first `rate_limited` requests get the API's 429, with `retry-after` as given (the API sends whole seconds;
    the SDK reads "0" as no advice and waits its own short backoff, under half a second)."""

    def __init__(self, rate_limited: int = 0, retry_after: str = "0", usage: dict = USAGE):
        self.rate_limited = rate_limited
        self.retry_after = retry_after
        self.usage = usage
        self.requests: list[dict] = []
        self._lock = threading.Lock()

    def answer(self, method: str, path: str, headers, content: bytes) -> tuple[int, dict, bytes]:
        with self._lock:
            self.requests.append({"path": path, "headers": {name.lower(): value for name, value in headers.items()},
                                  "body": json.loads(content or b"null")})
            limited, self.rate_limited = self.rate_limited > 0, max(0, self.rate_limited - 1)
        request_id = {"request-id": f"req_fake_{len(self.requests)}"}
        if method != "POST" or path != "/v1/messages":
            return 404, request_id, _envelope("not_found_error", "Not found", request_id)
        if limited:
            return 429, {**request_id, "retry-after": self.retry_after}, _envelope(
                "rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit", request_id)
        body = json.loads(content)
        if body.get("stream"):
            events = gzip.compress(_events(body, self.usage))  # compressed, as a server may: read decoded
            return 200, {**request_id, "content-type": "text/event-stream", "content-encoding": "gzip"}, events
        message = scripted.reply(scripted.text("Hello from the fake API."))(body)
        message["usage"] = {**message["usage"], **self.usage}
        return 200, {**request_id, "content-type": "application/json"}, json.dumps(message).encode()

    def handler(self, request: httpx2.Request) -> httpx2.Response:
        """For httpx2.MockTransport: the same answers, no socket."""
        status, headers, content = self.answer(request.method, request.url.path, request.headers, request.read())
        return httpx2.Response(status, headers=headers, content=content)

    @contextlib.contextmanager
    def serving(self):
        """The fake on a real socket of localhost, in a thread: yields its base URL."""
        api = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                content = self.rfile.read(int(self.headers.get("content-length") or 0))
                status, headers, body = api.answer("POST", self.path, self.headers, content)
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True)
        thread.start()
        try:
            yield f"http://127.0.0.1:{server.server_port}"
        finally:
            server.shutdown()
            server.server_close()
            thread.join()

    def retry_counts(self) -> list[str]:
        return [request["headers"].get("x-stainless-retry-count") for request in self.requests]


def _envelope(kind: str, message: str, request_id: dict) -> bytes:
    return json.dumps({"type": "error", "error": {"type": kind, "message": message},
                       "request_id": request_id["request-id"]}).encode()


def _events(request: dict, usage: dict) -> bytes:
    """A streamed Message as the API sends it: input tokens in message_start, the output's running total after."""
    message = scripted.reply(scripted.text("Hi."))(request)
    start = {**message, "content": [], "stop_reason": None, "usage": {**message["usage"], **usage, "output_tokens": 1}}
    events = [
        ("message_start", {"type": "message_start", "message": start}),
        ("content_block_start", {"type": "content_block_start", "index": 0,
                                 "content_block": {"type": "text", "text": ""}}),
        ("content_block_delta", {"type": "content_block_delta", "index": 0,
                                 "delta": {"type": "text_delta", "text": "Hi."}}),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        ("message_delta", {"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                           "usage": {"output_tokens": usage["output_tokens"]}}),
        ("message_stop", {"type": "message_stop"}),
    ]
    return "".join(f"event: {name}\ndata: {json.dumps(data)}\n\n" for name, data in events).encode()


# --- the room -------------------------------------------------------------------------------------------------


@pytest.fixture
def room(monkeypatch, tmp_path):
    """A hub's environment: the room's key, no cap yet, each learner's home under tmp_path (Ada's to start with)."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", ROOM_KEY)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", NOWHERE)
    monkeypatch.delenv("LOOPLAB_MODE", raising=False)
    for name in (MAX_CALLS, MAX_TOKENS, USAGE_FILE):
        monkeypatch.delenv(name, raising=False)
    learner(monkeypatch, tmp_path, "ada")
    return tmp_path


def learner(monkeypatch, tmp_path: Path, name: str) -> Path:
    """From now on, clients made are this learner's (their home, as a hub sets it); their count file."""
    home = tmp_path / name
    home.mkdir(exist_ok=True)
    monkeypatch.setenv("HOME", str(home))
    return home / ".looplab" / "usage.json"


def caps(monkeypatch, calls: int | None = None, tokens: int | None = None) -> None:
    for name, value in ((MAX_CALLS, calls), (MAX_TOKENS, tokens)):
        if value is None:
            monkeypatch.delenv(name, raising=False)
        else:
            monkeypatch.setenv(name, str(value))


def ask(client, question: str = "Hello?", **extra):
    return client.messages.create(model=looplab.MODEL, max_tokens=64,
                                  messages=[{"role": "user", "content": question}], **extra)


def count(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def live_client(tmp_path: Path, api: FakeAPI | None = None, **options):
    """A live client; through `api` by MockTransport, or else through the network to ANTHROPIC_BASE_URL."""
    upstream = httpx2.MockTransport(api.handler) if api is not None else None
    return looplab.client(tmp_path / "unused.json", mode=options.pop("mode", "live"), upstream=upstream,
                          quiet=options.pop("quiet", True), **options)


# --- 429s, retried by the SDK ---------------------------------------------------------------------------------


def test_the_sdk_retries_a_429_through_a_real_socket_and_the_call_counts_once(room, monkeypatch):
    caps(monkeypatch, calls=5)
    api = FakeAPI(rate_limited=1, retry_after="0")
    with api.serving() as base_url:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", base_url)
        client = live_client(room)  # no upstream: the SDK's real HTTP transport, to base_url
        reply = ask(client)
        client.close()
    assert reply.content[0].text == "Hello from the fake API."
    assert api.retry_counts() == ["0", "1"]  # the 429, then the SDK's own retry of the same call
    assert api.requests[0]["headers"]["authorization"] == f"Bearer {ROOM_KEY}"
    assert count(room / "ada" / ".looplab" / "usage.json") == {"calls": 1, "input_tokens": 60, "output_tokens": 20}


def test_a_call_whose_retries_all_get_429_counts_once_and_spends_no_tokens(room, monkeypatch):
    caps(monkeypatch, calls=1)
    api = FakeAPI(rate_limited=3, retry_after="0.001")  # a fraction of a second: the two retries wait no longer
    client = live_client(room, api)
    with pytest.raises(anthropic.RateLimitError) as raised:
        ask(client)
    assert raised.value.type == "rate_limit_error"
    assert api.retry_counts() == ["0", "1", "2"]  # max_retries=2: the SDK gave up after its own retries
    assert count(room / "ada" / ".looplab" / "usage.json") == {"calls": 1, "input_tokens": 0, "output_tokens": 0}
    with pytest.raises(AllowanceReached):  # the cap of 1 call: that one was it, retries and all
        ask(client)
    assert len(api.requests) == 3


# --- the caps ---------------------------------------------------------------------------------------------------


def test_the_calls_cap_stops_the_next_call_in_one_line_and_sends_nothing(room, monkeypatch):
    caps(monkeypatch, calls=2)
    api = FakeAPI()
    with api.serving() as base_url:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", base_url)
        client = live_client(room)
        ask(client)
        ask(client)
        with pytest.raises(AllowanceReached) as raised:
            ask(client, "A third question")
        client.close()
    assert len(api.requests) == 2  # the third never reached the server
    error = raised.value
    usage_file = room / "ada" / ".looplab" / "usage.json"
    assert (error.cap, error.used, error.limit) == ("calls", 2, 2)
    assert str(error) == (
        f"looplab: call not sent; you have made 2 of the 2 model calls this hub allows each learner. Ask your "
        f"instructor to raise the cap (your count is in {usage_file}), or go back offline (%env LOOPLAB_MODE=offline, "
        f"then make the client again).")
    assert error._render_traceback_() == [f"AllowanceReached: {error}"]  # one line in a notebook
    assert isinstance(error, anthropic.AnthropicError) and not isinstance(error, anthropic.APIError)
    assert count(usage_file)["calls"] == 2
    refused = looplab.traffic(client).exchanges[-1]  # the viewer shows why the loop stopped
    assert refused["error"]["error"]["type"] == "allowance_reached" and refused["response"] is None
    steps = steps_from_traffic(looplab.traffic(client).exchanges)
    assert steps[-1].outcome == "not sent (your allowance on this hub is used up)"


def test_the_tokens_cap_stops_the_call_after_usage_crossed_it(room, monkeypatch):
    caps(monkeypatch, tokens=100)
    api = FakeAPI()
    client = live_client(room, api)
    ask(client)  # 80 tokens spent: under the cap
    ask(client)  # allowed (80 < 100), and crosses it: 160
    with pytest.raises(AllowanceReached) as raised:
        ask(client)
    assert len(api.requests) == 2
    assert (raised.value.cap, raised.value.used, raised.value.limit) == ("tokens", 160, 100)
    assert "spent 160 tokens of the 100 this hub allows each learner" in str(raised.value)


def test_a_streamed_call_counts_the_tokens_its_events_carry(room, monkeypatch):
    caps(monkeypatch, tokens=1000)
    api = FakeAPI(usage={"input_tokens": 25, "output_tokens": 15})
    with api.serving() as base_url:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", base_url)
        client = live_client(room)
        with ask(client, stream=True) as stream:
            kinds = [event.type for event in stream]
        client.close()
    assert kinds[0] == "message_start" and kinds[-1] == "message_stop"
    assert count(room / "ada" / ".looplab" / "usage.json") == {"calls": 1, "input_tokens": 25, "output_tokens": 15}


def test_record_mode_is_capped_too(room, monkeypatch):
    caps(monkeypatch, calls=1)
    api = FakeAPI()
    client = live_client(room, api, mode="record")
    ask(client)
    with pytest.raises(AllowanceReached):
        ask(client, "Another")
    assert len(api.requests) == 1
    assert len(json.loads((room / "unused.json").read_text())["exchanges"]) == 1


# --- per learner ------------------------------------------------------------------------------------------------


def test_two_kernels_of_one_learner_share_the_count(room, monkeypatch):
    """Two clients here and one in another process (another kernel, started after a restart): one count."""
    caps(monkeypatch, calls=3)
    api = FakeAPI()
    usage_file = room / "ada" / ".looplab" / "usage.json"
    with api.serving() as base_url:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", base_url)
        first, second = live_client(room), live_client(room)
        ask(first)
        ask(second)
        other_kernel = subprocess.run(
            [sys.executable, "-c", "import looplab\n"
             "c = looplab.client('unused', quiet=True)\n"
             "print(c.messages.create(model=looplab.MODEL, max_tokens=64,"
             " messages=[{'role': 'user', 'content': 'From another kernel'}]).content[0].text)"],
            env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True, timeout=120)
        assert other_kernel.stdout.strip() == "Hello from the fake API.", other_kernel.stderr
        with pytest.raises(AllowanceReached) as raised:
            ask(first)
        with pytest.raises(AllowanceReached):
            ask(live_client(room))  # a client made after: the count is the learner's, not the client's
        first.close()
        second.close()
    assert raised.value.used == 3 and len(api.requests) == 3
    assert count(usage_file) == {"calls": 3, "input_tokens": 180, "output_tokens": 60}


def test_another_learner_is_not_affected(room, monkeypatch):
    caps(monkeypatch, calls=1)
    api = FakeAPI()
    ada = live_client(room, api)
    ask(ada)
    with pytest.raises(AllowanceReached):
        ask(ada)
    grace_file = learner(monkeypatch, room, "grace")
    grace = live_client(room, api)
    assert ask(grace).content[0].text == "Hello from the fake API."
    assert count(grace_file)["calls"] == 1 and count(room / "ada" / ".looplab" / "usage.json")["calls"] == 1


def test_the_usage_file_can_be_put_elsewhere(room, monkeypatch):
    caps(monkeypatch, calls=1)
    elsewhere = room / "counts" / "ada.json"
    monkeypatch.setenv(USAGE_FILE, str(elsewhere))
    ask(live_client(room, FakeAPI()))
    assert count(elsewhere)["calls"] == 1 and not (room / "ada" / ".looplab").exists()


def test_kernels_calling_at_once_never_pass_the_calls_cap():
    """Threads stand in for kernels: each update opens and locks the file anew, as another process would."""
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        ledger = Ledger(Allowance(calls=50, tokens=None, path=Path(folder) / "usage.json"))
        admitted, refused = [], []

        def kernel():
            for _ in range(10):
                try:
                    ledger.admit()
                    admitted.append(1)
                except AllowanceReached:
                    refused.append(1)

        threads = [threading.Thread(target=kernel) for _ in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert (len(admitted), len(refused)) == (50, 30)
        assert ledger.read().calls == 50


# --- no cap -------------------------------------------------------------------------------------------------------


def test_no_cap_when_the_environment_sets_none(room, capsys):
    api = FakeAPI()
    client = looplab.client(room / "unused.json", mode="live", upstream=httpx2.MockTransport(api.handler))
    for _ in range(5):
        ask(client)
    assert len(api.requests) == 5
    assert not (room / "ada" / ".looplab").exists()  # nothing counted, nothing written
    assert "caps each learner" not in capsys.readouterr().out


def test_offline_mode_ignores_the_caps(room, monkeypatch):
    caps(monkeypatch, calls=0, tokens=0)
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    client = looplab.client("calculator", quiet=True)  # offline: no key
    reply = ask(client, "What is 4823 × 1979?", tools=looplab.tools.TOOLS)
    assert reply.stop_reason == "tool_use"
    assert not (room / "ada" / ".looplab").exists()


def test_a_cap_of_zero_refuses_the_first_call(room, monkeypatch):
    caps(monkeypatch, calls=0)
    api = FakeAPI()
    with pytest.raises(AllowanceReached, match="you have made 0 of the 0 model calls"):
        ask(live_client(room, api))
    assert api.requests == []


# --- what the learner and the instructor read -------------------------------------------------------------------------


def test_the_live_client_says_the_allowance_under_its_mode_line(room, monkeypatch, capsys):
    caps(monkeypatch, calls=50, tokens=200000)
    ask(live_client(room, FakeAPI()))
    live_client(room, FakeAPI(), quiet=False)
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("looplab: live, talking to the real API")
    assert lines[1] == ("looplab: this hub caps each learner's use of the key; yours so far: 1 of 50 model calls "
                        "and 80 of 200,000 tokens")


def test_a_cap_that_is_not_a_number_is_refused_when_the_client_is_made(room, monkeypatch):
    monkeypatch.setenv(MAX_CALLS, "fifty")
    with pytest.raises(ValueError, match=r"LOOPLAB_MAX_CALLS must be a whole number, 0 or more .* got 'fifty'"):
        live_client(room, FakeAPI())


def test_a_count_that_cannot_be_read_sends_nothing(room, monkeypatch):
    caps(monkeypatch, calls=10)
    usage_file = room / "ada" / ".looplab" / "usage.json"
    usage_file.parent.mkdir(parents=True)
    usage_file.write_text("{not json")
    api = FakeAPI()
    with pytest.raises(AllowanceError, match="cannot be read or written"):
        ask(live_client(room, api))
    assert api.requests == []


def test_a_count_that_cannot_be_written_sends_nothing_not_even_a_retry(room, monkeypatch):
    """An OSError reaching the SDK would be a "connection error", retried, and a retry is not counted: refused here."""
    caps(monkeypatch, calls=10)
    (room / "not-a-folder").write_text("")
    monkeypatch.setenv(USAGE_FILE, str(room / "not-a-folder" / "usage.json"))
    api = FakeAPI()
    with pytest.raises(AllowanceError, match="cannot be read or written"):
        ask(live_client(room, api))
    assert api.requests == []


def test_the_line_is_french_in_a_french_notebook(room, monkeypatch):
    monkeypatch.setenv(language.OVERRIDE, "fr")
    caps(monkeypatch, tokens=1_000_000)
    usage_file = room / "ada" / ".looplab" / "usage.json"
    usage_file.parent.mkdir(parents=True)
    usage_file.write_text(json.dumps({"calls": 12, "input_tokens": 990_000, "output_tokens": 10_412}))
    with pytest.raises(AllowanceReached) as raised:
        ask(live_client(room, FakeAPI()))
    assert str(raised.value).startswith(
        "looplab\u00a0: appel non envoyé\u202f; vos appels ont consommé 1\u202f000\u202f412 jetons sur les "
        "1\u202f000\u202f000 que ce hub accorde à chaque apprenant. Demandez à votre enseignant")


def test_a_notebook_shows_the_cap_as_one_line(room, monkeypatch):
    """In a real kernel: the cell that reaches the cap shows its one line, no traceback of the SDK."""
    caps(monkeypatch, calls=0)
    api = FakeAPI()
    with api.serving() as base_url:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", base_url)
        monkeypatch.setenv("PYTHONPATH", str(ROOT))
        notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(
            "import looplab\nclient = looplab.client('calculator', quiet=True)\n"
            "client.messages.create(model=looplab.MODEL, max_tokens=64,\n"
            "                       messages=[{'role': 'user', 'content': 'Hi'}])")])
        NotebookClient(notebook, timeout=120, kernel_name="python3", allow_errors=True).execute()
    [error] = [output for output in notebook.cells[0].outputs if output.output_type == "error"]
    assert error.ename == "AllowanceReached" and error.evalue.startswith("looplab: call not sent; you have made 0 of")
    shown = re.sub(r"\x1b\[[0-9;]*m", "", "\n".join(error.traceback)).splitlines()
    assert shown == [f"AllowanceReached: {error.evalue}"]
    assert api.requests == []
