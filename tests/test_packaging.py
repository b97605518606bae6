"""The package as its two audiences get it: a light `import looplab`, and a grader that runs installed.

A notebook imports the client, the rules, the recordings, the tools, the history viewer, the checks
and the reference pieces; the grader (`looplab.grade`) stands apart, so a learner's kernel never
pays for nbclient, jupyter_client or zmq. The authoring tools (`authoring/`) are not in the package at all.
`import looplab` itself imports each name on first read, so a process that only runs the tools (notebook 5's
MCP server) never imports the SDK, and `looplab.client` is the function whatever was imported first.

An instructor installs the package (`pip install .`) and grades from any folder: the course
manifest, the official checks and the recordings ship in it. The second half of this file proves
that with a real wheel installed into a fresh virtual environment, offline: the environment borrows
the test environment's already-installed dependencies through a .pth file, which does not run the
.pth files it points at, so the test environment's editable install of looplab stays invisible.
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest

import looplab
from authoring import handout
from looplab.checks import run_check
from looplab.grade import CSV_COLUMNS
# The fixtures, built from the solutions when the tests run, and the rows the checkout's grader gives them.
from tests.test_grade import SUBMISSIONS, expected_for

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "looplab"

# The authoring side: imported by instructors and maintainers, never by `import looplab`.
AUTHORING = ("looplab.grade",)
# What only the grader and the notebook tools need: heavy, and no business in a learner's kernel.
GRADING_DEPENDENCIES = ("nbclient", "nbformat", "nbconvert", "jupyter_client", "zmq", "ipykernel", "tornado")
# Modules loaded besides the SDK's own (the SDK is what the course teaches; its size is not ours to
# choose). 651 at eleven notebooks: the standard library's share, numpy (84, since notebook 7), pydantic, httpx2,
# ipywidgets, IPython, and the course's own modules, one each. What it guards against is a dependency that brings
# dozens at once: aiohttp, which the SDK imports whenever it is installed, is 40 (scripts/bootstrap.py keeps
# JupyterHub, which needs it, in .venv-hub).
NON_SDK_MODULE_BUDGET = 665

CELL_TIMEOUT = "60"  # the sample holds no endless loop; a loaded machine must not add timeout notes
GRADE_TIMEOUT = 300  # seconds for one grading of the sample below (about 5 s on a quiet machine)
# A sample of the fixtures (tests/test_grade.py grades them all): the first and last notebooks solved,
# the first half done, the first untouched. It needs the manifest, the checks and the recordings.
SAMPLE = ("complete/01_one_tool_call.ipynb", "complete/04_your_agent.ipynb", "partial/01_one_tool_call.ipynb",
          "stub/01_one_tool_call.ipynb")


def notebook_side_modules() -> list[str]:
    """Every module of the package except the authoring side, found from the files (nothing imported)."""
    names = []
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        if not name.startswith(AUTHORING):
            names.append(name)
    return names


def run_fresh(script: str) -> str:
    """What a fresh interpreter prints running `script` (this one has imported everything)."""
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    return run.stdout


def modules_loaded_by(names: list[str], then: str = "") -> list[str]:
    """sys.modules in a fresh interpreter after importing `names`, then running the line `then`."""
    return json.loads(run_fresh("import importlib, json, sys\n"
                                f"for name in {names!r}:\n"
                                "    importlib.import_module(name)\n"
                                f"{then}\n"
                                "print(json.dumps(sorted(sys.modules)))\n"))


def top_packages(modules: list[str]) -> list[tuple[str, int]]:
    counts: dict[str, int] = {}
    for name in modules:
        counts[name.split(".")[0]] = counts.get(name.split(".")[0], 0) + 1
    return sorted(counts.items(), key=lambda item: -item[1])[:12]


# --- what a notebook imports stays light -------------------------------------------------------------


def test_the_notebook_side_lists_the_modules_a_notebook_imports():
    names = notebook_side_modules()
    for expected in ("looplab", "looplab.client", "looplab.loop", "looplab.tools", "looplab.viewer",
                     "looplab.checks", "looplab.checks.core", "looplab.course"):
        assert expected in names
    assert not any(name.startswith(AUTHORING) for name in names)


def test_importing_the_notebook_side_leaves_the_grader_and_its_dependencies_out():
    loaded = modules_loaded_by(notebook_side_modules())
    pulled_in = [name for name in loaded if name.split(".")[0] in GRADING_DEPENDENCIES
                 or name.startswith(AUTHORING)]
    assert not pulled_in, f"importing looplab pulled in the grading side: {pulled_in[:20]}"
    outside_the_sdk = [name for name in loaded if name.split(".")[0] != "anthropic"]
    assert len(outside_the_sdk) <= NON_SDK_MODULE_BUDGET, (
        f"importing looplab loads {len(outside_the_sdk)} modules besides the SDK (budget "
        f"{NON_SDK_MODULE_BUDGET}); the biggest packages: {top_packages(outside_the_sdk)}")


# What a process that only needs the tools must not pay for: the SDK, the notebook display, the checks.
NOT_FOR_THE_TOOLS = ("anthropic", "httpx2", "IPython", "ipywidgets", "looplab.client", "looplab.checks")


def test_importing_the_tools_leaves_the_sdk_out():
    """Notebook 5's MCP server (toolbox_server.py) imports looplab.tools and looplab.toolbox, and is started
    twice a run: `import looplab` is lazy (looplab/__init__.py), and the reference pieces read MODEL from
    looplab/model_id.py, never from the client."""
    loaded = modules_loaded_by(["looplab.toolbox", "looplab.tools", "looplab.loop", "looplab.robust"],
                               then="from looplab import MODEL, tools")
    pulled_in = [name for name in loaded if name in NOT_FOR_THE_TOOLS or name.split(".")[0] in NOT_FOR_THE_TOOLS]
    assert not pulled_in, f"importing the tools pulled in: {pulled_in[:20]}"


def test_this_test_process_imported_jsonschema_without_its_uri_grammars():
    """tests/jsonschema_first.py comes before nbval's plugin in pyproject.toml's addopts (nbval imports nbformat,
    which imports jsonschema): after it, jsonschema built rfc3987_syntax's grammars, 1.1 s of CPU in each of the
    test command's processes as they all start together."""
    assert "rfc3987_syntax" not in sys.modules


def test_the_authoring_tools_import_jsonschema_without_its_uri_grammars():
    """`python -m authoring notebooks` and its kin read notebooks with nbformat, which imports jsonschema: before
    authoring/__init__.py imported it first (looplab/quick_jsonschema.py), each run built rfc3987_syntax's
    grammars, 1.2 s of CPU (`make notebooks`, and the tests that run it or its parts in a copy of the course)."""
    loaded = modules_loaded_by(["authoring.learner_notebooks", "authoring.regenerate", "authoring.translated_notebooks"])
    assert "jsonschema" in loaded and "rfc3987_syntax" not in loaded


def test_imported_for_good_pauses_the_collector_freezes_and_puts_it_back_as_it_was():
    import gc

    from looplab.long_lived import imported_for_good

    was = gc.isenabled()
    try:
        for collecting in (True, False):
            (gc.enable if collecting else gc.disable)()
            gc.unfreeze()  # what an earlier import of looplab.grade froze in this process: back with the rest
            with imported_for_good():
                assert not gc.isenabled()
                made = [[] for _ in range(100)]  # tracked objects, made while the collector is paused
            assert gc.isenabled() is collecting
            assert gc.get_freeze_count() >= len(made)  # frozen: no later collection walks them
    finally:
        (gc.enable if was else gc.disable)()


@pytest.mark.parametrize("imports", ["import looplab.grade", "import looplab\nlooplab.check"],
                         ids=["the grader's imports", "a notebook's first read of the checks"])
def test_the_sdk_comes_frozen_and_the_collector_is_on_after_it(imports):
    """The imports that bring the SDK run inside imported_for_good (looplab/long_lived.py): looplab/grade/__init__.py's,
    and the first of looplab's lazy names that imports it (looplab/__init__.py). Everything after is collected."""
    said = json.loads(run_fresh(f"import gc, json, sys\n{imports}\n"
                                "print(json.dumps([gc.isenabled(), gc.get_freeze_count(), 'anthropic' in sys.modules]))"))
    assert said[0] is True and said[2] is True
    assert said[1] > 100_000, said  # about 250,000 objects on Python 3.11


def test_every_name_the_package_gives_is_there_on_first_read():
    names = json.loads(run_fresh("import json, looplab\n"
                                 "print(json.dumps({name: type(getattr(looplab, name)).__name__ "
                                 "for name in looplab.__all__}))\n"))
    assert names == {name: type(getattr(looplab, name)).__name__ for name in looplab.__all__}
    assert names["client"] == "function" and names["tools"] == "module"
    assert set(looplab.__all__) <= set(dir(looplab))
    with pytest.raises(AttributeError):
        looplab.no_such_name  # noqa: B018


def test_looplab_client_stays_the_function_whatever_is_imported_first():
    """looplab/client.py is a module named like the function the package gives; importing that module (here
    before the package's name is ever read, the awkward order) must not make `looplab.client` the module."""
    said = run_fresh("import looplab.client, looplab.viewer, looplab.checks\n"
                     "from looplab.client import offline_environ, MODEL\n"
                     "import looplab\n"
                     "from looplab import client\n"
                     "assert callable(looplab.client) and client is looplab.client, looplab.client\n"
                     "assert MODEL is looplab.MODEL\n"
                     "sdk = looplab.client('01_one_tool_call', mode='offline', quiet=True)\n"
                     "print(type(sdk).__name__, looplab.traffic(sdk).__class__.__name__)\n")
    assert said.split() == ["Anthropic", "Traffic"]


# --- the grader, installed from a wheel, grades from any folder ----------------------------------------


def run_checked(args: list, cwd: Path | None = None, env: dict | None = None,
                timeout: float = 120) -> subprocess.CompletedProcess:
    run = subprocess.run([str(arg) for arg in args], cwd=cwd, env=env, capture_output=True, text=True,
                         timeout=timeout)
    assert run.returncode == 0, f"{' '.join(map(str, args))} failed:\n{run.stdout}\n{run.stderr}"
    return run


def dependency_folders() -> list[str]:
    """Where this interpreter's installed distributions live (the venv's site-packages)."""
    return [entry for entry in sys.path if Path(entry).name == "site-packages"]


def read_gradebook(path: Path) -> list[dict[str, str]]:
    with open(path, newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def fresh_venv_with(wheel: Path, folder: Path, env: dict) -> Path:
    """A new venv holding the wheel (not editable), borrowing every other dependency from this venv."""
    venv.create(folder, with_pip=False, symlinks=True)
    python = folder / "bin" / "python"
    run_checked([sys.executable, "-m", "pip", "--python", python, "install", "--quiet", "--no-deps", "--no-index",
                 wheel], env=env)
    site_packages = Path(run_checked([python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                                     env=env).stdout.strip())
    (site_packages / "borrowed_dependencies.pth").write_text("\n".join(dependency_folders()) + "\n")
    return python


def grade_fixtures(python: Path, submissions: Path | str, cwd: Path, out: Path, env: dict) -> list[dict[str, str]]:
    # one slot: one kernel template to start (seconds of CPU); notebooks graded side by side are tests/test_grade.py's
    run_checked([python, "-m", "looplab.grade", submissions, "--out", out, "--cell-timeout", CELL_TIMEOUT,
                 "--jobs", "1", "--quiet"], cwd=cwd, env=env, timeout=GRADE_TIMEOUT)
    return read_gradebook(out)


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """Build, install, and grade a sample of the fixtures with the installed grader, started from elsewhere."""
    tmp = tmp_path_factory.mktemp("installed")
    # Without PYTHONPATH, which may point at a checkout; LOOPLAB_MODE=offline (conftest.py) is kept.
    env = {name: value for name, value in os.environ.items() if name != "PYTHONPATH"}
    wheel = handout.build_wheel(tmp / "dist")  # the wheel the handout ships
    python = fresh_venv_with(wheel, tmp / "venv", env)
    elsewhere = tmp / "elsewhere"
    elsewhere.mkdir()
    where = run_checked([python, "-c", "import looplab, looplab.grade, looplab.course, json; print(json.dumps("
                         "[looplab.__file__, looplab.grade.__file__, looplab.course.__file__]))"],
                        cwd=elsewhere, env=env)
    sample = tmp / "submissions"
    for relative in SAMPLE:
        (sample / relative).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(SUBMISSIONS / relative, sample / relative)
    installed_rows = grade_fixtures(python, sample, elsewhere, elsewhere / "grades.csv", env)
    return dict(venv=tmp / "venv", wheel=wheel, files=json.loads(where.stdout), elsewhere=elsewhere,
                rows=installed_rows, sample=sample)


def test_the_wheel_ships_the_recordings_and_the_texts_and_leaves_the_repository_out(installed):
    names = set(zipfile.ZipFile(installed["wheel"]).namelist())
    data = sorted((PACKAGE / "recordings").glob("**/*.json")) + sorted((PACKAGE / "checks" / "texts").glob("*.toml"))
    data += sorted((PACKAGE / "texts").glob("*.toml"))  # the words of the modules that are not checks
    data += sorted((PACKAGE / "grade").glob("**/texts/*.toml"))  # the grader's words, in each language
    assert len(data) > 6
    for path in data:  # the recordings the scripted models replay, the catalogues the checks speak with
        assert path.relative_to(ROOT).as_posix() in names
    for module in ("looplab/course.py", "looplab/checks/core.py", "looplab/grade/__main__.py"):
        assert module in names
    assert not any(name.startswith(("tests/", "solutions/", "notebooks/", "scripts/", "authoring/")) for name in names)
    assert not any(name.startswith("looplab/checks/audit/") for name in names)  # the audit rows are the authors'


def test_the_installed_package_is_the_one_imported(installed):
    venv_folder = installed["venv"].resolve()
    for file in installed["files"]:
        assert Path(file).resolve().is_relative_to(venv_folder), f"{file} is not from the fresh venv"


def test_the_installed_grader_grades_like_the_checkouts(installed):
    """The rows the checkout's grader gives these notebooks (tests/test_grade.py's expected rows, which its
    run of the whole set proves), `file` too: it starts at the folder given (here `.../submissions`, so
    `submissions/...` as in those rows), wherever the grader was started."""
    rows = [tuple(row[column] for column in CSV_COLUMNS) for row in installed["rows"]]
    files = {f"submissions/{relative}" for relative in SAMPLE}
    assert rows == [row for row in expected_for("complete", "partial", "stub") if row[CSV_COLUMNS.index("file")] in files]
    statuses = {row["status"] for row in installed["rows"]}
    assert {"solved", "not solved", "not written yet"} <= statuses, statuses
    # The expected rows take any hint: the installed grader's are the checks' words, read from the wheel's catalogues.
    [empty_tool] = [row for row in installed["rows"] if row["learner"] == "stub" and row["exercise"] == "1.2"]
    assert empty_tool["hint"] == run_check("1.2", {}).hint != ""

