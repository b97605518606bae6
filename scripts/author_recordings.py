"""Write the course's recordings by running real conversations through the SDK in record mode.

Every request in a recording is exactly what the `anthropic` SDK sent, because the recordings are
made by running the solution notebooks themselves (and, for the `calculator` recording, the loop
below) with LOOPLAB_MODE=record. What answers depends on how this script is run:

    python scripts/author_recordings.py          # scripted answers (scripts/answers/*.py), no key needed
    python scripts/author_recordings.py --live   # the real API answers (needs ANTHROPIC_API_KEY)

Scripted answers are written by hand in the API's wire format and validated with
`anthropic.types.Message.model_validate`; their ids are made up and their token counts are
estimates. They are served by a small HTTP server on 127.0.0.1, which the notebooks' kernels
reach through ANTHROPIC_BASE_URL, exactly as they would reach the API.

Afterwards, run `python -m looplab.exercises --execute` to store the solutions' offline outputs
and regenerate the learner notebooks (`make record` does all of it).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx2
import nbformat
from nbclient import NotebookClient

import looplab
from looplab.recordings import recording_path
from looplab.tools import TOOLS, run_tool

ROOT = Path(__file__).resolve().parent.parent
ANSWERS_DIR = Path(__file__).resolve().parent / "answers"
SOLUTIONS = ROOT / "solutions"


def load_answers(name: str) -> dict:
    """The scripted answers of one recording, keyed by the user's question."""
    path = ANSWERS_DIR / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"answers_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.ANSWERS


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


def scripted_answer(answers: dict, body: dict) -> tuple[int, dict]:
    """The scripted reply to a request, or a 404 that says which answer is missing."""
    question, step = _question_and_step(body.get("messages", []))
    replies = answers.get(question, [])
    if step >= len(replies):
        message = f"no scripted answer for {question!r} after {step} replies: add it in scripts/answers/"
        return 404, {"type": "error", "error": {"type": "not_found_error", "message": message}}
    return 200, replies[step](body)


def serve(answers: dict) -> ThreadingHTTPServer:
    """The scripted answers behind a real HTTP endpoint on loopback, for the notebooks' kernels."""

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers["content-length"])))
            status, payload = scripted_answer(answers, body)
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


def author_calculator(live: bool) -> None:
    """The `calculator` recording: the loop the notebooks teach, run on each scripted question."""
    answers = load_answers("calculator")
    recording_path("calculator").unlink(missing_ok=True)
    upstream = None if live else httpx2.MockTransport(lambda request: _scripted_response(answers, request))
    client = looplab.client("calculator", mode="record", upstream=upstream)
    for question in answers:
        run_loop(client, question)


def _scripted_response(answers: dict, request: httpx2.Request) -> httpx2.Response:
    status, payload = scripted_answer(answers, json.loads(request.content))
    return httpx2.Response(status, json=payload)


def author_notebook(path: Path, live: bool) -> None:
    """Run a solution notebook in record mode: its recording gets exactly what it sends."""
    recording_path(path.stem).unlink(missing_ok=True)
    env = {"LOOPLAB_MODE": "record"}
    server = None
    if not live:
        server = serve(load_answers(path.stem))
        env.update(ANTHROPIC_BASE_URL=f"http://127.0.0.1:{server.server_address[1]}",
                   ANTHROPIC_API_KEY="scripted-no-key-needed")
    saved = dict(os.environ)
    os.environ.update(env)
    try:
        notebook = nbformat.read(path, as_version=4)
        NotebookClient(notebook, timeout=120, kernel_name="python3",
                       resources={"metadata": {"path": str(path.parent)}}).execute()
    finally:
        os.environ.clear()
        os.environ.update(saved)
        if server is not None:
            server.shutdown()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--live", action="store_true", help="ask the real API (needs ANTHROPIC_API_KEY)")
    parser.add_argument("names", nargs="*", help="recordings to write (default: all)")
    args = parser.parse_args()
    if args.live and not os.environ.get("ANTHROPIC_API_KEY"):
        parser.error("--live needs ANTHROPIC_API_KEY")
    if not args.names or "calculator" in args.names:
        author_calculator(args.live)
        print(f"wrote {recording_path('calculator')}")
    for path in sorted(SOLUTIONS.glob("*.ipynb")):
        if not args.names or path.stem in args.names:
            author_notebook(path, args.live)
            print(f"wrote {recording_path(path.stem)}")


if __name__ == "__main__":
    main()
