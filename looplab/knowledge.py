"""Notebook 7's course version: tools that know things the model was never trained on.

The company below is made up, so a right answer about it can only come from a tool. Two tools search
the same small corpus, each chunk one sentence:

- `search` matches exact words: a chunk is found when it shares a word with the query, and a query whose
  words are all elsewhere finds nothing, and says so. It is deliberately plain. What makes it work is the
  loop: the model reads "No documents matched", and asks again with other words.
- `retrieve` matches meaning: the query and every chunk become vectors, and the chunks whose vectors
  point the same way as the query's (cosine similarity) come back, the nearest first, down to a
  threshold below which it answers that nothing is relevant. "Time off" finds "paid vacation" though they
  share no word.

Each wins somewhere. Exact words win on names, codes and numbers, which carry no meaning a vector could
catch ("Utrecht", an error code); meaning wins when the question and the document say the same thing in
other words.

The one faked piece: a real system gets its vectors from an embedding model, a neural network that maps
any text to a few hundred numbers. Nothing here downloads anything, so `embed` is a hand-built stand-in:
eight concepts, a small lexicon saying which concepts each word touches, and a text's vector is how often
its words touch each concept. It is legible (every number can be traced to a word), and everything
around it, the store, the similarity, the threshold, the tool, is what a real system does.

Why numpy: a vector is an array, and the dot product and norms of cosine similarity are one call each
(`numpy.dot`, `numpy.linalg.norm`); with a real embedding model and thousands of chunks, the same code
holds.
"""

from __future__ import annotations

import re
from typing import Callable

import numpy as np

__all__ = ["CORPUS", "CHECKED_CORPUS", "CHECKED_STORE", "CONCEPTS", "LEXICON", "NO_MATCH", "NOTHING_RELEVANT", "TOP_K", "MIN_SCORE", "words_of",
           "search", "embed", "cosine_similarity", "nearest", "VectorStore", "STORE", "retrieve", "TOOL_REGISTRY", "TOOLS"]

# A company that does not exist: what the model knows of it comes from these chunks, through a tool.
CORPUS = [
    "Halden Robotics was founded in 2019 by Dara Okonkwo, a former bridge engineer.",
    "Its first product, Pathfinder, is a warehouse robot that maps shelves at night.",
    "Permanent staff receive 25 days of paid vacation each year, plus two wellbeing days.",
    "The office cat, Tinker, sleeps on the server rack and has her own badge.",
    "In 2023 the headquarters moved from Ghent to Utrecht, next to the central station.",
    "Every Friday afternoon the engineering team demos one unfinished idea to the company.",
    "Support answers tickets within four working hours, seven days a week.",
]

# What the tools say when they find nothing. Tool results stay in English in every edition of the course:
# the model reads them, and so do the series' stage tests ("No documents matched", "No relevant documents").
NO_MATCH = "No documents matched. Try other or broader words."
NOTHING_RELEVANT = "No relevant documents found."

WORD = re.compile(r"[a-z0-9]+")


def words_of(text: str) -> list[str]:
    """The words of a text as search compares them: lower case, letters and digits ("Ghent," -> "ghent")."""
    return WORD.findall(text.lower())


def search(query: str) -> str:
    """Every chunk that shares at least one exact word with the query, one per line ("- chunk"), in the corpus'
    order; NO_MATCH when none does, so that the model knows to try other words."""
    wanted = set(words_of(query))
    found = [chunk for chunk in CORPUS if wanted & set(words_of(chunk))]
    return "\n".join(f"- {chunk}" for chunk in found) if found else NO_MATCH


# --- embeddings: the hand-built stand-in for an embedding model ---------------------------------------------

CONCEPTS = ("founding", "people", "product", "leave", "place", "animal", "year", "schedule")
# Which concepts a word touches. A word not listed touches none: names ("Okonkwo", "Utrecht") and "revenue" have
# no meaning here, which is where exact words win.
LEXICON = {
    "founded": ["founding"], "founder": ["founding", "people"], "started": ["founding"], "began": ["founding"],
    "established": ["founding"], "origin": ["founding"], "created": ["founding"],
    "who": ["people"], "staff": ["people"], "employees": ["people"], "team": ["people"], "people": ["people"],
    "engineer": ["people"], "engineers": ["people"], "ceo": ["people"],
    "product": ["product"], "products": ["product"], "robot": ["product"], "robots": ["product"],
    "pathfinder": ["product"], "warehouse": ["product"], "shelves": ["product"], "build": ["product"],
    "make": ["product"], "makes": ["product"], "sell": ["product"],
    "vacation": ["leave"], "holiday": ["leave"], "holidays": ["leave"], "leave": ["leave"], "time": ["leave"],
    "off": ["leave"], "days": ["leave"], "paid": ["leave"], "wellbeing": ["leave"], "break": ["leave"],
    "rest": ["leave"],
    "headquarters": ["place"], "hq": ["place"], "office": ["place"], "where": ["place"],
    "moved": ["place"], "located": ["place"], "station": ["place"], "city": ["place"],
    "cat": ["animal"], "tinker": ["animal"], "pet": ["animal"], "pets": ["animal"], "mascot": ["animal"],
    "dog": ["animal"],
    "year": ["year"], "years": ["year"], "when": ["year"], "2019": ["year", "founding"], "2023": ["year", "place"],
    "friday": ["schedule"], "afternoon": ["schedule"], "hours": ["schedule"], "week": ["schedule"],
    "weekly": ["schedule"], "demos": ["schedule"], "tickets": ["schedule"],
}


def embed(text: str) -> np.ndarray:
    """The text's vector: for each concept, how many of its words touch it (zeros when no word is known)."""
    vector = np.zeros(len(CONCEPTS))
    for word in words_of(text):
        for concept in LEXICON.get(word, []):
            vector[CONCEPTS.index(concept)] += 1.0
    return vector


def cosine_similarity(a: np.ndarray, b: np.ndarray) -> float:
    """How alike two vectors point, from 1.0 (the same direction, whatever their lengths) to 0.0 (nothing in
    common); 0.0 when either is all zeros, which points nowhere (and would divide by zero)."""
    norms = float(np.linalg.norm(a) * np.linalg.norm(b))
    return float(np.dot(a, b)) / norms if norms else 0.0


TOP_K = 2  # how many chunks retrieve hands the model at most
MIN_SCORE = 0.5  # below this similarity, a chunk is not about the question


def nearest(query_vector: np.ndarray, vectors: list[np.ndarray], top_k: int = TOP_K,
            min_score: float = MIN_SCORE) -> list[tuple[float, int]]:
    """(score, position) of the `top_k` vectors nearest `query_vector`, the nearest first, none below `min_score`:
    the ranking a vector store does on every query."""
    scored = [(cosine_similarity(query_vector, vector), position) for position, vector in enumerate(vectors)]
    scored.sort(key=lambda hit: hit[0], reverse=True)
    return [(score, position) for score, position in scored[:top_k] if score >= min_score]


class VectorStore:
    """Chunks and their vectors, made once (indexing); a query is embedded once and ranked against them (nearest).

    `embed` is handed in, as the client is handed to the loop: a test gives a fake one, a real system a call
    to an embedding model."""

    def __init__(self, chunks: list[str], embed: Callable[[str], np.ndarray]):
        self.chunks = list(chunks)
        self.embed = embed
        self.vectors = [embed(chunk) for chunk in self.chunks]

    def search(self, query: str, top_k: int = TOP_K, min_score: float = MIN_SCORE) -> list[tuple[float, str]]:
        """(score, chunk) of the `top_k` chunks nearest the query, the nearest first, none below `min_score`."""
        hits = nearest(self.embed(query), self.vectors, top_k, min_score)
        return [(score, self.chunks[position]) for score, position in hits]


STORE = VectorStore(CORPUS, embed)


def retrieve(query: str) -> str:
    """The chunks nearest the query's meaning, one per line ("- chunk"); NOTHING_RELEVANT when none is near
    enough."""
    hits = STORE.search(query)
    return "\n".join(f"- {chunk}" for _, chunk in hits) if hits else NOTHING_RELEVANT


def _query_schema(description: str, query: str) -> dict:
    return {"description": description,
            "input_schema": {"type": "object", "properties": {"query": {"type": "string", "description": query}},
                             "required": ["query"]}}


TOOL_REGISTRY = {
    "search": {"function": search, "schema": _query_schema(
        "Find the chunks of the Halden Robotics knowledge base that contain at least one of the query's exact "
        "words. If nothing matches, try again with other or broader words.",
        "one or more words that may appear in the documents")},
    "retrieve": {"function": retrieve, "schema": _query_schema(
        "Find the chunks of the Halden Robotics knowledge base closest in meaning to the query, even when they "
        "use other words.", "the question, or what it is about, in plain words")},
}
TOOLS = [{"name": name, **entry["schema"]} for name, entry in TOOL_REGISTRY.items()]


# --- what the checks play: a corpus of their own ------------------------------------------------------------
# Every call into a learner's code gets inputs of its own (never the notebook's corpus, whose answers a cell could
# hold): while 7.1 and 7.5 are checked CORPUS is this one, and while 7.4 and 7.5 are, STORE is the course's
# VectorStore over it. Its chunks catch the usual slips: a word inside another ("cat" in "catalogue"), a capital,
# punctuation against a word ("Lisbon,"), several chunks sharing a word, a chunk no question is about.
CHECKED_CORPUS = [
    "The catalogue lists every spare part with its price.",
    "Orders shipped from Lisbon, Porto or Faro arrive within three days.",
    "The support team answers by email on weekdays and by phone on Friday.",
    "Returns are free during the first thirty days after delivery.",
    "Every new employee gets paid leave of twenty days a year.",
]
# Its store's vectors are the checks' own, so that every score is exact and known: five directions (goods, delivery,
# contact, leave, anything else), a vector for each chunk and for each query the checks ask, zeros for any other text.
_CHECKED_VECTORS = {
    CHECKED_CORPUS[0]: [1.0, 0.0, 0.0, 0.0, 0.0],
    CHECKED_CORPUS[1]: [0.0, 1.0, 0.0, 0.0, 0.0],
    CHECKED_CORPUS[2]: [0.0, 0.0, 1.0, 0.0, 0.0],
    CHECKED_CORPUS[3]: [3.0, 4.0, 0.0, 0.0, 0.0],
    CHECKED_CORPUS[4]: [0.0, 0.0, 0.0, 1.0, 0.0],
    "Can I return a parcel?": [4.0, 3.0, 0.0, 0.0, 0.0],  # returns 0.96, catalogue 0.8: the nearer is the later
    "time off": [0.0, 0.0, 0.0, 2.0, 0.0],  # leave 1.0, nothing else
    "holidays": [0.0, 0.0, 0.0, 1.0, 0.0],  # leave 1.0 by meaning, though no chunk has the word
    "Is the parking free?": [1.0, 1.0, 1.0, 1.0, 2.0],  # returns 0.495 at best: below MIN_SCORE
}


def _checked_embed(text: str) -> np.ndarray:
    """The checks' stand-in for embed: a text's vector from the table above, zeros for any other text."""
    return np.array(_CHECKED_VECTORS.get(text, [0.0] * 5))


CHECKED_STORE = VectorStore(CHECKED_CORPUS, _checked_embed)

