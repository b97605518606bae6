"""`looplab.client(recording)`: a genuine `anthropic.Anthropic`, offline by default.

Three modes, chosen by the environment so the same notebook runs everywhere:
- offline (no ANTHROPIC_API_KEY, or LOOPLAB_MODE=offline): answers come from a recording;
  nothing touches the network, no key or budget needed (under the grader, the kernel holds no recording:
  the grader replays it, looplab/withheld.py);
- live (a key is set): the real API;
- record (LOOPLAB_MODE=record and a key): live, and every exchange is saved to the recording.
Live and record spend: where the environment caps a learner's calls or tokens (a hub sharing one key for the
room: LOOPLAB_MAX_CALLS, LOOPLAB_MAX_TOKENS), every call counts against one count per learner, and past a cap
none leaves (allowance.py). Offline spends nothing and is never capped.
In all three the traffic is observed the same way, so the history viewer works in each.
"""

from __future__ import annotations

import contextlib
import os
import weakref
from pathlib import Path

import anthropic
import httpx2

from .catalogue import words
from .error_display import show_api_errors_briefly
from .model_id import MODEL  # re-exported: the one model id, kept where modules that never call the API read it
from .recordings import Recording, recording_path
from .transport import ObservedTransport, RecordingTransport, Replay, Traffic
from .withheld import RemoteReplay, replays_remotely

MODES = ("offline", "live", "record")
OFFLINE_API_KEY = "offline-no-key-needed"
RECORD_INTO = "LOOPLAB_RECORD_INTO"  # record mode: write the recording into this folder instead of in place

WORDS = words(__file__)

_traffic_by_client: "weakref.WeakKeyDictionary[anthropic.Anthropic, Traffic]" = weakref.WeakKeyDictionary()


def current_mode() -> str:
    """The mode the environment asks for: LOOPLAB_MODE if set, else live when a key is present."""
    mode = os.environ.get("LOOPLAB_MODE", "").strip().lower()
    if mode and mode not in MODES:
        raise ValueError(WORDS("mode_unknown", modes=", ".join(MODES), mode=mode))
    if not mode:
        mode = "live" if os.environ.get("ANTHROPIC_API_KEY") else "offline"
    if mode != "offline" and not os.environ.get("ANTHROPIC_API_KEY"):
        raise ValueError(WORDS("mode_needs_key", mode=mode))
    return mode


def offline_environment(environ=None) -> dict[str, str]:
    """A copy of the environment (os.environ unless given) in which looplab can only be offline: no ANTHROPIC_*
    variable (no key, no base URL to another server) and LOOPLAB_MODE=offline. Whatever runs the course's
    code for a grade, a stored output or a test starts from it, so a key on the machine is never spent."""
    env = {key: value for key, value in (os.environ if environ is None else environ).items()
           if not key.startswith("ANTHROPIC_")}
    env["LOOPLAB_MODE"] = "offline"
    return env


@contextlib.contextmanager
def offline_environ():
    """os.environ as offline_environment() while the block runs (for code run in this process, or the
    kernels it starts), as it was after."""
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(offline_environment(saved))
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


def client(
    recording: str | Path,
    *,
    mode: str | None = None,
    upstream: httpx2.BaseTransport | None = None,
    quiet: bool = False,
    print_hints: bool = True,
) -> anthropic.Anthropic:
    """A real SDK client whose traffic looplab observes, replays or records.

    `recording` is the name of a recording shipped with the course (e.g. "calculator") or a path
    to a .json file. `upstream` replaces the network in live and record modes (tests use it to
    stand in for the API).
    """
    mode = mode or current_mode()
    if mode not in MODES:
        raise ValueError(WORDS("mode_argument", modes=", ".join(MODES), mode=mode))
    remote = mode == "offline" and replays_remotely(recording)  # under the grader: no recordings in the kernel
    saved = Recording(recording_path(recording), []) if remote else Recording.load(recording)
    if mode == "record" and os.environ.get(RECORD_INTO):
        # Authoring writes aside, and the recording is replaced only when the whole run succeeded.
        saved = Recording.load(Path(os.environ[RECORD_INTO]) / f"{saved.name}.json")
    traffic = Traffic()
    ledger = None

    if mode == "offline":
        answer: httpx2.BaseTransport = httpx2.MockTransport(RemoteReplay(str(recording)) if remote else Replay(saved))
        api_key, max_retries = OFFLINE_API_KEY, 0
    else:
        network = upstream or httpx2.HTTPTransport()
        # A room sharing one key caps each learner's calls and tokens (allowance.py): checked before the network.
        from .allowance import AllowanceTransport, Ledger, from_environment  # live only: offline imports none of it

        allowance = from_environment()
        if allowance is not None:
            ledger = Ledger(allowance)
            network = AllowanceTransport(network, ledger)
        answer = RecordingTransport(network, saved) if mode == "record" else network
        api_key, max_retries = os.environ.get("ANTHROPIC_API_KEY") or OFFLINE_API_KEY, 2

    # In a notebook, an API error shows in a few lines that include the hint, so it is not printed twice.
    hint_in_the_error = show_api_errors_briefly()
    transport = ObservedTransport(answer, traffic, print_hints=print_hints and not hint_in_the_error)
    sdk_client = anthropic.Anthropic(
        api_key=api_key,
        max_retries=max_retries,
        http_client=anthropic.DefaultHttpxClient(transport=transport),
        **({"base_url": "https://api.anthropic.com"} if mode == "offline" else {}),
    )
    remember_traffic(sdk_client, traffic)
    if not quiet:
        print(describe_mode(mode, saved))
        if ledger is not None:
            print(ledger.describe())
    return sdk_client


def describe_mode(mode: str, recording: Recording) -> str:
    """The line a notebook prints when it makes its client: which mode, which recording, how to change."""
    return WORDS(f"mode_{mode}", recording=recording.name, model=MODEL)


def remember_traffic(sdk_client: anthropic.Anthropic, log: Traffic) -> None:
    _traffic_by_client[sdk_client] = log


def traffic(sdk_client: anthropic.Anthropic) -> Traffic:
    """The exchanges a client made by `looplab.client()` has seen."""
    try:
        return _traffic_by_client[sdk_client]
    except KeyError:
        raise TypeError(WORDS("not_ours")) from None
