"""Job slots: the `--jobs` places notebooks run in, one at a time each.

Why slots: a kernel must share nothing with the others. Each slot has its own folders (the
kernel's work folder, home, temp and IPython directories, and the folder of its IPC sockets) and,
for forked kernels, its own template, which serves one kernel at a time. Before each notebook the
slot's folders are emptied, and a template that was lost (a kernel killed it) is started again, so
nothing a notebook left behind, files or processes, reaches the next one, and a notebook that
kills its template harms only itself.

A template speaks one language: some of the course's words are read once, when their module is
imported (looplab.loop.SYSTEM_PROMPT), and its kernels inherit them. It starts in the class's
language (its environment says LOOPLAB_LANG), always as a new interpreter that imports the package's
graded edition (edition.py), never as a fork of the grader, whose memory holds the course's answers;
before a notebook in another language, the slot starts a template in that one.

With bubblewrap (sandbox.py) the slot is also a sandbox: the template runs inside it (a plain
kernel is started inside a new one each time), only the slot's own folders are writable and
visible, and the template kills whatever the notebook left in the sandbox when its kernel exits.

Where this machine lets the grader make cgroups (cgroups.py), the slot also has its own: each
notebook's kernel is moved in as it starts, so the notebook's CPU time, memory and tasks are
counted and capped together, and everything it started is killed at once when it ends.
"""

from __future__ import annotations

from pathlib import Path

from jupyter_client.kernelspec import KernelSpecManager

from ...language import OVERRIDE
from .emptying import empty_folder
from . import cgroups
from .fork_server import TEMPLATES, ForkServer, provisioner_registered, write_kernel_spec

# What a sandboxed kernel keeps of the grader's environment: nothing that could hold a secret.
KEPT_IN_SANDBOX = ("PATH", "LANG", "LANGUAGE", "TZ", "TERM", "PYTHONPATH", "PYTHONHASHSEED", "PYTHONIOENCODING",
                   "PYTHONUTF8", "VIRTUAL_ENV", "PYDEVD_DISABLE_FILE_VALIDATION")


class Slot:
    """One place a notebook runs: folders emptied before each notebook, a template of its own."""

    def __init__(self, folder: Path, sandbox: list[str] | None, forked: bool, debug: bool):
        self.folder = folder
        self.scratch = folder / "scratch"  # emptied before each notebook: work, home, tmp, ipython
        self.ipc = folder / "ipc"  # the kernel's IPC sockets and connection file (sandboxed only)
        self.work, self.ipython = self.scratch / "work", self.scratch / "ipython"
        self.home, self.temp = self.scratch / "home", self.scratch / "tmp"
        for path in (self.scratch, self.ipc):
            path.mkdir(parents=True)
        self.sandbox = sandbox  # the bwrap command line (ending in --), or None: not isolated
        self.forked, self.debug = forked, debug
        self.server: ForkServer | None = None
        self.language: str | None = None  # the language its template speaks: the words its kernels imported
        self.specs: KernelSpecManager = write_kernel_spec(folder / "kernels", None, sandbox)
        self.failure: str | None = None  # why the template did not start (the slot then starts plain kernels)
        self.cgroup = cgroups.make(folder.name)  # None: the notebook's processes are followed in /proc

    def env(self, base: dict) -> dict:
        """The kernel's environment: its own IPython directory; in a sandbox, its own home and temp too."""
        env = dict(base)
        if self.sandbox is not None:
            env = {key: value for key, value in env.items() if key in KEPT_IN_SANDBOX or key.startswith(("LC_", "LOOPLAB_"))
                   or key.lower().endswith("_proxy")}
            env.update(HOME=str(self.home), TMPDIR=str(self.temp), USER="learner", LOGNAME="learner")
        env["IPYTHONDIR"] = str(self.ipython)
        return env

    def spawn(self, base_env: dict, speaking: str) -> None:
        """Start the template now, speaking `speaking`: a new interpreter (in the slot's sandbox, if any), whose
        `import looplab` is the graded edition (base_env's PYTHONPATH, or the sandbox's bind)."""
        if self.forked and self.server is None:
            self.empty()
            self.server = ForkServer(self.env({**base_env, OVERRIDE: speaking}), str(self.scratch), self.debug,
                                     self.sandbox, fresh=True)
            self.language = speaking
            self.server.spawn()

    async def start(self, base_env: dict, speaking: str) -> None:
        """The template ready, speaking `speaking`, and its kernel spec written; on failure, plain kernels and
        `failure` says why."""
        if not self.forked:
            return
        try:
            self.spawn(base_env, speaking)
            await self.server.start()
            specs = write_kernel_spec(self.folder / "kernels", self.server, self.sandbox)
            if not provisioner_registered(specs):
                raise RuntimeError("its kernel provisioner is not registered: reinstall looplab")
            TEMPLATES[self.server.key] = self.server
            self.specs = specs
        except Exception as error:
            await self.stop()
            self.forked = False
            self.specs = write_kernel_spec(self.folder / "kernels", None, self.sandbox)
            self.failure = str(error)

    async def prepare(self, base_env: dict, speaking: str) -> None:
        """Before a notebook in `speaking`: a lost template, or one speaking another language, started again (in
        the notebook's), the folders emptied."""
        if self.forked and (self.server is None or self.server.lost or self.language != speaking):
            await self.stop()
            await self.start(base_env, speaking)
        self.empty()

    def empty(self) -> None:
        """The slot's writable folders as new (their contents removed whatever the notebook made of them:
        emptying.py, which no depth, length or permission stops). Raises OSError if anything is left."""
        for folder in (self.scratch, self.ipc):
            folder.mkdir(parents=True, exist_ok=True)
            empty_folder(folder)
        for folder in (self.work, self.home, self.temp, self.ipython):
            folder.mkdir(parents=True, exist_ok=True)

    async def stop(self) -> None:
        if self.server is not None:
            TEMPLATES.pop(self.server.key, None)
            await self.server.close()
            self.server, self.language = None, None

    def remove_cgroup(self) -> None:
        """At the grader's end: whatever is still in the slot's cgroup killed, and the cgroup removed."""
        if self.cgroup is not None:
            self.cgroup.kill()
            self.cgroup.remove()

