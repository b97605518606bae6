"""Kernels: the fork server (a template that has imported everything once), what it forks, and the
kernel spec and provisioner through which jupyter_client starts them.

Starting a kernel the usual way costs about 2 s of imports per notebook; forking a warm template
costs milliseconds. This module is also what the template process runs (`serve_forks`).

How jupyter_client gets a forked kernel, through its public seams only: the grader writes a kernel
spec in its temporary folder (`write_kernel_spec`) whose metadata names the provisioner
`looplab-fork`, registered under the `jupyter_client.kernel_provisioners` entry point group in
pyproject.toml, with the key of the running template as its config. The kernel manager, given a
KernelSpecManager that reads that folder, makes a `ForkProvisioner`, which asks the template for
a fork instead of starting a process. Plain kernels use the same spec without the provisioner.
`make notebooks` runs the solution notebooks the same way (authoring/learner_notebooks.py).
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
import time
import uuid
from pathlib import Path
from typing import Any

from jupyter_client.kernelspec import KernelSpecManager, NoSuchKernel
from jupyter_client.provisioning import KernelProvisionerFactory, LocalProvisioner
from traitlets import Unicode

FORK_SERVER_BOOT = "from looplab.grade.kernels.fork_server import serve_forks; serve_forks()"
# The template of a sandbox: told the grader's PID namespace, so it clears its own only when it is in another one.
SANDBOXED_BOOT = "from looplab.grade.kernels.fork_server import serve_forks; serve_forks(outside_pid_namespace={namespace!r})"
PROVISIONER_NAME = "looplab-fork"  # the entry point declared in pyproject.toml
KERNEL_NAME = "looplab-grader"  # the kernel spec the grader writes in its temporary folder

# What a kernel imports to start and to run the course's notebooks: imported once, in the template.
PRELOAD = (
    "looplab", "looplab.checks", "looplab.loop", "looplab.scripted", "looplab.viewer", "anthropic", "httpx2",
    # what the grader's cells and the later notebooks import: the check points' end, the course line's stand-ins,
    # notebook 5's and 6's modules, and the MCP client notebook 5 starts its server with (0.33 s in every kernel)
    "looplab.serve", "looplab.withheld", "looplab.toolbox", "looplab.robust", "looplab.notebook_source", "mcp",
    "mcp.client.stdio", "anyio",
    "ipywidgets", "IPython", "IPython.core.ultratb", "IPython.core.completer", "IPython.extensions",
    "ipykernel.kernelapp", "ipykernel.ipkernel", "ipykernel.zmqshell", "ipykernel.comm", "ipykernel.debugger",
    "jupyter_client.localinterfaces", "psutil", "stack_data", "executing", "pure_eval", "asttokens",
    "pygments.lexers", "pygments.lexers.python", "pygments.formatters", "pygments.styles", "ipython_pygments_lexers",
    "jsonschema", "sqlite3", "pdb", "pydoc", "tornado.queues", "tornado.locks", "xmlrpc.client", "http.server",
)


def imported_in(speaking: str) -> bool:
    """Whether the words this process read when it imported looplab are `speaking`'s: only then may a template
    speaking `speaking` be a fork of it. Some words are read once, at import: looplab.loop.SYSTEM_PROMPT (a
    kernel runs one notebook), which toolbox.py and robust.py also bind as default arguments. A module not
    imported yet is imported by the template itself, in the language of its environment."""
    loop = sys.modules.get("looplab.loop")
    if loop is None:
        return True
    from ... import language
    with language.using(speaking):
        return loop.SYSTEM_PROMPT == loop.system_prompt()


def _write_line(fd: int, message: dict) -> None:
    data = (json.dumps(message) + "\n").encode()
    while data:
        written = os.write(fd, data)
        data = data[written:]


def _die_with_parent() -> None:
    """Linux: get SIGKILL when the process that forked us exits."""
    try:
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except Exception:
        pass


def pid_namespace() -> str:
    """This process's PID namespace (e.g. "pid:[4026531836]"), or "" where /proc does not say."""
    try:
        return os.readlink("/proc/self/ns/pid")
    except OSError:
        return ""


def _prctl(option: int, value: int) -> None:
    try:
        import ctypes
        ctypes.CDLL(None, use_errno=True).prctl(option, value)
    except Exception:
        pass


def serve_forks(outside_pid_namespace: str | None = None) -> None:
    """The kernel template: import what kernels need once, then fork a kernel per request.

    Speaks JSON lines: reads {"id", "argv", "env", "cwd"} on stdin, answers {"id", "pid"}, and
    {"id", "exit"} when that kernel has exited; {"id", "signal"} signals that kernel's process
    group (the grader cannot: in a sandbox the kernel's pid means nothing outside). Stays
    single-threaded (forking is only safe then), and kills every kernel it made when its stdin closes.

    In a sandbox (`outside_pid_namespace` given: the grader's) the template is alone in its PID
    namespace with one kernel at a time. It makes itself non-dumpable (a kernel can neither ptrace
    it nor write its memory) and the reaper of orphans; when a kernel exits it kills everything
    else in the namespace (what the notebook started, `setsid` or not) and empties /dev/shm before
    it reports the exit, so nothing of one notebook reaches the next.
    """
    import importlib
    import select
    import threading

    parent = os.getppid()
    _die_with_parent()
    if os.getppid() != parent:
        os._exit(1)
    sandboxed = outside_pid_namespace is not None and pid_namespace() not in ("", outside_pid_namespace)
    if outside_pid_namespace is not None and not sandboxed:
        _write_line(1, {"error": "the sandboxed template is not in a PID namespace of its own"})
        return
    if sandboxed:
        _prctl(4, 0)  # PR_SET_DUMPABLE: no ptrace, no /proc/<pid>/mem for the kernels
        _prctl(36, 1)  # PR_SET_CHILD_SUBREAPER: orphans are reparented here, to be reaped
    if sys.path and sys.path[0] in ("", os.getcwd()):
        del sys.path[0]  # as ipykernel_launcher does; the kernel puts the cwd back
    from ...long_lived import imported_for_good

    # What kernels need, imported and warmed once, then frozen before the first fork (looplab/long_lived.py).
    with imported_for_good():
        for name in PRELOAD:
            try:
                importlib.import_module(name)
            except Exception:
                pass
        try:
            from looplab import api_shape
            api_shape.warm()  # the offline API's request shape and jsonschema, once for every kernel
        except Exception:
            pass
        try:
            from jupyter_client import localinterfaces
            localinterfaces.localhost()  # finds the machine's addresses once, for every kernel
        except Exception:
            pass
        _warm_tracebacks()
    threads = threading.active_count()
    if threads != 1:
        _write_line(1, {"error": f"the template started {threads - 1} thread(s); forking would not be safe"})
        return

    wake_read, wake_write = os.pipe()
    os.set_blocking(wake_read, False)
    os.set_blocking(wake_write, False)
    signal.set_wakeup_fd(wake_write)
    signal.signal(signal.SIGCHLD, lambda signum, frame: None)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    children: dict[int, Any] = {}
    _write_line(1, {"ready": True, "pid": os.getpid()})

    def reap() -> None:
        while children:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            request_id = children.pop(pid, None)
            if request_id is not None:
                if sandboxed:
                    _clear_namespace()
                _write_line(1, {"id": request_id, "exit": os.waitstatus_to_exitcode(status)})

    buffer = b""
    while True:
        try:
            ready, _, _ = select.select([0, wake_read], [], [])
        except InterruptedError:
            continue
        if wake_read in ready:
            try:
                while os.read(wake_read, 512):
                    pass
            except BlockingIOError:
                pass
            reap()
        if 0 not in ready:
            continue
        chunk = os.read(0, 65536)
        if not chunk:
            break
        buffer += chunk
        while b"\n" in buffer:
            line, buffer = buffer.split(b"\n", 1)
            request = json.loads(line)
            if "signal" in request:
                kernel = next((pid for pid, rid in children.items() if rid == request["id"]), None)
                if kernel is not None:
                    try:
                        os.killpg(kernel, request["signal"])
                    except OSError:
                        pass
                continue
            pid = os.fork()
            if pid == 0:
                os.close(wake_read)
                os.close(wake_write)
                _kernel_child(request)  # never returns
            try:
                os.setpgid(pid, pid)
            except OSError:
                pass
            children[pid] = request["id"]
            _write_line(1, {"id": request["id"], "pid": pid})
        reap()
    for pid in list(children):
        try:
            os.killpg(pid, signal.SIGKILL)
        except OSError:
            pass
    os._exit(0)  # no interpreter teardown: thousands of modules, half a second


def _clear_namespace() -> None:
    """Sandbox only: kill every process but this one (and the namespace's init), reap them, empty /dev/shm and
    remove System V IPC objects (all this notebook's: the sandbox has an IPC namespace of its own)."""
    try:
        os.kill(-1, signal.SIGKILL)  # in a PID namespace of its own: everything a notebook left
    except OSError:
        pass
    while True:
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:
            break
        except InterruptedError:
            continue
    from .emptying import empty_folder, remove_ipc_objects
    try:
        empty_folder("/dev/shm")
    except OSError:
        pass
    remove_ipc_objects()


def _warm_tracebacks() -> None:
    """Format one traceback raised inside the SDK, as IPython does in a kernel.

    The first traceback a process shows costs most of a second (IPython reads and parses every
    source file on the stack, and maps every loaded module to its file); later ones cost a few
    milliseconds. The course's notebooks show the API's 400 on purpose, so the template pays that
    once and every forked kernel inherits the caches. Nothing else is kept.
    """
    try:
        from IPython.core import ultratb

        from ...model_id import MODEL
        from ...scripted import reply, scripted_client, text, tool_use

        client, _ = scripted_client([reply(text("unused"))])
        unanswered = {"role": "assistant", "content": [tool_use("calculator", {"expression": "1"}, id="toolu_warm")]}
        try:
            client.messages.create(model=MODEL, max_tokens=16, messages=[
                {"role": "user", "content": "1?"}, unanswered, {"role": "user", "content": "and?"}])
        except Exception:
            ultratb.AutoFormattedTB(mode="Context").structured_traceback(*sys.exc_info())
    except Exception:
        pass


def _kernel_child(request: dict) -> None:
    code = 1
    try:
        signal.set_wakeup_fd(-1)
        os.setpgid(0, 0)
        _die_with_parent()
        from .sandbox import limit_resources
        limit_resources()
        for signum in (signal.SIGCHLD, signal.SIGTERM, signal.SIGPIPE):
            signal.signal(signum, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        devnull = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(devnull, fd)
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        sys.argv = ["ipykernel_launcher"] + request["argv"]
        from ipykernel.kernelapp import IPKernelApp
        app = IPKernelApp.instance()
        app.initialize(request["argv"])
        app.start()
        code = 0
    except BaseException:
        import traceback
        traceback.print_exc()
    finally:
        os._exit(code)


class ForkedKernel:
    """What LocalProvisioner expects of a Popen, for a kernel forked by the template.

    Signals go through the template: in a sandbox the kernel's pid is one of its PID namespace.
    """

    stdin = stdout = stderr = None

    def __init__(self, pid: int, server: ForkServer, request_id: int):
        self.pid = pid
        self.server, self.request_id = server, request_id
        self.returncode: int | None = None
        self.exited = asyncio.Event()

    def poll(self) -> int | None:
        return self.returncode

    def wait(self, timeout: float | None = None) -> int | None:
        return self.returncode

    def send_signal(self, signum: int) -> None:
        if self.returncode is None:
            self.server.send_signal(self.request_id, signum)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def mark_exited(self, code: int) -> None:
        if self.returncode is None:
            self.returncode = code
        self.exited.set()


class ForkServer:
    """The grader's side of the kernel template: JSON lines over two pipes.

    `spawn()` starts the template before the event loop exists. When this process is still
    single-threaded it forks itself, so the template starts with the SDK and looplab already
    imported (they come with `import looplab.grade`); otherwise, or when `fresh` is asked, it starts
    a new interpreter, whose imports see `env`: the language a module's words are read in when it is
    imported (a grader's slot speaking another language than this process imported in: slots.py;
    authoring/learner_notebooks.py).
    """

    def __init__(self, env: dict, cwd: str, debug: bool, sandbox: list[str] | None = None, fresh: bool = False):
        self.env, self.cwd, self.debug, self.fresh = env, cwd, debug, fresh
        self.sandbox = sandbox  # the bwrap command line (ending in --) the template runs in, if any
        self.lost = False  # the template exited (or was killed) while it should be serving
        self.key = uuid.uuid4().hex  # how its kernel spec names it (see TEMPLATES)
        self.process_id: int | None = None  # the template's
        self.pid: int | None = None  # the template's, as it reports itself
        self._to, self._from = -1, -1
        self._buffer = b""
        self._ready: asyncio.Future | None = None
        self._pending: dict[int, asyncio.Future] = {}
        self._kernels: dict[int, ForkedKernel] = {}
        self._next = 0

    def spawn(self) -> None:
        import threading

        to_read, to_write = os.pipe()
        from_read, from_write = os.pipe()
        stderr = None if self.debug else os.open(os.devnull, os.O_WRONLY)
        if self.sandbox is not None:
            import subprocess
            boot = SANDBOXED_BOOT.format(namespace=pid_namespace())
            pid = subprocess.Popen(self.sandbox + [sys.executable, "-c", boot], stdin=to_read, stdout=from_write,
                                   stderr=stderr, env=self.env, cwd=self.cwd, start_new_session=True).pid
        elif not self.fresh and threading.active_count() == 1:
            pid = os.fork()
            if pid == 0:
                try:
                    os.setsid()
                    os.dup2(to_read, 0)
                    os.dup2(from_write, 1)
                    if stderr is not None:
                        os.dup2(stderr, 2)
                    for fd in (to_read, to_write, from_read, from_write):
                        os.close(fd)
                    if sys.path and sys.path[0] in ("", os.getcwd()):
                        del sys.path[0]  # this process's folder: a kernel gets its own instead
                    os.chdir(self.cwd)
                    os.environ.clear()
                    os.environ.update(self.env)
                    serve_forks()
                finally:
                    os._exit(0)
        else:
            import subprocess
            pid = subprocess.Popen([sys.executable, "-c", FORK_SERVER_BOOT], stdin=to_read, stdout=from_write,
                                   stderr=stderr, env=self.env, cwd=self.cwd, start_new_session=True).pid
        for fd in (to_read, from_write) + (() if stderr is None else (stderr,)):
            os.close(fd)
        self.process_id, self._to, self._from = pid, to_write, from_read

    async def start(self) -> None:
        if self.process_id is None:
            self.spawn()
        loop = asyncio.get_running_loop()
        self._ready = loop.create_future()
        os.set_blocking(self._from, False)
        loop.add_reader(self._from, self._read)
        message = await self._ready
        if not message.get("ready"):
            await self.close()
            raise RuntimeError(message.get("error", "the kernel template did not start"))
        self.pid = message["pid"]

    def _read(self) -> None:
        try:
            chunk = os.read(self._from, 65536)
        except BlockingIOError:
            return
        if not chunk:
            self._ended()
            return
        self._buffer += chunk
        while b"\n" in self._buffer:
            line, self._buffer = self._buffer.split(b"\n", 1)
            message = json.loads(line)
            if self._ready is not None and not self._ready.done():
                self._ready.set_result(message)
            elif "id" not in message:
                continue  # a late "ready", after the start was given up (the run stopped meanwhile)
            elif "pid" in message:
                kernel = ForkedKernel(message["pid"], self, message["id"])
                self._kernels[message["id"]] = kernel
                future = self._pending.pop(message["id"], None)
                if future and not future.done():
                    future.set_result(kernel)
            elif "exit" in message and message["id"] in self._kernels:
                self._kernels.pop(message["id"]).mark_exited(message["exit"])

    def _ended(self) -> None:
        """The template is gone, and its kernels with it."""
        self.lost = True
        asyncio.get_running_loop().remove_reader(self._from)
        if self._ready is not None and not self._ready.done():
            self._ready.set_result({"error": "the kernel template exited while starting"})
        for kernel in self._kernels.values():
            kernel.mark_exited(-signal.SIGKILL)
        for future in self._pending.values():
            if not future.done():
                future.set_exception(RuntimeError("the kernel template exited"))
        self._pending.clear()

    async def fork(self, argv: list[str], env: dict, cwd: str) -> ForkedKernel:
        self._next += 1
        future = asyncio.get_running_loop().create_future()
        self._pending[self._next] = future
        request = {"id": self._next, "argv": argv, "env": env, "cwd": cwd}
        _write_line(self._to, request)  # a few hundred bytes: the pipe never fills
        return await future

    def send_signal(self, request_id: int, signum: int) -> None:
        """Signal a kernel's process group, through the template (a lost template's kernels are gone)."""
        if self._to >= 0 and not self.lost:
            try:
                _write_line(self._to, {"id": request_id, "signal": int(signum)})
            except OSError:
                pass

    async def close(self) -> None:
        self.lost = True
        if self._to >= 0:
            os.close(self._to)  # the template kills its kernels and exits
            self._to = -1
        if self.process_id is not None:
            deadline = time.monotonic() + 10
            try:
                while True:
                    done, _ = os.waitpid(self.process_id, os.WNOHANG)
                    if done or time.monotonic() > deadline:
                        break
                    await asyncio.sleep(0.005)
                if not done:
                    os.kill(self.process_id, signal.SIGKILL)  # the grader's child: bwrap, or the template
                    os.waitpid(self.process_id, 0)
            except ChildProcessError:
                pass
            self.process_id = None
        if self._from >= 0:
            try:
                asyncio.get_running_loop().remove_reader(self._from)
            except Exception:
                pass
            os.close(self._from)
            self._from = -1


TEMPLATES: dict[str, ForkServer] = {}  # the templates running in this process, by key: what a provisioner forks from


class ForkProvisioner(LocalProvisioner):
    """A kernel forked from the template instead of started from scratch.

    Registered as `looplab-fork` (the `jupyter_client.kernel_provisioners` entry point) and chosen
    by the kernel spec `write_kernel_spec` writes; `template` comes from that spec's config. As a
    LocalProvisioner subclass it only replaces the launch (and a quicker wait for the exit): what
    it keeps of the process is what LocalProvisioner.launch_kernel keeps of a Popen.
    """

    template = Unicode(help="the key of the running ForkServer to fork from (in TEMPLATES)").tag(config=True)

    async def launch_kernel(self, cmd, **kwargs):
        server = TEMPLATES[self.template]
        argv = list(cmd[cmd.index("-f"):])
        env = dict(kwargs.get("env") or os.environ)
        env["JPY_PARENT_PID"] = str(server.pid)  # ipykernel exits if the template does
        self.process = await server.fork(argv, env, str(kwargs.get("cwd") or os.getcwd()))
        self.pid = self.process.pid
        self.pgid = None  # never signalled from here: LocalProvisioner then asks the process, which asks the template
        self.cwd = kwargs.get("cwd")
        return self.connection_info

    async def wait(self):
        if self.process is None:
            return 0
        await self.process.exited.wait()
        code, self.process = self.process.returncode, None
        return code


# How a plain kernel starts: its resource limits set, then ipykernel, under a small parent that only
# waits for it, so a kernel that kills its parent (`os.kill(os.getppid(), 9)`) kills that parent, and
# itself with it (a parent-death signal), never the grader. (In a sandbox, a kernel whose parent is the
# namespace's init would take itself for an orphan and exit: ipykernel's parent poller.)
PLAIN_KERNEL = """
import os, signal, sys
{limits}
kernel = [sys.executable, "-m", "ipykernel_launcher"] + sys.argv[1:]
parent = os.getpid()
pid = os.fork()
if pid == 0:
    import ctypes
    ctypes.CDLL(None).prctl(1, signal.SIGKILL)
    if os.getppid() != parent:
        os._exit(1)
    os.execv(sys.executable, kernel)
signal.signal(signal.SIGINT, signal.SIG_IGN)
signal.signal(signal.SIGTERM, lambda signum, frame: os.kill(pid, signum))
_, status = os.waitpid(pid, 0)
os._exit(os.waitstatus_to_exitcode(status) % 256)
"""


def plain_kernel_argv(sandbox: list[str] | None) -> list[str]:
    """The command line of a plain kernel: in the sandbox (a bwrap command line) if given."""
    from .sandbox import limits_source

    launcher = PLAIN_KERNEL.format(limits=limits_source())
    return list(sandbox or []) + [sys.executable, "-c", launcher, "-f", "{connection_file}"]


def write_kernel_spec(folder: Path, template: ForkServer | None, sandbox: list[str] | None = None) -> KernelSpecManager:
    """A kernel spec for the grader's kernels (this interpreter's ipykernel; forked from `template` if
    given, else started in the `sandbox` command line if given), and a KernelSpecManager that finds it.

    A sandboxed kernel is interrupted by a message on its control channel: signals from outside
    would not reach it (the template forwards them for a forked one)."""
    spec = {"argv": plain_kernel_argv(None if template else sandbox),
            "display_name": "looplab grader", "language": "python", "metadata": {}}
    if sandbox is not None and template is None:
        spec["interrupt_mode"] = "message"
    if template is not None:
        spec["metadata"]["kernel_provisioner"] = {"provisioner_name": PROVISIONER_NAME,
                                                  "config": {"template": template.key}}
    (folder / KERNEL_NAME).mkdir(parents=True, exist_ok=True)
    (folder / KERNEL_NAME / "kernel.json").write_text(json.dumps(spec, indent=1), encoding="utf-8")
    return KernelSpecManager(kernel_dirs=[str(folder)])


def provisioner_registered(specs: KernelSpecManager) -> bool:
    """Whether jupyter_client can find the provisioner the grader's kernel spec names (an installed entry point)."""
    try:  # a spec naming an unknown provisioner is one the KernelSpecManager does not find
        spec = specs.get_kernel_spec(KERNEL_NAME)
    except NoSuchKernel:
        return False
    return KernelProvisionerFactory.instance().is_provisioner_available(spec)
