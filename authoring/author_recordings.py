"""Write the course's recordings by running real conversations through the SDK in record mode.

Every request in a recording is exactly what the `anthropic` SDK sent, because the recordings are
made by running the solution notebooks themselves (and, for the `calculator` recording, the loop
below) with LOOPLAB_MODE=record. What answers depends on how this script is run:

    python -m authoring record            # scripted answers (authoring/answers/*.py), no key needed
    python -m authoring record --live     # the real API answers (needs ANTHROPIC_API_KEY)
    python -m authoring record --lang fr  # the French notebooks' recordings (looplab/recordings/fr/)

Scripted answers are written by hand in the API's wire format and validated with
`anthropic.types.Message.model_validate`; their ids are made up and their token counts are
estimates. They are served by a small HTTP server on 127.0.0.1, which the notebooks' kernels
reach through ANTHROPIC_BASE_URL, exactly as they would reach the API.

A notebook writes each question it asks once, as a constant its cells reuse (`TRAIN_QUESTION =
"..."`); its answers file keys the replies by that name, and this script reads the words from the
notebook. So rewording a question is one edit in the notebook, then a rerun of this script.

A French notebook asks its questions in French, so it has its own recording, made the same way from
solutions/fr/<stem>.ipynb (generated: translated_notebooks.py) and the same answers file imported while the
course speaks French: `text("...", fr="...")` gives each reply's French words. Where a reply's calls differ
in French too, the file's `FRENCH = {"TRAIN_QUESTION": [...]}` replaces that question's whole entry.

Each recording is written aside and replaces the shipped one only when its whole run succeeded: a
run that stops half-way (a missing scripted answer, a failing cell) prints one line saying why and
leaves every recording as it was.

Afterwards, run `make notebooks` to store the solutions' offline outputs and regenerate the learner
notebooks (`make record` does all of it).
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import importlib
import json
import os
import re
import shutil
import sys
import tempfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import anthropic
import httpx2
import nbformat
from anthropic.types import Message
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

import looplab
from looplab import language as languages
from looplab.client import RECORD_INTO
from looplab.course import COURSE
from looplab.notebook_source import without_magics
from looplab.recordings import RECORDINGS_DIR, recording_path
from looplab.tools import TOOLS, run_tool

from . import ROOT, SOLUTIONS

# What a learner's NotRecordedError no longer says (learners cannot take this route): the maintainer's way to
# answer a conversation a notebook asks and its recording lacks, shown by --help (and in docs/RECORDINGS.md).
MAINTAINER_ROUTE = ("A notebook raised NotRecordedError? Without a key, script the missing answer in "
                    "authoring/answers/<stem>.py, then run `python -m authoring record <stem>` (offline, free), "
                    "then `make notebooks`; with ANTHROPIC_API_KEY, `python -m authoring record --live <stem>`.")
ANSWERS_DIR = Path(__file__).resolve().parent / "answers"
QUESTION_NAME = re.compile(r"[A-Z][A-Z0-9_]*_QUESTION")
# An answers key for a summary (notebook 8's compaction): "SUMMARY_OF:BUDGET_QUESTION" answers a request whose one
# message is a transcript of a conversation, when the last question it holds is BUDGET_QUESTION. A transcript is
# made by the notebook's code, so it has no name to be filed under; the questions it holds do.
SUMMARY_OF = "SUMMARY_OF:"
# An answers key for a question the model itself asks (notebook 9's parent, in its `research` call): "ASKED:<words>"
# answers a conversation that opens with those words. The words are the model's, written once in the answers file
# (in the scripted call and in its key), so the notebook has no name for them.
ASKED = "ASKED:"


def answers_file(name: str) -> Path:
    return (ANSWERS_DIR / f"{name}.py").relative_to(ROOT)


# An answers file's entries for a language whose replies differ from the English ones by more than words.
OVERRIDES = {"fr": "FRENCH"}


def load_answers(name: str, language: str = languages.SOURCE) -> dict:
    """The ANSWERS of one recording's answers file, as written: keyed by the notebook's name for each
    question ("TRAIN_QUESTION"), or, in calculator.py, which has no notebook, by the question itself.

    Each reply speaks `language` whenever it is sent (its `text(..., fr=...)` blocks choose their words then);
    its FRENCH entries (for "fr") replace whole entries of ANSWERS."""
    module = importlib.reload(importlib.import_module(f"{__package__}.answers.{name}"))
    answers = {**module.ANSWERS, **getattr(module, OVERRIDES.get(language, ""), {})}
    return {key: [_speaking(language, reply) for reply in replies] if isinstance(replies, list) else replies
            for key, replies in answers.items()}


def _speaking(language: str, reply):
    """The scripted reply, its words in `language` whatever the course speaks when it is sent."""
    def answer(request: dict) -> dict:
        with languages.using(language):
            return reply(request)

    return answer


def notebook_code(path: Path) -> list[str]:
    """The Python of each code cell of a notebook, without IPython magic and shell lines (`%`, `!`)."""
    return [without_magics(cell.source) for cell in nbformat.read(path, as_version=4).cells if cell.cell_type == "code"]


def notebook_questions(path: Path) -> dict[str, str]:
    """The questions a notebook names, read from its code (never run): {"TRAIN_QUESTION": "A train ticket..."}.

    A question is a top-level assignment of a string to a name ending in _QUESTION, in a code cell.
    """
    questions = {}
    for python in notebook_code(path):
        for statement in ast.parse(python).body:
            if not (isinstance(statement, ast.Assign) and isinstance(statement.value, ast.Constant)
                    and isinstance(statement.value.value, str)):
                continue
            for target in statement.targets:
                if isinstance(target, ast.Name) and QUESTION_NAME.fullmatch(target.id):
                    questions[target.id] = statement.value.value
    return questions


def _question_and_step(messages: list) -> tuple[str | None, int]:
    """The user's last question (a text, not tool results) and how many model replies followed it."""
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if message.get("role") != "user":
            continue
        content = message.get("content")
        if isinstance(content, str):
            question = content
        else:
            texts = [b.get("text") for b in content if b.get("type") == "text"]
            if not texts or any(b.get("type") == "tool_result" for b in content):
                continue
            question = "".join(texts)
        step = sum(1 for m in messages[index + 1:] if m.get("role") == "assistant")
        return question, step
    return None, 0


class MissingAnswer(Exception):
    """A model call the answers file has no reply for: the one line a maintainer needs.

    `key` is where its replies go in the answers file: the notebook's name for the question, or
    None when the notebook asks it without naming it.
    """

    def __init__(self, name: str, question: str | None, step: int, key: str | None):
        self.name, self.question, self.step, self.key = name, question, step, key
        if key is None:
            advice = (f"name it once in the notebook (a constant ending in _QUESTION) and add its replies "
                      f"under that name in {answers_file(name)}")
        else:
            advice = f"add reply number {step + 1} under {key} in {answers_file(name)}"
        super().__init__(
            f"no scripted answer for {question!r} after {step} repl{'y' if step == 1 else 'ies'}: {advice}")


class Script:
    """One recording's scripted replies, by the question's words, and the model calls it had none for."""

    def __init__(self, name: str, answers: dict, keys: dict[str, str]):
        self.name = name
        self.answers = answers  # the question's words -> its replies, in order
        self.keys = keys  # the question's words -> the key its replies are filed under in the answers file
        self.missing: list[MissingAnswer] = []
        self.summaries: dict[str, list] = {}  # a question's words -> the reply summarising a transcript ending there

    def summary_replies(self, transcript: str | None) -> list:
        """The replies for a summary of this transcript: those filed for the last question it holds (none if it
        holds none). Only a one-message request is a transcript (answer() asks for no other)."""
        held = [(transcript.rfind(question), replies) for question, replies in self.summaries.items()
                if transcript and question in transcript]
        return max(held, key=lambda found: found[0])[1] if held else []

    @classmethod
    def of_notebook(cls, path: Path, answers: dict) -> "Script":
        """An answers file keyed by the notebook's question names, with the words read from the notebook."""
        questions = notebook_questions(path)
        unknown = [key for key in answers if not key.startswith(ASKED) and key.removeprefix(SUMMARY_OF) not in questions]
        if unknown:
            raise AuthoringFailed(
                f"{path.stem}: {answers_file(path.stem)} answers {', '.join(unknown)}, which {path.name} does not "
                f"define (its questions: {', '.join(questions) or 'none'})")
        asked = {key.removeprefix(ASKED): replies for key, replies in answers.items() if key.startswith(ASKED)}
        script = cls(path.stem, {**{questions[key]: replies for key, replies in answers.items()
                                    if not key.startswith((SUMMARY_OF, ASKED))}, **asked},
                     {**{text: key for key, text in questions.items()}, **{words: ASKED + words for words in asked}})
        script.summaries = {questions[key.removeprefix(SUMMARY_OF)]: replies for key, replies in answers.items()
                            if key.startswith(SUMMARY_OF)}
        return script

    def answer(self, body: dict) -> tuple[int, dict]:
        """The scripted reply to a request, or a 404 that says which answer is missing."""
        messages = body.get("messages", [])
        question, step = _question_and_step(messages)
        replies = self.answers.get(question, [])
        if not replies and len(messages) == 1:
            replies = self.summary_replies(question)
        if step < len(replies):
            return 200, replies[step](body)
        missing = MissingAnswer(self.name, question, step, self.keys.get(question))
        self.missing.append(missing)
        return 404, {"type": "error", "error": {"type": "not_found_error", "message": str(missing)}}


def serve(script: Script) -> ThreadingHTTPServer:
    """The scripted answers behind a real HTTP endpoint on loopback, for the notebooks' kernels."""

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers["content-length"])))
            status, payload = script.answer(body)
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def run_loop(client, question: str) -> None:
    messages: list = [{"role": "user", "content": question}]
    for _ in range(10):
        reply = client.messages.create(model=looplab.MODEL, max_tokens=1024, tools=TOOLS, messages=messages)
        messages.append({"role": "assistant", "content": reply.content})
        if reply.stop_reason != "tool_use":
            return
        messages.append({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": block.id, "content": run_tool(block.name, block.input)}
            for block in reply.content if block.type == "tool_use"
        ]})


class AuthoringFailed(Exception):
    """A recording could not be written; the shipped one is left exactly as it was."""


@contextlib.contextmanager
def written_aside(name: str, recordings: Path):
    """Record into a temporary folder; replace `recordings/<name>.json` only if the block succeeds.

    A run that stops half-way (a missing scripted answer, a failing cell, Ctrl-C) leaves the
    recording it was rewriting untouched, and the other recordings are never opened.
    """
    with tempfile.TemporaryDirectory(prefix=f"looplab-record-{name}-") as aside:
        saved = os.environ.get(RECORD_INTO)
        os.environ[RECORD_INTO] = aside
        try:
            yield
        finally:
            if saved is None:
                os.environ.pop(RECORD_INTO, None)
            else:
                os.environ[RECORD_INTO] = saved
        fresh = Path(aside) / f"{name}.json"
        if not fresh.exists():
            raise AuthoringFailed(f"{name}: the run made no model call, so there is nothing to record")
        for exchange in json.loads(fresh.read_text(encoding="utf-8"))["exchanges"]:
            Message.model_validate(exchange["response"])  # the API's wire format, as the SDK reads it
        recordings.mkdir(parents=True, exist_ok=True)
        ready = recordings / f".{name}.json.new"  # beside the target: a rename is atomic only within one filesystem
        shutil.copyfile(fresh, ready)
        os.replace(ready, recordings / f"{name}.json")


def author_calculator(live: bool, recordings: Path = RECORDINGS_DIR, language: str = languages.SOURCE) -> None:
    """The `calculator` recording: the loop the notebooks teach, run on each scripted question.

    In another language it is made only from the file's own entries for it (FRENCH, keyed by French
    questions): the English questions asked again would make a French recording of English questions."""
    answers = load_answers("calculator", language)  # no notebook: its questions are written here, as the keys
    if language != languages.SOURCE:
        own = getattr(importlib.import_module(f"{__package__}.answers.calculator"), OVERRIDES.get(language, ""), {})
        answers = {question: replies for question, replies in answers.items() if question in own}
    script = Script("calculator", answers, {question: "that question" for question in answers})

    def scripted(request: httpx2.Request) -> httpx2.Response:
        status, payload = script.answer(json.loads(request.content))
        return httpx2.Response(status, json=payload)

    with written_aside("calculator", recordings), languages.using(language):
        upstream = None if live else httpx2.MockTransport(scripted)
        client = looplab.client("calculator", mode="record", upstream=upstream, quiet=True)
        try:
            for question in answers:
                run_loop(client, question)
        except anthropic.APIStatusError as error:
            raise AuthoringFailed(f"calculator: {script.missing[0] if script.missing else error}") from None


def author_notebook(path: Path, live: bool, recordings: Path | None = None, answers: dict | None = None) -> None:
    """Run a solution notebook in record mode: its recording gets exactly what it sends.

    The kernel speaks the notebook's language (metadata `looplab.lang`, told by JPY_SESSION_NAME as Jupyter
    tells it), and the recording goes where that language's recordings are (looplab/recordings/fr/...)
    unless `recordings` says. `answers` replaces its answers file (keyed by the notebook's question names,
    like the file).
    """
    name = path.stem
    spoken = languages.of_notebook(json.loads(Path(path).read_text(encoding="utf-8")))
    recordings = recording_path(name, spoken).parent if recordings is None else recordings
    env = {"LOOPLAB_MODE": "record", languages.SESSION: str(Path(path).resolve())}
    server = script = None
    if not live:
        script = Script.of_notebook(path, load_answers(name, spoken) if answers is None else answers)
        server = serve(script)
        env.update(ANTHROPIC_BASE_URL=f"http://127.0.0.1:{server.server_address[1]}",
                   ANTHROPIC_API_KEY="scripted-no-key-needed")
    saved = dict(os.environ)
    os.environ.update(env)
    os.environ.pop(languages.OVERRIDE, None)  # the notebook's own language, whatever the shell says
    try:
        with written_aside(name, recordings):
            notebook = nbformat.read(path, as_version=4)
            try:
                NotebookClient(notebook, timeout=120, kernel_name="python3",
                               resources={"metadata": {"path": str(path.parent)}}).execute()
            except CellExecutionError as error:
                if script is not None and script.missing:
                    raise AuthoringFailed(f"{name}: {script.missing[0]}") from None
                raise AuthoringFailed(f"{name}: a cell failed: {_first_line(error)}") from None
    finally:
        os.environ.clear()
        os.environ.update(saved)
        if server is not None:
            server.shutdown()


def _first_line(error: CellExecutionError) -> str:
    """The cell's error in one line (`ename: evalue`), not nbclient's page of traceback."""
    ename, evalue = getattr(error, "ename", ""), getattr(error, "evalue", "")
    return f"{ename}: {evalue}" if ename else str(error).strip().splitlines()[-1]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m authoring record", description=__doc__.splitlines()[0],
                                     epilog=MAINTAINER_ROUTE)
    parser.add_argument("--live", action="store_true", help="ask the real API (needs ANTHROPIC_API_KEY)")
    parser.add_argument("--lang", default=languages.SOURCE, choices=languages.LANGUAGES,
                        help="the notebooks of this language (default: en); `make record` does each")
    parser.add_argument("names", nargs="*", help="recordings to write (default: all)")
    args = parser.parse_args(argv)
    if args.live and not os.environ.get("ANTHROPIC_API_KEY"):
        parser.error("--live needs ANTHROPIC_API_KEY")
    unknown = set(args.names) - {"calculator", *COURSE.stems}
    if unknown:
        parser.error(f"no recording named {', '.join(sorted(unknown))}; they are: calculator, {', '.join(COURSE.stems)}")
    lang = args.lang
    solutions = SOLUTIONS if lang == languages.SOURCE else SOLUTIONS / lang
    try:
        if not args.names or "calculator" in args.names:
            if lang == languages.SOURCE or hasattr(importlib.import_module(f"{__package__}.answers.calculator"),
                                                   OVERRIDES.get(lang, "")):
                author_calculator(args.live, recording_path("calculator", lang).parent, lang)
                print(f"wrote {recording_path('calculator', lang).relative_to(ROOT)}")
            else:
                print(f"calculator: kept in English ({answers_file('calculator')} has no {OVERRIDES.get(lang)} "
                      f"questions); no {lang} recording of it")
        for stem in COURSE.stems:
            if not args.names or stem in args.names:
                if not (solutions / f"{stem}.ipynb").exists():
                    print(f"{lang}/{stem}: skipped: no solutions/{lang}/{stem}.ipynb (its translation is not "
                          f"finished: `python -m authoring translations status --lang {lang} {stem}`)")
                    continue
                author_notebook(solutions / f"{stem}.ipynb", args.live)
                print(f"wrote {recording_path(stem, lang).relative_to(ROOT)}")
    except AuthoringFailed as error:
        print(f"author_recordings: {error}; the recording was left unchanged", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
