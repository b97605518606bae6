"""Real-browser test fixtures: a JupyterLab server on loopback, offline, and Debian's Chromium driven by Playwright.

Nothing here downloads a browser: Playwright only drives /usr/bin/chromium, which
`bash scripts/install_system_deps.sh` installs (as root, with apt-get). Without it the browser
tests are skipped, except in CI (CI=true), where a missing browser is a failure.

Select or deselect these tests with `-m browser` / `-m "not browser"`.
"""

import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from tests.learner_run_all import CHROMIUM, why_no_browser

REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO / "artifacts"
HERE = Path(__file__).resolve().parent

SERVER_START_TIMEOUT = 60  # seconds until /api/status must answer
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
    # Less CPU for the same pages (about 6 s of Chromium's ~55 s over tests/browser): no scroll animation
    # when Playwright scrolls to an element, no CSS transitions (the page is told the user prefers reduced
    # motion, an ordinary setting), the software compositor in the browser process rather than a process
    # of its own, and no spare renderer process started ahead of need.
    "--disable-smooth-scrolling",
    "--force-prefers-reduced-motion",
    "--in-process-gpu",
    "--disable-features=SpareRendererForSitePerProcess",
]

# JupyterLab user settings written into the server's private settings dir: no news or update
# checks, no toasts over the notebook, and every cell attached to the DOM (no windowing), so the
# test sees every output whatever its scroll position.
LAB_SETTINGS = {
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {
        "fetchNews": "false",
        "checkForUpdates": False,
        "doNotDisturbMode": True,
    },
    "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {"windowingMode": "none"},
}


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "browser: drives a real JupyterLab in headless Chromium (needs /usr/bin/chromium)"
    )


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item, call):
    """Keep each phase's report on the item, so fixtures can tell at teardown whether the test failed."""
    report = yield
    setattr(item, f"report_{report.when}", report)
    return report


def unavailable(reason):
    """Skip the browser tests on a machine without the browser; in CI the same thing is a failure."""
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(reason, pytrace=False)
    pytest.skip(reason)


def free_loopback_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Lab:
    """A running JupyterLab: where it listens, its token and the folder it serves."""

    def __init__(self, process, port, token, root_dir, log_path):
        self.process = process
        self.port = port
        self.token = token
        self.root_dir = root_dir
        self.log_path = log_path
        self.base_url = f"http://127.0.0.1:{port}"

    def url(self, path):
        separator = "&" if "?" in path else "?"
        return f"{self.base_url}/{path.lstrip('/')}{separator}token={self.token}"

    def log_tail(self, lines=40):
        try:
            text = self.log_path.read_text(errors="replace")
        except OSError:
            return "(no server log)"
        return "\n".join(text.splitlines()[-lines:])

    def add_notebook(self, source, folder=""):
        """Copy a notebook into the served folder (or a subfolder of it: French notebooks share the English
        ones' names); returns its path there."""
        source = Path(source)
        (self.root_dir / folder).mkdir(parents=True, exist_ok=True)
        shutil.copy(source, self.root_dir / folder / source.name)
        return f"{folder}/{source.name}" if folder else source.name


def _wait_until_ready(lab):
    deadline = time.monotonic() + SERVER_START_TIMEOUT
    last_error = None
    while time.monotonic() < deadline:
        if lab.process.poll() is not None:
            pytest.fail(
                f"JupyterLab exited with code {lab.process.returncode} before answering; its log ends with:\n"
                f"{lab.log_tail()}",
                pytrace=False,
            )
        try:
            with urllib.request.urlopen(lab.url("/api/status"), timeout=2) as response:
                json.load(response)
                return
        except (OSError, ValueError) as error:  # connection refused, timeouts, HTTP errors, half-started server
            last_error = error
        time.sleep(0.25)
    pytest.fail(
        f"JupyterLab did not answer /api/status within {SERVER_START_TIMEOUT} s (last error: {last_error}); "
        f"its log ends with:\n{lab.log_tail()}",
        pytrace=False,
    )


def _stop(process):
    """Stop the server and the kernels it started (its own process group, which we created)."""
    if process.poll() is not None:
        return
    try:
        os.killpg(process.pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        pass
    try:  # whatever is left of the group: the server if it hung, kernels it did not reap
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    process.wait(timeout=10)


@pytest.fixture(scope="session")
def jupyter_lab(tmp_path_factory):
    """A JupyterLab server on a free loopback port with a random token, offline and isolated from ~/.jupyter."""
    base = tmp_path_factory.mktemp("jupyterlab")
    root_dir, config_dir, runtime_dir, data_dir, ipython_dir = (
        base / name for name in ("root", "config", "runtime", "data", "ipython")
    )
    for folder in (root_dir, config_dir, runtime_dir, data_dir, ipython_dir):
        folder.mkdir()
    settings_dir = config_dir / "lab" / "user-settings"
    for relative, settings in LAB_SETTINGS.items():
        path = settings_dir / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(settings))

    env = dict(os.environ)
    env.pop("ANTHROPIC_API_KEY", None)
    env.update(
        LOOPLAB_MODE="offline",
        # Config, runtime and user data are private to this run; the venv's own share/jupyter
        # (lab extensions such as the widget manager, the python3 kernelspec) is still found
        # through sys.prefix, which these variables do not replace.
        JUPYTER_CONFIG_DIR=str(config_dir),
        JUPYTER_RUNTIME_DIR=str(runtime_dir),
        JUPYTER_DATA_DIR=str(data_dir),
        IPYTHONDIR=str(ipython_dir),
        JUPYTER_PLATFORM_DIRS="0",
        # The kernel runs in root_dir; make it import this working tree's looplab whatever the install.
        PYTHONPATH=os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
        PYTHONUNBUFFERED="1",
    )

    port = free_loopback_port()
    token = secrets.token_hex(24)
    command = [
        sys.executable, "-m", "jupyter", "lab",
        "--no-browser",
        "--ServerApp.open_browser=False",
        "--ServerApp.ip=127.0.0.1",
        f"--ServerApp.port={port}",
        "--ServerApp.port_retries=0",
        "--ServerApp.allow_root=True",  # CI and the dev machines run as root
        f"--IdentityProvider.token={token}",
        f"--ServerApp.root_dir={root_dir}",
        "--LabApp.news_url=None",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
        "--LabApp.extension_manager=readonly",
        f"--LabApp.user_settings_dir={settings_dir}",
        f"--LabApp.workspaces_dir={config_dir / 'lab' / 'workspaces'}",
        "--LabApp.expose_app_in_browser=True",  # window.jupyterapp: run commands, read kernel status
    ]
    log_path = base / "jupyterlab.log"
    with open(log_path, "wb") as log:
        process = subprocess.Popen(
            command, cwd=root_dir, env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    lab = Lab(process, port, token, root_dir, log_path)
    try:
        _wait_until_ready(lab)
        yield lab
    finally:
        _stop(process)


@pytest.fixture(scope="session")
def browser():
    """Headless Debian Chromium under Playwright (never Playwright's own browser download)."""
    missing = why_no_browser()
    if missing:
        unavailable(missing)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


VIEWPORT = {"width": 1400, "height": 1100}


@pytest.fixture
def page(request, browser):
    """A browser page; if the test fails, its screenshot and text are saved to artifacts/.

    A test that drives JupyterLab (it uses the jupyter_lab fixture, directly or through run_notebook or
    run_all_to_the_end) gets the session's JupyterLab page: the app is loaded once, as loading it costs
    Chromium about 6 s of CPU. The test still starts from a fresh state: it opens its own copy of its
    notebook, which starts a new kernel, and afterwards every notebook is closed and every kernel shut down.
    Any other test gets a fresh browser context of its own (it may route or cut the network).
    """
    if "jupyter_lab" in request.fixturenames:
        page = request.getfixturevalue("jupyterlab_page")
        context = None
    else:
        context = browser.new_context(viewport=VIEWPORT)
        context.set_default_timeout(20_000)
        page = context.new_page()
    console = []

    def on_console(message):
        console.append(f"{message.type}: {message.text}")

    def on_page_error(error):
        console.append(f"pageerror: {error}")

    page.on("console", on_console)
    page.on("pageerror", on_page_error)
    try:
        yield page
    finally:
        failed = any(
            getattr(request.node, f"report_{when}", None) is not None
            and getattr(request.node, f"report_{when}").failed
            for when in ("setup", "call")
        )
        if failed:
            save_failure_artifacts(page, request.node.name, console)
        page.remove_listener("console", on_console)
        page.remove_listener("pageerror", on_page_error)
        if context is None:
            close_every_notebook(page, request.getfixturevalue("jupyter_lab"), reload=failed)
        else:
            context.close()


@pytest.fixture(scope="session")
def jupyterlab_page(browser, jupyter_lab):
    """One page of the browser with the JupyterLab app loaded, for every test that drives JupyterLab (see page)."""
    context = browser.new_context(viewport=VIEWPORT)
    context.set_default_timeout(20_000)
    page = context.new_page()
    try:
        load_jupyterlab(page, jupyter_lab)
        yield page
    finally:
        context.close()


def load_jupyterlab(page, lab):
    """Load the JupyterLab app (from an empty workspace, ?reset) and wait until it has restored its layout."""
    page.goto(lab.url("/lab?reset"))
    page.wait_for_function("() => window.jupyterapp !== undefined", timeout=60_000)
    page.evaluate("() => window.jupyterapp.restored.then(() => true)")


# Close every document without saving (a test's notebook is a copy) and shut down every kernel on the server.
_CLOSE_EVERY_NOTEBOOK = """async () => {
    const app = window.jupyterapp;
    for (const widget of [...app.shell.widgets('main')]) {
        if (widget.context) widget.dispose();
    }
    await app.serviceManager.sessions.shutdownAll();
    await app.serviceManager.kernels.shutdownAll();
    return document.querySelectorAll('.jp-Dialog').length === 0;
}"""


def close_every_notebook(page, lab, reload=False):
    """Leave the shared JupyterLab page as the next test expects it: no notebook open, no kernel running.

    After a failure, or if a dialog is left open, the app is loaded again, so that one failing test cannot
    make the next ones fail.
    """
    if reload:
        load_jupyterlab(page, lab)
    if not page.evaluate(_CLOSE_EVERY_NOTEBOOK):
        load_jupyterlab(page, lab)


def save_failure_artifacts(page, name, console=()):
    """Screenshot, visible text and console of the page, for a failing browser test."""
    ARTIFACTS.mkdir(exist_ok=True)
    stem = ARTIFACTS / f"{name}-failure"
    try:
        page.screenshot(path=f"{stem}.png", full_page=True, timeout=10_000)
    except Exception as error:  # the page may be gone; the text and log are still worth having
        print(f"could not save a screenshot: {error}", file=sys.stderr)
    try:
        text = page.inner_text("body", timeout=5_000)
    except Exception as error:
        text = f"(could not read the page: {error})"
    Path(f"{stem}.txt").write_text(text + "\n\n--- browser console ---\n" + "\n".join(console))
    print(f"browser test failed: saved {stem}.png and {stem}.txt", file=sys.stderr)


# --- driving a notebook -------------------------------------------------------------------------

RUN_TIMEOUT = 90_000  # ms for all cells of a notebook to finish

# Each script gets the notebook's path; PANEL finds its panel through window.jupyterapp.
_PANEL = """const app = window.jupyterapp;
    const panel = app && [...app.shell.widgets('main')].find(
        widget => widget.context && widget.context.path === path && widget.content && widget.sessionContext);"""

_KERNEL_IDLE = f"""path => {{
    {_PANEL}
    const kernel = panel && panel.sessionContext.session && panel.sessionContext.session.kernel;
    if (!(kernel && kernel.status === 'idle' && panel.content.widgets.length > 0)) return false;
    if (app.shell.currentWidget !== panel) {{ app.shell.activateById(panel.id); return false; }}
    return true;
}}"""

_RUN_ALL = f"""path => {{
    {_PANEL}
    app.commands.execute('notebook:run-all-cells');  // acts on the current notebook: the panel, see above
}}"""

# Done when no prompt shows [*] and either every code cell has an execution count or a cell raised
# (after an error the kernel skips the remaining cells, which go back to [ ]).
_CELLS_DONE = f"""path => {{
    {_PANEL}
    if (!panel) return false;
    const cells = panel.content.widgets.filter(cell => cell.model.type === 'code');
    const prompts = [...panel.node.querySelectorAll('.jp-CodeCell .jp-InputPrompt')].map(node => node.textContent);
    if (cells.length === 0 || prompts.some(text => text.includes('*'))) return false;
    const raised = cells.some(cell => cell.model.outputs.toJSON().some(output => output.output_type === 'error'));
    return raised || cells.every(cell => cell.model.executionCount !== null);
}}"""

_ERRORS = f"""path => {{
    {_PANEL}
    return panel.content.widgets.filter(cell => cell.model.type === 'code').flatMap((cell, index) =>
        cell.model.outputs.toJSON().filter(output => output.output_type === 'error').map(output =>
            `code cell ${{index + 1}}: ${{output.ename}}: ${{output.evalue}}\\n${{output.traceback.join('\\n')}}`));
}}"""

_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def open_a_copy(page, lab, path, folder=""):
    """Copy the notebook into the server's folder, open it in the page's JupyterLab app (a new kernel), and wait
    until that kernel is idle; its path in the server's folder."""
    notebook = lab.add_notebook(path, folder)
    page.evaluate("path => { window.jupyterapp.commands.execute('docmanager:open', {path, factory: 'Notebook'}); }",
                  notebook)
    page.wait_for_function(_KERNEL_IDLE, arg=notebook, timeout=60_000, polling=200)
    return notebook


def run_all_and_wait(page, notebook):
    """Run all cells of an open notebook and wait for them. Fails with the cells' tracebacks if a cell raised."""
    page.evaluate(_RUN_ALL, notebook)
    page.wait_for_function(_CELLS_DONE, arg=notebook, timeout=RUN_TIMEOUT, polling=200)
    errors = page.evaluate(_ERRORS, notebook)
    if errors:
        pytest.fail(f"a cell of {notebook} raised in JupyterLab:\n" + _ANSI.sub("", "\n\n".join(errors)), pytrace=False)


@pytest.fixture
def open_in_jupyterlab(jupyter_lab):
    """open_in_jupyterlab(page, path): copy the notebook into the server's folder and open it, without running it."""
    return lambda page, path, folder="": open_a_copy(page, jupyter_lab, path, folder)


@pytest.fixture
def run_notebook(jupyter_lab):
    """run_notebook(page, path): copy the notebook into the server's folder, open it, run all cells."""
    return lambda page, path, folder="": run_all_and_wait(page, open_a_copy(page, jupyter_lab, path, folder))


# Done when no prompt shows [*] and every code cell has an execution count: the run reached the end.
_REACHED_THE_END = f"""path => {{
    {_PANEL}
    if (!panel) return false;
    const cells = panel.content.widgets.filter(cell => cell.model.type === 'code');
    const prompts = [...panel.node.querySelectorAll('.jp-CodeCell .jp-InputPrompt')].map(node => node.textContent);
    return cells.length > 0 && !prompts.some(text => text.includes('*'))
        && cells.every(cell => cell.model.executionCount !== null);
}}"""

_CELL_OUTCOMES = f"""path => {{
    {_PANEL}
    return panel.content.widgets.filter(cell => cell.model.type === 'code').map(cell => ({{
        tags: cell.model.getMetadata('tags') || [],
        ran: cell.model.executionCount !== null,
        errors: cell.model.outputs.toJSON().filter(output => output.output_type === 'error').map(
            output => ({{ename: output.ename, evalue: output.evalue}})),
        source: cell.model.sharedModel.getSource(),
    }}));
}}"""


@pytest.fixture
def run_all_to_the_end(jupyter_lab):
    """run_all_to_the_end(page, path): Run All in JupyterLab; [{tags, ran, errors: [{ename, evalue}], source}] per
    code cell.

    Fails if the run does not reach the last code cell (a cell that raised stopped it).
    """

    def run(page, path, folder=""):
        notebook = open_a_copy(page, jupyter_lab, path, folder)
        page.evaluate(_RUN_ALL, notebook)
        try:
            page.wait_for_function(_REACHED_THE_END, arg=notebook, timeout=RUN_TIMEOUT, polling=200)
        except Exception:
            outcomes = page.evaluate(_CELL_OUTCOMES, notebook)
            stopped = [index + 1 for index, cell in enumerate(outcomes) if not cell["ran"]]
            raised = [f"code cell {index + 1} {cell['tags']}: {[error['ename'] for error in cell['errors']]}"
                      for index, cell in enumerate(outcomes) if cell["errors"]]
            pytest.fail(f"Run All of {notebook} did not reach the end: code cells {stopped} never ran; "
                        f"raised: {raised}", pytrace=False)
        return page.evaluate(_CELL_OUTCOMES, notebook)

    return run
