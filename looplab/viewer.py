"""The step-through history viewer: the raw JSON of each model call, with the id threads marked.

`show_history(client_or_messages)` returns a widget: previous / next buttons and a slider move
through the steps; for each step it shows the request's `messages` as wire JSON (new messages
marked) beside the response JSON, the step's outcome, and every `tool_use.id` with the same
label and colour as the `tool_result.tool_use_id` that answers it.

Where no widget can render (GitHub, nbconvert HTML, a terminal, nbval), the same object shows a
static rendering of every step as text/html and text/plain. Both are built only from the
history, so they are the same on every run; nothing is printed into an Output widget.
"""

from __future__ import annotations

import html
import json
import re
from typing import Any

import anthropic
import ipywidgets as widgets

from .client import traffic
from .history import Step, pair_labels, steps_from_messages, steps_from_traffic

FOLD_AT = 160  # characters: longer strings fold
COLOURS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2"]
ID_LINE = re.compile(r'^(\s*"(id|tool_use_id)": )"([^"]*)"(,?)$')

STYLE = """<style>
.looplab-history{font-family:var(--jp-code-font-family,monospace);font-size:12px;line-height:1.35}
.looplab-history .looplab-columns{display:flex;gap:12px;align-items:flex-start}
.looplab-history .looplab-column{flex:1;min-width:0}
.looplab-history pre{margin:0 0 6px 0;padding:4px 6px;background:rgba(127,127,127,.08);white-space:pre-wrap;word-break:break-word}
.looplab-history .looplab-new{border-left:4px solid #2ca02c}
.looplab-history .looplab-old{border-left:4px solid transparent;opacity:.75}
.looplab-history .looplab-pair{font-weight:bold;border-radius:3px;padding:0 2px}
.looplab-history .looplab-dangling,.looplab-history .looplab-orphan{background:#ffd8d8;color:#a00000;font-weight:bold}
.looplab-history .looplab-error{color:#a00000}
.looplab-history h4{margin:4px 0}
.looplab-history details{display:inline}
</style>"""


def show_history(source: Any) -> "HistoryViewer":
    """A viewer of a client's traffic (made by `looplab.client()`) or of a `messages` list."""
    return HistoryViewer(source)


def _load_steps(source: Any) -> list[Step]:
    if isinstance(source, anthropic.Anthropic):
        return steps_from_traffic(traffic(source).exchanges)
    if isinstance(source, (list, tuple)):
        return steps_from_messages(source)
    raise TypeError(
        "show_history() takes a client made by looplab.client() or a list of messages; "
        f"got {type(source).__name__}."
    )


# --- rendering one step -------------------------------------------------------------------------


def step_title(step: Step, number: int, total: int) -> str:
    return f"Step {number} of {total}: {step.outcome}"


def _json_lines(value: Any) -> list[str]:
    return json.dumps(value, indent=2, ensure_ascii=False).splitlines()


def _tool_id_line(line: str, labels: dict) -> re.Match | None:
    """A line holding a tool_use id or a tool_result's tool_use_id (not a message's own id)."""
    match = ID_LINE.match(line)
    if match and (match.group(2) == "tool_use_id" or match.group(3) in labels):
        return match
    return None


def _id_note(tool_id: str, key: str, step: Step, labels: dict, is_response: bool) -> tuple[str, str]:
    """The label that goes after an id, and the CSS class that says whether it is answered."""
    label = labels.get(tool_id, "?")
    if key == "id" and tool_id in step.dangling and not is_response:
        return f"[{label}] no tool_result", "looplab-dangling"
    if key == "id" and tool_id in step.pending and not is_response:
        return f"[{label}] no tool_result yet", "looplab-dangling"
    if key == "tool_use_id" and tool_id in step.orphans:
        return f"[{label}] answers no tool_use in the message before", "looplab-orphan"
    if key == "tool_use_id" and tool_id in step.misplaced:
        return f"[{label}] comes after other content: results must come first", "looplab-orphan"
    return f"[{label}]", ""


def json_html(value: Any, step: Step, labels: dict, is_response: bool = False) -> str:
    lines = []
    for line in _json_lines(value):
        match = _tool_id_line(line, labels)
        if match:
            prefix, key, tool_id, comma = match.groups()
            note, flag = _id_note(tool_id, key, step, labels, is_response)
            colour = "#a00000" if flag else COLOURS[_index(labels.get(tool_id)) % len(COLOURS)]
            lines.append(
                f'{html.escape(prefix)}<span class="looplab-pair {flag}" data-pair="{labels.get(tool_id, "?")}" '
                f'style="color:{colour};outline:1px solid {colour}">"{html.escape(tool_id)}" {html.escape(note)}</span>{comma}'
            )
        elif len(line) > FOLD_AT:
            lines.append(
                f"<details><summary>{html.escape(line[: FOLD_AT - 20])}… ({len(line)} characters)</summary>"
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
            note, _ = _id_note(match.group(3), match.group(2), step, labels, is_response)
            line = f"{line}   <- {note}"
        elif len(line) > FOLD_AT:
            line = f"{line[: FOLD_AT - 20]}… ({len(line)} characters)"
        lines.append(line)
    return "\n".join(lines)


def _index(label: str | None) -> int:
    return sum(ord(ch) - 64 for ch in label) - 1 if label and label != "?" else 0


def step_html(step: Step, number: int, total: int, labels: dict, with_title: bool = True) -> str:
    sent = []
    for index, message in enumerate(step.messages):
        new = index >= step.previous_length
        role = message.get("role", "?") if isinstance(message, dict) else "?"
        mark = " · new" if new else ""
        sent.append(
            f'<pre class="{"looplab-new" if new else "looplab-old"}"><b>messages[{index}] · {html.escape(str(role))}{mark}</b>\n'
            f"{json_html(message, step, labels)}</pre>"
        )
    if step.response is not None:
        answer = f'<pre class="looplab-response">{json_html(step.response, step, labels, is_response=True)}</pre>'
    elif step.error is not None:
        hint = f"\n\nHint: {html.escape(step.hint)}" if step.hint else ""
        answer = f'<pre class="looplab-error">{html.escape(step.error_message or "")}{hint}</pre>'
    else:
        answer = "<pre>(nothing: this request was not sent)</pre>"
    title = f'<h4 class="looplab-step-title">{html.escape(step_title(step, number, total))}</h4>' if with_title else ""
    return (
        f'<div class="looplab-history">{title}'
        f'<div class="looplab-columns"><div class="looplab-column"><h4>request: messages</h4>{"".join(sent) or "<pre>[]</pre>"}</div>'
        f'<div class="looplab-column"><h4>{"response" if step.response is not None else "outcome"}</h4>{answer}</div></div></div>'
    )


def step_text(step: Step, number: int, total: int, labels: dict) -> str:
    lines = [f"== {step_title(step, number, total)} =="]
    for index, message in enumerate(step.messages):
        role = message.get("role", "?") if isinstance(message, dict) else "?"
        mark = "  (new)" if index >= step.previous_length else ""
        lines.append(f"-- messages[{index}] {role}{mark}")
        lines.append(json_text(message, step, labels))
    if step.response is not None:
        lines.append("-- response")
        lines.append(json_text(step.response, step, labels, is_response=True))
    elif step.error is not None:
        lines.append(f"-- error: {step.error_message}")
        if step.hint:
            lines.append(f"-- hint: {step.hint}")
    return "\n".join(lines)


# --- the widget -----------------------------------------------------------------------------------


class HistoryViewer(widgets.VBox):
    """Previous / next / slider over the steps; refreshes itself as a client's traffic grows."""

    def __init__(self, source: Any):
        self.source = source
        self.previous = widgets.Button(description="◀ Previous", layout=widgets.Layout(width="110px"))
        self.next = widgets.Button(description="Next ▶", layout=widgets.Layout(width="110px"))
        self.slider = widgets.IntSlider(min=1, max=1, value=1, description="Step", continuous_update=True)
        self.label = widgets.HTML()
        self.body = widgets.HTML()
        self.previous.add_class("looplab-prev")
        self.next.add_class("looplab-next")
        self.slider.add_class("looplab-slider")
        self.label.add_class("looplab-step-label")
        self.body.add_class("looplab-json")
        self.previous.on_click(lambda _: self._move(-1))
        self.next.on_click(lambda _: self._move(+1))
        self.slider.observe(lambda _: self._show(), names="value")
        super().__init__([widgets.HBox([self.previous, self.next, self.slider]), self.label, self.body])
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
        self.slider.max = max(1, len(self.steps))
        if was_at_end:
            self.slider.value = self.slider.max
        self._show()

    def _move(self, delta: int) -> None:
        self.slider.value = min(max(1, self.slider.value + delta), self.slider.max)

    def _show(self) -> None:
        total = len(self.steps)
        if not total:
            self.label.value = "<b>No model calls yet.</b>"
            self.body.value = ""
            return
        number = self.slider.value
        step = self.steps[number - 1]
        self.label.value = f"<b>{html.escape(step_title(step, number, total))}</b>"
        self.body.value = STYLE + step_html(step, number, total, self.labels, with_title=False)
        self.previous.disabled = number == 1
        self.next.disabled = number == total

    # --- static fallback: every step at once, for places where widgets cannot run ---------------

    def static_text(self) -> str:
        total = len(self.steps)
        if not total:
            return "History viewer: no model calls yet."
        parts = [f"History viewer: {total} step(s)"]
        parts += [step_text(step, n, total, self.labels) for n, step in enumerate(self.steps, start=1)]
        return "\n\n".join(parts)

    def static_html(self) -> str:
        total = len(self.steps)
        if not total:
            return "<p>History viewer: no model calls yet.</p>"
        parts = [step_html(step, n, total, self.labels) for n, step in enumerate(self.steps, start=1)]
        return STYLE + '<div class="looplab-static">' + "<hr>".join(parts) + "</div>"

    def _repr_mimebundle_(self, **kwargs):
        bundle = super()._repr_mimebundle_(**kwargs) or {}
        bundle["text/plain"] = self.static_text()
        bundle["text/html"] = self.static_html()
        return bundle

    def __repr__(self) -> str:
        return self.static_text()
