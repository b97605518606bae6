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

from authoring.typography import CODE, PROTOCOL, masked

ROOT = Path(__file__).resolve().parent.parent
GLOSSARY = ROOT / "docs" / "glossaire.md"
LANGUAGE = "fr"
ROW = re.compile(r"^\|\s*([^|]+?)\s*\|\s*([^|]+?)\s*\|")
# What is code (fenced code, code spans, link targets, URLs, {placeholders}, a cited work's English title, program
# texts quoted, calls written bare) and the protocol texts code reads: one definition, shared with the French
# typography fixer (authoring/typography.py), which sets the same things aside: CODE, PROTOCOL (imported above).
ONE_WORD = "## Un seul mot"  # the glossary's second table: one form for each concept (its rows are not terms)


def glossary() -> dict[str, str]:
    """English term -> French, for the terms whose French is another word (the table's rows)."""
    terms = {}
    for line in GLOSSARY.read_text(encoding="utf-8").partition(ONE_WORD)[0].splitlines():
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


# --- one term for each concept ----------------------------------------------------------------------------------
# The glossary's "One word each" table: for a concept French could say two ways, the form the course uses, and the
# forms a test flags in French prose (code set aside as the typography fixer sets it aside: `max_tokens`, `--live`
# and LOOPLAB_MODE=live stay as they are).
OTHER_FORMS = {
    "bogue": re.compile(r"\bbugs?\b", re.IGNORECASE),
    "jetons": re.compile(r"\btokens?\b", re.IGNORECASE),
    "en direct": re.compile(r"(?<![-=\w])live\b", re.IGNORECASE),
    # an environment variable is feminine (la variable, la clé): ANTHROPIC_API_KEY définie; and never « défini(e) »
    "définie": re.compile(r"défini\(e\)|\b[A-Z][A-Z0-9]*_[A-Z0-9_]+`?\s+(?:est\s+|n'est\s+pas\s+|soit\s+)?défini\b"),
}


def other_forms_in(text: str) -> list[str]:
    plain = masked(text)
    found = [chosen for chosen, pattern in OTHER_FORMS.items() if chosen != "définie" and pattern.search(plain)]
    if OTHER_FORMS["définie"].search(text):  # the variable is code: looked for in the text itself
        found.append("définie")
    return found


def test_other_forms_are_found_in_prose_only():
    assert other_forms_in("Un bug, 8 tokens, en mode live.") == ["bogue", "jetons", "en direct"]
    assert other_forms_in("`max_tokens`, `--live`, LOOPLAB_MODE=live, un bogue, 8 jetons, en direct") == []
    assert other_forms_in("avec `ANTHROPIC_API_KEY` défini, ou défini(e)") == ["définie"]
    assert other_forms_in("avec ANTHROPIC_API_KEY définie ; si vous avez défini une clé ; _ n'est pas défini") == []


def test_the_glossary_names_each_chosen_form():
    text = GLOSSARY.read_text(encoding="utf-8")
    assert all(f"| {chosen} |" in text for chosen in OTHER_FORMS), "each chosen form has its row in docs/glossaire.md"


@pytest.mark.parametrize("where", sorted({place for place, _, _ in french_texts()}) or ["(no French text yet)"])
def test_french_texts_say_one_term_for_each_concept(where):
    found = [f"{place}: {key}: {', '.join(found)} (not {OTHER_FORMS[found[0]].pattern!r})"
             for place, key, text in french_texts() if place == where
             for found in [other_forms_in(text)] if found]
    assert not found, ("one term for each concept (docs/glossaire.md, « Un seul mot »), in French texts:\n"
                       + "\n".join(found))
