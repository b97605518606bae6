"""The checks of notebook 7 (knowledge tools): they pass on good code written several ways and fail, saying why, on
typical mistakes. Each answer here reads CORPUS and STORE by name, as a notebook's cell does: while it is checked, the
check puts its own corpus and store under those names (looplab/knowledge.py: CHECKED_CORPUS, CHECKED_STORE)."""

import math
import re

import numpy as np
import pytest

from looplab import knowledge
from looplab.course import COURSE
from looplab.knowledge import (  # noqa: F401 (CORPUS, STORE, embed: the names the answers below read, swapped by the checks)
    CORPUS, MIN_SCORE, NO_MATCH, NOTHING_RELEVANT, STORE, TOOL_REGISTRY, TOP_K, VectorStore, cosine_similarity, embed,
)
from tests.check_helpers import changed, fails, passes, stub, twin


def test_the_exercises_and_their_points():
    assert [(e.id, e.points) for e in COURSE.notebook("07_knowledge_tools").exercises] == [
        ("7.1", 2), ("7.2", 1), ("7.3", 2), ("7.4", 1), ("7.5", 2)]
    for number in COURSE.notebook("07_knowledge_tools").ids:
        assert 2 <= len(COURSE.hints(number)) <= 3


# --- 7.1 search --------------------------------------------------------------------------------------------------


def search_with_a_set_comprehension(query):
    wanted = {word for word in re.findall(r"[a-z0-9]+", query.lower())}
    lines = [f"- {chunk}" for chunk in CORPUS if wanted & {w for w in re.findall(r"[a-z0-9]+", chunk.lower())}]
    return "\n".join(lines) if lines else "No documents matched your query. Perhaps rephrase it with other words?"


def search_with_a_loop(query):
    words = set(re.split(r"[^a-z0-9]+", query.lower())) - {""}
    out = ""
    for chunk in CORPUS:
        if any(word in words for word in re.split(r"[^a-z0-9]+", chunk.lower())):
            out += ("\n" if out else "") + "- " + chunk
    return out or "No documents matched."


def search_substring(query):
    found = [chunk for chunk in CORPUS if query.lower() in chunk.lower()]
    return "\n".join(f"- {chunk}" for chunk in found) if found else NO_MATCH


def search_case_sensitive(query):
    wanted = set(re.findall(r"[A-Za-z0-9]+", query))
    found = [chunk for chunk in CORPUS if wanted & set(re.findall(r"[A-Za-z0-9]+", chunk))]
    return "\n".join(f"- {chunk}" for chunk in found) if found else NO_MATCH


def search_first_only(query):
    wanted = set(knowledge.words_of(query))
    for chunk in CORPUS:
        if wanted & set(knowledge.words_of(chunk)):
            return f"- {chunk}"
    return NO_MATCH


def search_empty_on_miss(query):
    wanted = set(knowledge.words_of(query))
    return "\n".join(f"- {chunk}" for chunk in CORPUS if wanted & set(knowledge.words_of(chunk)))


def search_none_on_miss(query):
    wanted = set(knowledge.words_of(query))
    found = [chunk for chunk in CORPUS if wanted & set(knowledge.words_of(chunk))]
    return "\n".join(f"- {chunk}" for chunk in found) if found else None


def search_a_list(query):
    wanted = set(knowledge.words_of(query))
    return [chunk for chunk in CORPUS if wanted & set(knowledge.words_of(chunk))] or [NO_MATCH]


def search_the_notebooks_corpus(query):
    wanted = set(knowledge.words_of(query))
    found = [chunk for chunk in knowledge.CORPUS if wanted & set(knowledge.words_of(chunk))]
    return "\n".join(f"- {chunk}" for chunk in found) if found else NO_MATCH


def test_search_passes_on_the_reference_and_unusual_answers():
    passes("7.1", twin(knowledge.search))
    passes("7.1", search_with_a_set_comprehension)
    passes("7.1", search_with_a_loop)


def test_search_stub_is_not_written_yet():
    fails("7.1", stub, "not written yet")


@pytest.mark.parametrize("wrong, words", [
    (search_substring, ("search('days') found", "weekdays", "no whole word of the query")),
    (search_case_sensitive, ("search('LISBON') found nothing", "lower case")),
    (search_first_only, ("search('days') left out", "not the first one only")),
    (search_empty_on_miss, ("search('cat') returned ''", "must start with 'No documents matched'")),
    (search_none_on_miss, ("search('cat') returned a NoneType", "not a str")),
    (search_a_list, ("returned a list", "not a str")),
    (search_the_notebooks_corpus, ("search('LISBON') found nothing",)),
])
def test_search_fails_on_typical_mistakes(wrong, words):
    fails("7.1", wrong, *words)


# --- 7.2 cosine_similarity ---------------------------------------------------------------------------------------


def cosine_with_math(a, b):
    dot = sum(x * y for x, y in zip(a.tolist(), b.tolist()))
    norm_a = math.sqrt(sum(x * x for x in a.tolist()))
    norm_b = math.sqrt(sum(y * y for y in b.tolist()))
    if norm_a == 0 or norm_b == 0:
        return 0.0
    return dot / (norm_a * norm_b)


def cosine_with_unit_vectors(a, b):
    if not a.any() or not b.any():
        return 0.0
    return float(np.dot(a / np.linalg.norm(a), b / np.linalg.norm(b)))


def cosine_dot_alone(a, b):
    return float(np.dot(a, b))


def cosine_no_zero_guard(a, b):
    return np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b))


def cosine_python_division_no_guard(a, b):
    return float(np.dot(a, b)) / float(np.linalg.norm(a) * np.linalg.norm(b))


def cosine_squared_norms(a, b):
    norms = float(np.dot(a, a) * np.dot(b, b))
    return float(np.dot(a, b)) / norms if norms else 0.0


def cosine_an_array(a, b):
    norms = np.linalg.norm(a) * np.linalg.norm(b)
    return np.array([np.dot(a, b) / norms]) if norms else np.array([0.0])


def test_cosine_passes_on_the_reference_and_unusual_answers():
    passes("7.2", twin(knowledge.cosine_similarity))
    passes("7.2", cosine_with_math)
    passes("7.2", cosine_with_unit_vectors)


def test_cosine_stub_is_not_written_yet():
    fails("7.2", stub, "not written yet")


@pytest.mark.parametrize("wrong, words", [
    (cosine_dot_alone, ("cosine_similarity([1.0, 2.0, 3.0], [2.0, 4.0, 6.0]) returned 28.0; expected 1.0",
                        "product of the two norms")),
    (cosine_no_zero_guard, ("divided by zero", "RuntimeWarning", "return 0.0")),
    (cosine_python_division_no_guard, ("divided by zero", "ZeroDivisionError")),
    (cosine_squared_norms, ("returned 0.0357", "not by their squares")),
    (cosine_an_array, ("ndarray", "not a float")),
])
def test_cosine_fails_on_typical_mistakes(wrong, words):
    fails("7.2", wrong, *words)


# --- 7.3 nearest -------------------------------------------------------------------------------------------------


def nearest_with_argsort(query_vector, vectors, top_k=2, min_score=0.5):
    matrix = np.array(vectors)
    norms = np.linalg.norm(matrix, axis=1) * np.linalg.norm(query_vector)
    scores = np.divide(matrix @ query_vector, norms, out=np.zeros(len(vectors)), where=norms != 0)
    order = np.argsort(-scores, kind="stable")[:top_k]
    return [(scores[i], i) for i in order if scores[i] >= min_score]  # np.float64 and np.int64, as numpy gives them


def nearest_with_heapq(query_vector, vectors, top_k=2, min_score=0.5):
    import heapq
    scored = ((cosine_similarity(query_vector, vector), position) for position, vector in enumerate(vectors))
    return [hit for hit in heapq.nlargest(top_k, scored, key=lambda hit: hit[0]) if hit[0] >= min_score]


def nearest_filter_first(query_vector, vectors, top_k=2, min_score=0.5):
    near = [[cosine_similarity(query_vector, v), i] for i, v in enumerate(vectors)
            if cosine_similarity(query_vector, v) >= min_score]  # lists for pairs, filtered before the cut
    return sorted(near, key=lambda hit: -hit[0])[:top_k]


def nearest_ascending(query_vector, vectors, top_k=2, min_score=0.5):
    return sorted(nearest_with_argsort(query_vector, vectors, len(vectors), min_score))[:top_k]


def nearest_ignoring_min_score(query_vector, vectors, top_k=2, min_score=0.5):
    return nearest_with_argsort(query_vector, vectors, top_k, -2.0)


def nearest_position_first(query_vector, vectors, top_k=2, min_score=0.5):
    return [(int(i), float(score)) for score, i in nearest_with_argsort(query_vector, vectors, top_k, min_score)]


def nearest_the_vectors(query_vector, vectors, top_k=2, min_score=0.5):
    return [(score, vectors[i]) for score, i in nearest_with_argsort(query_vector, vectors, top_k, min_score)]


def nearest_ignoring_top_k(query_vector, vectors, top_k=2, min_score=0.5):
    return nearest_with_argsort(query_vector, vectors, len(vectors), min_score)


def nearest_other_defaults(query_vector, vectors, top_k=3, min_score=0.5):
    return nearest_with_argsort(query_vector, vectors, top_k, min_score)


def nearest_strictly_above(query_vector, vectors, top_k=2, min_score=0.5):
    return [hit for hit in nearest_with_argsort(query_vector, vectors, top_k, -2.0) if hit[0] > min_score]


def nearest_a_generator(query_vector, vectors, top_k=2, min_score=0.5):
    return (hit for hit in nearest_with_argsort(query_vector, vectors, top_k, min_score))


def test_nearest_passes_on_the_reference_and_unusual_answers():
    passes("7.3", twin(knowledge.nearest))
    passes("7.3", nearest_with_argsort)
    passes("7.3", nearest_with_heapq)
    passes("7.3", nearest_filter_first)


def test_nearest_the_course_function_is_refused():
    fails("7.3", knowledge.nearest, "course's own")


def test_nearest_stub_is_not_written_yet():
    fails("7.3", stub, "not written yet")


@pytest.mark.parametrize("wrong, words", [
    (nearest_ascending, ("the nearest must come first",)),
    (nearest_ignoring_min_score, ("below min_score=0.7",)),
    (nearest_position_first, ("the position comes first", "(score, position)")),
    (nearest_the_vectors, ("not a (score, position) pair",)),
    (nearest_ignoring_top_k, ("at most top_k=1",)),
    (nearest_other_defaults, ("nearest([2.0, 0.0, 0.0], vectors) returned 3 hits", "top_k=2")),
    (nearest_strictly_above, ("min_score=0.6) returned [(1.0, 0), (0.8, 1)]", "a vector near enough was left out",
                              "score >= min_score")),
    (nearest_a_generator, ("returned a generator, not a list",)),
])
def test_nearest_fails_on_typical_mistakes(wrong, words):
    fails("7.3", wrong, *words)


def test_the_store_ranks_with_nearest():
    """The given VectorStore embeds its chunks once and hands each query's ranking to nearest: its search is the
    series' (score, chunk) pairs."""
    calls = []

    def counting(text):
        calls.append(text)
        return embed(text)

    store = VectorStore(CORPUS, counting)
    assert calls == CORPUS
    hits = store.search("How many holidays do employees get?")
    assert calls[len(CORPUS):] == ["How many holidays do employees get?"]
    assert [chunk for _, chunk in hits] == [CORPUS[2]] and 0.5 <= hits[0][0] <= 1.0


# --- 7.4 retrieve ------------------------------------------------------------------------------------------------


def retrieve_with_a_loop(query):
    text = ""
    for _score, chunk in STORE.search(query):
        text += f"- {chunk}\n"
    return text.rstrip("\n") or NOTHING_RELEVANT


def retrieve_with_explicit_arguments(query):
    hits = STORE.search(query, top_k=TOP_K, min_score=MIN_SCORE)
    if not hits:
        return "No relevant documents found."
    return "\n".join("- " + pair[1] for pair in hits)


def retrieve_best_even_below(query):
    hits = STORE.search(query, min_score=0)
    return "\n".join(f"- {chunk}" for _, chunk in hits) if hits else NOTHING_RELEVANT


def retrieve_every_chunk(query):
    return "\n".join(f"- {chunk}" for chunk in STORE.chunks)


def retrieve_other_words(query):
    hits = STORE.search(query)
    return "\n".join(f"- {chunk}" for _, chunk in hits) if hits else "Nothing relevant was found."


def retrieve_its_own_store(query):
    hits = VectorStore(CORPUS, embed).search(query)
    return "\n".join(f"- {chunk}" for _, chunk in hits) if hits else NOTHING_RELEVANT


def retrieve_the_pairs(query):
    return STORE.search(query)


def test_retrieve_passes_on_the_reference_and_unusual_answers():
    passes("7.4", twin(knowledge.retrieve))
    passes("7.4", retrieve_with_a_loop)
    passes("7.4", retrieve_with_explicit_arguments)


def test_retrieve_stub_is_not_written_yet():
    fails("7.4", stub, "not written yet")


@pytest.mark.parametrize("wrong, words", [
    (retrieve_best_even_below, ("retrieve('Is the parking free?')", "exactly 'No relevant documents found.'",
                                "never min_score=0")),
    (retrieve_every_chunk, ("retrieve('Is the parking free?') returned '- The catalogue",)),
    (retrieve_other_words, ("'Nothing relevant was found.'", "exactly 'No relevant documents found.'",
                            "word for word")),
    (retrieve_its_own_store, ("the notebook's corpus, not STORE's", "never build a store")),
    (retrieve_the_pairs, ("returned a list", "not a str")),
])
def test_retrieve_fails_on_typical_mistakes(wrong, words):
    fails("7.4", wrong, *words)


# --- 7.5 TOOL_REGISTRY -------------------------------------------------------------------------------------------


def schema(description="Finds documents.", **input_schema):
    made = {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}
    return {"description": description, "input_schema": changed(made, **input_schema)}


def registry(**changes):
    """A registry of this file's right answers, with some entries replaced (None: left out)."""
    return changed({"search": {"function": search_with_a_loop, "schema": schema("Exact words.")},
                    "retrieve": {"function": retrieve_with_a_loop, "schema": schema("Meaning.")}}, **changes)


def test_registry_passes_on_the_reference_and_unusual_answers():
    passes("7.5", twin(TOOL_REGISTRY))
    passes("7.5", registry())
    # retrieve first, the schema with more JSON Schema than asked, the functions the course's wrapped in lambdas
    passes("7.5", {"retrieve": {"function": lambda query: retrieve_with_explicit_arguments(query), "schema": {
        "description": "Nearest in meaning.", "input_schema": {
            "type": "object", "additionalProperties": False,
            "properties": {"query": {"type": "string", "description": "what to look for", "minLength": 1}},
            "required": ["query"]}}},
        "search": {"function": search_with_a_set_comprehension, "schema": schema("Exact words, any case.")}})


def test_registry_the_course_registry_is_refused():
    fails("7.5", TOOL_REGISTRY, "course's own")


def test_registry_stub_is_not_written_yet():
    fails("7.5", {}, "not written yet")


@pytest.mark.parametrize("wrong, words", [
    (registry(search={"function": search_with_a_loop, "schema": schema(
        properties={"q": {"type": "string"}}, required=["q"])}), ("has the properties ['q']", "called 'query'")),
    (registry(search={"function": retrieve_with_a_loop, "schema": schema("Exact words.")},
              retrieve={"function": search_with_a_loop, "schema": schema("Meaning.")}),
     ("the model calls search('holidays')", "must say 'No documents matched'")),
    (registry(retrieve={"function": retrieve_with_a_loop, "schema": schema(required=None)}),
     ("requires None; it must require ['query']",)),
    (registry(lookup={"function": search_with_a_loop, "schema": schema()}), ("['lookup'] is one tool too many",)),
    (registry(search=None), ("has no entry 'search'",)),
    (registry(search={"function": search_with_a_loop, "schema": schema(type="dict")}),
     ("the API refuses", "JSON schema is invalid")),
    (registry(search={"function": search_with_a_loop("vacation"), "schema": schema()}), ("not a function",)),
    (registry(search={"function": search_with_a_loop, "schema": schema(description="")}), ("has no description",)),
    (registry(search={"function": search_with_a_loop, "schema": schema(
        properties={"query": {"type": "integer"}})}), ("gives 'query' the type 'integer'",)),
    (registry(retrieve={"function": retrieve_its_own_store, "schema": schema()}), ("the model calls retrieve('time off')", "expected '- Every new")),
    ([{"name": "search", **schema()}], ("TOOL_REGISTRY is a list, not a dict",)),
])
def test_registry_fails_on_typical_mistakes(wrong, words):
    fails("7.5", wrong, *words)
