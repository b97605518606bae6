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
(a word next to a space once its `{placeholders}` are set aside, `WORDS`); a string such as
"calculator" or "tool_use" is code, not words, and stays, unless it has an entry all the same (a
one-word label a learner reads). An entry whose `fr` equals its `en` keeps a text on purpose (a
protocol text code reads, such as the "Error: " a check looks for). An f-string is one text, on
Python 3.11 as on 3.12+ (where tokenize splits it).

`python -m authoring translations skeleton --lang fr` writes, for every cell still missing, an
entry with the English words in it and `todo = true`, for a translator to replace.
"""

from __future__ import annotations

import hashlib
import io
import re
import tokenize
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TRANSLATIONS = ROOT / "translations"
SOLUTIONS = ROOT / "solutions"
# Words a learner reads: a word of two letters or more next to a space (before it, or after it and one sign such
# as ":" or ">"), once `{placeholders}` are set aside. "What is 2 + 2?", ", answering {id}" and "(stopped: {why})"
# hold words; "calculator", "tool_use", "stop_reason:" and "{name}({args})" are code. A string that holds no words
# by this rule may still have an entry (a printed label, "better"), which the generator applies all the same.
WORDS = re.compile(r"[^\W\d_]{2,}\W?[^\S\n]|[^\S\n][^\W\d_]{2,}")
PLACEHOLDER = re.compile(r"\{[^{}]*\}")


def holds_words(string_token: str) -> bool:
    """Whether a string literal, as the cell writes it, holds words a learner reads (see WORDS)."""
    return bool(WORDS.search(PLACEHOLDER.sub("", string_token)))


def fingerprint(english: str) -> str:
    """Eight hex digits that change whenever the English text changes: a translation records the
    fingerprint of the text it translates, so a changed English text shows its translation stale."""
    return hashlib.sha256(english.encode("utf-8")).hexdigest()[:8]


def _python_of(source: str) -> str:
    """The cell's Python: IPython's `%magic` and `!shell` lines blanked (commands, not Python, holding no words),
    every other line kept in its place, so a token's (row, column) is its place in the cell."""
    return "\n".join("" if line.lstrip().startswith(("%", "!")) else line for line in source.split("\n"))


# The comments that mark an exercise's solution (authoring/learner_notebooks.py) are markers, not words.
MARKERS = ("### BEGIN SOLUTION", "### END SOLUTION")


@dataclass(frozen=True)
class Token:
    """A comment or a string literal of a cell, as the cell writes it, and where (tokenize's (row, column))."""

    string: str
    start: tuple[int, int]
    end: tuple[int, int]
    comment: bool


def _texts(source: str) -> list[Token]:
    """Every comment and string literal of a cell, each occurrence, in order (the solution markers left out).

    An f-string is one literal, whichever Python reads it: from Python 3.12 tokenize splits it into
    FSTRING_START, its parts and FSTRING_END, which are joined back here (nested ones included)."""
    lines = _python_of(source).split("\n")
    found, opened = [], []
    for token in tokenize.generate_tokens(io.StringIO("\n".join(lines) + "\n").readline):
        kind = tokenize.tok_name[token.type]
        if kind == "FSTRING_START":
            opened.append(token.start)
        elif kind == "FSTRING_END":
            start = opened.pop()
            if not opened:
                found.append(Token(_between(lines, start, token.end), start, token.end, False))
        elif opened:
            continue
        elif token.type == tokenize.COMMENT and not token.string.startswith(MARKERS):
            found.append(Token(token.string, token.start, token.end, True))
        elif token.type == tokenize.STRING:
            found.append(Token(token.string, token.start, token.end, False))
    return found


def _between(lines: list[str], start: tuple[int, int], end: tuple[int, int]) -> str:
    if start[0] == end[0]:
        return lines[start[0] - 1][start[1]:end[1]]
    return "\n".join([lines[start[0] - 1][start[1]:], *lines[start[0]:end[0] - 1], lines[end[0] - 1][:end[1]]])


def _word_tokens(source: str) -> list[Token]:
    """The texts of a cell a translation must give: every comment, and every string that holds words."""
    return [token for token in _texts(source) if token.comment or holds_words(token.string)]


def translatable_tokens(source: str) -> list[str]:
    """The comments and the word-holding strings of a code cell, in order, as the cell writes them (once each).

    IPython's `%magic` and `!shell` lines are left out: they are commands, not Python, and hold no words."""
    return list(dict.fromkeys(token.string for token in _word_tokens(source)))


def replaced_tokens(source: str, words: dict[str, str]) -> str:
    """The cell with each of its comments and word-holding strings replaced by `words[token]`, in place.

    Tokens are replaced where tokenize found them (row and column), never by searching the text, so a
    word that also appears in code (a name, another string) is never touched; everything between the
    tokens, code and magic lines alike, is kept byte for byte."""
    lines = source.split("\n")
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line) + 1)
    pieces, done = [], 0
    for token in _texts(source):  # a string the rule does not ask for is replaced too, when it has an entry
        begin = starts[token.start[0] - 1] + token.start[1]
        end = starts[token.end[0] - 1] + token.end[1]
        pieces += [source[done:begin], words.get(token.string, token.string)]
        done = end
    return "".join(pieces) + source[done:]


def toml_string(text: str) -> str:
    """`text` as a TOML string: a literal multi-line string when it can be one, else an escaped basic string."""
    if "'''" not in text and "\r" not in text and all(ch == "\n" or ch == "\t" or ord(ch) >= 32 for ch in text):
        return "'''\n" + text + "'''" if "\n" in text or "'" in text else "'" + text + "'"
    escaped = (text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\t", "\\t")
               .replace("\r", "\\r"))
    return '"' + escaped + '"'


def cell_entries(cell: dict) -> str:
    """The TOML a translator starts from for one English cell: its words, marked `todo`."""
    source = source_of(cell)
    if cell["cell_type"] == "markdown":
        return (f"[cells.{cell['id']}]\nof = \"{fingerprint(source)}\"\ntodo = true\n"
                f"text = {toml_string(source)}\n")
    entries = [f"[[cells.{cell['id']}.code]]\ntodo = true\nen = {toml_string(token)}\nfr = {toml_string(token)}\n"
               for token in translatable_tokens(source)]
    return "\n".join(entries)


def skeleton(stem: str, language: str, folder: Path = TRANSLATIONS, solutions: Path = SOLUTIONS) -> Path:
    """Append, to translations/<language>/<stem>.toml, an entry for every cell of the English solution
    it does not have yet (a new file when there is none); return its path."""
    import json
    import tomllib

    path = folder / language / f"{stem}.toml"
    notebook = json.loads((solutions / f"{stem}.ipynb").read_text(encoding="utf-8"))
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


# --- reading a translation, and what it lacks -------------------------------------------------------------

# A translation's length against its English, per markdown cell (len(translation) / len(English)). Below the
# band, a translation has probably dropped something; above it, added something. The Hugging Face course warns
# at ~0.6 (../shared/reference/classroom.md), a floor for any language pair. French runs longer than English
# (articles, "d'outil", "de la"): calibrated on notebook 1's first translation, its 11 cells ran 1.12-1.20
# (median 1.14), and the other five notebooks' drafts 1.06-1.31. So a French cell at 0.8 has lost about 30% of
# the English, which 0.6 would let through; and 1.5 leaves room for a short cell's variance (the highest seen,
# 1.31, is a 94-character cell) while catching a paragraph added. docs/TRANSLATING.md says the same.
DEPTH_BAND = (0.8, 1.5)
MIN_DEPTH_LENGTH = 80  # a heading or a one-line cell is too short for a ratio to mean anything


def source_of(cell: dict) -> str:
    return cell["source"] if isinstance(cell["source"], str) else "".join(cell["source"])


def english_notebook(stem: str, solutions: Path = SOLUTIONS) -> dict:
    import json

    return json.loads((solutions / f"{stem}.ipynb").read_text(encoding="utf-8"))


def read(stem: str, language: str, folder: Path = TRANSLATIONS) -> dict | None:
    """The `cells` table of translations/<language>/<stem>.toml, or None when the notebook has no translation."""
    import tomllib

    path = folder / language / f"{stem}.toml"
    if not path.exists():
        return None
    return tomllib.loads(path.read_text(encoding="utf-8")).get("cells", {})


def code_words(entries: list[dict]) -> dict[str, str]:
    """A code cell's entries as {English token: translated token}."""
    return {entry["en"]: entry.get("fr", entry["en"]) for entry in entries}


def untranslated(notebook: dict, cells: dict) -> list[str]:
    """What a translation still lacks, one line each, naming the cell and the token: a markdown cell or a
    code token (comment, word-holding string) of the English notebook without an entry, or with one still
    marked `todo`. [] when every text has its translation (a notebook is generated only then)."""
    found = []
    for cell in notebook["cells"]:
        entry = cells.get(cell["id"])
        if cell["cell_type"] == "markdown":
            if not isinstance(entry, dict) or "text" not in entry:
                found.append(f"cell {cell['id']} (markdown): no translation")
            elif entry.get("todo"):
                found.append(f"cell {cell['id']} (markdown): still todo")
        elif cell["cell_type"] == "code":
            by_token = {item.get("en"): item for item in (entry or {}).get("code", [])}
            for token in translatable_tokens(source_of(cell)):
                if token not in by_token:
                    found.append(f"cell {cell['id']} (code): no translation of {token}")
                elif by_token[token].get("todo") or "fr" not in by_token[token]:
                    found.append(f"cell {cell['id']} (code): still todo: {token}")
    return found


def unused(notebook: dict, cells: dict) -> list[str]:
    """Entries the English notebook no longer asks for, one line each: a cell it no longer has, a token its
    code cell no longer holds (the English string changed: its new words show as untranslated), a markdown
    text for a code cell. They change nothing in the generated notebook, but a translator should drop them."""
    english = {cell["id"]: cell for cell in notebook["cells"] if cell["cell_type"] in ("markdown", "code")}
    found = [f"cell {cell_id}: an entry for a cell the English notebook no longer has"
             for cell_id in cells if cell_id not in english]
    for cell_id, cell in english.items():
        entry = cells.get(cell_id)
        if cell["cell_type"] != "code" or not isinstance(entry, dict):
            continue
        tokens = {token.string for token in _texts(source_of(cell))}
        found += [f"cell {cell_id} (code): an entry for {item.get('en')}, which the English cell no longer holds"
                  for item in entry.get("code", []) if item.get("en") not in tokens
                  and not str(item.get("en")).startswith(MARKERS)]  # skeletons made before markers were left out
        if "text" in entry:
            found.append(f"cell {cell_id}: a markdown text for a code cell")
    return found


def gaps(notebook: dict, cells: dict) -> list[str]:
    """Everything a translation lacks or holds in excess (untranslated, then unused); [] when it is complete."""
    return untranslated(notebook, cells) + unused(notebook, cells)


def stale(notebook: dict, cells: dict) -> list[tuple[str, str]]:
    """The markdown cells whose translation was made from another English text than today's (its `of` is
    not the fingerprint of the English source): (cell id, today's English)."""
    found = []
    for cell in notebook["cells"]:
        entry = cells.get(cell["id"])
        if cell["cell_type"] == "markdown" and isinstance(entry, dict) and "text" in entry:
            if entry.get("of") != fingerprint(source_of(cell)):
                found.append((cell["id"], source_of(cell)))
    return found


def depths(notebook: dict, cells: dict) -> dict[str, float]:
    """len(translation) / len(English) for each translated markdown cell long enough to judge (see DEPTH_BAND)."""
    ratios = {}
    for cell in notebook["cells"]:
        entry = cells.get(cell["id"])
        english = source_of(cell)
        if (cell["cell_type"] == "markdown" and isinstance(entry, dict) and "text" in entry and not entry.get("todo")
                and len(english) >= MIN_DEPTH_LENGTH):
            ratios[cell["id"]] = len(entry["text"]) / len(english)
    return ratios


def out_of_band(ratios: dict[str, float], band: tuple[float, float] = DEPTH_BAND) -> dict[str, float]:
    return {cell_id: ratio for cell_id, ratio in ratios.items() if not band[0] <= ratio <= band[1]}


def status(stem: str, language: str, folder: Path = TRANSLATIONS, solutions: Path = SOLUTIONS) -> list[str]:
    """A translator's report on one notebook: missing and todo entries, stale texts, depths out of the band."""
    cells = read(stem, language, folder)
    if cells is None:
        return [f"{stem}: no translation (translations/{language}/{stem}.toml): "
                f"`python -m authoring translations skeleton --lang {language} {stem}` starts one"]
    notebook = english_notebook(stem, solutions)
    lines = [f"{stem}: {gap}" for gap in gaps(notebook, cells)]
    lines += [f"{stem}: cell {cell_id} (markdown): stale: the English changed since it was translated "
              f"(`of` should be {fingerprint(english)} once re-checked)" for cell_id, english in stale(notebook, cells)]
    lines += [f"{stem}: cell {cell_id} (markdown): depth {ratio:.2f} (len({language}) / len(en)), outside "
              f"{DEPTH_BAND[0]}-{DEPTH_BAND[1]}" for cell_id, ratio in out_of_band(depths(notebook, cells)).items()]
    return lines


def main(argv: list[str] | None = None) -> int:
    """`python -m authoring translations skeleton|status --lang fr [stems]`."""
    import argparse

    from looplab.course import COURSE
    from looplab.language import LANGUAGES, SOURCE

    parser = argparse.ArgumentParser(prog="python -m authoring translations",
                                     description="A translator's tools for the notebooks' words (docs/TRANSLATING.md).")
    parser.add_argument("action", choices=("skeleton", "status"),
                        help="skeleton: add a todo entry for every cell missing; status: what is left to do")
    parser.add_argument("--lang", required=True, choices=[lang for lang in LANGUAGES if lang != SOURCE])
    parser.add_argument("names", nargs="*", help=f"notebooks (default: all): {', '.join(COURSE.stems)}")
    args = parser.parse_intermixed_args(argv)
    unknown = set(args.names) - set(COURSE.stems)
    if unknown:
        parser.error(f"no notebook named {', '.join(sorted(unknown))}; they are: {', '.join(COURSE.stems)}")
    stems = [stem for stem in COURSE.stems if not args.names or stem in args.names]
    if args.action == "skeleton":
        for stem in stems:
            print(f"wrote {skeleton(stem, args.lang).relative_to(ROOT)}")
        return 0
    lines = [line for stem in stems for line in status(stem, args.lang)]
    for stem in stems:
        cells = read(stem, args.lang)
        ratios = depths(english_notebook(stem), cells or {})
        if ratios:
            print(f"{stem}: depth per markdown cell: " + ", ".join(f"{k} {v:.2f}" for k, v in ratios.items()))
    print("\n".join(lines) if lines else f"every notebook named is translated into {args.lang}, none stale")
    return 1 if lines else 0
