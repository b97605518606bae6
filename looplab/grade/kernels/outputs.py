"""What the grader keeps of a notebook's outputs: capped as they stream in, per cell and per notebook.

Why while they stream: nbclient keeps every output a kernel sends, whole, in the notebook it runs, and
a feedback copy only ever shows the first and last OUTPUT_LIMIT // 2 characters of a cell's. A cell
printing in a loop for seconds sends hundreds of megabytes, and the grader held them all (it grew to
2.6 GB) until the feedback was written. So `CellOutputs` keeps, as each output arrives, what the feedback
will show (the first and last half of the cell's limit, and a line saying how much was cut between),
and the notebook as a whole keeps at most NOTEBOOK_OUTPUT_LIMIT characters: a cell that starts past it
keeps only that line. A feedback notebook caps its cells the same way (`capped_outputs`).

`CappedClient` is nbclient's NotebookClient with its public `output` method wrapped: nbclient files
each output as before (display ids, output widgets, a pending clear_output), then the cell's outputs
are replaced by what is kept. Every output is kept the same way, the grader's cells' as the learner's:
the grader reads no result from a kernel's outputs (its results come from the judge).
"""

from __future__ import annotations

import functools
import json
import re

# Output kept per cell, in characters: its first and last half (five seconds of printing in a loop would
# otherwise make a notebook of many megabytes, and a grader of gigabytes).
OUTPUT_LIMIT = 200_000
# Output kept per notebook, in characters: twenty cells at their limit. An honest notebook of this course
# prints a few thousand.
NOTEBOOK_OUTPUT_LIMIT = 20 * OUTPUT_LIMIT
NOTE = ("\n[... {cut:,} characters of this cell's output cut by the looplab grader: it keeps the first and last "
        "{half:,} of a cell's output, and {total:,} in a whole notebook ...]\n")
NOTE_PATTERN = re.compile(r"\n\[\.\.\. (?P<cut>[\d,]+) characters of this cell's output cut by the looplab grader: "
                          r"[^\n]*\.\.\.\]\n")


def output_size(output) -> int:
    """A stream output's text, or any other output's JSON, in characters."""
    if output.get("output_type") == "stream":
        return len(output.get("text", ""))
    return len(json.dumps(output))


def _stream(name: str, text: str):
    import nbformat
    return nbformat.v4.new_output("stream", name=name, text=text)


class CellOutputs:
    """One cell's outputs as the grader keeps them: all of them up to `limit` characters; past it, the first
    `limit // 2` (a stream cut within its text, another output kept whole or not at all), a line saying
    how much was cut, and the last `limit // 2`. Fed its own line back (a list it kept), it counts it as cut."""

    def __init__(self, limit: int = OUTPUT_LIMIT):
        self.limit, self.half = limit, limit // 2
        self.head: list = []  # every output, until the cell passes its limit; then its first half
        self.tail: list = []  # the last half, once cutting
        self.size = 0  # characters in head (and, once cutting, in tail)
        self.cut = 0  # characters dropped between head and tail
        self.cutting = False

    def add(self, output) -> None:
        note = NOTE_PATTERN.fullmatch(output.get("text", "")) if output.get("output_type") == "stream" else None
        if note:
            self.cut += int(note["cut"].replace(",", ""))
            self._start_cutting()
            return
        if not self.cutting:
            self.head.append(output)
            self.size += output_size(output)
            if self.size > self.limit:
                self._start_cutting()
            return
        last = self.tail[-1] if self.tail else None
        if (last is not None and output.get("output_type") == "stream" == last.get("output_type")
                and output.get("name") == last.get("name")):
            last["text"] += output["text"]  # one stream output grows, rather than thousands of small ones
        else:
            self.tail.append(output)
        self.size += output_size(output)
        self._trim_tail()

    def _start_cutting(self) -> None:
        """Keep the first half in head; the rest goes to the tail, trimmed to the last half."""
        if self.cutting:
            return
        self.cutting = True
        room, kept, rest = self.half, [], []
        for output in self.head:
            size = output_size(output)
            if rest or size > room:
                if not rest and output.get("output_type") == "stream" and room:
                    kept.append(_stream(output.get("name", "stdout"), output["text"][:room]))
                    output = _stream(output.get("name", "stdout"), output["text"][room:])
                    room = 0
                rest.append(output)
            else:
                kept.append(output)
                room -= size
        self.head, self.tail = kept, rest
        self.size = sum(map(output_size, kept + rest))
        self._trim_tail()

    def _trim_tail(self) -> None:
        """Drop from the front of the tail until it holds at most the last half."""
        excess = sum(output_size(output) for output in self.tail) - self.half
        while excess > 0 and self.tail:
            first = self.tail[0]
            size = output_size(first)
            if first.get("output_type") == "stream" and size > excess:
                self.tail[0] = _stream(first.get("name", "stdout"), first["text"][excess:])
                self.cut += excess
                self.size -= excess
                return
            self.tail.pop(0)
            self.cut += size
            self.size -= size
            excess -= size

    def outputs(self) -> list:
        if not self.cutting:
            return list(self.head)
        note = NOTE.format(cut=self.cut, half=OUTPUT_LIMIT // 2, total=NOTEBOOK_OUTPUT_LIMIT)
        name = next((o.get("name") for o in self.head + self.tail if o.get("output_type") == "stream"), "stdout")
        return self.head + [_stream(name, note)] + self.tail


def capped_outputs(outputs: list, limit: int = OUTPUT_LIMIT) -> list:
    """The outputs, or, past `limit` characters in all, their first and last `limit // 2` and a line saying
    how much was cut between (a list already capped so comes back as it is)."""
    kept = CellOutputs(limit)
    for output in outputs:
        kept.add(output)
    return outputs if not kept.cutting else kept.outputs()


class NotebookOutputs:
    """Every cell's CellOutputs in one notebook's run, within NOTEBOOK_OUTPUT_LIMIT together."""

    def __init__(self, limit: int = NOTEBOOK_OUTPUT_LIMIT, cell_limit: int = OUTPUT_LIMIT):
        self.limit, self.cell_limit = limit, cell_limit
        self.cells: dict[int, CellOutputs] = {}

    def cell(self, index: int) -> CellOutputs:
        if index not in self.cells:
            used = sum(cell.size for number, cell in self.cells.items() if number != index)
            self.cells[index] = CellOutputs(max(0, min(self.cell_limit, self.limit - used)))
        return self.cells[index]

    def clear(self, index: int) -> None:
        """The cell cleared its output (clear_output): what it shows starts again; its room is given back."""
        self.cells.pop(index, None)

    def add(self, index: int, output) -> list:
        """Take one output of cell `index`; the cell's outputs as now kept."""
        self.cell(index).add(output)
        return self.cell(index).outputs()


@functools.cache
def capped_client():
    """NotebookClient whose cells keep their outputs capped as they arrive (imported when first needed)."""
    from nbclient import NotebookClient

    class CappedClient(NotebookClient):
        """nbclient's client; `output` (public, called for every output message) keeps what NotebookOutputs keeps."""

        def reset_execution_trackers(self) -> None:
            super().reset_execution_trackers()
            self.kept_outputs = NotebookOutputs()

        def clear_output(self, outs, msg, cell_index):
            super().clear_output(outs, msg, cell_index)
            if not outs:
                self.kept_outputs.clear(cell_index)

        def output(self, outs, msg, display_id, cell_index):
            pending_clear = getattr(self, "clear_before_next_output", False)  # set by nbclient once a cell runs
            out = super().output(outs, msg, display_id, cell_index)
            if out is None:  # an output widget took it, or not an output
                return out
            if pending_clear:
                self.kept_outputs.clear(cell_index)
            kept = self.kept_outputs.add(cell_index, out)
            if len(kept) != len(outs) or (kept and kept[-1] is not out):
                outs[:] = kept
                self.clear_display_id_mapping(cell_index)  # the kept outputs moved: no display updates them now
            return out

    return CappedClient
