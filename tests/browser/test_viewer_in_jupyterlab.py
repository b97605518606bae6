"""The history viewer in a real JupyterLab: rendered live by ipywidgets in headless Chromium, offline.

The DOM contract of `looplab.show_history(...)` that this test relies on:
- root `.looplab-viewer`; step label `.looplab-step-label` ("Step 1 of 2: ..."); buttons `.looplab-prev`,
  `.looplab-next`; slider `.looplab-slider`; JSON area `.looplab-json`;
- every tool_use id and tool_result tool_use_id is wrapped in `.looplab-pair[data-pair="A"]` (B, C...) whose
  visible text includes "[A]" (a <b> chip in the pair's colour); a tool_use with no answer also has
  `.looplab-dangling` and the text "⚠ no tool_result", a misplaced or orphan result `.looplab-orphan`, a call
  the history ends with `.looplab-pending` ("○ pending"), a result with is_error true `.looplab-failed` ("✗ failed
  call"); the 400 is `.looplab-error`;
- a step's request `system` and `tools` are `details.looplab-system` / `details.looplab-tools` (folded);
- the static rendering is a second output, `.looplab-static`, hidden beside a live widget; it is what an
  `nbconvert --execute` HTML export shows offline, and what a reopened (sanitized) notebook keeps.

A failing run leaves a screenshot and the page's text in artifacts/.
"""

import re
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.browser

DEMO = Path(__file__).with_name("viewer_demo.ipynb")
ARTIFACTS = Path(__file__).resolve().parents[2] / "artifacts"
STEP = re.compile(r"Step (\d+) of (\d+)")
TOOL_USE_ID = re.compile(r"toolu_\w+")


def current_step(viewer):
    text = viewer.locator(".looplab-step-label").inner_text()
    match = STEP.search(text)
    assert match, f"the step label should read like 'Step 1 of 2: ...', got {text!r}"
    return int(match[1]), int(match[2])


def each_step(viewer):
    """Go to the viewer's first step with its buttons, then yield at each step up to the last."""
    from playwright.sync_api import expect

    label = viewer.locator(".looplab-step-label")
    number, total = current_step(viewer)
    while number > 1:
        viewer.locator(".looplab-prev").click()
        expect(label).to_contain_text(f"Step {number - 1} of {total}")
        number -= 1
    yield number
    while number < total:
        viewer.locator(".looplab-next").click()
        expect(label).to_contain_text(f"Step {number + 1} of {total}")
        number += 1
        yield number


def shared_pairs(viewer):
    """{label: [visible texts]} for every data-pair value worn by at least two visible elements of the JSON area."""
    groups = {}
    for element in viewer.locator(".looplab-json .looplab-pair").all():
        if element.is_visible():
            groups.setdefault(element.get_attribute("data-pair"), []).append(element.inner_text())
    return {label: texts for label, texts in groups.items() if len(texts) >= 2}


def once_drawn(read, tries=10, pause=0.3):
    """read(), asked again for a moment until it gives something: the step label and the JSON area are two widget
    updates, and the label can already say "Step 2" while the JSON area still shows step 1 (seen twice in loops)."""
    for _ in range(tries):
        found = read()
        if found:
            return found
        time.sleep(pause)
    return read()


def shared_pairs_once_drawn(viewer):
    return once_drawn(lambda: shared_pairs(viewer)) or {}


def test_history_viewer_works_in_jupyterlab(page, run_notebook):
    from playwright.sync_api import expect

    run_notebook(page, DEMO)

    # It rendered: six live viewers (the client's history, the dangling list, then those of the test
    # below), no widget errors.
    viewers = page.locator(".looplab-viewer")
    expect(viewers).to_have_count(6)
    history, dangling = viewers.nth(0), viewers.nth(1)
    expect(history).to_be_visible()
    expect(page.get_by_text("Error displaying widget")).to_have_count(0)
    for part in (".looplab-step-label", ".looplab-prev", ".looplab-next", ".looplab-slider", ".looplab-json"):
        expect(history.locator(part)).to_be_visible()

    # "Next" moves on: both the step label and the JSON shown change.
    steps = each_step(history)
    next(steps)
    label, body = history.locator(".looplab-step-label"), history.locator(".looplab-json")
    label_before, body_before = label.inner_text(), body.inner_text()
    assert current_step(history)[1] >= 2, "the demo conversation makes at least two requests"
    next(steps)
    expect(label).not_to_have_text(label_before)
    expect(body).not_to_have_text(body_before)

    # On some step, a tool_use id and the tool_result answering it wear the same pair and the same label.
    paired = None
    for _ in each_step(history):
        pairs = shared_pairs_once_drawn(history)
        if pairs:
            paired = pairs
            break
    assert paired, "no step shows a tool_use id and its tool_result sharing a .looplab-pair data-pair value"
    for pair, texts in paired.items():
        assert all(f"[{pair}]" in text for text in texts), f"pair {pair} is not labelled [{pair}] everywhere: {texts}"
        ids = {found for text in texts for found in TOOL_USE_ID.findall(text)}
        assert len(ids) <= 1, f"pair {pair} joins different ids: {sorted(ids)}"
    ARTIFACTS.mkdir(exist_ok=True)
    history.screenshot(path=str(ARTIFACTS / "viewer.png"))

    # A tool_use nobody answered is flagged.
    flagged = False
    for _ in each_step(dangling):
        flag = dangling.locator(".looplab-dangling")
        if once_drawn(lambda: flag.count() and flag.first.is_visible()):
            expect(flag.first).to_contain_text("no tool_result")
            flagged = True
            break
    assert flagged, "the dangling tool_use is not flagged with .looplab-dangling on any step"
    dangling.screenshot(path=str(ARTIFACTS / "viewer_dangling.png"))


def test_whole_request_flags_and_layout_in_jupyterlab(page, run_notebook):
    """System and tools folded, usage shown, pending and misplaced flagged, pair colours, one height for
    every step, and the static rendering hidden beside the live widget."""
    from playwright.sync_api import expect

    run_notebook(page, DEMO)
    viewers = page.locator(".looplab-viewer")
    expect(viewers).to_have_count(6)
    history, agent, misplaced, pending = viewers.nth(0), viewers.nth(2), viewers.nth(3), viewers.nth(4)
    failed = viewers.nth(5)

    # Where the widget runs, the static rendering beside it is hidden (it is for nbconvert, GitHub...).
    statics = page.locator(".looplab-static")
    expect(statics).to_have_count(6)
    for index in range(6):
        expect(statics.nth(index)).to_be_hidden()

    # The whole request: system and tools on every step, folded until clicked; the response's usage.
    for _ in each_step(agent):
        for part, words in (("system", "For any arithmetic"), ("tools", "Evaluates an arithmetic expression")):
            details = agent.locator(f".looplab-json details.looplab-{part}")
            summary, content = details.locator("> summary"), details.locator("> pre")
            expect(summary).to_be_visible()
            expect(content).to_be_hidden()
            summary.click()
            expect(content).to_contain_text(words)
        expect(agent.locator(".looplab-json")).to_contain_text("input tokens")
    expect(agent.locator(".looplab-json")).to_contain_text(re.compile(r"usage: \d+ input tokens \(\+\d+ since step 1\)"))
    agent.screenshot(path=str(ARTIFACTS / "viewer_request.png"))

    # One height for every step: the buttons do not move as the learner steps through.
    heights = {round(history.locator(".looplab-json").bounding_box()["height"]) for _ in each_step(history)}
    assert len(heights) == 1, f"the JSON area changes height between steps: {sorted(heights)}"

    # A pair's letter chip wears an Okabe-Ito colour; a flag is red, with a ⚠ and words.
    chip = history.locator('.looplab-json .looplab-pair[data-pair="A"] b').first
    expect(chip).to_have_css("background-color", "rgb(0, 114, 178)")  # retried: the widget may redraw meanwhile
    expect(misplaced.locator(".looplab-orphan").first).to_contain_text("⚠ comes after other content")
    expect(misplaced.locator(".looplab-dangling").first).to_contain_text("⚠ no tool_result")
    expect(misplaced.locator(".looplab-error")).to_contain_text("toolu_demo_misplaced [A]")
    misplaced.screenshot(path=str(ARTIFACTS / "viewer_misplaced.png"))

    # A history that ends with a call nobody answered yet: pending, on the step label and at the id.
    expect(pending.locator(".looplab-step-label")).to_contain_text("not answered yet")
    expect(pending.locator(".looplab-pending")).to_contain_text("○ pending: no tool_result yet")

    # A failed call (its tool_result has is_error true) is marked, in words, and not as a flag; the good one is not.
    expect(failed.locator(".looplab-failed")).to_have_count(1)
    expect(failed.locator(".looplab-failed")).to_contain_text('"toolu_demo_failed" [A] ✗ failed call: is_error')
    expect(failed.locator(".looplab-dangling, .looplab-orphan")).to_have_count(0)
    expect(failed.locator('.looplab-pair[data-pair="B"]').last).not_to_contain_text("failed")
    failed.screenshot(path=str(ARTIFACTS / "viewer_failed_call.png"))


@pytest.fixture(scope="module")
def executed_demo(tmp_path_factory):
    """The demo as `jupyter nbconvert --to notebook --execute` saves it, its widget state stored: executed once
    (some 7 s of CPU) for the two tests below, which read it where no widget runs."""
    from tests.test_viewer_export import export_html

    return export_html(DEMO, tmp_path_factory.mktemp("executed_demo"), to="notebook")


def test_the_executed_html_export_shows_every_step_offline(page, executed_demo, tmp_path):
    """The HTML export of the executed demo, opened from file:// with the network cut.

    `jupyter nbconvert --to html --execute` executes, then exports what it executed; here the export is of the
    notebook that execution saved, so the page is the same. (tests/test_viewer_export.py runs that command
    whole, on a smaller notebook, without a browser.)
    """
    from nbconvert import HTMLExporter
    from playwright.sync_api import expect

    html, _ = HTMLExporter().from_filename(str(executed_demo))
    export = tmp_path / "viewer_demo.html"
    export.write_text(html, encoding="utf-8")
    page.context.set_offline(True)
    page.route(re.compile(r"^https?://"), lambda route: route.abort())  # the widget JavaScript's CDN, above all
    page.goto(export.as_uri())
    statics = page.locator(".looplab-static")
    expect(statics).to_have_count(6)
    for index in range(6):
        static = statics.nth(index)
        expect(static).to_be_visible()
        total = int(STEP.search(static.inner_text())[2])
        for number in range(1, total + 1):
            expect(static.get_by_text(re.compile(f"^Step {number} of {total}:"))).to_be_visible()
    expect(statics.nth(1).locator(".looplab-dangling").first).to_be_visible()
    expect(statics.nth(3).locator(".looplab-orphan").first).to_be_visible()
    expect(statics.nth(4).locator(".looplab-pending").first).to_be_visible()
    expect(statics.nth(5).locator(".looplab-failed").first).to_contain_text("✗ failed call")
    system = statics.nth(2).locator("details.looplab-system").first
    expect(system.locator("> summary")).to_be_visible()
    expect(system.locator("> pre")).to_be_hidden()
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "viewer_export_offline.png"), full_page=True)


def test_a_reopened_notebook_keeps_folds_and_colours_through_the_sanitizer(page, open_in_jupyterlab, executed_demo):
    """Outputs of a notebook opened (not run) in JupyterLab are untrusted, so sanitized: the static
    rendering's <details> and inline colours must survive that."""
    from playwright.sync_api import expect

    open_in_jupyterlab(page, executed_demo)
    statics = page.locator(".looplab-static")
    expect(statics).to_have_count(6, timeout=60_000)
    expect(statics.nth(5)).to_contain_text("✗ failed call: is_error")  # the words stay, whatever the sanitizer drops
    agent = statics.nth(2)
    expect(agent.locator("details.looplab-system > summary")).to_have_count(1)
    expect(agent.locator("details.looplab-tools > summary")).to_have_count(1)
    chip = statics.nth(0).locator(".looplab-pair b").first  # the sanitizer drops data-pair, keeps the letter
    expect(chip).to_have_text("[A]")
    expect(chip).to_have_css("background-color", "rgb(0, 114, 178)")  # retried: the widget may redraw meanwhile
    flag = statics.nth(1).locator(".looplab-dangling").first
    expect(flag).to_have_css("outline-style", "dashed")
