"""A real JupyterHub on this machine, for the classroom test (tests/hub/test_hub.py) and its benchmark.

JupyterHub from PyPI (requirements-dev.txt), configurable-http-proxy from npm (tests/hub/package.json, installed by
scripts/install_system_deps.sh), the simple local-process spawner (each learner's Jupyter server a process of this
machine, home under the hub's folder) and the dummy authenticator (any password). A service token with the
admin's scopes creates learners and starts their servers through the hub's REST API, as an instructor's script
would; each learner then uses their own server through the hub's proxy, with their own login: the class link, a
kernel, the contents of their home.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import uuid
from contextlib import closing
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import nbformat
import pytest
import requests
import websocket

HERE = Path(__file__).resolve().parent
PROXY = HERE / "node_modules" / ".bin" / "configurable-http-proxy"
# .venv-hub's: jupyterhub, jupyterhub-singleuser and the learners' kernels (scripts/bootstrap.py's hub_environment:
# the course's venv with JupyterHub on top, apart so that its aiohttp stays out of the rest of the suite)
BIN = HERE.parents[1] / ".venv-hub" / "bin"
START_TIMEOUT = 60  # seconds: the hub answering, then each server ready
RUN_TIMEOUT = 120  # seconds: one cell of a learner's notebook
# .venv-hub sees the course's packages through a .pth file, but Jupyter finds server extensions (JupyterLab,
# nbgitpuller) and JupyterLab's extensions (the widgets') under an environment's etc/ and share/: the course's.
COURSE_JUPYTER = {"JUPYTER_CONFIG_PATH": str(Path(sys.prefix) / "etc" / "jupyter"),
                  "JUPYTER_PATH": str(Path(sys.prefix) / "share" / "jupyter")}
# Each learner's JupyterLab: no news or update checks, and its app exposed to the page (window.jupyterapp), as in
# tests/browser/, so that the Chromium learner's test can run commands and read the kernel's status.
LAB_ARGS = ["--LabApp.news_url=None", "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
            "--LabApp.expose_app_in_browser=True"]


def why_no_hub() -> str | None:
    """Why this machine cannot start a hub, or None."""
    if shutil.which("jupyterhub", path=str(BIN)) is None:
        return f"JupyterHub is not installed in {BIN.parent}: run `make test` (scripts/bootstrap.py makes it)"
    if not PROXY.exists():
        return f"configurable-http-proxy is not installed ({PROXY}): run `bash scripts/install_system_deps.sh`"
    return None


def unavailable(reason: str) -> None:
    """Skip the hub's tests on a machine that cannot start one; in CI (CI=true) the same thing is a failure, as for
    the browser tests: the suite must not pass there without having run them."""
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(reason, pytrace=False)
    pytest.skip(reason)


def free_port() -> int:
    with closing(socket.socket()) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


CONFIG = """\
c = get_config()  # noqa: F821
c.JupyterHub.bind_url = "http://127.0.0.1:{port}"
c.JupyterHub.hub_bind_url = "http://127.0.0.1:{hub_port}"
c.ConfigurableHTTPProxy.command = [{proxy!r}]
c.ConfigurableHTTPProxy.api_url = "http://127.0.0.1:{proxy_api_port}"
c.JupyterHub.authenticator_class = "dummy"
c.Authenticator.allow_all = True
c.JupyterHub.spawner_class = "simple"
c.SimpleLocalProcessSpawner.home_dir_template = {homes!r} + "/{{username}}"
c.Spawner.cmd = [{singleuser!r}]
c.Spawner.args = {args!r}
c.Spawner.default_url = "/lab"
c.Spawner.environment = {environment!r}
c.Spawner.start_timeout = {start_timeout}
c.JupyterHub.db_url = "sqlite:///" + {folder!r} + "/jupyterhub.sqlite"
c.JupyterHub.cookie_secret_file = {folder!r} + "/cookie_secret"
c.JupyterHub.cleanup_servers = True
c.JupyterHub.services = [{{"name": "instructor", "api_token": {token!r}}}]
c.JupyterHub.load_roles = [{{"name": "instructor", "services": ["instructor"],
                             "scopes": ["admin:users", "admin:servers", "access:servers"]}}]
"""


class Hub:
    """A JupyterHub started in `folder` (its database, its log, the learners' homes under homes/), stopped by
    `stop()`: its proxy and every learner's server with it (they are its process group)."""

    def __init__(self, folder: Path, environment: dict | None = None):
        self.folder = Path(folder)
        self.homes = self.folder / "homes"
        self.homes.mkdir(parents=True, exist_ok=True)
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.token = secrets.token_hex(16)
        self.log = self.folder / "hub.log"
        root = os.geteuid() == 0
        (self.folder / "jupyterhub_config.py").write_text(CONFIG.format(
            port=self.port, hub_port=free_port(), proxy=str(PROXY), proxy_api_port=free_port(),
            homes=str(self.homes), singleuser=str(BIN / "jupyterhub-singleuser"),
            args=(["--allow-root"] if root else []) + LAB_ARGS, start_timeout=START_TIMEOUT, folder=str(self.folder),
            token=self.token, environment={"LOOPLAB_MODE": "offline", **COURSE_JUPYTER, **(environment or {})}))
        env = {key: value for key, value in os.environ.items() if not key.startswith("ANTHROPIC_")}
        env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
        with open(self.log, "w") as log:
            self.process = subprocess.Popen([str(BIN / "jupyterhub"), "-f", "jupyterhub_config.py"], cwd=self.folder,
                                            env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        self._wait_until_up()

    def _wait_until_up(self) -> None:
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"the hub stopped:\n{self.log_tail()}")
            try:
                if requests.get(f"{self.url}/hub/api/", timeout=2).ok:
                    return
            except requests.ConnectionError:
                pass
            time.sleep(0.2)
        raise RuntimeError(f"the hub did not answer within {START_TIMEOUT} s:\n{self.log_tail()}")

    def log_tail(self, lines: int = 40) -> str:
        return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])

    def api(self, method: str, path: str, **options) -> requests.Response:
        """The hub's REST API as the instructor's service."""
        response = requests.request(method, f"{self.url}/hub/api{path}", timeout=30,
                                    headers={"Authorization": f"token {self.token}"}, **options)
        response.raise_for_status()
        return response

    def add_learner(self, name: str) -> Learner:
        """A learner created through the REST API, their server started and ready, and logged in."""
        self.api("POST", f"/users/{name}")
        self.api("POST", f"/users/{name}/server")
        deadline = time.monotonic() + START_TIMEOUT
        while not self.api("GET", f"/users/{name}").json()["servers"].get("", {}).get("ready"):
            if time.monotonic() > deadline:
                raise RuntimeError(f"{name}'s server was not ready within {START_TIMEOUT} s:\n{self.log_tail()}")
            time.sleep(0.2)
        return Learner(self, name)

    def stop(self) -> None:
        """The hub, its proxy, every learner's server and their kernels: the whole tree of processes the hub
        started, killed at once (the hub's own clean-up stops the servers one after the other: seconds each)."""
        for pid in reversed(descendants(self.process.pid)):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        self.process.wait(timeout=30)


def descendants(pid: int) -> list[int]:
    """A process and every process under it, parents first (Linux: /proc/PID/task/*/children)."""
    found, pending = [], [pid]
    while pending:
        each = pending.pop(0)
        found.append(each)
        for task in Path(f"/proc/{each}/task").glob("*"):
            with contextlib.suppress(OSError):
                pending += [int(child) for child in (task / "children").read_text().split()]
    return found


class Learner:
    """One learner, logged in with their own cookies, using their own server through the hub's proxy."""

    def __init__(self, hub: Hub, name: str):
        self.hub, self.name = hub, name
        self.home = hub.homes / name
        self.session = requests.Session()
        self.session.get(f"{hub.url}/hub/login", timeout=30)
        xsrf = self.session.cookies.get("_xsrf", "")
        self.session.post(f"{hub.url}/hub/login", data={"username": name, "password": "any", "_xsrf": xsrf},
                          timeout=30).raise_for_status()
        self.server = f"{hub.url}/user/{name}"

    def open_link(self, link: str) -> str:
        """Click the class link as a browser would: the hub sends the learner to their server's nbgitpuller page,
        whose script asks the server to pull; that request is made here, as the page makes it. The path
        JupyterLab then opens."""
        page = self.session.get(link, timeout=60)
        page.raise_for_status()
        url = urlparse(page.url)
        assert url.path == f"/user/{self.name}/git-pull", f"the link led to {page.url}"
        asked = {key: values[0] for key, values in parse_qs(url.query).items()}
        pulled = self.session.get(f"{self.server}/git-pull/api", timeout=120, stream=True, params={
            key: asked[key] for key in ("repo", "branch", "targetpath")})
        events = [json.loads(line[len("data:"):]) for line in pulled.iter_lines(decode_unicode=True)
                  if line.startswith("data:")]
        assert events and events[-1].get("phase") == "finished", f"{self.name}'s pull: {events[-3:]}"
        return asked["urlpath"]

    def xsrf(self) -> dict:
        return {"X-XSRFToken": self.session.cookies.get("_xsrf", path=f"/user/{self.name}/") or ""}

    def read(self, path: str) -> dict:
        """A notebook of their home, as their server's contents API gives it."""
        response = self.session.get(f"{self.server}/api/contents/{path}", timeout=30)
        response.raise_for_status()
        return response.json()["content"]

    def write(self, path: str, notebook: dict) -> None:
        """Save a notebook into their home, as JupyterLab saves it."""
        self.session.put(f"{self.server}/api/contents/{path}", headers=self.xsrf(), timeout=30,
                         json={"type": "notebook", "format": "json", "content": notebook}).raise_for_status()

    def run(self, path: str, stop_at=None) -> dict:
        """Run a notebook of their home cell by cell in a kernel of their server (its folder the notebook's), over
        the proxy's websocket, and save it with its outputs. `stop_at(cell, outputs)`: True stops after that cell.
        The notebook as run."""
        notebook = nbformat.from_dict(self.read(path))
        started = self.session.post(f"{self.server}/api/sessions", headers=self.xsrf(), timeout=60, json={
            "path": path, "type": "notebook", "name": path.rsplit("/", 1)[-1], "kernel": {"name": "python3"}})
        started.raise_for_status()
        kernel = started.json()["kernel"]["id"]
        cookies = "; ".join(f"{cookie.name}={cookie.value}" for cookie in self.session.cookies)
        channel = websocket.create_connection(
            f"ws://127.0.0.1:{self.hub.port}/user/{self.name}/api/kernels/{kernel}/channels",
            header=[f"Cookie: {cookies}", *(f"{key}: {value}" for key, value in self.xsrf().items())],
            timeout=RUN_TIMEOUT)
        try:
            for cell in notebook.cells:
                if cell.cell_type != "code":
                    continue
                cell.outputs = execute(channel, cell.source)
                if stop_at is not None and stop_at(cell, cell.outputs):
                    break
        finally:
            channel.close()
            self.session.delete(f"{self.server}/api/sessions/{started.json()['id']}", headers=self.xsrf(), timeout=30)
        self.write(path, notebook)
        return notebook


def execute(channel: websocket.WebSocket, code: str) -> list:
    """One cell run by the kernel at the other end of `channel`: its outputs, as nbformat stores them."""
    msg_id = uuid.uuid4().hex
    channel.send(json.dumps({
        "header": {"msg_id": msg_id, "msg_type": "execute_request", "username": "learner", "session": msg_id,
                   "version": "5.3", "date": ""},
        "parent_header": {}, "metadata": {}, "channel": "shell",
        "content": {"code": code, "silent": False, "store_history": True, "user_expressions": {},
                    "allow_stdin": False, "stop_on_error": False}}))
    outputs = []
    while True:
        message = json.loads(channel.recv())
        if message.get("parent_header", {}).get("msg_id") != msg_id or message.get("channel") != "iopub":
            continue
        kind = message["msg_type"]
        if kind == "status" and message["content"]["execution_state"] == "idle":
            return outputs
        if kind in ("stream", "display_data", "execute_result", "error"):
            outputs.append(nbformat.v4.output_from_msg(message))
