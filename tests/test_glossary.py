"""Every French text follows the glossary (docs/glossaire.md): no English term the glossary translates.

The French texts are the notebooks' markdown and the manifest's words (translations/fr/*.toml), the catalogues' French rows (every
`[key.fr]` and `[hints.fr]` under a texts/ folder) and the French pages (README.fr.md, docs/*.fr.md).
Code is not prose: `code spans`, fenced code, `{placeholders}`, "double-quoted" texts (a program's own words,
quoted), link targets, the English title of a cited work (an italic link label, `[*A Toolbox, Not a Tool*](...)`),
code written bare (`reply.content`, `get(key)`, `{'type': 'tool'}`, a path) and the protocol texts code
reads ("Error: ", "User> ", "Agent> ", "[tool]", "[tool-error]") are set aside before looking, so
`tool_use` stays `tool_use`. A term is found as a whole word, in any case.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
GLOSSARY = ROOT / "docs" / "glossaire.md"
LANGUAGE = "fr"
ROW = re.compile(r"^\|\s*([^|]+?)\s*\|\s*([^|]+?)\s*\|")
# Set aside: fenced code, code spans, link targets, URLs, {placeholders}, and a cited work's English title (an
# italic link label: [*A Toolbox, Not a Tool*](...)).
# A catalogue row writes short code bare: "double-quoted" and 'single-quoted' program texts (a quote that opens
# after a letter is an apostrophe: l'outil), calls (`getattr(block, key, None)`: French puts a space before a
# parenthesis) and dicts are set aside too.
CODE = re.compile(r"```.*?```|~~~.*?~~~|`[^`\n]*`|\[\*[^\]\n]*\*\]|\]\([^)]*\)|https?://\S+|\{[^{}\s]*\}"
                  r"|\"[^\"\n]*\"|(?<!\w)'[^'\n]*'(?!\w)|\b\w+\([^()\n]*\)", re.DOTALL)
PROTOCOL = re.compile(r"Error: |User> |Agent> |\[tool\]|\[tool-error\]")


def glossary() -> dict[str, str]:
    """English term -> French, for the terms whose French is another word (the table's rows)."""
    terms = {}
    for line in GLOSSARY.read_text(encoding="utf-8").splitlines():
        row = ROW.match(line)
        if row and row.group(1) not in ("English", "---") and not set(row.group(1)) <= set("-: "):
            english, french = row.group(1), row.group(2)
            if english.lower() != french.lower():
                terms[english] = french
    return terms


# A whole word, and not a piece of code written bare: not after `.`, `/`, `(`, `=` or a quote (reply.content,
# get(key), docs/WORKSHOP.md, LOOPLAB_MODE=offline, 'tool'), not before `(`, `.name`, `/` or a quote
# (reply.stop_reason, hint(...)).
TERMS = {english: re.compile(r"(?<![\w./('\"=])" + r"\s+".join(map(re.escape, english.split()))
                             + r"(?![\w('\"/]|\.\w)", re.IGNORECASE)
         for english in glossary()}


def prose(text: str) -> str:
    """The text with code, placeholders, link targets and protocol texts set aside (code as `_`, so that
    `registry.items()` leaves `registry._`: still code)."""
    return PROTOCOL.sub(" ", CODE.sub("_", text))


def english_terms_in(text: str) -> list[str]:
    words = prose(text)
    return [english for english, pattern in TERMS.items() if pattern.search(words)]


def french_texts() -> list[tuple[str, str, str]]:
    """(file, where in it, text) for every French text of the course."""
    texts = []
    for path in sorted((ROOT / "translations" / LANGUAGE).glob("*.toml")):
        table = tomllib.loads(path.read_text(encoding="utf-8"))
        for cell_id, entry in table.pop("cells", {}).items():
            if isinstance(entry, dict) and isinstance(entry.get("text"), str) and not entry.get("todo"):
                texts.append((str(path.relative_to(ROOT)), f"cell {cell_id}", entry["text"]))
        texts += [(str(path.relative_to(ROOT)), key, text) for key, text in french_rows(table, french=True)]
    for path in sorted([*ROOT.glob("looplab/**/texts/*.toml"), *ROOT.glob("authoring/**/texts/*.toml")]):
        texts += [(str(path.relative_to(ROOT)), key, text)
                  for key, text in french_rows(tomllib.loads(path.read_text(encoding="utf-8")))]
    for path in sorted([*ROOT.glob("*.fr.md"), *ROOT.glob("docs/*.fr.md")]):
        texts.append((str(path.relative_to(ROOT)), "page", path.read_text(encoding="utf-8")))
    return texts


def french_rows(table: dict, key: str = "", french: bool = False) -> list[tuple[str, str]]:
    """Every string under a `fr` table of a catalogue (but its `of` fingerprints), with its dotted key."""
    rows = []
    for name, value in table.items():
        here = f"{key}.{name}" if key else name
        inside = french or name == LANGUAGE
        if isinstance(value, dict):
            rows += french_rows(value, here, inside) if name != "of" else []
        elif inside and name != "of":
            values = value if isinstance(value, list) else [value]
            rows += [(here, item) for item in values if isinstance(item, str)]
    return rows


def test_the_glossary_is_a_table_of_terms():
    terms = glossary()
    assert terms["tool call"] == "appel d'outil" and terms["closing the loop"] == "fermer la boucle"
    assert "notebook" not in terms, "a term that stays the same in French is never flagged"


def test_english_terms_are_found_in_prose_only():
    assert english_terms_in("Le model renvoie un tool call.") == ["tool call", "tool"]
    assert english_terms_in("Le bloc `tool_use` et la `stop_reason` ; ```\ntool = 1\n```") == []
    assert english_terms_in("Le résultat commence par Error: puis [tool-error] et {tool}.") == []
    assert english_terms_in("Voir le [guide](docs/workshop.md), une Boîte à outils.") == []
    assert english_terms_in("L'étape [*A Toolbox, Not a Tool*](https://example.org/007) de la série.") == []
    assert english_terms_in("Un HINT, puis un Check.") == ["check", "hint"]
    assert english_terms_in("Lisez reply.stop_reason, item.get(key), {'type': 'tool'}, docs/WORKSHOP.md, "
                            "looplab.hint(\"1.1\") et f\"(stopped: the model repeated)\".") == []
    assert english_terms_in("getattr(block, key, None) et 'Error: unknown tool ...', l'outil d'un tool") == ["tool"]
    assert english_terms_in("parcourez registry.items() puis reply.model_dump()") == []


def test_french_rows_of_a_catalogue_are_read_but_not_their_fingerprints():
    table = {"a": {"text": "tool", "fr": {"of": "12345678", "text": "un tool"}},
             "hints": {"1.1": ["a hint"], "fr": {"1.1": ["un hint"], "of": {"1.1": "abcdef12"}}}}
    assert french_rows(table) == [("a.fr.text", "un tool"), ("hints.fr.1.1", "un hint")]


@pytest.mark.parametrize("where", sorted({place for place, _, _ in french_texts()}) or ["(no French text yet)"])
def test_french_texts_follow_the_glossary(where):
    found = [f"{place}: {key}: {', '.join(repr(term) + ' -> ' + repr(glossary()[term]) for term in terms)}"
             for place, key, text in french_texts() if place == where
             for terms in [english_terms_in(text)] if terms]
    assert not found, ("English terms the glossary (docs/glossaire.md) translates, in French texts:\n"
                       + "\n".join(found))
