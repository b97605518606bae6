"""Solutions are the source; learner notebooks are made from them (run by `python -m authoring notebooks`).

In a solution notebook, each exercise's code sits between a `### BEGIN SOLUTION` line and a
`### END SOLUTION` line. The learner's copy has that region replaced by a stub that raises
NotImplementedError naming the exercise (found in the cell's metadata `looplab.exercise`),
and every output cleared. Each learner notebook is stamped with the course's current version
(metadata `looplab.course_version`): the grader reads it to know which exercises existed when
the learner got their copy.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import shutil
import sysconfig
import tempfile
from pathlib import Path

import nbformat
from jupyter_client import AsyncKernelManager
from nbclient import NotebookClient

from looplab import language
from looplab.catalogue import words
from looplab.client import offline_environ, offline_environment
from looplab.course import COURSE, Course, Notebook, exercise_number, made_with, stamp_version
from looplab.grade.kernels.fork_server import (KERNEL_NAME, TEMPLATES, ForkServer, provisioner_registered,
                                               write_kernel_spec)
from looplab.grade.kernels.runner import can_fork
from looplab.notebook_source import checked_names

from . import NOTEBOOKS, ROOT, SOLUTIONS
BEGIN, END = "### BEGIN SOLUTION", "### END SOLUTION"
REGION = re.compile(rf"^([ \t]*){re.escape(BEGIN)}[^\n]*\n.*?^[ \t]*{re.escape(END)}[^\n]*$", re.MULTILINE | re.DOTALL)
EXECUTION_TIMEOUT = 120  # seconds per cell
WORDS = words(__file__)  # the stub's words, in the notebook's language (texts/learner_notebooks.toml)


def stub(source: str, exercise: str | None) -> str:
    """Each solution region becomes a line that says what to write (in the language the course speaks now)."""
    label = WORDS("exercise", number=exercise) if exercise else WORDS("this_exercise")
    said = WORDS("stub", label=label)

    def replace(match: re.Match) -> str:
        indent = match.group(1)
        return f'{indent}{WORDS("your_code")}\n{indent}raise NotImplementedError("{said}")'

    return REGION.sub(replace, source)


def manifest_disagreements(solution: nbformat.NotebookNode, entry: Notebook, course: Course = COURSE) -> list[str]:
    """Where a solution notebook and its manifest entry differ, in words; [] when they agree.

    The notebook's exercise cells, in order, must be the manifest's exercises, and each must be
    followed by its check cell passing the manifest's name: `check("2.1", tool_result)`. It must
    say which course version it was made with: one of the course's, and none older than the
    version that added its newest exercise (else the grader would skip that exercise in it).
    """
    problems = version_disagreements(solution, entry, course)
    cells = solution.cells
    marked = [(index, exercise_number(cell)) for index, cell in enumerate(cells) if exercise_number(cell)]
    found = list(dict.fromkeys(number for _, number in marked))
    if found != entry.ids:
        problems.append(f"{entry.stem}: exercise cells {found}, manifest {entry.ids}")
    for exercise in entry.exercises:
        own = [index for index, number in marked if number == exercise.id]
        if not own:
            continue
        after = next((cell for cell in cells[own[-1] + 1:] if cell.cell_type == "code"), None)
        checked = checked_names(after.source) if after is not None else {}
        if checked.get(exercise.id) != exercise.name:
            problems.append(f"{entry.stem}: the cell after exercise {exercise.id} should be "
                            f"check(\"{exercise.id}\", {exercise.name}); it checks {checked or 'nothing'}")
    return problems


def version_disagreements(solution: nbformat.NotebookNode, entry: Notebook, course: Course = COURSE) -> list[str]:
    """The solution's course version (metadata `looplab.course_version`) against the course's versions."""
    version = made_with(solution)
    if version is None:
        return [f"{entry.stem}: no course version in its metadata (looplab.course_version); "
                f"the course's current one is {course.version}"]
    if version not in course.versions:
        return [f"{entry.stem}: course version {version!r} is not one of the course's ({', '.join(course.versions)})"]
    return [f"{entry.stem}: made with course version {version}, but exercise {exercise.id} was added in "
            f"{course.since(exercise)}" for exercise in entry.exercises if not course.exists_in(exercise, version)]


# In the learner's copy, the cells that fail until the learner has written the exercise. Tagged
# `raises-exception`, they do not stop Run All (JupyterLab and nbclient both honour the tag), so the
# rest of the notebook runs whatever state the exercises are in, as the prose promises.
FAILS_UNTIL_SOLVED = ("exercise", "check")
RAISES = "raises-exception"


def learner_version(solution: nbformat.NotebookNode, course: Course = COURSE) -> nbformat.NotebookNode:
    """The learner's copy: solutions replaced by stubs, outputs cleared, stamped with the course's current version."""
    notebook = nbformat.from_dict(solution)
    stamp_version(notebook, course.version)
    for cell in notebook.cells:
        if cell.cell_type != "code":
            continue
        if BEGIN in cell.source:
            with language.using(language.of_notebook(notebook)):
                cell.source = stub(cell.source, exercise_number(cell))
        tags = cell.metadata.get("tags", [])
        if any(tag in tags for tag in FAILS_UNTIL_SOLVED) and RAISES not in tags:
            cell.metadata["tags"] = [*tags, RAISES]
        cell.outputs = []
        cell.execution_count = None
        cell.metadata.pop("execution", None)
    notebook.metadata.pop("widgets", None)
    return notebook


def generate(names: list[str] | None = None, course: Course = COURSE, solutions: Path = SOLUTIONS,
             notebooks: Path = NOTEBOOKS) -> list[Path]:
    """Write the learner copy of each solution notebook of the course (or of the ones named)."""
    written = []
    notebooks.mkdir(parents=True, exist_ok=True)
    for stem in course.stems:
        if names and stem not in names:
            continue
        target = notebooks / f"{stem}.ipynb"
        nbformat.write(learner_version(nbformat.read(solutions / f"{stem}.ipynb", as_version=4), course), target)
        written.append(target)
    return written


@contextlib.contextmanager
def no_language_chosen():
    """os.environ, while the block runs, with no LOOPLAB_LANG, LOOPLAB_NOTEBOOK_LANG or JPY_SESSION_NAME: as nbclient, nbconvert or
    papermill run a notebook anywhere, with no Jupyter server to name it. A notebook speaks its language all the
    same, because it says it (a translated set-up cell's `looplab.speak`), and no LOOPLAB_LANG of the maintainer's
    shell overrides it."""
    saved = {name: os.environ.get(name) for name in (language.SESSION, language.OVERRIDE, language.SPOKEN)}
    for name in saved:
        os.environ.pop(name, None)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is not None:
                os.environ[name] = value


def execute(path: Path, kernels: ForkedKernels | None = None) -> None:
    """Re-run a solution notebook offline, in its language, and store its outputs (no widget state: see
    docs/RECORDINGS.md). In a fresh kernel, or in one forked from `kernels`' template (`make notebooks`)."""
    notebook = nbformat.read(path, as_version=4)
    # coalesce_streams: a busy kernel may send one print in two messages; stored, they are one. The folder in
    # full: a forked kernel goes there from its template's folder, not from this process's.
    options = dict(timeout=EXECUTION_TIMEOUT, coalesce_streams=True,
                   resources={"metadata": {"path": str(Path(path).resolve().parent)}})
    with offline_environ(), no_language_chosen():  # the kernel inherits both
        if kernels is None:
            NotebookClient(notebook, kernel_name="python3", **options).execute()
        else:
            kernels.execute(notebook, **options)
    notebook.metadata.pop("widgets", None)
    # The kernel stamps its interpreter's full version here ("3.11.7"): stored, it made every notebook change
    # when a maintainer with another patch release of Python ran `make notebooks`. Nothing reads it.
    notebook.metadata.get("language_info", {}).pop("version", None)
    for cell in notebook.cells:
        cell.metadata.pop("execution", None)
    normalise_outputs(notebook)
    nbformat.write(notebook, path)


class ForkedKernels:
    """Kernels forked from one warm template, for the solution notebooks of one language in a `make notebooks` run.

    Why: a fresh kernel spends about 2 s of CPU starting and importing looplab and the SDK, and a run
    executes a dozen notebooks. The grader's template (looplab/grade/kernels/fork_server.py) pays that
    once and forks each kernel in milliseconds; jupyter_client gets the fork through its public seams,
    as in the grader: a kernel spec naming the `looplab-fork` provisioner, given to the kernel manager.

    A forked kernel is each notebook's own, as a fresh one is: its environment is the one `execute`
    sets for that notebook (offline, no language chosen), its folder the notebook's, and it is
    shut down after it. One template per language, a new interpreter started offline (no ANTHROPIC_*
    variable) and speaking it: some words are read once, when their module is imported
    (looplab.loop.SYSTEM_PROMPT: a kernel runs one notebook), so a template forked from this process,
    which imported them in the maintainer's language, would give a French notebook English ones.
    That the outputs do not depend on any of this is proven twice: tests/test_regenerate.py re-runs
    the course this way and finds nothing changed, and nbval (`make test`) re-runs every solution in
    a fresh kernel of its own against the same stored outputs.
    """

    def __init__(self, folder: Path, speaking: str):
        self.language = speaking
        environment = {**offline_environment(), language.OVERRIDE: speaking}  # the template's; not a kernel's
        self.template = ForkServer(environment, str(folder), debug=False, fresh=True)
        self.specs = write_kernel_spec(folder, self.template)
        self.loop = asyncio.new_event_loop()  # the template's pipe is read on it: every notebook runs on it

    def start(self) -> bool:
        """The template started; False where kernels cannot be forked (not Linux, the provisioner not
        installed, the template failed), as the grader falls back to plain kernels."""
        if not (can_fork() and provisioner_registered(self.specs)):
            return False
        try:
            self.loop.run_until_complete(self.template.start())
        except RuntimeError:
            return False
        TEMPLATES[self.template.key] = self.template
        return True

    def execute(self, notebook: nbformat.NotebookNode, **options) -> None:
        """Run the notebook in a kernel forked now, with os.environ and `options` as `execute` sets them."""
        speaks = language.of_notebook(notebook)
        if speaks != self.language:
            raise ValueError(f"a notebook in {speaks!r} given to kernels speaking {self.language!r}")
        # A kernel spec other than python3 gets no history argument from nbclient: the same one, so the kernel
        # writes no IPython history file. cleanup_kc: the kernel is shut down after (a given km is left running).
        kernel = AsyncKernelManager(kernel_name=KERNEL_NAME, kernel_spec_manager=self.specs)
        client = NotebookClient(notebook, km=kernel, extra_arguments=["--HistoryManager.hist_file=:memory:"],
                                **options)
        self.loop.run_until_complete(client.async_execute(cleanup_kc=True))

    def close(self) -> None:
        TEMPLATES.pop(self.template.key, None)
        self.loop.run_until_complete(self.template.close())  # its kernels end with it
        self.loop.close()


@contextlib.contextmanager
def forked_kernels(speaking: str, notebooks: int):
    """ForkedKernels speaking `speaking` while the block runs, or None: `execute` then starts fresh kernels.
    None where kernels cannot be forked, and for fewer than two notebooks, where a template, which costs
    about what a fresh kernel does, would not pay."""
    if notebooks < 2:
        yield None
        return
    folder = Path(tempfile.mkdtemp(prefix="looplab-notebooks-"))
    kernels = ForkedKernels(folder, speaking)
    try:
        yield kernels if kernels.start() else None
    finally:
        kernels.close()
        shutil.rmtree(folder, ignore_errors=True)


WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
MODEL_ID_IN_TEXT = re.compile(r"model_id='([0-9a-f]+)'")
KERNEL_CELL_FILE = re.compile(r"/tmp/ipykernel_\d+/\d+\.py")


def normalise_outputs(notebook: nbformat.NotebookNode) -> None:
    """Make stored outputs the same on every run and every machine, so a diff shows only real changes.

    A run assigns each widget a random model id, and tracebacks name this machine's folders
    (the virtual environment, the checkout, the kernel's temporary cell files). Widget ids become
    their order of appearance; folders become <site-packages>, <course> and <cell>. nbval does not
    compare either (widget views and tracebacks are on its skip list), so nothing it checks changes.
    """
    site_packages = sorted({sysconfig.get_paths()[key] for key in ("purelib", "platlib")}, key=len, reverse=True)
    ids: dict[str, str] = {}

    def stable_id(model_id: str) -> str:
        return ids.setdefault(model_id, f"{len(ids) + 1:032x}")

    def clean(text: str) -> str:
        for folder in site_packages:
            text = text.replace(folder, "<site-packages>")
        text = KERNEL_CELL_FILE.sub("<cell>", text.replace(str(ROOT), "<course>"))
        return MODEL_ID_IN_TEXT.sub(lambda match: f"model_id='{stable_id(match.group(1))}'", text)

    for cell in notebook.cells:
        for output in cell.get("outputs", []):
            view = output.get("data", {}).get(WIDGET_VIEW)
            if isinstance(view, dict) and "model_id" in view:
                view["model_id"] = stable_id(view["model_id"])
            if "traceback" in output:
                output["traceback"] = [clean(line) for line in output["traceback"]]
            for key, value in output.get("data", {}).items():
                if key.startswith("text/") and isinstance(value, str):
                    output["data"][key] = clean(value)
            if isinstance(output.get("text"), str):
                output["text"] = clean(output["text"])
