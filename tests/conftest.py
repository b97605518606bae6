"""Fixtures shared by the tests of the client and of the viewer, and of the authoring script."""

import importlib.util
from pathlib import Path

import pytest

import looplab

AUTHOR_SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "author_recordings.py"


@pytest.fixture
def offline(monkeypatch):
    """A client of the `calculator` recording, offline whatever the environment says."""
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("LOOPLAB_MODE", raising=False)
    return looplab.client("calculator", quiet=True)


@pytest.fixture(scope="module")
def author():
    """scripts/author_recordings.py, imported as a module (scripts/ is not a package)."""
    spec = importlib.util.spec_from_file_location("author_recordings", AUTHOR_SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
