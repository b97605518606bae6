"""The history viewer in a real JupyterLab: rendered live by ipywidgets in headless Chromium, offline.

The DOM contract of `looplab.show_history(...)` that this test relies on:
- root `.looplab-viewer`; step label `.looplab-step-label` ("Step 1 of 2: ..."); buttons `.looplab-prev`,
  `.looplab-next`; slider `.looplab-slider`; JSON area `.looplab-json`;
- every tool_use id and tool_result tool_use_id is wrapped in `.looplab-pair[data-pair="A"]` (B, C...) whose
  visible text includes "[A]"; a tool_use with no answer also has `.looplab-dangling` and the text "no tool_result".

A failing run leaves a screenshot and the page's text in artifacts/.
"""

import re
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


def test_history_viewer_works_in_jupyterlab(page, run_notebook):
    from playwright.sync_api import expect

    run_notebook(page, DEMO)

    # It rendered: two live viewers (the client's history, then the dangling message list), no widget errors.
    viewers = page.locator(".looplab-viewer")
    expect(viewers).to_have_count(2)
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
        pairs = shared_pairs(history)
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
        if flag.count() and flag.first.is_visible():
            expect(flag.first).to_contain_text("no tool_result")
            flagged = True
            break
    assert flagged, "the dangling tool_use is not flagged with .looplab-dangling on any step"
    dangling.screenshot(path=str(ARTIFACTS / "viewer_dangling.png"))
