"""A learner's allowance of model calls and tokens, for a room that shares one API key (live mode on a hub).

On a JupyterHub every learner's server gets the same ANTHROPIC_API_KEY from the hub's environment, so one
learner's loop that never stops could spend the room's budget. The hub sets the caps beside the key:

    LOOPLAB_MAX_CALLS    model calls one learner may make       (unset or empty: no cap)
    LOOPLAB_MAX_TOKENS   tokens one learner's calls may spend   (unset or empty: no cap)
    LOOPLAB_USAGE_FILE   where the count is kept                (default ~/.looplab/usage.json)

A learner alone with their own key sets neither and is never capped. client.py adds the layer in live and
record modes only, around the network: offline mode spends nothing and is never capped.

Per learner, not per kernel: every kernel and every client of one learner reads and writes one count, a small
JSON file in their home, so a kernel restart does not start it again, and another learner (another home) has a
count of their own. Several kernels of one learner may call at once: each update reads and rewrites the file
under an exclusive lock (fcntl.flock on `usage.json.lock` beside it) and replaces it whole (a new file renamed
over the old), so no update is lost and no reader sees half a file.

What counts:
- a call, when it is sent: `POST /v1/messages` (the one endpoint the course calls; others pass uncounted). Past
  the calls cap the call is refused before any byte leaves. The SDK's own retries of one call (a 429 with its
  `retry-after`, a 529, a dropped connection: `max_retries`) are that same call: counted once, and never refused
  half-way. The SDK marks them itself, `x-stainless-retry-count` above 0 on a retry.
- tokens, when a response comes back: its `usage`, input (the cache's input tokens too: the API's `input_tokens`
  leaves out the part of the prompt read from or written to its cache, which is spent all the same) plus output.
  An error (a 429...) carries no usage and costs nothing. A stream's usage is read from its events as they pass.
  The tokens cap is checked before each call: the call that crosses it goes through (nobody knows its size before
  it is answered), the next is refused.

Refused, a call raises AllowanceReached, which a notebook shows as one line (its `_render_traceback_`): which
cap, how much is used, what to do. It derives from the SDK's base error, so the SDK lets it through as it is: no
"Connection error.", no retry. A count that cannot be read or written refuses the call too (AllowanceError, the
same one line): a cap that cannot count lets nothing through.

It guards the room's budget against a loop that never stops, not against a learner set on spending it: the key
is in their environment, and the file is in their home.
"""

from __future__ import annotations

import contextlib
import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Iterator, Mapping

import anthropic
import httpx2

from .catalogue import words
from .transport import MESSAGES_PATH

try:
    import fcntl
except ImportError:  # Windows: no lock (no hub runs there; a learner alone with their own key sets no cap)
    fcntl = None

MAX_CALLS = "LOOPLAB_MAX_CALLS"
MAX_TOKENS = "LOOPLAB_MAX_TOKENS"
USAGE_FILE = "LOOPLAB_USAGE_FILE"
RETRY_COUNT = "x-stainless-retry-count"  # the SDK's own header: "0" on a call's first attempt, 1, 2... on its retries
TOKEN_FIELDS = ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens", "output_tokens")

WORDS = words(__file__)


class AllowanceError(anthropic.AnthropicError):
    """A call refused before it left: the learner's allowance is used up, or its count cannot be read or written.

    In a notebook it shows as its one line, not the SDK's frames (error_display.py's idea, one line here: the
    line says everything, and a loop that reached the cap is not where the learner's mistake is). The history
    viewer shows the refused request with this `kind` (transport.ObservedTransport records it)."""

    kind = "allowance_reached"

    def _render_traceback_(self) -> list[str]:
        return [f"{type(self).__name__}: {self}"]


class AllowanceReached(AllowanceError):
    """A cap reached: `cap` is "calls" or "tokens", `used` and `limit` the numbers the line says."""

    def __init__(self, message: str, cap: str, used: int, limit: int):
        super().__init__(message)
        self.cap, self.used, self.limit = cap, used, limit


@dataclass(frozen=True)
class Allowance:
    """The caps the environment sets (None: that one uncapped) and the file that counts against them."""

    calls: int | None
    tokens: int | None
    path: Path


@dataclass
class Usage:
    """What one learner has spent so far: the usage file's content."""

    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0

    @property
    def tokens(self) -> int:
        return self.input_tokens + self.output_tokens


def from_environment(environ: Mapping[str, str] | None = None) -> Allowance | None:
    """The allowance the environment (os.environ unless given) sets, or None when it caps nothing.

    A cap that is not a whole number of 0 or more is refused (ValueError) when the client is made: a typo in the
    hub's configuration must not leave the room uncapped."""
    env = os.environ if environ is None else environ
    calls, tokens = _cap(env, MAX_CALLS), _cap(env, MAX_TOKENS)
    if calls is None and tokens is None:
        return None
    return Allowance(calls, tokens, usage_path(env))


def usage_path(environ: Mapping[str, str] | None = None) -> Path:
    env = os.environ if environ is None else environ
    named = env.get(USAGE_FILE, "").strip()
    return Path(named).expanduser() if named else Path.home() / ".looplab" / "usage.json"


def _cap(env: Mapping[str, str], name: str) -> int | None:
    value = env.get(name, "").strip()
    if not value:
        return None
    try:
        number = int(value)
    except ValueError:
        number = -1
    if number < 0:
        raise ValueError(WORDS("not_a_number", name=name, value=value))
    return number


# --- the count, shared by every kernel of one learner ----------------------------------------------------------


class Ledger:
    """One learner's count against their allowance, in the usage file."""

    def __init__(self, allowance: Allowance):
        self.allowance = allowance
        self.path = allowance.path

    def admit(self) -> None:
        """A new call: counted, or refused (AllowanceReached) when a cap is reached; nothing is sent then.

        A count that cannot be read or written refuses the call too (AllowanceError): an OSError let through would
        reach the SDK as a connection error, which it retries, and its retries are not counted."""
        try:
            with self._locked():
                usage = self.read()
                refusal = self.refusal(usage)
                if refusal is not None:
                    raise refusal
                usage.calls += 1
                self._write(usage)
        except OSError as error:
            raise AllowanceError(WORDS("count_unusable", path=self.path, problem=error)) from None

    def spent(self, usage: Mapping | None) -> None:
        """A response's `usage` added to the count (a response without one costs nothing).

        The answer has come and is paid for: a count that cannot be kept now does not take it from the learner;
        the next call's `admit` refuses, saying why."""
        input_tokens, output_tokens = tokens_of(usage)
        if not input_tokens and not output_tokens:
            return
        with contextlib.suppress(OSError, AllowanceError), self._locked():
            count = self.read()
            count.input_tokens += input_tokens
            count.output_tokens += output_tokens
            self._write(count)

    def refusal(self, usage: Usage) -> AllowanceReached | None:
        calls, tokens = self.allowance.calls, self.allowance.tokens
        if calls is not None and usage.calls >= calls:
            return AllowanceReached(WORDS("calls_reached", used=number(usage.calls), cap=number(calls), path=self.path),
                                    "calls", usage.calls, calls)
        if tokens is not None and usage.tokens >= tokens:
            return AllowanceReached(WORDS("tokens_reached", used=number(usage.tokens), cap=number(tokens),
                                          path=self.path),
                                    "tokens", usage.tokens, tokens)
        return None

    def read(self) -> Usage:
        """The count as the file holds it (none yet: nothing spent). A file that cannot be read refuses the call
        (AllowanceError): a count that cannot be read cannot cap."""
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            return Usage(**{name: _whole(data[name]) for name in ("calls", "input_tokens", "output_tokens")
                            if name in data})
        except FileNotFoundError:
            return Usage()
        except (OSError, ValueError, TypeError) as error:  # not JSON, not an object, a number that is not a count
            raise AllowanceError(WORDS("count_unusable", path=self.path, problem=error)) from None

    def describe(self) -> str:
        """The line a live client prints under its mode line: the caps and what is used of them."""
        usage = self.read()
        parts = []
        if self.allowance.calls is not None:
            parts.append(WORDS("calls_used", used=number(usage.calls), cap=number(self.allowance.calls)))
        if self.allowance.tokens is not None:
            parts.append(WORDS("tokens_used", used=number(usage.tokens), cap=number(self.allowance.tokens)))
        return WORDS("allowance_line", used=WORDS("and").join(parts))

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        """The learner's count to themselves while the block runs: an exclusive lock on a file beside it. flock
        locks an open file, so two kernels, and two threads of one kernel (each opens its own), wait for each other."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.path.with_name(self.path.name + ".lock"), "a") as lock:
            if fcntl is not None:
                fcntl.flock(lock, fcntl.LOCK_EX)
            yield  # closing the file releases the lock

    def _write(self, usage: Usage) -> None:
        """The whole file replaced at once: written beside it, then renamed over it."""
        fresh = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        fresh.write_text(json.dumps(asdict(usage), indent=2) + "\n", encoding="utf-8")
        os.replace(fresh, self.path)


def number(value: int) -> str:
    """A count as the course's language groups its thousands: 200,000 in English, 200 000 in French (the
    grader's numbers.py does the same; not imported from there, which would bring the grader along)."""
    return f"{value:,}".replace(",", WORDS("thousands"))


def _whole(value) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(repr(value))
    return value


def tokens_of(usage: Mapping | None) -> tuple[int, int]:
    """(input, output) tokens of a response's `usage`: input counts the cache's input tokens too."""
    if not isinstance(usage, Mapping):
        return 0, 0

    def count(name: str) -> int:
        value = usage.get(name)
        return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0

    return sum(count(name) for name in TOKEN_FIELDS[:-1]), count("output_tokens")


# --- the transport layer -----------------------------------------------------------------------------------------


class AllowanceTransport(httpx2.BaseTransport):
    """Around the network (live and record modes): each new call admitted by the ledger before it is passed on,
    each response's tokens counted as it comes back."""

    def __init__(self, inner: httpx2.BaseTransport, ledger: Ledger):
        self.inner = inner
        self.ledger = ledger

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        if request.url.path != MESSAGES_PATH or request.method != "POST":
            return self.inner.handle_request(request)
        if not is_retry(request):
            self.ledger.admit()
        response = self.inner.handle_request(request)
        if not response.is_success:
            return response  # an error spends no tokens; the SDK may retry it, as the same call
        if response.headers.get("content-type", "").startswith("text/event-stream"):
            return counted_stream(request, response, self.ledger)
        response.read()
        try:
            body = response.json()
        except ValueError:
            return response
        self.ledger.spent(body.get("usage") if isinstance(body, dict) else None)
        return response

    def close(self) -> None:
        self.inner.close()


def is_retry(request: httpx2.Request) -> bool:
    """A retry the SDK makes of a call already sent (and counted)."""
    try:
        return int(request.headers.get(RETRY_COUNT, "0")) > 0
    except ValueError:
        return False


def counted_stream(request: httpx2.Request, response: httpx2.Response, ledger: Ledger) -> httpx2.Response:
    """The same stream, decoded (its content-encoding undone, so its events can be read as they pass), whose
    usage is counted when it closes: `message_start` carries the input tokens, `message_delta` the output so far
    (each a running total: the last one seen counts). A stream closed early counts what it carried."""
    headers = [(name, value) for name, value in response.headers.raw
               if name.lower() not in (b"content-encoding", b"content-length")]
    return httpx2.Response(response.status_code, headers=headers, stream=_UsageOfStream(response, ledger),
                           request=request, extensions=response.extensions)


class _UsageOfStream(httpx2.SyncByteStream):
    def __init__(self, response: httpx2.Response, ledger: Ledger):
        self.response = response
        self.ledger = ledger
        self.pending = b""
        self.usage: dict[str, int] = {}
        self.counted = False

    def __iter__(self) -> Iterator[bytes]:
        for chunk in self.response.iter_bytes():
            self._read(chunk)
            yield chunk

    def _read(self, chunk: bytes) -> None:
        *lines, self.pending = (self.pending + chunk).split(b"\n")
        for line in lines:
            if not line.startswith(b"data:"):
                continue
            try:
                event = json.loads(line[len(b"data:"):])
            except ValueError:
                continue
            if not isinstance(event, dict):
                continue
            if event.get("type") == "message_start":
                usage = event.get("message", {}).get("usage") if isinstance(event.get("message"), dict) else None
            else:
                usage = event.get("usage") if event.get("type") == "message_delta" else None
            if isinstance(usage, dict):
                self.usage.update({name: value for name, value in usage.items()
                                   if name in TOKEN_FIELDS and isinstance(value, int)})

    def close(self) -> None:
        try:
            self.response.close()
        finally:
            if not self.counted:
                self.counted = True
                self.ledger.spent(self.usage)
