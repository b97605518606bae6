"""Fixtures shared by the tests of the client and of the viewer, of the authoring script, and of the checks."""

import pytest

import looplab


@pytest.fixture
def offline(monkeypatch):
    """A client of the `calculator` recording, offline whatever the environment says."""
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("LOOPLAB_MODE", raising=False)
    return looplab.client("calculator", quiet=True)


@pytest.fixture(scope="module")
def author():
    """authoring/author_recordings.py, the tool that writes the recordings."""
    from authoring import author_recordings

    return author_recordings


@pytest.fixture(params=["en", "fr"])
def spoken_in(request, monkeypatch):
    """A check played in each language of the course (LOOPLAB_LANG): the language's name."""
    monkeypatch.setenv("LOOPLAB_LANG", request.param)
    return request.param
