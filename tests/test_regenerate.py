"""The one regeneration command is a no-op on an unchanged course.

`make notebooks` (python -m authoring notebooks) rebuilds every derived file: stored outputs, learner
notebooks, recordings a notebook outgrew. The committed files are what its last
run made, so running it again, here on a copy of the course, must change nothing: no widget id,
no machine path, no re-authored recording. A diff after a real edit then shows only that edit.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# What the command reads and writes; the copy holds nothing else.
COPIED = ("looplab", "solutions", "notebooks", "authoring", "docs", "README.md", "README.fr.md", "translations",
          "requirements.txt")


def copy_of_the_course(course: Path) -> Path:
    """What `make notebooks` reads and writes, copied into `course` (made if need be)."""
    course.mkdir(parents=True, exist_ok=True)
    for relative in COPIED:
        if not (ROOT / relative).exists():  # a fork without a French edition
            continue
        if (ROOT / relative).is_file():
            shutil.copy(ROOT / relative, course / relative)
        else:
            # __pycache__ too: the copies keep their times, so the .pyc the test command compiled stay valid and
            # the dozen kernels this copy starts need not compile the package again.
            shutil.copytree(ROOT / relative, course / relative, ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    return course


def regenerate(course: Path, *arguments: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(course)}  # the kernels import the copy's looplab, too
    env.pop("ANTHROPIC_API_KEY", None)
    return subprocess.run([sys.executable, "-m", "authoring", "notebooks", *arguments], cwd=course, env=env,
                          capture_output=True, text=True, timeout=1500)


# The notebooks this test runs: two, in both languages. Every notebook's stored outputs are held to a fresh run by
# nbval over solutions/ (English and French) in the same suite; running all of them again here cost 67 s of the
# suite's 5 minutes at nine notebooks, and grew by 7 s a notebook.
NAMED = ("01_one_tool_call", "03_matching_ids")


def test_regenerating_an_unchanged_course_changes_nothing_and_runs_only_what_changed(tmp_path):
    """--all: the named notebooks run again, in English and in French, and what they make, with every page made from
    the sources, is the committed files. Then, with nothing changed, no notebook runs (the copy's cache,
    .cache/made_from.json, says what each was made from); and a word changed in one translation runs that notebook
    in that language, and no other."""
    course = copy_of_the_course(tmp_path / "course")
    run = regenerate(course, "--all", *NAMED)
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stdout.strip() == "nothing changed", (
        f"{run.stdout}\nthe committed files are not what `make notebooks` makes: run it and commit the result")
    assert "re-authoring" not in run.stderr, run.stderr
    run = regenerate(course, *NAMED)
    assert run.returncode == 0 and run.stdout.strip() == "nothing changed", run.stdout + run.stderr[-3000:]
    assert "running" not in run.stderr, run.stderr
    translation = course / "translations" / "fr" / "03_matching_ids.toml"
    translation.write_text(translation.read_text(encoding="utf-8") + "\n# a translator's note\n", encoding="utf-8")
    run = regenerate(course, *NAMED)
    assert run.returncode == 0 and run.stdout.strip() == "nothing changed", run.stdout + run.stderr[-3000:]
    assert [line for line in run.stderr.splitlines() if line.startswith("running")] == [
        "running fr/03_matching_ids offline"]


def test_no_stored_notebook_names_the_python_it_was_run_with():
    """A kernel stamps its interpreter's patch release in `language_info.version`; stored, `make notebooks`
    rewrote every notebook (and the test above failed) for a maintainer on Debian's 3.11.2 instead of 3.11.7."""
    stamped = [str(path.relative_to(ROOT)) for folder in ("solutions", "notebooks")
               for path in sorted((ROOT / folder).rglob("*.ipynb"))
               if "version" in json.loads(path.read_text(encoding="utf-8"))["metadata"].get("language_info", {})]
    assert stamped == []
