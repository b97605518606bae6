"""The other end's objects, as this end's code uses them: calling one asks the other end, over the channel.

A channel (looplab/channel.py) joins the grader and a kernel, and each end sometimes hands the other an
object that is not data: the grader hands the learner's code a scripted client, a stream of lines, a
function (looplab/serve.py); a kernel hands the course's code, run in the grader, its own client and
streams (looplab/withheld.py, looplab/grade/judgement/course_line.py). What crosses is a tag with a number
(`{"$client": 3}`); the end that receives it makes one of these stand-ins, and each use of the stand-in is a
request to the end that holds the object (looplab/object_table.py answers it there).

Each stand-in is given an `asker`, its end of the conversation, with two methods:
    asker.invoke(ref, method, args, kwargs) -> the value      call a method of the object numbered `ref`
    asker.ask(message) -> the answer                          a request of another kind (a model's reply)
and what the other end refuses comes back raised here (`RemoteFailure`), to go on through the code that used it.
"""

from __future__ import annotations

import io
from typing import Any


class RemoteFailure(Exception):
    """The other end's failure while this end's code used one of its objects (a stream read past its end, a
    refused `input()`, the API's error): it goes on through that code, as it would in-process."""


class RemoteCallable:
    """A function of the other end's: calling it runs it there."""

    def __init__(self, asker, ref: int):
        self._looplab_call, self._looplab_ref = asker, ref

    def __call__(self, *args, **kwargs):
        return self._looplab_call.invoke(self._looplab_ref, "__call__", args, kwargs)


class RemoteStream(io.TextIOBase):
    """A text stream of the other end's (the lines `run` reads, what it writes): each read or write happens there."""

    def __init__(self, asker, ref: int):
        super().__init__()
        self._looplab_call, self._looplab_ref = asker, ref

    def _invoke(self, method: str, *args):
        return self._looplab_call.invoke(self._looplab_ref, method, args, {})

    def readable(self) -> bool:
        return True

    def writable(self) -> bool:
        return True

    def read(self, size=-1):
        return self._invoke("read", size)

    def readline(self, size=-1):
        return self._invoke("readline", size)

    def readlines(self, hint=-1):
        return self._invoke("readlines", hint)

    def write(self, text):
        return self._invoke("write", text)

    def writelines(self, lines):
        return self._invoke("writelines", list(lines))

    def getvalue(self):
        return self._invoke("getvalue")

    def flush(self):
        return None

    def __iter__(self):
        return self

    def __next__(self):
        line = self.readline()
        if not line:
            raise StopIteration
        return line


class MinimalStandIn:
    """A client of the other end's, used by its one method: `.messages.create(**kwargs)` runs there."""

    def __init__(self, asker, ref: int):
        self._looplab_call, self._looplab_ref = asker, ref
        self.messages = self

    def create(self, **kwargs):
        return self._looplab_call.invoke(self._looplab_ref, "messages.create", (), kwargs)


BASE_URL = "https://api.anthropic.com"


def sdk_client(asker, ref: int):
    """A real SDK client whose transport sends each HTTP request to the other end's client numbered `ref` and
    returns its answer: the SDK's own request and error paths run here, the model (and its rules) there."""
    import anthropic
    import httpx2

    def ask(request: httpx2.Request) -> httpx2.Response:
        return response_from(asker.ask({"op": "model", "client": ref, "method": request.method,
                                        "path": request.url.path, "content": request.read().decode("utf-8", "replace")}))

    return anthropic.Anthropic(api_key="scripted-no-key-needed", base_url=BASE_URL, max_retries=0,
                               http_client=anthropic.DefaultHttpxClient(transport=httpx2.MockTransport(ask)))


def answer_from(response) -> dict:
    """An HTTP response as it crosses a channel: its status, body and headers (read whole)."""
    return {"status": response.status_code, "body": response.read().decode("utf-8", "replace"),
            "headers": dict(response.headers)}


def response_from(answer: dict):
    """The HTTP response an answer of `answer_from`'s shape holds, for the SDK on this end."""
    import httpx2

    headers = {str(key): str(value) for key, value in (answer.get("headers") or {}).items()}
    return httpx2.Response(int(answer.get("status", 500)), content=str(answer.get("body", "")).encode(),
                           headers=headers)


def stand_in(tag: str, asker, ref: Any):
    """The stand-in for the other end's object tagged `tag` (`$client`, `$stream`, `$callable`, `$client_like`);
    None for a tag that names no kind of object."""
    makers = {"$client": sdk_client, "$stream": RemoteStream, "$callable": RemoteCallable,
              "$client_like": MinimalStandIn}
    maker = makers.get(tag)
    return maker(asker, ref) if maker is not None and isinstance(ref, int) else None


class StandIns:
    """The other end's objects one conversation was handed, each stand-in made once: by the number the other end
    gave it, and back to that number when this end's code hands it back (`{"$ref": n}`)."""

    def __init__(self, asker):
        self.asker = asker
        self.made: dict[int, Any] = {}

    def of(self, tag: str, ref: Any) -> Any:
        """The stand-in for the other end's object numbered `ref` (tagged `tag`); None for a tag of no kind."""
        if ref not in self.made:
            made = stand_in(tag, self.asker, ref)
            if made is None:
                return None
            self.made[ref] = made
        return self.made[ref]

    def handed_back(self, value: Any) -> dict | None:
        """`{"$ref": n}` when `value` is one of these stand-ins (the other end gets its own object back), else None."""
        ref = next((ref for ref, made in self.made.items() if made is value), None)
        return {"$ref": ref} if ref is not None else None
