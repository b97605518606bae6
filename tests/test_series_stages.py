"""The programs the notebooks write pass the series' own stage tests (the-ai-coffee/ai-agent-from-scratch).

Each notebook that ends with a program in the series' shape writes it next to itself from the learner's
cells. Here the solution notebook's code cells run offline, as a kernel would, in a folder of their own,
up to the cell that writes the program; the series' tests of that stage are copied beside it, the program
as `agent.py`, and run with pytest in a process of their own. The series' tests are never copied into this
repository: they are found through LOOPLAB_SERIES_TESTS, else ../shared/seed/series-tests beside the
repository.

The same runs with the exercise cells replaced by unusual but correct answers (tests/unusual_answers/): a
registry built step by step from a table of rows, helpers, a recursive loop, an exception class of the
learner's own, a generator (issue 35: the program held the named definitions only, and failed with NameError).
Those answers pass the notebook's own checks, and the program written from them passes the series' tests.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import importlib.util
import io
import linecache
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from looplab.client import offline_environ, offline_environment
from looplab.notebook_source import checked_numbers, has_magic

ROOT = Path(__file__).resolve().parent.parent
VARIABLE = "LOOPLAB_SERIES_TESTS"
# The series' stage -> (the notebook that writes its program, the program's file name, its unusual answers).
STAGES = {"agent-007-multi-tool-dispatch": ("05_toolbox", "agent_toolbox.py", "notebook5.py"),
          "agent-008-malformed-tool-call-handling": ("06_when_calls_go_wrong", "agent_robust.py", "notebook6.py"),
          "agent-009-knowledge-tools": ("07_knowledge_tools", "agent_knowledge.py", "notebook7.py"),
          "agent-010-context-compaction": ("08_context_compaction", "agent_compaction.py", "notebook8.py"),
          "agent-011-subagents": ("09_subagent", "agent_subagent.py", "notebook9.py"),
          "agent-012-evals-and-tracing": ("10_evals_and_tracing", "agent_evals.py", "notebook10.py"),
          "agent-013-capstone": ("11_capstone", "agent_capstone.py", "notebook11.py")}
UNUSUAL = ROOT / "tests" / "unusual_answers"
SECTION = re.compile(r"^# %% exercise (\d+\.\d+)\n", re.MULTILINE)
SERVER = "toolbox_server.py"  # notebook 5's MCP server, written from TOOL_REGISTRY alone


def series_tests() -> Path | None:
    """Where the series' stage tests are, or None."""
    candidates = [os.environ.get(VARIABLE), ROOT.parent / "shared" / "seed" / "series-tests"]
    return next((Path(found) for found in candidates if found and Path(found).is_dir()), None)


def stage_tests(stage: str) -> Path:
    found = series_tests()
    if found is None or not (found / stage).is_dir():
        pytest.skip(f"the series' stage tests are not here: set {VARIABLE} to the folder holding {stage}/")
    return found / stage


def unusual_answers(name: str) -> dict[str, str]:
    """A file of unusual answers: exercise -> the whole source of its cell (its `# %% exercise 5.1` section)."""
    parts = SECTION.split((UNUSUAL / name).read_text(encoding="utf-8"))
    return {number: source.strip() + "\n" for number, source in zip(parts[1::2], parts[2::2])}


def run_notebook(stem: str, programs: list[str], folder: Path, answers: dict[str, str] | None = None) -> dict:
    """Run the solution notebook's code cells in `folder`, offline, until every program in `programs` is written,
    each exercise cell of `answers` replaced by its answer. The exercises whose check cell raised -> the error.
    A cell that runs a program in a process of its own (`subprocess.run`) is left out: the series' tests run it."""
    notebook = nbformat.read(ROOT / "solutions" / f"{stem}.ipynb", as_version=4)
    answers = dict(answers or {})
    namespace: dict = {"__name__": f"solution_{stem}", "In": [""]}
    failed: dict = {}
    before = Path.cwd()
    os.chdir(folder)
    try:
        with offline_environ(), contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            for index, cell in enumerate(notebook.cells):
                if cell.cell_type != "code" or has_magic(cell.source) or "subprocess.run(" in cell.source:
                    continue
                source = answers.pop(cell.metadata.get("looplab", {}).get("exercise"), cell.source)
                namespace["In"].append(source)
                # Each cell's text where its functions' code says it is, as IPython keeps it (a program may be
                # written from the cells that defined its functions).
                filename = f"<{stem} cell {index}{'' if source is cell.source else ', an unusual answer'}>"
                linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
                try:  # the check cells of a solution pass; a stub's would raise
                    exec(compile(source, filename, "exec"), namespace)
                except Exception as error:
                    failed.update(dict.fromkeys(checked_numbers(source), error))
                if all((folder / program).exists() for program in programs):
                    assert not answers, f"solutions/{stem}.ipynb has no exercise cell {sorted(answers)}"
                    return failed
    finally:
        os.chdir(before)
    raise AssertionError(f"solutions/{stem}.ipynb never wrote {programs}")


def passes_the_stage(stage: str, program: Path, folder: Path) -> None:
    """The series' tests of `stage`, copied into `folder` beside `program` as agent.py, pass."""
    tests = folder / "series" / stage
    shutil.copytree(stage_tests(stage), tests)
    for path in tests.rglob("*"):  # the series' folder may be read-only; its copy must take agent.py
        path.chmod(0o755 if path.is_dir() else 0o644)
    shutil.copyfile(program, tests / "agent.py")
    ran = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tests)],
                         cwd=tests, capture_output=True, text=True, timeout=300,
                         env=dict(offline_environment(), PYTHONDONTWRITEBYTECODE="1", PYTEST_DISABLE_PLUGIN_AUTOLOAD="1"))
    assert ran.returncode == 0, f"{stage} against {program.name}:\n{ran.stdout[-4000:]}\n{ran.stderr[-2000:]}"
    assert " passed" in ran.stdout and " failed" not in ran.stdout


def a_program_passes_the_stage(stage: str, source: str, name: str, folder: Path) -> None:
    """A program's source (a course's reference module dressed as the series' program), written into `folder` as
    `name`, passes the series' tests of `stage`; skipped, saying where to point LOOPLAB_SERIES_TESTS, when they are
    not here."""
    stage_tests(stage)
    program = folder / name
    program.write_text(source, encoding="utf-8")
    passes_the_stage(stage, program, folder)


@pytest.fixture(scope="module")
def solution(tmp_path_factory):
    """Each solution notebook run once (its programs all written): stem -> (its folder, its checks that raised)."""
    runs: dict = {}

    def run(stem: str) -> tuple[Path, dict]:
        if stem not in runs:
            folder = tmp_path_factory.mktemp(stem)
            runs[stem] = folder, run_notebook(stem, programs_of(stem), folder)
        return runs[stem]
    return run


def programs_of(stem: str) -> list[str]:
    program = next(program for notebook, program, _ in STAGES.values() if notebook == stem)
    return [program, SERVER] if stem == "05_toolbox" else [program]


@pytest.mark.parametrize("stage", sorted(STAGES))
def test_the_program_passes_the_series_stage_tests(stage, solution):
    stem, program, _ = STAGES[stage]
    stage_tests(stage)
    folder, _ = solution(stem)
    passes_the_stage(stage, folder / program, folder)
    if SERVER in programs_of(stem):
        assert served_tools(folder / SERVER) == ["calculator", "get_weather", "count_letters"]


def run_by_its_notebook(stem: str, program: str) -> bool:
    """Does the solution notebook run its program in a process of its own (a `subprocess.run` cell naming it)? nbval
    then runs that program's `__main__` and compares what it prints, in both languages."""
    notebook = nbformat.read(ROOT / "solutions" / f"{stem}.ipynb", as_version=4)
    return any("subprocess.run(" in cell.source and f'"{program}"' in cell.source for cell in notebook.cells
               if cell.cell_type == "code")


NOT_RUN_BY_THEIR_NOTEBOOK = sorted(stage for stage, (stem, program, _) in STAGES.items()
                                   if not run_by_its_notebook(stem, program))


@pytest.mark.parametrize("stage", NOT_RUN_BY_THEIR_NOTEBOOK)
def test_the_program_runs_as_a_script_offline(stage, solution):
    """`python agent_<...>.py`, as the notebook says to run it, with nothing typed: it ends on its own, without a
    traceback (a program that played eval cases the course no longer had was found so). 1 is notebook 10's
    exit status for a failing eval case, which its cases hold on purpose. Only the programs their notebook does not
    run itself: nbval runs the others' `__main__` (run_by_its_notebook)."""
    stem, program, _ = STAGES[stage]
    folder, _ = solution(stem)
    ran = subprocess.run([sys.executable, program], cwd=folder, input="", capture_output=True, text=True, timeout=120,
                         env=dict(offline_environment(), PYTHONDONTWRITEBYTECODE="1"))
    assert "Traceback" not in ran.stderr, f"{program}:\n{ran.stderr[-3000:]}"
    assert ran.returncode in (0, 1), f"{program} ended with {ran.returncode}:\n{ran.stderr[-2000:]}"


@pytest.mark.parametrize("stage", sorted(STAGES))
def test_the_program_of_unusual_answers_passes_the_series_stage_tests(stage, solution, tmp_path):
    """Answers with helpers of their own pass the checks the solution passes, and the program keeps their helpers:
    it passes the series' tests, and notebook 5's MCP server lists the three tools."""
    stem, program, answers = STAGES[stage]
    stage_tests(stage)
    given = unusual_answers(answers)
    failed = run_notebook(stem, programs_of(stem), tmp_path, given)
    _, failed_by_the_solution = solution(stem)
    refused = {number: str(error) for number, error in failed.items()
               if number in given and number not in failed_by_the_solution}
    assert not refused, f"tests/unusual_answers/{answers}: its check refuses the answer: {refused}"
    passes_the_stage(stage, tmp_path / program, tmp_path)
    if SERVER in programs_of(stem):
        assert served_tools(tmp_path / SERVER) == ["calculator", "get_weather", "count_letters"]


def served_tools(server: Path) -> list[str]:
    """The tools an MCP server written by notebook 5 lists: its module imported, its tools/list handler called."""
    spec = importlib.util.spec_from_file_location(f"served_{id(server)}", server)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    # In a thread of its own: a test before this one in the same worker may leave an event loop running in this one.
    with concurrent.futures.ThreadPoolExecutor(1) as thread:
        listed = thread.submit(asyncio.run, module.list_tools(None, None)).result()
    return [tool.name for tool in listed.tools]
