"""What Binder builds from this repository (issue 39): repo2docker's own plan, read without Docker.

Binder (and a Zero to JupyterHub image made with repo2docker) builds the repository as it is: this machine has no
Docker daemon, so the build itself cannot run here, but `repo2docker --no-build --debug` prints the Dockerfile it
would build, from the same reading of the repository. That plan is held here: the Python the course supports
(runtime.txt), the pinned requirements installed from the repository's folder, the course itself installed, no
other configuration file taking over. The install it describes was run by hand in a fresh Python 3.12 venv (the
README says so, and what was not run).
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from tests.hub.hub import BIN, unavailable

pytestmark = pytest.mark.hub

ROOT = Path(__file__).resolve().parents[2]
REPO2DOCKER = BIN / "repo2docker"
SUPPORTED = ("3.11", "3.12", "3.13")  # pyproject.toml's requires-python, and bootstrap.py's NEEDED


@pytest.fixture(scope="module")
def plan() -> str:
    if not REPO2DOCKER.exists():
        unavailable(f"repo2docker is not installed in {BIN.parent}: run `make test` (scripts/bootstrap.py makes it)")
    ran = subprocess.run([str(REPO2DOCKER), "--no-build", "--debug", str(ROOT)], capture_output=True, text=True,
                         timeout=120, cwd=ROOT)
    assert ran.returncode == 0, ran.stderr[-3000:]
    return ran.stdout + ran.stderr


def test_binder_builds_the_python_the_course_supports(plan):
    built = re.search(r"Building conda environment for python=(\d+\.\d+)", plan)
    assert built and built.group(1) in SUPPORTED, built
    assert (ROOT / "runtime.txt").read_text().strip() == f"python-{built.group(1)}"


def test_binder_installs_the_pinned_requirements_then_the_course_from_the_repository_folder(plan):
    requirements = plan.index('pip install --no-cache-dir -r "requirements.txt"')
    assert plan.index("COPY --chown=0:0 src/ ${REPO_DIR}/") < requirements < plan.index("pip install --no-cache-dir .")
    assert not (ROOT / "binder").exists() and not (ROOT / "environment.yml").exists(), (
        "a binder/ folder or an environment.yml would replace requirements.txt in repo2docker's reading")


def test_the_requirements_binder_reads_hold_what_a_class_needs():
    pins = (ROOT / "requirements.txt").read_text()
    for needed in ("jupyterlab==", "ipywidgets==", "nbgitpuller==", "anthropic=="):
        assert f"\n{needed}" in pins, needed
