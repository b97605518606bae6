"""The scripted side of the checks speaks the check's language: every word it says has its French.

The checks' scenario tables are built once, at import, and serve English and French checks alike: the model's
texts (`scripted.text(..., fr=...)`, `thinking(..., fr=...)`) and the lines handed to the learner's code
(`scripted.said(..., fr=...)`, in a Scenario's `given` and `options`) are chosen when a check plays them. A
word with no French would reach a French learner in English, in the very diff that explains a failure: so each
is found here, by walking what the checks' modules hold (tables, constants, and the replies' closures), and
held to the French rules of docs/glossaire.md. Tool results, tool names and expressions are no words: they are
plain strings, never a Said, and stay as the series' tests read them.
"""

from __future__ import annotations

import dataclasses
import inspect
import io
import itertools
import re
import textwrap
import types
from types import SimpleNamespace

import pytest
from pydantic import BaseModel

from authoring import typography
from looplab import language, loop, robust, toolbox
from looplab.checks import (
    core, notebook1, notebook2, notebook3, notebook4, notebook5, notebook6, notebook7, notebook8, notebook9, run_check, turns,
)
from looplab.client import MODEL
from looplab.scripted import Said, reply, said, spoken, text
from tests.test_glossary import english_terms_in, other_forms_in

MODULES = [notebook1, notebook2, notebook3, notebook4, notebook5, notebook6, notebook7, notebook8, notebook9, turns]
TRANSLATED = language.LANGUAGES[1:]  # every language but the source: each Said has its words in each
LETTER = re.compile(r"[^\W\d_]")  # a text with no letter ("12 × 12 = 144.") may read the same in every language
REPLIES_TAKEN = 6  # replies taken from a model that never stops (a generator): its words repeat after a few


def _walk(value, found: dict[int, Said], seen: dict[int, object]) -> None:
    """Every Said in `value`: in containers, dataclasses (a Scenario's raw fields, not its spoken copies), plain
    namespaces, SDK objects, and in the closures and defaults of functions (a reply closes over its blocks, a
    `then` over the line it compares, a model that never stops over its replies), and what scripted.never_stops
    says first (a generator function: its words are made when it is called)."""
    if isinstance(value, Said):
        found[id(value)] = value
        return
    if isinstance(value, (str, bytes, int, float, bool, type(None), type, types.ModuleType)) or id(value) in seen:
        return
    seen[id(value)] = value  # kept, so that no other object takes its id while the walk goes on
    if isinstance(value, dict):
        items = [*value.keys(), *value.values()]
    elif isinstance(value, (list, tuple, set, frozenset)):
        items = list(value)
    elif dataclasses.is_dataclass(value):
        items = [object.__getattribute__(value, field.name) for field in dataclasses.fields(value)]
        if isinstance(value, core.Scenario) and callable(value.replies) and not value.replies.__closure__:
            items.append(list(itertools.islice(value.replies(), REPLIES_TAKEN)))  # scripted.never_stops
    elif isinstance(value, (SimpleNamespace, BaseModel)):
        items = list(vars(value).values())
    elif isinstance(value, types.FunctionType) and value.__module__.startswith("looplab"):
        items = [cell.cell_contents for cell in value.__closure__ or () if _filled(cell)]
        items += [*(value.__defaults__ or ()), *(value.__kwdefaults__ or {}).values()]
    else:
        return
    for item in items:
        _walk(item, found, seen)


def _filled(cell) -> bool:
    try:
        cell.cell_contents
    except ValueError:  # a closure's variable not bound yet
        return False
    return True


def words_of_the_checks() -> list[Said]:
    found: dict[int, Said] = {}
    seen: dict[int, object] = {}
    for module in MODULES:
        for name, value in vars(module).items():
            if not name.startswith("__"):
                _walk(value, found, seen)
    return sorted(found.values(), key=str)


WORDS = words_of_the_checks()


def test_the_walk_finds_the_checks_words():
    """Enough to trust the walk: the model's texts inside replies, lines in `given`, constants, closures."""
    english = {str(words) for words in WORDS}
    assert len(WORDS) > 150, len(WORDS)
    assert {"I'll use the calculator.",  # a text block, in a reply's closure
            "What is 4823 × 1979?",  # turns.START, notebook4.QUESTION
            "Big numbers: use the calculator.",  # a thinking block
            "Let me check that once more.",  # scripted.never_stops, played by the cap's scenarios
            "What is 4823 × 1979?\nAnd that divided by 7?\n",  # the lines notebook 4's run reads
            "Let me check.",  # notebook 6's guard: a reply in `_numbered`'s closure, in `_then_forever`'s
            "Three sums.",  # notebook 3's SDK history, made when the check reads it
            "Answer in one word.",  # a system prompt a scenario hands over (options)
            "Using the calculator."} <= english  # notebook 4's client that is not the SDK's


@pytest.mark.parametrize("words", WORDS, ids=lambda words: str(words)[:50])
def test_every_word_of_the_checks_has_its_french(words):
    for spoken_in in TRANSLATED:
        translated = words.translations.get(spoken_in)
        assert isinstance(translated, str) and translated.strip(), f"no {spoken_in}= for {str(words)!r}"
        assert translated != str(words) or not LETTER.search(str(words)), \
            f"{str(words)!r} is not translated: its {spoken_in}= is the English"
    assert set(words.translations) <= set(TRANSLATED), words.translations


@pytest.mark.parametrize("words", [words for words in WORDS if LETTER.search(str(words))],
                         ids=lambda words: str(words)[:50])
def test_the_french_words_follow_the_glossary_and_french_typography(words):
    french = words.translations.get("fr", "")  # none: the test above says so
    edits = [typography.shown(french, edit) for edit in typography.edits(french)]
    assert not edits, f"{french!r}: spaces French typography wants otherwise (U+00A0 before :, U+202F before ; ! ? " \
                      f"and inside « »): {edits}"
    assert not typography.english_numbers(french), f"{french!r}: a number written the English way (9 544 717, 0,3)"
    assert not english_terms_in(french) and not other_forms_in(french), f"{french!r}: see docs/glossaire.md"
    assert '"' not in french and not re.search(r"(?<![a-zA-Zà-ÿ])'|'(?![a-zA-Zà-ÿ])", french), \
        f"{french!r}: French quotes with « », not straight quotes"


def test_a_said_is_its_english_until_spoken():
    words = said("What is 2 + 2?", fr="Combien font 2 + 2\u202f?")
    assert words == "What is 2 + 2?"
    with language.using("fr"):
        assert spoken({"content": [words]}) == {"content": ["Combien font 2 + 2\u202f?"]}
        assert f"{words}" == "What is 2 + 2?"  # a Said formatted or joined is its English: hence spoken, .now()
    with language.using("en"):
        assert words.now() == "What is 2 + 2?"


# --- a scenario, played in each language --------------------------------------------------------------------

def _played(scenario: core.Scenario):
    """One request with the scenario's history, to its scripted model: what was asked, what the model said."""
    asked = scenario.given
    turn = core.play(lambda client: client.messages.create(model=MODEL, max_tokens=64, messages=asked), scenario)
    turn.reraise()
    return asked, turn.responses[0]["content"]


@pytest.mark.parametrize("spoken_in, question, first_words", [
    ("en", "What is 4823 × 1979?", "I'll use the calculator."),
    ("fr", "Combien font 4823 × 1979\u202f?", "Je vais utiliser la calculatrice."),
])
def test_a_scenario_speaks_the_language_of_the_check(spoken_in, question, first_words):
    with language.using(spoken_in):
        asked, content = _played(notebook2.TEXT_FIRST)
        expected_answer = turns.final_text(notebook2.TEXT_FIRST.replies[-1]({"messages": []}))
    assert asked == [{"role": "user", "content": question}] and type(asked[0]["content"]) is str
    assert content[0] == {"type": "text", "text": first_words} and type(content[0]["text"]) is str
    assert content[1]["type"] == "tool_use" and content[1]["input"] == {"expression": "4823 * 1979"}  # never words
    assert expected_answer == {"en": "4823 × 1979 = 9,544,717.", "fr": "4823 × 1979 = 9\u202f544\u202f717."}[spoken_in]


def test_the_same_reply_answers_each_language_anew():
    """A reply is written once and speaks at each request: the language of that moment, never the import's."""
    answer = reply(text("Done.", fr="C'est fait."))
    with language.using("fr"):
        assert answer({"messages": []})["content"] == [{"type": "text", "text": "C'est fait."}]
    with language.using("en"):
        assert answer({"messages": []})["content"] == [{"type": "text", "text": "Done."}]


# --- every check that plays scenarios, on the course's code, in each language -----------------------------------

def _typed(function):
    """The course's function as a learner of the current language types it in the notebook: its source compiled
    anew (neither the course's object nor its code, which a check refuses), its default system prompt the notebook's
    SYSTEM_PROMPT, read in the notebook's language (looplab read its own at import, in English)."""
    namespace = {**function.__globals__, "SYSTEM_PROMPT": loop.system_prompt()}
    exec(compile(textwrap.dedent(inspect.getsource(function)), f"<{function.__name__}, typed>", "exec"), namespace)
    return namespace[function.__name__]


PLAYED = [("1.3", loop.one_shot), ("2.1", loop.tool_result), ("2.2", loop.agent_turn), ("2.3", loop.agent_turn),
          ("3.1", loop.run_tools), ("3.2", loop.unanswered_tool_uses), ("3.3", loop.agent_turn), ("4.1", loop.run),
          ("5.5", toolbox.agent_turn), ("6.2", robust.agent_turn), ("6.3", robust.agent_turn)]


def _words_in(value, found: list[str]) -> None:
    """Every string in what the learner's code is handed: containers, SDK objects, the lines of a stream."""
    if isinstance(value, str):
        found.append(value)
    elif isinstance(value, io.StringIO):
        found.append(value.getvalue())
    elif isinstance(value, dict):
        for item in value.values():
            _words_in(item, found)
    elif isinstance(value, (list, tuple)):
        for item in value:
            _words_in(item, found)
    elif isinstance(value, (SimpleNamespace, BaseModel)):
        _words_in(list(vars(value).values()), found)


def _lines_of(texts) -> set[str]:
    return {line.strip() for text in texts for line in str(text).splitlines() if LETTER.search(line)}


# The lines the checks say in each language, where the languages differ: none may reach a check of the other.
SAID_IN = {"en": _lines_of(str(words) for words in WORDS if words.translations.get("fr") != str(words)),
           "fr": _lines_of(words.translations["fr"] for words in WORDS if words.translations.get("fr") != str(words))}


@pytest.mark.parametrize("spoken_in", language.LANGUAGES)
@pytest.mark.parametrize("number, function", PLAYED, ids=[number for number, _ in PLAYED])
def test_the_course_code_passes_every_played_check_in_each_language(spoken_in, number, function):
    """Both sides of every comparison speak the check's language: the history handed over and the one expected,
    the lines run reads and the transcript expected, the question and the request that must hold it. And what the
    learner's code is handed is plain words of that language: never a Said (which reads, and crosses the grader's
    channel, as its English), never a line of the other language."""
    handed: list[str] = []
    with language.using(spoken_in):
        typed = _typed(function)

        def learner(*args, **kwargs):
            _words_in([args, kwargs], handed)
            return typed(*args, **kwargs)

        result = run_check(number, learner)
    assert result.ok, f"{result.failed}\n{result.hint}"
    assert handed and not [words for words in handed if isinstance(words, Said)], "a Said handed to the learner"
    other = next(other for other in language.LANGUAGES if other != spoken_in)
    assert not _lines_of(handed) & SAID_IN[other], f"handed in {other} to a check in {spoken_in}"


@pytest.mark.parametrize("number, function", PLAYED, ids=[number for number, _ in PLAYED])
def test_the_grader_hands_the_kernel_the_check_s_language(number, function):
    """Under the grader, what the learner's code is handed crosses the channel as plain JSON, where a Said left
    unspoken would arrive as its English: the kernel's end gets French words for a French notebook."""
    from tests.judge_helpers import judged

    handed: list[str] = []
    with language.using("fr"):
        typed = _typed(function)

        def learner(*args, **kwargs):
            _words_in([args, kwargs], handed)
            return typed(*args, **kwargs)

        result = judged(number, learner, cells=[])
    assert result["kind"] == "solved", result
    assert handed and not _lines_of(handed) & SAID_IN["en"], "handed in English to a check in French"


def test_the_passed_lines_quote_the_model_in_the_check_s_language():
    with language.using("fr"):
        french = run_check("1.3", _typed(loop.one_shot))
    with language.using("en"):
        english = run_check("1.3", _typed(loop.one_shot))
    assert any("'Oui, 7 est un nombre premier.'" in line for line in french.passed), french.passed
    assert any("Yes: 7 is a prime number." in line for line in english.passed), english.passed
    assert not any("prime" in line for line in french.passed)
