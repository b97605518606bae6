"""French typography for every French text of the course: the no-break spaces French puts around its punctuation.

    .venv/bin/python -m authoring typography            # fix the French sources in place (only spaces change)
    .venv/bin/python -m authoring typography --check    # list each text that breaks the rules; exit 1 if any

The rules (docs/glossaire.md, "Typographie"):

- a no-break space (U+00A0) before `:`;
- a narrow no-break space (U+202F) before `;`, `!` and `?`, after `«` and before `»`;

so that `?` never wraps onto a line of its own. The fixer turns the ordinary space (or the wrong no-break space)
in those places into the right one, joins a line that a source wrapped just before such a mark, and inserts the
space where prose writes a letter directly before `: ` (« cellule: » -> « cellule : »). Only in prose: code is set
aside exactly as tests/test_glossary.py sets it aside when it looks for English terms (`CODE`, `PROTOCOL`, moved
here so both read one definition), and more: {placeholders} and dict literals, HTML tags and entities, times
(10:30), the protocol texts code reads (`Error: `, `User> `, `Agent> `, `[tool]`, `[tool-error]`, notebook 8's transcript
lines `user: `, `assistant called `, `tool result: ` and its `[Conversation summary: ` frame, notebook 10's
`[trace]` lines whole and its `[eval] ` mark), and in a text
a program prints (a code cell's string, a notebook's output) any line from `Error: ` on, which the series' tests
read as it is.

Where it writes:

- translations/fr/*.toml: each markdown cell's `text`, the manifest's French words, and each code entry's `fr`
  (inside the string literal, or the comment, it replaces: what the notebook then prints);
- every `[key.fr]` / `[hints.fr]` string of looplab/**/texts/*.toml and authoring/**/texts/*.toml;
- README.fr.md and docs/*.fr.md, but their generated parts (regenerated from the sources above).

A TOML file is edited in place: each string value is found where it is written, and only the characters the rule
names change inside it (no re-serialising: a diff shows the spaces and nothing else). Running it twice changes
nothing the second time. The generated files (solutions/fr, notebooks/fr, the pages' generated parts) follow
with `make notebooks`.
"""

from __future__ import annotations

import argparse
import ast
import io
import json
import re
import sys
import tokenize
import tomllib
from dataclasses import dataclass
from pathlib import Path

from . import ROOT

LANGUAGE = "fr"
NBSP = "\u00a0"  # before :
NNBSP = "\u202f"  # before ; ! ? and inside « »

# What is code, as tests/test_glossary.py reads it: fenced code, code spans, an italic link label (a cited work's
# English title), link targets, URLs, {placeholders}, "double-quoted" and 'single-quoted' program texts (a quote
# that opens after a letter is an apostrophe: l'outil), calls written bare (`getattr(block, key, None)`).
CODE = re.compile(r"```.*?```|~~~.*?~~~|`[^`\n]*`|\[\*[^\]\n]*\*\]|\]\([^)]*\)|https?://\S+|\{[^{}\s]*\}"
                  r"|\"[^\"\n]*\"|(?<!\w)'[^'\n]*'(?!\w)|\b\w+\([^()\n]*\)", re.DOTALL)
# Notebook 8's transcript lines and summary (looplab/compaction.py), English in every edition like the rest: the
# summary call reads the same transcript whatever the language, and the series' tests read the summary's frame.
# Notebook 10's trace lines, whole (`[trace] ...`, `[subagent:trace] ...`, `[trace] session total: ...`), and its
# eval report's mark, or a whole line of the report as run_evals prints it: the series' tests read them as they are.
PROTOCOL = re.compile(r"Error: |User> |Agent> |\[tool\]|\[tool-error\]|\[compact\] |\[Conversation summary: "
                      r"|tool result: |\b(?:user|assistant)(?:: | called )|\[[\w:]*trace\] [^\n]*"
                      r"|\[eval\] (?:(?:PASS|FAIL) [^\n]*\(\$\d+\.\d+\)(?=\n|\Z)|\d+/\d+ passed[^\n]*|  - [^\n]*)?")
# And, for typography: any brace group (a dict literal, `{'type': 'tool'}`; a doubled brace of a template), HTML
# (a tag with its attributes, a <style> or <script> block, an entity), a time or a ratio (10:30, 0:24), a path or
# a module written bare (docs/WORKSHOP.md, looplab.hint), `key=value` of a command line.
MORE_CODE = re.compile(r"<(style|script)\b.*?</\1>|<[A-Za-z/!][^<>]*>|&#?\w+;|\{[^{}\n]*\}|\b\d+:\d+\b"
                       r"|[\w.-]*[/\\][\w./\\-]+|\b[^\W\d]\w*(?:\.\w+)+\b|(?<!\S)--?\w[\w-]*(?:=\S*)?", re.DOTALL | re.IGNORECASE)
ERROR_LINE = re.compile(r"Error: [^\n]*")  # in a text a program prints: the error text, as the series reads it
# In a text a program prints: the API's own message of a 400, which stays the API's English (`messages.1: ...`).
API_MESSAGE = re.compile(r"\b(?:messages|tools|system|tool_choice)(?:\.\w+)+: [^\n<]*")
# In a text a program prints: Python's own words in an exception it quotes (inspect's "missing a required argument: 'city'").
PYTHON_ERROR = re.compile(r"(?:missing a required (?:keyword-only )?argument|got an unexpected keyword argument|"
                          r"too many positional arguments|takes \d+ positional arguments? but)[^\n]*")
# In a text a program prints: a line of Python it shows (a function's source, the program a notebook wrote).
PYTHON_LINE = re.compile(r"^[ \t]*(?:async[ \t]+)?(?:def|class|except|for|while|with|if|elif|else|try|finally)\b[^\n]*:"
                         r"[ \t]*(?:#[^\n]*)?$", re.MULTILINE)


def prose(text: str) -> str:
    """The text with code, placeholders, link targets and protocol texts set aside (code as `_`, so that
    `registry.items()` leaves `registry._`: still code). tests/test_glossary.py looks for English terms in this."""
    return PROTOCOL.sub(" ", CODE.sub("_", text))


BACKTICK = re.compile(r"(?<!`)`(?!`)")  # one backtick: an inline code span opens or closes (``` fences are not)


def wrapped_code(text: str) -> list[tuple[int, int]]:
    """The code spans that wrap onto the next line (`a` ... `b\nc`): backticks paired in order, as Markdown pairs
    them. A pattern that took any backtick to the next one across a line break paired the closing backtick of one
    span with the opening one of the next, and set aside the French prose between them."""
    spans, opened = [], None
    for match in BACKTICK.finditer(text):
        if opened is None:
            opened = match.start()
            continue
        if text.count("\n", opened, match.end()) == 1:
            spans.append((opened, match.end()))
        opened = None
    return spans


def code_spans(text: str, printed: bool = False) -> list[tuple[int, int]]:
    """Where `text` is not French prose: (start, end) of every piece of code, protocol text or markup."""
    spans = [match.span() for pattern in (CODE, MORE_CODE, PROTOCOL) for match in pattern.finditer(text)]
    spans += wrapped_code(text)
    if printed or text.startswith("Error: "):
        spans += [match.span() for pattern in (ERROR_LINE, API_MESSAGE, PYTHON_LINE, PYTHON_ERROR) for match in pattern.finditer(text)]
    return spans


def masked(text: str, printed: bool = False) -> str:
    """`text` with every code character replaced by NUL (same length, so positions hold)."""
    chars = list(text)
    for start, end in code_spans(text, printed):
        chars[start:end] = "\0" * (end - start)
    return "".join(chars)


@dataclass(frozen=True)
class Edit:
    """Replace text[at:at + length] by `new` (a space made no-break, a line joined, or a space inserted)."""
    at: int
    length: int
    new: str


# A mark French spaces, in prose, then what may follow it: a space, the end, a closing mark, an escape (a program's
# `\n`). `!` before `[` (an image), `?` and `:` inside a word (a URL, a time) are not punctuation.
FOLLOWS = r"(?=$|\s|\\|[»)\]\"'.,…*_|<])"
BEFORE = re.compile(r"(?P<space>[ \t\u00a0\u202f]*(?:\n[ \t\u00a0\u202f]*)?)(?P<mark>[:;!?]" + FOLLOWS + r"|»)")
AFTER = re.compile(r"«(?P<space>[ \t\u00a0\u202f]*(?:\n[ \t\u00a0\u202f]*)?)(?=[^\s\0])")
# cellule: -> cellule : (a word of lowercase letters; `is_error: True`, `else:`, `Type: message` are code)
GLUED_COLON = re.compile(r"(?<=[^\W\d_])(?=:(?:[ \t]|$))", re.MULTILINE)
PYTHON_WORDS = {"else", "try", "finally", "lambda", "except", "if", "elif", "while", "for", "with", "def", "class"}


def edits(text: str, printed: bool = False) -> list[Edit]:
    """What makes `text` follow the rules, in prose only; [] if it does. `printed`: a program prints it."""
    plain = masked(text, printed)
    found: list[Edit] = []
    for match in BEFORE.finditer(plain):
        space, mark = match.group("space"), match.group("mark")
        wanted = NBSP if mark == ":" else NNBSP
        start = match.start("space")
        before = plain[start - 1] if start > 0 else ""
        if not space:
            continue  # glued: only `: ` gains a space (GLUED_COLON), « quoi? » is left to the translator
        if before == "\n" or (space.count("\n") and _paragraph_edge(plain, start, match.end("space"))):
            continue  # the mark opens a line (after its indentation): its space is not prose's
        if space != wanted:
            found.append(Edit(start, len(space), wanted))
    for match in AFTER.finditer(plain):
        space = match.group("space")
        if space != NNBSP and not (space.count("\n") and _paragraph_edge(plain, match.start("space"),
                                                                        match.end("space"))):
            found.append(Edit(match.start("space"), len(space), NNBSP))
    for match in GLUED_COLON.finditer(plain):
        word = re.search(r"[\w\0.]*$", plain[:match.start()]).group()
        if word.isalpha() and word.islower() and word not in PYTHON_WORDS:  # prose's word, not code's (is_error:)
            found.append(Edit(match.start(), 0, NBSP))
    for match in re.finditer(r"(?<=[^\s\0«])»", plain):  # « mot» -> « mot »: a guillemet glued to its word
        if "«" in plain[:match.start()]:
            found.append(Edit(match.start(), 0, NNBSP))
    return sorted(set(found), key=lambda edit: edit.at)


def _paragraph_edge(plain: str, start: int, end: int) -> bool:
    """A line break that may not be joined: the line before is empty, or the next line starts a markdown block."""
    before = plain[:start].rsplit("\n", 1)[-1]
    following = plain[end:]
    return not before.strip() or bool(re.match(r"[-*+>#|]\s|\d+[.)]\s", following))


def applied(text: str, changes: list[Edit]) -> str:
    for edit in sorted(changes, key=lambda edit: edit.at, reverse=True):
        text = text[:edit.at] + edit.new + text[edit.at + edit.length:]
    return text


def fixed(text: str, printed: bool = False) -> str:
    """`text` following the rules (idempotent: fixed(fixed(t)) == fixed(t))."""
    return applied(text, edits(text, printed))


def shown(text: str, edit: Edit, width: int = 30) -> str:
    """The text around an edit, on one line, with the space to change shown as `⟦·⟧` (NBSP as `⍽`, NNBSP as `˽`)."""
    def visible(part: str) -> str:
        return part.replace("\n", "⏎").replace(NBSP, "⍽").replace(NNBSP, "˽")
    left = visible(text[max(0, edit.at - width):edit.at])
    right = visible(text[edit.at + edit.length:edit.at + edit.length + width])
    return f"…{left}⟦{visible(text[edit.at:edit.at + edit.length]) or '+'}→{visible(edit.new)}⟧{right}…"


# --- Python tokens: a code entry's `fr` (a string literal or a comment) ----------------------------------------

def token_edits(token: str) -> list[Edit]:
    """The edits inside a code token: a comment's words, or a string literal's body (what the program prints; its
    {placeholders} and escapes are code)."""
    if token.startswith("#"):
        return edits(token)
    prefix = re.match(r"[A-Za-z]*", token).group()
    quote = '"""' if token[len(prefix):].startswith('"""') else "'''" if token[len(prefix):].startswith("'''") \
        else token[len(prefix)]
    start, end = len(prefix) + len(quote), len(token) - len(quote)
    if end <= start or not token.endswith(quote):
        return []
    body = token[start:end]
    program = program_edits(body)
    inner = program if program is not None else [edit for edit in edits(body, printed=True)
                                                  if "\n" not in body[edit.at:edit.at + edit.length]]
    return [Edit(edit.at + start, edit.length, edit.new) for edit in inner]


def program_edits(body: str) -> list[Edit] | None:
    """A string that holds a program (a file a cell writes: several lines that parse as Python): the edits of its
    own comments and strings, or None if it is not one."""
    skipped = 2 if body.startswith("\\\n") else 0
    source = body[skipped:]
    if "\n" not in source.strip():
        return None
    try:
        ast.parse(source)
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (SyntaxError, tokenize.TokenError, IndentationError):
        return None
    starts = [0]
    for line in source.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    found = []
    for token in tokens:
        if token.type in (tokenize.COMMENT, tokenize.STRING):
            at = skipped + starts[token.start[0] - 1] + token.start[1]
            found += [Edit(at + edit.at, edit.length, edit.new) for edit in token_edits(token.string)]
    return found


# --- TOML: each string value, where it is written --------------------------------------------------------------

@dataclass
class TomlString:
    key: tuple  # the dotted path, array indexes as ints
    start: int  # where the value's raw characters begin in the source (after the opening quotes)
    end: int  # where they end (before the closing quotes)
    value: str  # the decoded value
    raw_at: list[int]  # raw offset of each decoded character, and one past the end
    raw_to: list[int]  # where each decoded character's raw writing ends (an escape is several characters)


class TomlScanner:
    """A TOML reader that keeps positions (only what the course's files use: tables, arrays of tables, dotted and
    quoted keys, the four kinds of strings, arrays, inline tables, scalars). Checked against tomllib by the tests."""

    BARE = re.compile(r"[A-Za-z0-9_-]+")

    def __init__(self, source: str):
        self.source, self.at, self.strings = source, 0, []
        self.table: tuple = ()
        self.counts: dict[tuple, int] = {}

    def scan(self) -> list[TomlString]:
        s = self.source
        while self.at < len(s):
            self.skip(newlines=True)
            if self.at >= len(s):
                break
            if s.startswith("[[", self.at):
                self.at += 2
                name = self.key()
                self.expect("]]")
                index = self.counts[name] = self.counts.get(name, -1) + 1
                self.table = name + (index,)
            elif s[self.at] == "[":
                self.at += 1
                self.table = self.key()
                self.expect("]")
            else:
                name = self.key()
                self.expect("=")
                self.value(self.table + name)
        return self.strings

    def skip(self, newlines: bool = False) -> None:
        s = self.source
        while self.at < len(s):
            if s[self.at] in " \t" or (newlines and s[self.at] in "\r\n"):
                self.at += 1
            elif s[self.at] == "#":
                self.at = s.find("\n", self.at) if "\n" in s[self.at:] else len(s)
            else:
                break

    def expect(self, text: str) -> None:
        self.skip()
        if not self.source.startswith(text, self.at):
            raise ValueError(f"expected {text!r} at {self.source[self.at:self.at + 40]!r}")
        self.at += len(text)

    def key(self) -> tuple:
        parts = []
        while True:
            self.skip()
            if self.source[self.at] in "\"'":
                parts.append(self.string(record=None).value)
            else:
                match = self.BARE.match(self.source, self.at)
                if not match:
                    raise ValueError(f"a key expected at {self.source[self.at:self.at + 40]!r}")
                parts.append(match.group())
                self.at = match.end()
            self.skip()
            if self.source.startswith(".", self.at):
                self.at += 1
                continue
            return tuple(parts)

    def value(self, key: tuple) -> None:
        self.skip()
        s = self.source
        if s[self.at] in "\"'":
            self.string(record=key)
        elif s[self.at] == "[":
            self.at += 1
            index = 0
            while True:
                self.skip(newlines=True)
                if s[self.at] == "]":
                    self.at += 1
                    return
                self.value(key + (index,))
                index += 1
                self.skip(newlines=True)
                if s[self.at] == ",":
                    self.at += 1
        elif s[self.at] == "{":
            self.at += 1
            while True:
                self.skip()
                if s[self.at] == "}":
                    self.at += 1
                    return
                name = self.key()
                self.expect("=")
                self.value(key + name)
                self.skip()
                if s[self.at] == ",":
                    self.at += 1
        else:
            match = re.compile(r"[^,\]}\s#]+").match(s, self.at)
            self.at = match.end()

    def string(self, record: tuple | None) -> TomlString:
        s = self.source
        quote = s[self.at:self.at + 3] if s[self.at:self.at + 3] in ('"""', "'''") else s[self.at]
        basic, multiline = quote[0] == '"', len(quote) == 3
        self.at += len(quote)
        if multiline and s.startswith("\r\n", self.at):
            self.at += 2
        elif multiline and s.startswith("\n", self.at):
            self.at += 1
        start, chars, raw_at, raw_to = self.at, [], [], []
        while True:
            if s.startswith(quote, self.at) and not (multiline and s.startswith(quote[0], self.at + 3)):
                break
            char = s[self.at]
            if basic and char == "\\":
                escape = s[self.at + 1]
                if escape in "uU":
                    width = 4 if escape == "u" else 8
                    raw_at.append(self.at)
                    chars.append(chr(int(s[self.at + 2:self.at + 2 + width], 16)))
                    self.at += 2 + width
                    raw_to.append(self.at)
                elif multiline and escape in " \t\r\n":  # a line-ending backslash: trims the whitespace after it
                    self.at += 1
                    while s[self.at] in " \t\r\n":
                        self.at += 1
                else:
                    raw_at.append(self.at)
                    chars.append({"b": "\b", "t": "\t", "n": "\n", "f": "\f", "r": "\r", '"': '"', "\\": "\\"}[escape])
                    self.at += 2
                    raw_to.append(self.at)
            else:
                raw_at.append(self.at)
                chars.append(char)
                self.at += 1
                raw_to.append(self.at)
        end = self.at
        self.at += len(quote)
        raw_at.append(end)
        found = TomlString(record or (), start, end, "".join(chars), raw_at, raw_to)
        if record is not None:
            self.strings.append(found)
        return found


def nested(table: dict, key: tuple):
    for part in key:
        table = table[part]
    return table


@dataclass
class Text:
    """One French text of a source: where it is (file, key), what it says, and how to edit it."""
    file: Path
    where: str
    value: str
    changes: list[Edit]  # in the value's own coordinates
    raw: TomlString | None = None  # a TOML string (None: a page, edited as a whole)
    offset: int = 0  # a page's region: where the value starts in the file


def is_french(key: tuple) -> bool:
    """A catalogue's French string: under a `fr` table, not a fingerprint."""
    return LANGUAGE in key and "of" not in key[key.index(LANGUAGE):]


def toml_texts(path: Path) -> list[Text]:
    """Every French text of a TOML source, with the edits it needs."""
    source = path.read_text(encoding="utf-8")
    table = tomllib.loads(source)
    translation = path.parent.name == LANGUAGE and path.parent.parent.name == "translations"
    texts = []
    for string in TomlScanner(source).scan():
        key = string.key
        where = ".".join(map(str, key))
        if translation and key[:1] == ("cells",):
            cell = nested(table, key[:2])
            if key[2:] == ("text",) and not cell.get("todo"):
                texts.append(Text(path, f"cell {key[1]}", string.value, edits(string.value), string))
            elif key[2:3] == ("code",) and key[4:] == ("fr",):
                texts.append(Text(path, f"cell {key[1]} code #{key[3]}", string.value, token_edits(string.value),
                                  string))
        elif (translation and key[-1] != "of") or (not translation and is_french(key)):
            texts.append(Text(path, where, string.value, edits(string.value), string))
    return texts


GENERATED = re.compile(r"<!-- begin generated:.*?<!-- end generated:[^>]*-->|"
                       r"<!-- generated by [^>]*do not edit below -->.*", re.DOTALL)


def page_texts(path: Path) -> list[Text]:
    """A French page's hand-written parts (its generated parts come from the sources)."""
    page = path.read_text(encoding="utf-8")
    texts, at = [], 0
    for region in [*GENERATED.finditer(page), None]:
        end = region.start() if region else len(page)
        part = page[at:end]
        if part.strip():
            texts.append(Text(path, f"page, line {page.count(chr(10), 0, at) + 1}", part, edits(part), offset=at))
        at = region.end() if region else len(page)
    return texts


def sources(root: Path = ROOT) -> list[Path]:
    """The French sources the fixer edits."""
    return sorted([*(root / "translations" / LANGUAGE).glob("*.toml"), *root.glob("looplab/**/texts/*.toml"),
                   *root.glob("authoring/**/texts/*.toml"), *root.glob("*.fr.md"), *root.glob("docs/*.fr.md")])


def texts_of(path: Path) -> list[Text]:
    return toml_texts(path) if path.suffix == ".toml" else page_texts(path)


def rewritten(path: Path, texts: list[Text]) -> str:
    """The file with every text's edits made in its raw characters, nothing else touched."""
    source = path.read_text(encoding="utf-8")
    raw_edits = []
    for text in texts:
        for edit in text.changes:
            if text.raw is None:
                raw_edits.append(Edit(text.offset + edit.at, edit.length, edit.new))
            else:
                # each decoded character where it is written: a line-ending backslash between two stays
                start = text.raw.raw_at[edit.at]
                end = text.raw.raw_to[edit.at + edit.length - 1] if edit.length else start
                raw_edits.append(Edit(start, end - start, edit.new))
    return applied(source, raw_edits)


# --- numbers and notebook outputs: what the tests read ---------------------------------------------------------

# An English number in French prose: a thousands comma (1,306; not "1, 2") or a decimal point before a unit or
# after 0 (22.4 s, 0.3; not an exercise id 2.1 or a version 3.11).
UNITS = r"(?:s|ms|min|h|g|kg|Mo|Ko|Go|MB|KB|GB|%|secondes?|minutes?|heures?|mots|cellules|tokens|jetons|€|\$)"
ENGLISH_NUMBER = re.compile(r"(?<![\w.,])\d{1,3}(?:,\d{3})+(?![\w,]|\.\d)|(?<![\w.])(?:0\.\d+|\d+\.\d+(?=\s?"
                            + UNITS + r"\b))(?![\w.])")


def english_numbers(text: str, printed: bool = False) -> list[str]:
    plain = masked(text, printed)
    return [text[max(0, m.start() - 25):m.end() + 25].replace("\n", " ") for m in ENGLISH_NUMBER.finditer(plain)
            if not ARITHMETIC.search(_sentence(plain, m.start()))]  # 0.1 + 0.2 ne fait pas 0.3: Python's numbers


ARITHMETIC = re.compile(r"\d\s?[-+*/]\s?\d")


def _sentence(text: str, at: int) -> str:
    start = max(text.rfind(". ", 0, at), text.rfind("\n", 0, at)) + 1
    end = min((i for i in (text.find(". ", at), text.find("\n", at)) if i >= 0), default=len(text))
    return text[start:end]


def output_texts(notebook: Path) -> list[tuple[str, str]]:
    """(where, text) for every stored output a learner reads: stream text, text/plain, text/html, text/markdown."""
    found = []
    for cell in json.loads(notebook.read_text(encoding="utf-8"))["cells"]:
        for number, output in enumerate(cell.get("outputs", [])):
            where = f"cell {cell.get('id')} output {number}"
            parts = [output.get("text", "")] if output.get("output_type") == "stream" else \
                [output.get("data", {}).get(kind, "") for kind in ("text/plain", "text/html", "text/markdown")]
            for part in parts:
                part = "".join(part) if isinstance(part, list) else part
                if part:
                    found.append((where, part))
    return found


def report(paths: list[Path]) -> tuple[dict[Path, int], list[str]]:
    counts, lines = {}, []
    for path in paths:
        for text in texts_of(path):
            for edit in text.changes:
                counts[path] = counts.get(path, 0) + 1
                lines.append(f"{path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}: {text.where}: "
                             f"{shown(text.value, edit)}")
    return counts, lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m authoring typography", description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="list what breaks the rules; change nothing")
    parser.add_argument("--quiet", action="store_true", help="with --check: only the counts per file")
    parser.add_argument("files", nargs="*", type=Path, help="these sources only (default: every French source)")
    args = parser.parse_args(argv)
    paths = [path.resolve() for path in args.files] or sources()
    counts, lines = report(paths)
    if args.check:
        if not args.quiet:
            print("\n".join(lines))
        for path, count in counts.items():
            print(f"{count:5}  {path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}")
        print(f"{sum(counts.values())} space(s) to fix in {len(counts)} file(s)"
              + (": run `python -m authoring typography`, then `make notebooks`" if counts else ""))
        return 1 if counts else 0
    for path in counts:
        path.write_text(rewritten(path, texts_of(path)), encoding="utf-8")
        print(f"typography: {counts[path]} space(s) in {path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}")
    if counts:
        print("typography: now `make notebooks` (python -m authoring notebooks) regenerates what they make")
    return 0


if __name__ == "__main__":
    sys.exit(main())
