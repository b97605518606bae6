"""The handout (authoring/handout.py, `make handout`): what an instructor sends holds no answers, installs
without the network from its own wheelhouse, and its notebooks run up to their first exercise."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
import zlib
from pathlib import Path

import pytest

from looplab.course import COURSE
from authoring import handout as handout_command
from authoring.learner_notebooks import BEGIN, REGION

ROOT = Path(__file__).resolve().parent.parent
HANDOUT_SCRIPT = "authoring"  # `python -m authoring handout`, run from the repository
# What must never reach learners: solution regions, the solutions folder, the grader's fixtures.
FORBIDDEN_PATHS = ("solutions/", "grading_fixtures", "complete/", "tests/")  # in the handout's own files

# As looplab/quick_jsonschema.py does: nbformat's jsonschema without rfc3987_syntax's grammars, 1.5 s of CPU less.
HIDE_RFC3987 = 'import sys\nsys.modules["rfc3987_syntax"] = None\n'
# What the runs and their kernels import, compiled once (see the test): the SDK, which the notebooks import through
# looplab, is the biggest (about 3,000 modules: 1.5 s of CPU more for each kernel that compiles them itself).
WARM = HIDE_RFC3987 + ("import mcp.client.stdio, mcp.server.lowlevel, numpy, nbclient, ipykernel.kernelapp, "
                       "ipykernel.ipkernel, ipykernel.zmqshell, ipywidgets, anthropic, looplab.checks, looplab.loop, "
                       "looplab.viewer")
RUN_TO_FIRST_EXERCISE = HIDE_RFC3987 + """
import json
import os
import tempfile
import nbformat
from jupyter_client import KernelManager
from nbclient import NotebookClient
notebook = nbformat.read(sys.argv[1], as_version=4)
first_exercise = next(index for index, cell in enumerate(notebook.cells)
                      if cell.metadata.get("looplab", {}).get("exercise"))
del notebook.cells[first_exercise + 1:]  # the cells after it need its answer
# The kernel talks over Unix sockets in a folder of this run's own (/tmp/kernel-XXXXXXXX/kernel-ipc-1: a socket's
# path must stay under ~100 characters): over TCP, kernels started together may pick the same free port.
with tempfile.TemporaryDirectory(prefix="kernel-") as sockets:
    kernel = KernelManager(kernel_name="python3", transport="ipc",
                           connection_file=os.path.join(sockets, "kernel.json"))
    NotebookClient(notebook, km=kernel, timeout=120, allow_errors=True,
                   resources={"metadata": {"path": sys.argv[2]}}).execute(cleanup_kc=True)  # stops the kernel
# Cells that raise on purpose (a demonstration of the API's 400, the exercises) carry this tag.
errors = [(index, output["ename"]) for index, cell in enumerate(notebook.cells) if cell.cell_type == "code"
          for output in cell.outputs if output.output_type == "error"
          if "raises-exception" not in cell.metadata.get("tags", []) or cell.metadata.get("looplab")]
print(json.dumps({"first_error": errors[0] if errors else None, "first_exercise": first_exercise}))
"""


@pytest.fixture(scope="module")
def handout(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    run = subprocess.run([sys.executable, "-m", HANDOUT_SCRIPT, "handout", "--for", "here", "--out", out], cwd=ROOT,
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout + run.stderr
    return out / "looplab-handout"


def readable(name: str, data: bytes) -> str:
    """A file's text; for a notebook, its cells' sources (where a solution region would be)."""
    text = data.decode("utf-8", "replace")
    if name.endswith(".ipynb"):
        return "\n".join("".join(cell["source"]) for cell in json.loads(text)["cells"])
    return text


def holds_a_solution(name: str, text: str) -> bool:
    """A region as solutions mark them; in a notebook, even a lone marker line."""
    return bool(REGION.search(text)) or (name.endswith(".ipynb") and BEGIN in text)


def every_name_and_text(folder: Path):
    """(name, text) for every file of the folder, and for every member of the zips and wheels in it."""
    for path in sorted(folder.rglob("*")):
        if not path.is_file():
            continue
        if path.suffix in (".whl", ".zip"):
            with zipfile.ZipFile(path) as archive:
                for member in archive.namelist():
                    yield f"{path.name}:{member}", readable(member, archive.read(member))
        else:
            yield str(path.relative_to(folder)), readable(path.name, path.read_bytes())


def test_the_handout_holds_the_notebooks_the_set_up_and_the_package(handout):
    assert sorted(path.name for path in (handout / "notebooks").iterdir() if path.is_file()) == [
        f"{notebook.stem}.ipynb" for notebook in COURSE.notebooks]
    assert sorted(path.name for path in (handout / "notebooks" / "fr").iterdir()) == [  # the French course
        f"{notebook.stem}.ipynb" for notebook in COURSE.notebooks]
    assert (handout / "scripts" / "bootstrap.py").read_bytes() == (ROOT / "scripts" / "bootstrap.py").read_bytes()
    assert list((handout / "wheelhouse").glob("looplab-*.whl"))
    wheels = {path.name.split("-")[0].lower().replace("_", "-") for path in (handout / "wheelhouse").glob("*.whl")}
    assert {"mcp", "cryptography"} <= wheels  # notebook 5's MCP server: the SDK, and a platform wheel it brings
    assert "numpy" in wheels  # notebook 7's vector search: cosine similarity over embedding vectors
    assert "looplab==" in (handout / "requirements.txt").read_text()
    readme = (handout / "README.md").read_text()
    assert "py scripts\\bootstrap.py lab" in readme and "wheelhouse/" in readme and "{NOTEBOOKS}" not in readme
    assert (handout.parent / "looplab-handout.zip").exists()


def ours(name: str) -> bool:
    """The handout's own files and the course's wheel (other wheels may well hold a tests/ folder)."""
    return ".whl:" not in name or name.startswith("looplab-")


def checksums(folder: Path) -> dict[str, int]:
    """Each file's path, as its folder's zip names it, and CRC-32, as a zip records it."""
    return {path.relative_to(folder.parent).as_posix(): zlib.crc32(path.read_bytes())
            for path in folder.rglob("*") if path.is_file()}


def test_nothing_in_the_handout_gives_the_answers_away(handout):
    """Every folder of the build is searched, wheels opened; each zip is shown to hold its folder, file for file."""
    for path in sorted(handout.parent.iterdir()):  # dist/: each handout and its zip
        if path.suffix == ".zip":
            with zipfile.ZipFile(path) as archive:
                zipped = {member.filename: member.CRC for member in archive.infolist() if not member.is_dir()}
            assert zipped == checksums(path.with_suffix("")), f"{path.name} is not its folder"
            continue
        assert path.is_dir(), path
        for name, text in every_name_and_text(path):
            if ours(name):
                assert not any(forbidden in name for forbidden in FORBIDDEN_PATHS), f"{path.name}/{name}"
            assert not holds_a_solution(name, text), f"{path.name}/{name} holds a solution region"


# The notebooks run from the installed handout: the first; notebook 7, whose set-up loads numpy's compiled core;
# and the last, whose set-up imports nearly every reference module (compaction, evals, subagent, knowledge, tools),
# each reading its words and recordings from the installed wheel. Every learner notebook is run to its end from the
# repository by tests/test_notebooks.py, and the wheel's files are held by tests/test_packaging.py: running all
# eleven here (a kernel each, 62 s of the suite at eleven notebooks) proved nothing more about the install.
HANDOUT_RUNS = [COURSE.notebooks[0], COURSE.notebook("07_knowledge_tools"), COURSE.notebooks[-1]]


def test_the_handout_installs_offline_and_its_notebooks_run_to_their_first_exercise(handout):
    # No .pyc at install: pip would compile all 6,000 modules (a third of its time), the first import compiles the
    # ones used. PIP_COMPILE=0 turns `--compile` off; PIP_NO_COMPILE=1 would not: pip stores its 1 as compile=True.
    quicker = {**os.environ, "PIP_COMPILE": "0"}
    setup = subprocess.run([sys.executable, "scripts/bootstrap.py", "setup"], cwd=handout, capture_output=True,
                           text=True, timeout=600, env=quicker)
    assert setup.returncode == 0, setup.stdout + setup.stderr
    assert "installing the course from wheelhouse/ (no download)" in setup.stdout
    assert "with the network" not in setup.stdout  # pip found every wheel offline: no retry with the network
    python = handout / ".venv" / "bin" / "python"
    learner = {"PATH": "/usr/bin:/bin", "HOME": str(handout)}  # a learner's environment: .pyc files are written
    # Notebook 5's MCP SDK (its closing section runs) and notebook 7's numpy (its compiled core loads), installed
    # from the wheelhouse; and what every run and its kernel import, compiled once here: six processes started
    # together would each compile the same thousand modules (PIP_COMPILE above leaves that to the first import).
    warm = subprocess.run([python, "-c", WARM], capture_output=True, text=True, timeout=300, env=learner)
    assert warm.returncode == 0, warm.stderr
    # The notebooks run side by side, each in its own process and kernel: most of a run is a kernel starting.
    runs = {}
    for notebook in HANDOUT_RUNS:
        path = handout / "notebooks" / f"{notebook.stem}.ipynb"
        runs[notebook.stem] = subprocess.Popen([python, "-c", RUN_TO_FIRST_EXERCISE, path, path.parent],
                                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                               env=learner)
    try:
        for stem, run in runs.items():
            stdout, stderr = run.communicate(timeout=300)
            assert run.returncode == 0, stderr
            result = json.loads(stdout)
            assert result["first_error"] == [result["first_exercise"], "NotImplementedError"], stem
    finally:
        for run in runs.values():
            if run.poll() is None:
                run.kill()
                run.wait()


def test_the_search_would_find_a_solution():
    solution = ROOT / "solutions" / f"{COURSE.notebooks[0].stem}.ipynb"
    assert holds_a_solution(solution.name, readable(solution.name, solution.read_bytes()))


def test_solutions_are_released_one_notebook_at_a_time(tmp_path):
    """In this process: `python -m authoring handout` itself is run by the fixture (each run imports the package)."""
    stem = COURSE.notebooks[0].stem
    assert handout_command.main(["--out", str(tmp_path), "--release", stem]) == 0
    assert [path.name for path in (tmp_path / "solutions").iterdir()] == [f"{stem}.ipynb"]
    with pytest.raises(SystemExit) as unknown:  # a SystemExit with a text: its line on stderr, status 1
        handout_command.main(["--out", str(tmp_path), "--release", "05_nope"])
    assert "no notebook 05_nope in the course" in str(unknown.value.code)
