"""The step-through history viewer: the raw JSON of each model call, with the id threads marked.

`show_history(client_or_messages)` returns a widget: previous / next buttons and a slider move
through the steps. Each step shows the whole request (its `system` and `tools` folded, the
messages sent before folded, the new ones in full), then the response with its token `usage`, or
the API's 400. Every `tool_use.id` wears the same letter and colour as the
`tool_result.tool_use_id` that answers it; what the API refuses is flagged ⚠ in red, and calls
not answered yet are marked ○ pending; a failed call (its result says `is_error`) is marked ✗ failed
call, not flagged, since the API accepts it. Colour never carries meaning alone: letters and words do.
A tool call that ran a subagent (notebook 9) says where the subagent's steps are, each of them which call it ran
inside, and the parent's next step which result came back from it.
Those words (labels, flags, legend, buttons, step titles) are in texts/viewer.toml and texts/history.toml,
in the course's language; the marks and the API's names (tool_use, is_error...) are the same in all.

Displaying the viewer makes two outputs: the widget, and a static rendering of every step (text/html
and text/plain) for the places where no widget runs (GitHub, an nbconvert HTML export, a
terminal, nbval). A separate output because a front end shows one mime type per output: with the
widget's state stored (`nbconvert --execute`), nbconvert picks the widget view, whose JavaScript
comes from a CDN, and offline the page would show nothing. Where the widget does render, a CSS rule
hides the static output beside it (see STYLE). Both renderings are built only from the history, so
they are the same on every run; nothing is printed into an Output widget.
"""

from __future__ import annotations

import html
import json
import re
from typing import Any, NamedTuple

import anthropic
import ipywidgets as widgets
from IPython.display import display

from .catalogue import words
from .client import traffic
from .history import Delegation, Step, pair_labels, steps_from_messages, steps_from_traffic

FOLD_AT = 160  # characters: longer strings fold
JSON_WIDTH = 100  # characters: an object or list this short stays on one line
SUMMARY_AT = 60  # characters of a text quoted in a one-line summary of a message
# Okabe & Ito's colour-blind-safe palette without its vermillion, so that no pair looks like the
# red of a flag: (background, text) of the letter chip. The letter tells pairs apart when colours repeat.
PAIR_COLOURS = [
    ("#0072B2", "#ffffff"),  # blue
    ("#E69F00", "#000000"),  # orange
    ("#009E73", "#000000"),  # bluish green
    ("#CC79A7", "#000000"),  # reddish purple
    ("#56B4E9", "#000000"),  # sky blue
    ("#F0E442", "#000000"),  # yellow
]
FLAG_COLOUR = "#c00000"  # only flags are red, and they also say ⚠ and why
FLAG, PENDING = "⚠", "○"  # symbols common fonts have (an hourglass emoji is a box without an emoji font)
FAILED = "✗"  # a tool_result with is_error true: the call failed, and the model is told so (no flag: the API accepts it)
ID_LINE = re.compile(r'^(\s*"(id|tool_use_id)": )"([^"]*)"(,?)$')
WORDS = words(__file__)  # every word the viewer shows, in the course's language (texts/viewer.toml)
MARKS = {"flag": FLAG, "pending": PENDING, "failed": FAILED}  # the same symbols in every language


def legend() -> str:
    """What the letters, marks and colours mean: above the steps, in the widget and the static rendering."""
    return WORDS("legend", **MARKS)


# Inline styles carry the colours (JupyterLab's sanitizer keeps them on untrusted outputs); the
# <style> block only lays things out, and hides the static rendering where the widget beside it rendered.
STYLE = """<style>
.looplab-history{font-family:var(--jp-code-font-family,monospace);font-size:12px;line-height:1.35}
.looplab-history pre{margin:0 0 6px 0;padding:4px 6px;background:rgba(127,127,127,.08);white-space:pre-wrap;word-break:break-word}
.looplab-history .looplab-new{border-left:4px solid #0072B2}
.looplab-history .looplab-old{border-left:4px solid transparent;opacity:.8}
.looplab-history h4{margin:4px 0}
.looplab-history details{margin:0 0 4px 0}
.looplab-history summary{cursor:pointer}
.jp-OutputArea-child:has(.looplab-viewer) + .jp-OutputArea-child:has(.looplab-static){display:none}
</style>"""


def show_history(source: Any) -> "HistoryViewer":
    """A viewer of a client's traffic (made by `looplab.client()`) or of a `messages` list."""
    return HistoryViewer(source)


def _load_steps(source: Any) -> list[Step]:
    if isinstance(source, anthropic.Anthropic):
        return steps_from_traffic(traffic(source).exchanges)
    if isinstance(source, (list, tuple)):
        return steps_from_messages(source)
    raise TypeError(WORDS("not_a_source", kind=type(source).__name__))


# --- ids: the letter, the colour, the flag ---------------------------------------------------------


def step_title(step: Step, number: int, total: int) -> str:
    return WORDS("step_title", number=number, total=total, outcome=step.outcome)


def _json_lines(value: Any, depth: int = 0, key: str = "") -> list[str]:
    """JSON indented by two spaces, except that an object or list that fits on one line (JSON_WIDTH)
    stays on one, unless it holds a tool id: each id keeps a line of its own, where its letter goes."""
    pad, flat = "  " * depth, json.dumps(value, ensure_ascii=False)
    if not isinstance(value, (dict, list)) or not value or (
        len(pad + key + flat) <= JSON_WIDTH and not _holds_tool_id(value)
    ):
        return [pad + key + flat]
    items = list(value.items()) if isinstance(value, dict) else [(None, item) for item in value]
    lines = [pad + key + ("{" if isinstance(value, dict) else "[")]
    for position, (name, item) in enumerate(items):
        inner = _json_lines(item, depth + 1, "" if name is None else json.dumps(name, ensure_ascii=False) + ": ")
        if position < len(items) - 1:
            inner[-1] += ","
        lines += inner
    return lines + [pad + ("}" if isinstance(value, dict) else "]")]


def _holds_tool_id(value: Any) -> bool:
    """A tool_use block or a tool_result block is in there (at any depth)."""
    if isinstance(value, dict):
        if "tool_use_id" in value or value.get("type") == "tool_use":
            return True
        value = list(value.values())
    return isinstance(value, list) and any(_holds_tool_id(item) for item in value)


def _tool_id_line(line: str, labels: dict) -> re.Match | None:
    """A line holding a tool_use id or a tool_result's tool_use_id (not a message's own id)."""
    match = ID_LINE.match(line)
    if match and (match.group(2) == "tool_use_id" or match.group(3) in labels):
        return match
    return None


def _id_mark(tool_id: str, key: str, step: Step, is_response: bool) -> tuple[str, str]:
    """What an id is marked with after its letter (words, empty for a plain pair) and its CSS class.

    The class says which kind of mark it is: looplab-dangling / looplab-orphan are flags (the API
    refuses the request), looplab-pending a call the loop has still to answer.
    """
    if key == "id" and is_response:
        if tool_id in step.response_pending:
            return WORDS("pending", **MARKS), "looplab-pending"
        return "", ""
    if key == "id" and tool_id in step.dangling:
        return WORDS("dangling", **MARKS), "looplab-dangling"
    if key == "id" and tool_id in step.pending:
        return WORDS("unanswered", **MARKS), "looplab-dangling"
    if key == "tool_use_id" and tool_id in step.orphans:
        return WORDS("orphan", **MARKS), "looplab-orphan"
    if key == "tool_use_id" and tool_id in step.misplaced:
        return WORDS("misplaced", **MARKS), "looplab-orphan"
    if key == "tool_use_id" and tool_id in failed_calls(step.messages):
        return WORDS("failed_call", **MARKS), "looplab-failed"
    return "", ""


def failed_calls(messages: list) -> set:
    """The tool_use ids whose tool_result says the call failed (`"is_error": true`)."""
    return {block.get("tool_use_id") for block in tool_results(messages) if block.get("is_error") is True}


def tool_results(messages: list) -> list[dict]:
    """The tool_result blocks of these messages, in order."""
    return [block for message in messages if isinstance(message, dict)
            for block in (message.get("content") if isinstance(message.get("content"), list) else [])
            if isinstance(block, dict) and block.get("type") == "tool_result"]


def pair_colours(label: str | None) -> tuple[str, str]:
    """The (background, text) colours of a pair's letter chip; '?' (no call) is grey."""
    if not label or label == "?":
        return "#777777", "#ffffff"
    number = sum((ord(ch) - 64) * 26**power for power, ch in enumerate(reversed(label))) - 1
    return PAIR_COLOURS[number % len(PAIR_COLOURS)]


def _chip(label: str) -> str:
    background, text = pair_colours(label)
    return (f'<b style="background-color:{background};color:{text};padding:0 3px;border-radius:3px">'
            f"[{html.escape(label)}]</b>")


def _id_html(tool_id: str, words: str, css_class: str, label: str) -> str:
    """An id with its letter chip, and its flag or pending mark in words after it."""
    style = ""
    if css_class in ("looplab-dangling", "looplab-orphan"):
        style = f' style="background-color:#fdecee;outline:2px dashed {FLAG_COLOUR}"'
        words = f' <b style="color:{FLAG_COLOUR}">{html.escape(words)}</b>'
    elif css_class == "looplab-pending":
        style = ' style="outline:2px dotted #555555"'
        words = f" <i>{html.escape(words)}</i>"
    elif css_class == "looplab-failed":
        style = ' style="outline:2px dashed #555555"'
        words = f" <b>{html.escape(words)}</b>"
    classes = f"looplab-pair {css_class}".strip()
    return (f'<span class="{classes}" data-pair="{html.escape(label)}"{style}>'
            f'"{html.escape(tool_id)}" {_chip(label)}{words}</span>')


def json_html(value: Any, step: Step, labels: dict, is_response: bool = False) -> str:
    lines = []
    for line in _json_lines(value):
        match = _tool_id_line(line, labels)
        if match:
            prefix, key, tool_id, comma = match.groups()
            words, css_class = _id_mark(tool_id, key, step, is_response)
            label = labels.get(tool_id, "?")
            lines.append(f"{html.escape(prefix)}{_id_html(tool_id, words, css_class, label)}{comma}")
        elif len(line) > FOLD_AT:
            lines.append(
                f"<details><summary>{WORDS('folded', start=html.escape(line[: FOLD_AT - 20]), count=len(line))}</summary>"
                f"{html.escape(line)}</details>"
            )
        else:
            lines.append(html.escape(line))
    return "\n".join(lines)


def json_text(value: Any, step: Step, labels: dict, is_response: bool = False) -> str:
    lines = []
    for line in _json_lines(value):
        match = _tool_id_line(line, labels)
        if match:
            words, _ = _id_mark(match.group(3), match.group(2), step, is_response)
            line = f"{line}   <- [{labels.get(match.group(3), '?')}] {words}".rstrip()
        elif len(line) > FOLD_AT:
            line = WORDS("folded", start=line[: FOLD_AT - 20], count=len(line))
        lines.append(line)
    return "\n".join(lines)


# --- the parts of a step that both renderings share ------------------------------------------------


def _flagged_ids(step: Step) -> set:
    return step.dangling | step.pending | step.orphans | step.misplaced


def _holds_any(message: Any, tool_ids: set) -> bool:
    blocks = message.get("content") if isinstance(message, dict) else None
    return isinstance(blocks, list) and any(
        isinstance(block, dict) and (block.get("id") in tool_ids or block.get("tool_use_id") in tool_ids)
        for block in blocks
    )


ASCII_SPACES = re.compile(r"[ \t\r\n\f\v]+")  # not a no-break space: French typography keeps those


def _quote(text: str) -> str:
    text = ASCII_SPACES.sub(" ", str(text)).strip()
    return json.dumps(text if len(text) <= SUMMARY_AT else text[: SUMMARY_AT - 1] + "…", ensure_ascii=False)


def message_summary(message: Any) -> list:
    """A message in one line, as parts: strings, and ("id", tool_id) where a letter goes.

    Used for what was already sent (shown in full in an earlier step): enough to follow the
    thread of ids, without resending the JSON to the reader.
    """
    if not isinstance(message, dict):
        return [repr(message)]
    content = message.get("content")
    parts: list = [WORDS("labelled", label=message.get("role", "?"))]
    if not isinstance(content, list):
        return parts + [_quote(content)]
    for position, block in enumerate(content):
        if position:
            parts.append(", ")
        kind = block.get("type", "?") if isinstance(block, dict) else "?"
        if kind == "text":
            parts.append(f"text {_quote(block.get('text', ''))}")
        elif kind == "tool_use":
            parts += [f"tool_use {block.get('name', '?')} ", ("id", block.get("id"))]
        elif kind == "tool_result":
            parts += ["tool_result ", ("id", block.get("tool_use_id"))]
            if block.get("is_error") is True:
                parts.append(WORDS("failed_short", **MARKS))
        else:
            parts.append(str(kind))
    return parts


def role_and_ids(message: Any) -> list:
    """A message in a word or two: its role and the letters of the ids it holds."""
    parts = message_summary(message)
    return [parts[0].rstrip(": \u00a0")] + [part for part in parts if not isinstance(part, str)]


def _earlier_parts(step: Step, earlier: list[int]) -> list:
    """One line for all the messages sent before (at a splice: kept word for word): index, role and ids of each."""
    parts: list = [WORDS("splice_kept") if step.splice is not None else WORDS("sent_before")]
    for position, index in enumerate(earlier):
        parts.append(f"{' · ' if position else ''}[{index}] ")
        for part in role_and_ids(step.messages[index]):
            parts += [part] if isinstance(part, str) else [" ", part]
    return parts


def _summary_text(parts: list, labels: dict) -> str:
    return "".join(part if isinstance(part, str) else f"[{labels.get(part[1], '?')}]" for part in parts)


def _summary_html(parts: list, labels: dict) -> str:
    return "".join(html.escape(part) if isinstance(part, str) else _chip(labels.get(part[1], "?")) for part in parts)


class RequestPart(NamedTuple):
    """The request's `system` or `tools`: every call sends them again."""

    name: str  # "system" or "tools"
    preview: str  # the start of the system prompt, or the tools' names
    size: str  # how much is sent again each time
    value: Any
    changed: bool  # not the same as in the step before

    @property
    def summary(self) -> str:
        return f"{self.preview} ({self.size})"


def request_parts(steps: list[Step], index: int) -> list[RequestPart]:
    """The system and tools of a step's request (client traffic only: a messages list has neither)."""
    step, before = steps[index], steps[index - 1] if index else None
    parts = []
    if step.system is not None:
        text = step.system if isinstance(step.system, str) else json.dumps(step.system, ensure_ascii=False)
        parts.append(RequestPart("system", _quote(text), WORDS("characters", count=len(text)), step.system,
                                 before is None or before.system != step.system))
    if step.tools is not None:
        names = ", ".join(tool.get("name", "?") for tool in step.tools if isinstance(tool, dict)) or WORDS("no_tools")
        size = WORDS("tools_size", count=len(step.tools), size=len(json.dumps(step.tools, ensure_ascii=False)))
        parts.append(RequestPart("tools", names, size, step.tools, before is None or before.tools != step.tools))
    return parts


def _resent_line(parts: list[RequestPart]) -> str:
    return WORDS("resent", parts=WORDS("and").join(f"{part.name} ({part.size})" for part in parts))


def usage_line(steps: list[Step], index: int) -> str | None:
    """The response's token counts, and how much the input grew since the step before of the same kind (an agent's
    call is compared with the agent's call before, never with a compaction's summary call between them)."""
    usage, earlier = steps[index].usage, steps[index].compared_with
    if not usage:
        return None
    line = WORDS("usage_input", count=usage.get("input_tokens", "?"))
    before = steps[earlier].usage if earlier is not None else None
    if before and isinstance(usage.get("input_tokens"), int) and isinstance(before.get("input_tokens"), int):
        line += WORDS("usage_growth", change=f"{usage['input_tokens'] - before['input_tokens']:+d}", step=earlier + 1)
    return line + WORDS("usage_output", count=usage.get("output_tokens", "?"))


class SpliceView(NamedTuple):
    """A splice (history.Splice) in words, for both renderings: the request no longer extends the agent's call
    before, so the learner is told what was folded away, what took its place, and what it saved."""

    head: str  # what happened, and since which step
    folded_title: str  # how many messages are gone
    folded: list  # one line of parts a message gone (as message_summary writes them)
    summary: list  # parts: the messages in their place, or the words saying there are none
    tokens: str | None  # the input tokens before and after, where both calls had a response


def splice_view(steps: list[Step], index: int) -> SpliceView | None:
    splice = steps[index].splice
    if splice is None:
        return None
    step, since = steps[index], splice.since + 1
    folded = [[f"[{splice.folded_at + position}] "] + message_summary(message)
              for position, message in enumerate(splice.folded)]
    summary: list = [WORDS("splice_summary") if splice.summary else WORDS("splice_no_summary")]
    for position, at in enumerate(splice.summary):
        summary += [f"{' · ' if position else ''}[{at}] "] + message_summary(step.messages[at])
    before, after = _input_tokens(steps[splice.since]), _input_tokens(step)
    tokens = WORDS("splice_tokens", before=_grouped(before), after=_grouped(after)) if before and after else None
    return SpliceView(WORDS("splice", step=since), WORDS("splice_folded", count=len(splice.folded), step=since),
                      folded, summary, tokens)


def _input_tokens(step: Step) -> int | None:
    count = (step.usage or {}).get("input_tokens")
    return count if isinstance(count, int) else None


def _grouped(number: int) -> str:
    """A whole number with its thousands grouped as the language writes them: 1,234 / 1 234."""
    return f"{number:,}".replace(",", WORDS("thousands"))


def _splice_text(view: SpliceView, labels: dict) -> list[str]:
    lines = [f"-- {view.head}", f"--   {view.folded_title}"]
    lines += [f"       {_summary_text(parts, labels)}" for parts in view.folded]
    return lines + [f"--   {_summary_text(view.summary, labels)}"] + ([f"--   {view.tokens}"] if view.tokens else [])


def _splice_html(view: SpliceView, labels: dict) -> str:
    folded = "\n".join(_summary_html(parts, labels) for parts in view.folded)
    tokens = f"<div>{html.escape(view.tokens)}</div>" if view.tokens else ""
    return (f'<div class="looplab-splice" style="border-left:4px dashed #555555;padding:2px 6px;margin:0 0 6px 0">'
            f"<b>{html.escape(view.head)}</b>"
            f'<details class="looplab-folded"><summary>{html.escape(view.folded_title)}</summary><pre>{folded}</pre>'
            f"</details><div>{_summary_html(view.summary, labels)}</div>{tokens}</div>")


# --- a subagent: a tool call whose function ran another agent (history.Delegation) ------------------------------


def _worded(key: str, **values: Any) -> list:
    """WORDS(key, ...) as summary parts, a value that is parts itself (a call and its letter, a message in one line)
    put in whole: the letter's chip goes where each language's word order puts it."""
    inserted = {name: value for name, value in values.items() if isinstance(value, list)}
    marked = WORDS(key, **{**values, **{name: f"\0{name}\0" for name in inserted}})
    parts: list = []
    for position, piece in enumerate(marked.split("\0")):
        parts += inserted[piece] if position % 2 else [piece]
    return parts


def _the_call(delegation: Delegation) -> list:
    return [f"{delegation.tool_name} ", ("id", delegation.tool_id)]


def _subagent_span(delegation: Delegation) -> str:
    first, last = delegation.steps[0] + 1, delegation.steps[-1] + 1
    return WORDS("step_one", step=first) if first == last else WORDS("steps_span", first=first, last=last)


def subagent_head(steps: list[Step], index: int) -> list | None:
    """A subagent's step: which of its steps this is, the parent's call it runs inside, what its history started
    with (the question alone, as the tool's function handed it)."""
    delegation = steps[index].inside
    if delegation is None:
        return None
    opening = steps[delegation.steps[0]].messages
    start = ["[0] "] + message_summary(opening[0]) if opening else ["messages: []"]
    return _worded("subagent_step", number=delegation.steps.index(index) + 1, count=len(delegation.steps),
                   call=_the_call(delegation), step=delegation.call + 1, start=start)


def subagent_calls(step: Step) -> list[list]:
    """Under a response: each of its calls that ran a subagent, and where that subagent's steps are."""
    return [_worded("subagent_call" if delegation.answer is not None else "subagent_call_unanswered",
                    call=_the_call(delegation), count=len(delegation.steps),
                    steps=_subagent_span(delegation)) for delegation in step.delegations]


def subagent_answers(step: Step, message: Any) -> list[list]:
    """After a message of the request: each of its tool_results that brings a subagent's answer back."""
    return [_worded("subagent_answer" if delegation.last_answer else "subagent_result",
                    call=[("id", delegation.tool_id)], steps=_subagent_span(delegation))
            for delegation in step.came_back
            if any(result.get("tool_use_id") == delegation.tool_id for result in tool_results([message]))]


def _subagent_html(parts: list, labels: dict) -> str:
    return (f'<div class="looplab-subagent" style="border-left:4px dotted #555555;padding:2px 6px;margin:0 0 6px 0">'
            f"{_summary_html(parts, labels)}</div>")


def _error_with_labels(message: str, labels: dict, chip) -> str:
    """The 400 message, each id it names followed by its letter, so it reads next to the call it names."""
    if not labels:
        return message
    any_id = re.compile("|".join(re.escape(tool_id) for tool_id in sorted(labels, key=len, reverse=True)))
    return any_id.sub(lambda found: f"{found[0]} {chip(labels[found[0]])}", message)


def _shown_in_full(step: Step, index: int) -> bool:
    """A message sent before is folded, unless it holds an id the step flags: the flag must show."""
    return not step.sent_before(index) or _holds_any(step.messages[index], _flagged_ids(step))


def _is_resent_response(step: Step, index: int) -> bool:
    """The response of the step compared with, sent back as it came: the static rendering showed it, so one
    line says so (unless it holds a flagged id: the flag must show)."""
    return index == step.resent_response and not _holds_any(step.messages[index], _flagged_ids(step))


# --- rendering one step ------------------------------------------------------------------------


def step_html(steps: list[Step], index: int, labels: dict, standalone: bool) -> str:
    """One step as HTML. `standalone` (the widget, one step at a time, its title in the widget's label)
    keeps the full JSON of what was sent before, folded; the static rendering, where the steps before
    are on the page, keeps one line each."""
    step, total = steps[index], len(steps)
    parts = [] if standalone else [f'<h4 class="looplab-step-title">{html.escape(step_title(step, index + 1, total))}</h4>']
    inside = subagent_head(steps, index)
    if inside is not None:
        parts.append(_subagent_html(inside, labels))
    request = request_parts(steps, index)
    if request and not standalone and not any(part.changed for part in request):
        parts.append(f'<div class="looplab-resent">{html.escape(_resent_line(request))}</div>')
    else:
        for part in request:
            body = html.escape(part.value) if isinstance(part.value, str) else json_html(part.value, step, labels)
            parts.append(f'<details class="looplab-{part.name}"><summary><b>{part.name}</b>: '
                         f"{html.escape(part.summary)}</summary><pre>{body}</pre></details>")
    splice = splice_view(steps, index)
    if splice is not None:
        parts.append(_splice_html(splice, labels))
    earlier = [i for i in range(len(step.messages)) if not _shown_in_full(step, i)]
    if earlier:
        if standalone:
            inside = "".join(f"<pre><b>messages[{i}]</b>\n{json_html(step.messages[i], step, labels)}</pre>" for i in earlier)
        else:
            inside = "<pre>" + "\n".join(
                f"messages[{i}] {_summary_html(message_summary(step.messages[i]), labels)}" for i in earlier) + "</pre>"
        parts.append(f'<details class="looplab-earlier"><summary>{_summary_html(_earlier_parts(step, earlier), labels)}'
                     f"</summary>{inside}</details>")
    for i, message in enumerate(step.messages):
        if i in earlier:
            continue
        new = not step.sent_before(i)
        role = message.get("role", "?") if isinstance(message, dict) else "?"
        head = f"<b>messages[{i}] · {html.escape(str(role))}{WORDS('new_html') if new else ''}</b>"
        if _is_resent_response(step, i) and not standalone:
            body = (f" {html.escape(WORDS('resent_response', step=step.compared_with + 1))}"
                    f"{_summary_html(message_summary(message)[1:], labels)}")
        else:
            body = "\n" + json_html(message, step, labels)
        parts.append(f'<pre class="{"looplab-new" if new else "looplab-old"}">{head}{body}</pre>')
        parts += [_subagent_html(answer, labels) for answer in subagent_answers(step, message)]
    if not step.messages:
        parts.append("<pre>messages: []</pre>")
    if step.response is not None:
        usage = usage_line(steps, index)
        parts.append(f"<h4>{WORDS('response')}{' · ' + html.escape(usage) if usage else ''}</h4>"
                     f'<pre class="looplab-response">{json_html(step.response, step, labels, is_response=True)}</pre>')
        parts += [_subagent_html(call, labels) for call in subagent_calls(step)]
    elif step.error is not None:
        message = _error_with_labels(html.escape(step.error_message or ""), labels, _chip)
        hint = "\n\n" + html.escape(WORDS("hint_html", hint=step.hint)) if step.hint else ""
        parts.append(f'<pre class="looplab-error" style="color:{FLAG_COLOUR};outline:2px dashed {FLAG_COLOUR}">'
                     f"{FLAG} {message}{hint}</pre>")
    else:
        parts.append(f"<pre>{html.escape(WORDS('not_sent'))}</pre>")
    return '<div class="looplab-history">' + "".join(parts) + "</div>"


def step_text(steps: list[Step], index: int, labels: dict) -> str:
    """One step as text: the static rendering, where the steps before are just above."""
    step, total = steps[index], len(steps)
    lines = [f"== {step_title(step, index + 1, total)} =="]
    inside = subagent_head(steps, index)
    if inside is not None:
        lines.append(f"-- {_summary_text(inside, labels)}")
    request = request_parts(steps, index)
    if request and not any(part.changed for part in request):
        lines.append(f"-- {_resent_line(request)}")
    else:
        lines += [f"-- {WORDS('labelled', label=part.name)}{part.summary}" for part in request]
    splice = splice_view(steps, index)
    if splice is not None:
        lines += _splice_text(splice, labels)
    earlier = [i for i in range(len(step.messages)) if not _shown_in_full(step, i)]
    if earlier:
        lines.append(f"-- {_summary_text(_earlier_parts(step, earlier), labels)}")
    for i, message in enumerate(step.messages):
        if i in earlier:
            continue
        role = message.get("role", "?") if isinstance(message, dict) else "?"
        head = f"-- messages[{i}] {role}{WORDS('new_text') if not step.sent_before(i) else ''}"
        if _is_resent_response(step, i):
            lines.append(f"{head}: {WORDS('resent_response', step=step.compared_with + 1)}"
                         f"{_summary_text(message_summary(message)[1:], labels)}")
        else:
            lines += [head, json_text(message, step, labels)]
        lines += [f"-- {_summary_text(answer, labels)}" for answer in subagent_answers(step, message)]
    if step.response is not None:
        usage = usage_line(steps, index)
        lines.append(f"-- {WORDS('response')}{' · ' + usage if usage else ''}")
        lines.append(json_text(step.response, step, labels, is_response=True))
        lines += [f"-- {_summary_text(call, labels)}" for call in subagent_calls(step)]
    elif step.error is not None:
        message = _error_with_labels(step.error_message or "", labels, lambda label: f"[{label}]")
        lines.append(WORDS("error_text", message=message, **MARKS))
        if step.hint:
            lines.append(WORDS("hint_text", hint=step.hint))
    return "\n".join(lines)


# --- the widget -----------------------------------------------------------------------------------

LINE_HEIGHT_PX = 17  # a line of the JSON area, near enough (12px text, line-height 1.35, padding)
MAX_BODY_HEIGHT_PX = 640


def _visible_lines(page: str) -> int:
    """The lines of a page that show before anything is unfolded: those outside any <details>, and
    the summary line of each outer one."""
    count, depth = 0, 0
    for line in page.splitlines():
        count += depth == 0
        depth += line.count("<details") - line.count("</details>")
    return count + page.count("<h4")


class HistoryViewer(widgets.VBox):
    """Previous / next / slider over the steps; refreshes itself as a client's traffic grows."""

    def __init__(self, source: Any):
        self.source = source
        self.previous = widgets.Button(description=WORDS("previous"), layout=widgets.Layout(width="110px"))
        self.next = widgets.Button(description=WORDS("next"), layout=widgets.Layout(width="110px"))
        self.slider = widgets.IntSlider(min=1, max=1, value=1, description=WORDS("slider"), continuous_update=True)
        self.label = widgets.HTML()
        self.legend = widgets.HTML(f'<span style="font-size:11px">{html.escape(legend())}</span>')
        self.body = widgets.HTML(layout=widgets.Layout(overflow="auto"))
        self.previous.add_class("looplab-prev")
        self.next.add_class("looplab-next")
        self.slider.add_class("looplab-slider")
        self.label.add_class("looplab-step-label")
        self.legend.add_class("looplab-legend")
        self.body.add_class("looplab-json")
        self.previous.on_click(lambda _: self._move(-1))
        self.next.on_click(lambda _: self._move(+1))
        self.slider.observe(lambda _: self._show(), names="value")
        super().__init__([widgets.HBox([self.previous, self.next, self.slider]), self.label, self.legend, self.body])
        self.add_class("looplab-viewer")
        self.steps: list[Step] = []
        self.refresh()
        if isinstance(source, anthropic.Anthropic):
            traffic(source).subscribe(self.refresh)

    def refresh(self) -> None:
        """Re-read the source; stay on the step shown unless it was the last one."""
        was_at_end = self.slider.value >= len(self.steps)
        self.steps = _load_steps(self.source)
        self.labels = pair_labels(self.steps)
        self.pages = [step_html(self.steps, i, self.labels, standalone=True) for i in range(len(self.steps))]
        self.body.layout.height = self._body_height()
        self.slider.max = max(1, len(self.steps))
        if was_at_end:
            self.slider.value = self.slider.max
        self._show()

    def _body_height(self) -> str:
        """One height for every step, the tallest one's (up to a limit, then it scrolls), so that the
        buttons stay where they are as the learner steps through."""
        lines = max((_visible_lines(page) for page in self.pages), default=1)
        return f"{min(MAX_BODY_HEIGHT_PX, 40 + LINE_HEIGHT_PX * lines)}px"

    def _move(self, delta: int) -> None:
        self.slider.value = min(max(1, self.slider.value + delta), self.slider.max)

    def _show(self) -> None:
        total = len(self.steps)
        if not total:
            self.label.value = f"<b>{html.escape(WORDS('no_calls'))}</b>"
            self.body.value = ""
            return
        number = self.slider.value
        self.label.value = f"<b>{html.escape(step_title(self.steps[number - 1], number, total))}</b>"
        self.body.value = STYLE + self.pages[number - 1]
        self.previous.disabled = number == 1
        self.next.disabled = number == total

    # --- static rendering: every step at once, for places where widgets cannot run ---------------

    def static_text(self) -> str:
        total = len(self.steps)
        if not total:
            return WORDS("static_empty")
        parts = [WORDS("static_head", total=total, legend=legend())]
        parts += [step_text(self.steps, i, self.labels) for i in range(total)]
        return "\n\n".join(parts)

    def static_html(self) -> str:
        total = len(self.steps)
        if not total:
            return f'<p class="looplab-static">{html.escape(WORDS("static_empty"))}</p>'
        head = html.escape(WORDS("static_head", total=total, legend=legend()))
        parts = [step_html(self.steps, i, self.labels, standalone=False) for i in range(total)]
        return STYLE + f'<div class="looplab-static"><p class="looplab-legend">{head}</p>' + "<hr>".join(parts) + "</div>"

    def static_bundle(self) -> dict:
        """The static rendering as an output's data: what shows where no widget runs."""
        return {"text/plain": self.static_text(), "text/html": self.static_html()}

    def _ipython_display_(self) -> None:
        """Two outputs: the widget, then the static rendering (see the module docstring for why)."""
        display(self._repr_mimebundle_(), raw=True)
        display(self.static_bundle(), raw=True)

    def _repr_mimebundle_(self, **kwargs):
        """The widget's output: its view, and one line of text (the static output beside it has the rest)."""
        bundle = super()._repr_mimebundle_(**kwargs) or {}
        bundle["text/plain"] = WORDS("widget_text", total=len(self.steps))
        return bundle

    def __repr__(self) -> str:
        """A plain Python prompt shows this: every step, as text."""
        return self.static_text()
