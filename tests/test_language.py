"""Which language the course speaks: LOOPLAB_LANG, else the notebook's metadata, else English; never LANG."""

import json

import pytest

from looplab import language
from looplab.catalogue import words
from looplab.recordings import RECORDINGS_DIR, recording_path


@pytest.fixture(autouse=True)
def no_choice(monkeypatch):
    for name in (language.OVERRIDE, language.SPOKEN, language.SESSION):
        monkeypatch.setenv(name, "")  # noted as it was, so that what a test sets (looplab.speak) is undone after it
        monkeypatch.delenv(name)


def notebook(tmp_path, lang=None):
    path = tmp_path / "n.ipynb"
    path.write_text(json.dumps({"metadata": {"looplab": {"lang": lang} if lang else {}}, "cells": []}))
    return str(path)


def test_english_unless_told_and_the_systems_lang_is_not_a_say(monkeypatch):
    monkeypatch.setenv("LANG", "fr_FR.UTF-8")
    assert language.current() == "en"


def test_the_notebook_the_kernel_runs_says_its_language(monkeypatch, tmp_path):
    monkeypatch.setenv(language.SESSION, notebook(tmp_path, "fr"))
    assert language.current() == "fr"
    monkeypatch.setenv(language.SESSION, notebook(tmp_path))
    assert language.current() == "en"
    monkeypatch.setenv(language.SESSION, str(tmp_path / "gone.ipynb"))
    assert language.current() == "en"


def test_a_notebook_that_says_its_language_speaks_it_without_a_server(monkeypatch, tmp_path):
    """`looplab.speak("fr")`, a French notebook's set-up line, needs no JPY_SESSION_NAME; a program the notebook
    starts inherits it; it wins over the metadata a server names, LOOPLAB_LANG wins over it, and a language the
    course lacks is refused by name."""
    import subprocess
    import sys

    import looplab

    looplab.speak("fr")
    assert language.current() == "fr"
    started = subprocess.run([sys.executable, "-c", "from looplab import language; print(language.current())"],
                             capture_output=True, text=True, check=True)
    assert started.stdout.strip() == "fr"
    monkeypatch.setenv(language.SESSION, notebook(tmp_path, "en"))
    assert language.current() == "fr"
    monkeypatch.setenv(language.OVERRIDE, "en")
    assert language.current() == "en"
    with pytest.raises(ValueError, match="looplab speaks en, fr; got 'de'"):
        looplab.speak("de")


def test_looplab_lang_overrides_the_notebook_and_using_overrides_both(monkeypatch, tmp_path):
    monkeypatch.setenv(language.SESSION, notebook(tmp_path, "fr"))
    monkeypatch.setenv(language.OVERRIDE, "en")
    assert language.current() == "en"
    with language.using("fr"):
        assert language.current() == "fr"
    assert language.current() == "en"


def test_an_unknown_language_is_named(monkeypatch):
    monkeypatch.setenv(language.OVERRIDE, "de")
    with pytest.raises(ValueError, match="'de'.*LOOPLAB_LANG"):
        language.current()


def test_recordings_of_another_language_sit_in_their_folder():
    assert recording_path("calculator") == RECORDINGS_DIR / "calculator.json"
    with language.using("fr"):
        assert recording_path("calculator") == RECORDINGS_DIR / "fr" / "calculator.json"


def test_a_modules_words_follow_the_language(tmp_path):
    (tmp_path / "texts").mkdir()
    (tmp_path / "texts" / "speaker.toml").write_text(
        '[hello]\ntext = "Hello {name}"\n\n[hello.fr]\nof = "00000000"\ntext = "Bonjour {name}"\n'
        '[brace]\ntext = "{not a field}"\n', encoding="utf-8")
    said = words(str(tmp_path / "speaker.py"))
    assert said("hello", name="Ada") == "Hello Ada"
    assert said("brace") == "{not a field}"
    with language.using("fr"):
        assert said("hello", name="Ada") == "Bonjour Ada"
        assert said("brace") == "{not a field}"
