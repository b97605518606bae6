"""A notebook's translation: the words of each cell in another language, keyed by cell id.

A French notebook is never a copy. It is made from the English solution notebook (the one source
of its code) and `translations/<lang>/<stem>.toml`, which holds only words:

    [cells.3fecfe65]              # a markdown cell, by its id
    of = "9c1d0e2a"               # fingerprint of the English text it translates (see `fingerprint`)
    text = '''# 2 · Fermer la boucle ...'''

    [[cells.d4df2fc7.code]]       # a code cell: one entry per comment or string the learner reads
    en = '"What is 3917 × 8263?"'  # the token exactly as the English cell writes it (quotes included)
    fr = '"Combien font 3917 × 8263 ?"'

A code cell's entries replace tokens, never lines, so the French cell is the English program with
other words in its comments and strings: a change to the English code reaches the French notebook
by regenerating. Which tokens need an entry: every comment, and every string literal holding words
(two words with a space between them, `WORDS`); a string such as "calculator" or "tool_use" is
code, not words, and stays. An entry whose `fr` equals its `en` keeps a text on purpose (a protocol
text code reads, such as the "Error: " a check looks for).

`python -m authoring translations skeleton --lang fr` writes, for every cell still missing, an
entry with the English words in it and `todo = true`, for a translator to replace.
"""

from __future__ import annotations

import hashlib
import io
import re
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TRANSLATIONS = ROOT / "translations"
WORDS = re.compile(r"[^\W\d_]{2,}[^\S\n]+[^\W\d_]{2,}")  # two words with a space between: a sentence's start


def fingerprint(english: str) -> str:
    """Eight hex digits that change whenever the English text changes: a translation records the
    fingerprint of the text it translates, so a changed English text shows its translation stale."""
    return hashlib.sha256(english.encode("utf-8")).hexdigest()[:8]


def translatable_tokens(source: str) -> list[str]:
    """The comments and the word-holding strings of a code cell, in order, as the cell writes them.

    IPython's `%magic` and `!shell` lines are left out: they are commands, not Python, and hold no words."""
    python = "\n".join("" if line.lstrip().startswith(("%", "!")) else line for line in source.splitlines())
    found = []
    for token in tokenize.generate_tokens(io.StringIO(python + "\n").readline):
        if token.type == tokenize.COMMENT or (token.type == tokenize.STRING and WORDS.search(token.string)):
            if token.string not in found:
                found.append(token.string)
    return found


def toml_string(text: str) -> str:
    """`text` as a TOML string: a literal multi-line string when it can be one, else an escaped basic string."""
    if "'''" not in text and "\r" not in text and all(ch == "\n" or ch == "\t" or ord(ch) >= 32 for ch in text):
        return "'''\n" + text + "'''" if "\n" in text or "'" in text else "'" + text + "'"
    escaped = (text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\t", "\\t")
               .replace("\r", "\\r"))
    return '"' + escaped + '"'


def cell_entries(cell: dict) -> str:
    """The TOML a translator starts from for one English cell: its words, marked `todo`."""
    source = cell["source"] if isinstance(cell["source"], str) else "".join(cell["source"])
    if cell["cell_type"] == "markdown":
        return (f"[cells.{cell['id']}]\nof = \"{fingerprint(source)}\"\ntodo = true\n"
                f"text = {toml_string(source)}\n")
    entries = [f"[[cells.{cell['id']}.code]]\ntodo = true\nen = {toml_string(token)}\nfr = {toml_string(token)}\n"
               for token in translatable_tokens(source)]
    return "\n".join(entries)


def skeleton(stem: str, language: str) -> Path:
    """Append, to translations/<language>/<stem>.toml, an entry for every cell of the English solution
    it does not have yet (a new file when there is none); return its path."""
    import json
    import tomllib

    path = TRANSLATIONS / language / f"{stem}.toml"
    notebook = json.loads((ROOT / "solutions" / f"{stem}.ipynb").read_text(encoding="utf-8"))
    have = tomllib.loads(path.read_text(encoding="utf-8")).get("cells", {}) if path.exists() else {}
    parts = [cell_entries(cell) for cell in notebook["cells"]
             if cell["cell_type"] in ("markdown", "code") and cell["id"] not in have]
    parts = [part for part in parts if part]
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        parts.insert(0, f"# The {language} words of solutions/{stem}.ipynb; see authoring/notebook_translations.py.\n")
    if parts:
        with path.open("a", encoding="utf-8") as out:
            out.write("\n".join(parts))
    return path
