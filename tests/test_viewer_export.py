"""The viewer where no widget runs: an `nbconvert --execute` HTML export read offline, and the size
of the viewer text the solution notebooks store.

The export is the case that used to show nothing: executing stores the widget state, so nbconvert
picks the widget view, whose JavaScript comes from a CDN. The static rendering is its own output
beside the widget (viewer.py), so the page holds every step as plain HTML. The browser test opens
such a page with the network cut (tests/browser/).
"""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import nbformat

from authoring.learner_notebooks import SOLUTIONS
from looplab.client import offline_environment

REPO = Path(__file__).resolve().parents[1]
SCRIPT = re.compile(r"<script\b.*?</script>", re.DOTALL)
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"

# The stored viewer text (text/plain of the static renderings) a solution notebook may hold, and
# one rendering alone. A reader scrolls through it on GitHub and in every diff; before the static
# rendering folded what was sent before, notebook 2 held 1,289 lines (one output 398).
# One rendering may be longer when a whole session is the point: notebook 8's (290 lines, 8 calls) shows a history
# growing, the summary call and the splice after it, which a shorter session could not show; notebook 11's (447
# lines, 12 calls) is the capstone's whole demo, the parent's, the researcher's and the compactor's calls in one.
LINES_PER_NOTEBOOK = 700
LINES_PER_OUTPUT = 460

LOOP = '''messages = [{"role": "user", "content": "What are 4823 × 1979 and 1234 / 8?"}]
for _ in range(5):
    reply = client.messages.create(model=looplab.MODEL, max_tokens=1024, tools=looplab.tools.TOOLS, messages=messages)
    messages.append({"role": "assistant", "content": reply.content})
    if reply.stop_reason != "tool_use":
        break
    messages.append({"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": block.id, "content": looplab.tools.run_tool(block.name, block.input)}
        for block in reply.content if block.type == "tool_use"]})
looplab.show_history(client)'''


def export_html(notebook: Path, out_dir: Path, to: str = "html") -> Path:
    """`jupyter nbconvert --to html --execute`, offline, with this tree's looplab; returns the page.
    (`to="notebook"`: the executed notebook, its widget state stored, as a front end would save it.)"""
    env = offline_environment()
    env.update(PYTHONPATH=os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])))
    subprocess.run(
        [sys.executable, "-m", "jupyter", "nbconvert", "--to", to, "--execute", str(notebook),
         "--output-dir", str(out_dir), "--ExecutePreprocessor.timeout=120"],
        env=env, check=True, capture_output=True, cwd=out_dir,
    )
    return out_dir / f"{notebook.stem}.{'ipynb' if to == 'notebook' else to}"


def small_notebook(folder: Path) -> Path:
    notebook = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell('import looplab\nclient = looplab.client("calculator")'),
        nbformat.v4.new_code_cell(LOOP),
    ])
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    path = folder / "history.ipynb"
    nbformat.write(notebook, path)
    return path


def test_an_executed_html_export_shows_every_step_without_the_network(tmp_path):
    page = export_html(small_notebook(tmp_path), tmp_path).read_text()
    assert f'<script type="{WIDGET_VIEW}">' in page  # the widget state was stored: nbconvert chose the widget view...
    readable = SCRIPT.sub("", page)  # ...which shows nothing without its JavaScript; what is left is what shows
    assert readable.count('<div class="looplab-static">') == 1
    static = readable.split('<div class="looplab-static">')[1]
    assert "Step 1 of 2: the model asked for calculator ×2" in static
    assert "Step 2 of 2: the model answered in words" in static
    assert 'class="looplab-pair" data-pair="B"' in static and "<details" in static
    assert "https://" not in static


def viewer_text_lines(path: Path) -> list[int]:
    """The line count of each static viewer rendering stored in a notebook (its text/plain)."""
    counts = []
    for cell in json.loads(path.read_text())["cells"]:
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            html = "".join(data.get("text/html", ""))
            if 'class="looplab-static"' in html:
                counts.append(len("".join(data["text/plain"]).splitlines()))
    return counts


def test_the_stored_viewer_text_keeps_to_its_budget():
    for path in sorted(SOLUTIONS.glob("*.ipynb")):
        counts = viewer_text_lines(path)
        assert counts, f"{path.name} shows no history"
        assert sum(counts) <= LINES_PER_NOTEBOOK, f"{path.name}: {sum(counts)} lines of viewer text {counts}"
        assert max(counts) <= LINES_PER_OUTPUT, f"{path.name}: a viewer output of {max(counts)} lines {counts}"
