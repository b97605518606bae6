"""The kernel's messages, read strictly: one the grader cannot read is the learner's doing, not the grader's.

The kernel runs the learner's code, and that code can break the messages the kernel sends: replace
`json.dumps` in the kernel and every message after it is the same string, without the header a
Jupyter client reads first (jupyter_client's Session then raises `KeyError: 'msg_id'`), or a message
can lack what nbclient reads from it. Raised deep in jupyter_client or nbclient, that looked like
the grader's own failure ("grader error"). `StrictSession` makes every such message an
UnreadableMessage, which the runner turns into the notebook's own status (rows/from_run.py): the exercises
graded before still count, the rest of the run is unaffected.
"""

from __future__ import annotations

from jupyter_client.session import Session

# What nbclient (and outputs.py) read from the content of each kind of message a cell's run receives.
CONTENT = {
    "status": {"execution_state": str},
    "stream": {"name": str, "text": str},
    "display_data": {"data": dict},
    "update_display_data": {"data": dict},
    "execute_result": {"data": dict},
    "error": {"ename": str, "evalue": str, "traceback": list},
    "execute_reply": {"status": str},
}


class UnreadableMessage(Exception):
    """The kernel sent a message the grader cannot read (the learner's code broke the kernel's messaging)."""


def unreadable(message) -> str | None:
    """Why a deserialized message cannot be read, or None when it can."""
    if not isinstance(message, dict):
        return "it is not a message"
    for part in ("header", "parent_header", "metadata", "content"):
        if not isinstance(message.get(part), dict):
            return f"its {part} is not an object"
    header = message["header"]
    if not isinstance(header.get("msg_id"), str) or not isinstance(header.get("msg_type"), str):
        return "its header has no message id and type"
    for key, kind in CONTENT.get(header["msg_type"], {}).items():
        if not isinstance(message["content"].get(key), kind):
            return f"a {header['msg_type']} message without its {key}"
    return None


class StrictSession(Session):
    """A jupyter_client Session (the kernel manager's, which its client shares) that raises UnreadableMessage
    for any message it cannot read, whatever jupyter_client would have raised."""

    def deserialize(self, msg_list, content: bool = True, copy: bool = True) -> dict:
        try:
            message = super().deserialize(msg_list, content=content, copy=copy)
        except Exception as error:  # a bad signature, JSON that is not, a header without its id...
            raise UnreadableMessage(f"{type(error).__name__}: {error}") from None
        why = unreadable(message) if content else None
        if why:
            raise UnreadableMessage(why)
        return message
