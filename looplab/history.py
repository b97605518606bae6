"""A history as steps, one per model call: what the viewer shows, worked out without any widget.

Two sources make steps. A client made by `looplab.client()` has its traffic log: each request the
SDK sent (wire JSON) with the response or the API error it got. A plain `messages` list, as a
learner builds it, is cut at each assistant message: the messages before it were the request,
the assistant message was the answer; when the list ends with a user message, a last step shows
it as the next request would send it, with the API's verdict.

The thread the course is about is the id: each `tool_use.id` gets a label (A, B, C...) and its
`tool_result.tool_use_id` gets the same one, so the pairing reads without colour too.

Each step is compared with the step before of its kind (`_same_kind`), to mark what it sends anew. A request
of an agent's that does not extend its call before, but keeps that history's end word for word, is a splice
(`Splice`): notebook 8's compaction makes one, replacing the old exchanges with a summary.

The kinds are also the agents (`Step.agent`): the first seen is the parent. A tool whose function runs another
agent (notebook 9's subagent) puts that agent's calls between the parent's call that asked for the tool and the
parent's call that answers it: a `Delegation` links them both ways.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from string import ascii_uppercase
from types import SimpleNamespace
from typing import Any

from pydantic import BaseModel

from . import conversation
from .catalogue import words
from .rules import check_request

WORDS = words(__file__)


def to_wire(value: Any) -> Any:
    """SDK objects as the JSON the SDK sends for them (unset fields are not sent); plain objects by their fields,
    as a client that is not the SDK's may return them."""
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", exclude_unset=True, by_alias=True)
    if isinstance(value, SimpleNamespace):
        return to_wire(vars(value))
    if isinstance(value, dict):
        return {key: to_wire(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_wire(item) for item in value]
    return value


@dataclass
class Step:
    """One model call: the messages sent, and what came back."""

    messages: list
    response: dict | None = None
    error: dict | None = None
    hint: str | None = None
    # The rest of the request (client traffic only; a messages list has neither): the learner sees
    # that every call sends them again, which is what the cap of exercise 2.3 saves.
    system: Any = None
    tools: list | None = None
    # The step before of this one's kind (_same_kind): what is new, the growth of the input and a splice are
    # measured from it. Its index, None for the first of its kind.
    compared_with: int | None = None
    previous_length: int = 0  # messages[:previous_length] were already in the step compared with
    resent_response: int | None = None  # the index of the message that is that step's response, as it came
    splice: Splice | None = None  # client traffic only: the start of the history replaced (a compaction)
    # Which agent made the call: 0 the first kind of call seen (the parent), 1 the next kind (_same_kind)...
    agent: int = 0
    # Client traffic only, a subagent (notebook 9, Delegation): a subagent's step knows the call it ran inside;
    # the caller's step, the calls of its response that ran one; the step after, the answers it sends back.
    inside: Delegation | None = None
    delegations: list = field(default_factory=list)
    came_back: list = field(default_factory=list)
    # The ids the viewer flags in `messages`, as conversation.py pairs them (see UnmatchedIds).
    dangling: set = field(default_factory=set)
    pending: set = field(default_factory=set)
    orphans: set = field(default_factory=set)
    misplaced: set = field(default_factory=set)
    # The tool_use ids of the response still waiting for their result: only the last step's, as a
    # later request would have answered (or flagged) them. A loop that raises before answering
    # leaves its history here.
    response_pending: set = field(default_factory=set)

    @property
    def outcome(self) -> str:
        """The step in a few words: what the model did, or why the request failed."""
        if self.error is not None:
            kind = self.error.get("error", {}).get("type")
            if kind in ("not_recorded", "allowance_reached"):  # refused by looplab, before the API (allowance.py)
                return WORDS(kind)
            return WORDS("refused") if kind == "invalid_request_error" else WORDS("error", kind=kind)
        if self.response is None:
            return WORDS("next_request")
        tools = [b.get("name", "?") for b in _blocks(self.response.get("content")) if b.get("type") == "tool_use"]
        stop_reason = self.response.get("stop_reason")
        if tools and self.response_pending:
            return WORDS("asked_unanswered", tools=_names(tools))
        if tools:
            return WORDS("asked", tools=_names(tools))
        if stop_reason in (None, "end_turn"):
            return WORDS("answered")
        return WORDS("stopped", stop_reason=stop_reason)

    @property
    def usage(self) -> dict | None:
        """The response's token counts (client traffic only): they grow as the history is resent."""
        usage = self.response.get("usage") if isinstance(self.response, dict) else None
        return usage if isinstance(usage, dict) else None

    @property
    def error_message(self) -> str | None:
        if self.error is None:
            return None
        return self.error.get("error", {}).get("message")

    def sent_before(self, index: int) -> bool:
        """messages[index] was in the request of the step compared with: at the same place, or kept word for word
        at a splice."""
        return index < self.previous_length or (self.splice is not None and index in self.splice.kept)


def _names(tools: list[str]) -> str:
    counts = {name: tools.count(name) for name in dict.fromkeys(tools)}
    parts = [name if count == 1 else f"{name} ×{count}" for name, count in counts.items()]
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + WORDS("and") + parts[-1]


def _blocks(content: Any) -> list[dict]:
    if isinstance(content, list):
        return [block for block in content if isinstance(block, dict)]
    return []


def steps_from_traffic(exchanges: list[dict]) -> list[Step]:
    steps = []
    for exchange in exchanges:
        request = exchange["request"]
        messages = to_wire(request.get("messages", []))
        steps.append(Step(messages, exchange.get("response"), exchange.get("error"), exchange.get("hint"),
                          system=to_wire(request.get("system")), tools=to_wire(request.get("tools"))))
    steps = _link(steps)
    for step in steps:  # only here: a messages list is one history that only grows, it has no splice
        step.splice = find_splice(steps, step)
    for delegation in find_delegations(steps):  # nor a subagent: it is one agent's history
        _mark(steps, delegation)
    return steps


def steps_from_messages(messages: list) -> list[Step]:
    wire = to_wire(list(messages))
    steps = []
    for index, message in enumerate(wire):
        if isinstance(message, dict) and message.get("role") == "assistant":
            answer = {"role": "assistant", "content": message.get("content")}
            steps.append(Step(wire[:index], answer))
    ends_with_user = bool(wire) and isinstance(wire[-1], dict) and wire[-1].get("role") == "user"
    if ends_with_user:
        steps.append(next_request(wire))
    return _link(steps)


def next_request(messages: list) -> Step:
    """The list as the next call would send it, with the API's verdict on it."""
    step = Step(messages)
    violation = check_request({"messages": messages})
    if violation is not None:
        step.error = {"type": "error", "error": {"type": "invalid_request_error", "message": violation.message}}
        step.hint = violation.hint
    return step


def _link(steps: list[Step]) -> list[Step]:
    """Mark what is new since the step before of the same kind, and the ids that answer nothing or go unanswered."""
    for index, step in enumerate(steps):
        step.compared_with = _latest_of_its_kind(steps, index)
        step.agent = _agent_of(steps, index)
        before = steps[step.compared_with] if step.compared_with is not None else Step([])
        step.previous_length = _common_length(step.messages, before.messages)
        previous_answer = _as_message(before.response)  # the message that would resend that step's response
        step.resent_response = next((position for position, message in enumerate(step.messages) if previous_answer
                                     and position >= step.previous_length and message == previous_answer), None)
        unmatched = unmatched_ids(step.messages)
        step.dangling, step.pending = unmatched.dangling, unmatched.pending
        step.orphans, step.misplaced = unmatched.orphans, unmatched.misplaced
    if steps and steps[-1].response is not None:
        last = steps[-1]
        last.response_pending = unmatched_ids(last.messages + [_as_message(last.response)]).pending
    return steps


def _same_kind(step: Step, other: Step) -> bool:
    """Two calls of one program: the same system prompt, or the same tools.

    An agent sends both again with every call. The summary call of a compaction (looplab/compaction.py) sends a
    system prompt of its own and no tools: it is of no agent call's kind, so the agent's next call is compared with
    the agent's call before, not with it (what is new, the growth of the input, the splice). Either one is enough,
    so that a learner who adds a system prompt to the same tools (notebook 2) still sees what it costs; a messages
    list has neither, so each of its steps is compared with the one before.
    """
    return step.system == other.system or (bool(step.tools) and step.tools == other.tools)


def _latest_of_its_kind(steps: list[Step], index: int) -> int | None:
    return next((earlier for earlier in range(index - 1, -1, -1) if _same_kind(steps[index], steps[earlier])), None)


def _agent_of(steps: list[Step], index: int) -> int:
    """The agent of the step it is compared with, or, for the first call of a kind, the next number."""
    step = steps[index]
    if step.compared_with is not None:
        return steps[step.compared_with].agent
    return 1 + max((earlier.agent for earlier in steps[:index]), default=-1)


def _common_length(messages: list, others: list) -> int:
    """How many messages the two lists start with in common."""
    shared = 0
    for mine, theirs in zip(messages, others):
        if mine != theirs:
            break
        shared += 1
    return shared


@dataclass(frozen=True)
class Splice:
    """An agent's request that does not extend its call before: the start of its history was replaced.

    Context compaction (looplab/compaction.py, notebook 8) does this between turns: the old exchanges are folded
    into a summary, the last ones are kept word for word, and the next request sends the summary, the assistant's
    acknowledgement, the kept exchanges and the new line. So the history of the call before (its messages, then its
    response) reads `common + folded + kept`, and this request `common + summary + kept + what follows`.
    """

    since: int  # the index of the step whose history was cut: the agent's call before
    folded: list  # the messages of that step's request that are gone
    folded_at: int  # the index of the first of them in that request
    summary: range  # where what took their place is, in this request (empty: dropped without a summary)
    kept: range  # where the kept end of that history is, in this request


def find_splice(steps: list[Step], step: Step) -> Splice | None:
    """The splice at a step of client traffic, or None where its request extends the history of its call before.

    A splice keeps the end of that history word for word, down to the response the loop appended: so a new
    conversation (it keeps nothing), a retry after a refused request (it had no response) and a history that
    only grew are no splice, nor is a request that only inserted messages (nothing was removed).
    """
    before = steps[step.compared_with] if step.compared_with is not None else None
    if before is None or before.response is None:
        return None
    history = before.messages + [_as_message(before.response)]
    common = _common_length(history, step.messages)
    for start in range(common, len(history)):  # the longest end of that history found in this request
        kept = history[start:]
        at = _position(step.messages, kept, common)
        if at is None:
            continue
        if start == common:  # all of it is there: messages were put before it, none was removed
            return None
        return Splice(since=step.compared_with, folded=history[common:start], folded_at=common,
                      summary=range(common, at), kept=range(at, at + len(kept)))
    return None


def _position(messages: list, run: list, first: int) -> int | None:
    """Where `run` stands in `messages`, word for word, at `first` or later; None if nowhere."""
    return next((at for at in range(first, len(messages) - len(run) + 1) if messages[at:at + len(run)] == run), None)


@dataclass(frozen=True)
class Delegation:
    """A tool call whose function ran another agent: a subagent (notebook 9).

    The parent asks for `research`; the function behind it runs an agent turn of its own (its own system prompt,
    its own tools, a history that starts with the question) before the parent's next request sends its last answer
    back as the tool_result. One client carries both agents, so in its traffic the subagent's calls sit between
    the parent's two: that is how they are found, and the viewer shows them linked both ways.
    """

    call: int  # the index of the step whose response asked for the tool
    tool_id: str  # the tool_use id of that call
    tool_name: str
    steps: tuple  # the indices of the subagent's steps, in order
    answer: int | None  # the index of the caller's next step, whose request holds the tool_result; None: never sent
    last_answer: bool  # that tool_result is, word for word, the text of the subagent's last response


def find_delegations(steps: list[Step]) -> list[Delegation]:
    """The tool calls of client traffic that ran a subagent, in the order of the steps.

    A step whose response asks for tools is waiting for its agent's next call, which answers them: the calls of
    other agents made before it were made by those tools' functions, and each run of them is matched with the call
    it served (`_call_of_run`). A summary call (notebook 8) is not one: it comes between turns, after an answer in
    words, with no call waiting. The latest calls are read first, so that the steps of a subagent's own subagent
    belong to the subagent's call, not to the parent's around it.
    """
    found: list[Delegation] = []
    claimed: set = set()  # the steps already inside a later call
    for index in reversed(range(len(steps))):
        found += _delegations_of(steps, index, claimed)
    return sorted(found, key=lambda delegation: delegation.steps)


def _delegations_of(steps: list[Step], index: int, claimed: set) -> list[Delegation]:
    """The calls of this step's response that ran a subagent: each run of another agent before this agent's next
    call (the steps of `claimed` aside, which it adds to) is matched with a call."""
    response = steps[index].response or {}
    calls = [block for block in _blocks(response.get("content")) if block.get("type") == "tool_use"]
    if not calls:
        return []
    answer = next((later for later in range(index + 1, len(steps)) if steps[later].agent == steps[index].agent), None)
    between = [later for later in range(index + 1, len(steps) if answer is None else answer) if later not in claimed]
    found = []
    for run in _runs(steps, between):
        call = _call_of_run(steps, run, calls, answer)
        if call is None:
            continue
        calls.remove(call)
        claimed.update(run)
        result = _result_of(steps[answer], call.get("id")) if answer is not None else None
        found.append(Delegation(index, call.get("id"), call.get("name", "?"), tuple(run),
                                None if result is None else answer,
                                result is not None and _same_words(result.get("content"), steps[run[-1]].response)))
    return found


def _runs(steps: list[Step], indices: list[int]) -> list[list[int]]:
    """The steps split into agents' runs: each agent's steps, cut where a request starts a history afresh (a tool
    called twice runs its subagent twice, each time from the question alone)."""
    runs: dict[int, list] = {}
    for index in indices:
        step, of_agent = steps[index], runs.setdefault(steps[index].agent, [])
        if not of_agent or (step.previous_length == 0 and step.splice is None):
            of_agent.append([])
        of_agent[-1].append(index)
    return sorted((run for of_agent in runs.values() for run in of_agent), key=lambda run: run[0])


def _call_of_run(steps: list[Step], run: list[int], calls: list[dict], answer: int | None) -> dict | None:
    """The call a run served, known by what went in or what came out: the call whose input holds the question the
    run's history started with, else the call whose result is the run's last answer; None if neither (a summary
    call after a turn stopped at its cap, say, is no subagent of the call left waiting)."""
    first = steps[run[0]].messages[0] if steps[run[0]].messages else None
    question = _text_of(first.get("content")) if isinstance(first, dict) else None
    for call in calls:
        if question is not None and isinstance(call.get("input"), dict) and question in call["input"].values():
            return call
    for call in calls:
        result = _result_of(steps[answer], call.get("id")) if answer is not None else None
        if result is not None and _same_words(result.get("content"), steps[run[-1]].response):
            return call
    return None


def _same_words(content: Any, response: dict | None) -> bool:
    """A tool_result's content says, word for word, what a response said in text."""
    said = _text_of((response or {}).get("content"))
    return said is not None and _text_of(content) == said


def _result_of(step: Step, tool_id: Any) -> dict | None:
    """The tool_result of this request that answers `tool_id`, the last one if several do."""
    results = [block for message in step.messages if isinstance(message, dict)
               for block in _blocks(message.get("content"))
               if block.get("type") == "tool_result" and block.get("tool_use_id") == tool_id]
    return results[-1] if results else None


def _text_of(content: Any) -> str | None:
    """The words of a message's or a tool_result's content: a string as it is, a list by its text blocks."""
    if isinstance(content, str):
        return content
    texts = [block.get("text") for block in _blocks(content) if block.get("type") == "text"]
    return "".join(text for text in texts if isinstance(text, str)) if texts else None


def _mark(steps: list[Step], delegation: Delegation) -> None:
    """Record a delegation on its steps: the caller's, the subagent's, and the one that sends its answer back."""
    steps[delegation.call].delegations.append(delegation)
    for index in delegation.steps:
        steps[index].inside = delegation
    if delegation.answer is not None:
        steps[delegation.answer].came_back.append(delegation)


def _as_message(response: dict | None) -> dict | None:
    """A response as the assistant message a loop appends to its history (role and content, as they came)."""
    return None if response is None else {"role": "assistant", "content": response.get("content")}


@dataclass(frozen=True)
class UnmatchedIds:
    """The ids of a history's pairing faults, as conversation.py finds them (its docstring says
    what each kind means). The viewer marks ids, not blocks, so these are sets of ids; only string
    ids are kept: any other id is a shape error, which the rules report before the pairing."""

    dangling: set  # tool_use ids unanswered although a message follows them
    pending: set  # tool_use ids of the final message, not answered yet
    orphans: set  # tool_result ids citing no call of the message right before
    misplaced: set  # tool_result ids that would answer an unanswered call, but are placed wrong

    @property
    def ids(self) -> set:
        """Every flagged id: empty exactly when the API accepts the history's pairing."""
        return self.dangling | self.pending | self.orphans | self.misplaced


def unmatched_ids(messages: list) -> UnmatchedIds:
    """What the viewer flags in a history: exactly what the rules' pairing check rejects."""
    history = conversation.read(messages)
    return UnmatchedIds(
        dangling=_string_ids(use.id for use in history.dangling),
        pending=_string_ids(use.id for use in history.pending),
        orphans=_string_ids(result.tool_use_id for result in history.orphans),
        misplaced=_string_ids(result.tool_use_id for result in history.misplaced),
    )


def _string_ids(ids) -> set:
    return {tool_id for tool_id in ids if isinstance(tool_id, str)}


def pair_labels(steps: list[Step]) -> dict[str, str]:
    """A, B, C... for every tool_use id, in the order the model first asked for them."""
    labels: dict[str, str] = {}
    for step in steps:
        sources = list(step.messages) + ([step.response] if step.response else [])
        for message in sources:
            if not isinstance(message, dict):
                continue
            for block in _blocks(message.get("content")):
                tool_id = block.get("id") if block.get("type") == "tool_use" else None
                if tool_id and tool_id not in labels:
                    labels[tool_id] = _label(len(labels))
    return labels


def _label(number: int) -> str:
    letters = ""
    number += 1
    while number:
        number, remainder = divmod(number - 1, 26)
        letters = ascii_uppercase[remainder] + letters
    return letters
