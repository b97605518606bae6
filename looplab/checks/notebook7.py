"""Checks for notebook 7, knowledge tools: exact-word search, cosine similarity, the vector store, retrieve, and the
registry that offers both tools to the model.

Every call into the learner's code gets inputs of its own, never the notebook's corpus (whose answers a cell could
hold): while 7.1 and 7.5 are checked, CORPUS is looplab.knowledge.CHECKED_CORPUS, and while 7.4 and 7.5 are, STORE
is CHECKED_STORE, the course's VectorStore over it with an embed of the checks' own, so that every score is exact and
known (each exercise's `checked_with`, looplab/course.py). 7.3 hands the learner's nearest vectors of its own. The words a tool's text must hold are the
ones the prose gives and the series' stage tests read: "- " before each chunk, "No documents matched" at the start
of a miss, exactly "No relevant documents found." when nothing is near enough; the rest of a miss is the learner's.
"""

from __future__ import annotations

import functools
import math
import types
import warnings
from typing import Any

import numpy as np

from ..catalogue import catalogue
from ..course import COURSE, resolve
from ..knowledge import CHECKED_CORPUS, CHECKED_STORE, CORPUS, MIN_SCORE, NOTHING_RELEVANT, TOP_K, words_of
from ..learner_calls import isolated
from ..model_id import MODEL
from ..rules import check_request
from ..scripted import reply, said, scripted_client, spoken, text, tool_use
from .core import NOT_WRITTEN, Failure, Report

TEXTS, HINTS = catalogue(__file__)  # texts/notebook7.toml

MISS_START = "No documents matched"  # how search's text starts when no chunk shares a word (the series reads it)
LINE_START = "- "  # before each chunk a tool returns, one a line
CLOSE = 1e-9  # how near a score must be to the exact one


def lines_of(chunks: list[str]) -> str:
    """The text a tool returns for these chunks: one a line, "- " before each."""
    return "\n".join(LINE_START + chunk for chunk in chunks)


def found_in(output: str, corpus: list[str]) -> list[str]:
    """The chunks of `corpus` a tool's text holds, in the corpus' order."""
    return [chunk for chunk in corpus if chunk in output]


# --- 7.1 search --------------------------------------------------------------------------------------------------

# Each query the check asks search, over CHECKED_CORPUS; what it must find follows from the words (shared_words).
SEARCHES = [
    "LISBON",  # a capital in the query, a comma after the word in the chunk ("Lisbon,")
    "days",  # three chunks share it: every one, in the corpus' order
    "Friday phone",  # two words of one chunk: that chunk once
    "price of returns",  # words of several chunks
    "cat",  # inside "catalogue", never a word of its own: nothing matched
    "holidays",  # in no chunk
]


def shared_words(query: str, corpus: list[str]) -> list[str]:
    """The chunks that share at least one exact word with the query, in the corpus' order."""
    wanted = set(words_of(query))
    return [chunk for chunk in corpus if wanted & set(words_of(chunk))]


def check_search(search, report: Report) -> None:
    report.require_function(search, "search")
    for query in SEARCHES:
        report.enter("search_query", query=query)
        expected = shared_words(query, CHECKED_CORPUS)
        output = search(query)
        report.require(isinstance(output, str), "search_not_text", query=query, kind=type(output).__name__,
                       output=output)
        if not expected:
            found = found_in(output, CHECKED_CORPUS)
            report.require(not found, "search_inside_words", query=query, found=found)
            report.require(output.startswith(MISS_START), "search_miss_text", query=query, output=output)
            continue
        report.require(not output.startswith(MISS_START), "search_missed_all", query=query, expected=expected)
        found = found_in(output, CHECKED_CORPUS)
        missing = [chunk for chunk in expected if chunk not in found]
        report.require(not missing, "search_left_out", query=query, missing=missing)
        extra = [chunk for chunk in found if chunk not in expected]
        report.require(not extra, "search_inside_words", query=query, found=extra)
        report.require(output == lines_of(expected), "search_lines", query=query, output=output,
                       expected=lines_of(expected))
    report.situation = None
    report.note("search_ok", count=len(SEARCHES))


# --- 7.2 cosine_similarity ---------------------------------------------------------------------------------------

# (row, a, b, the similarity): each pair a situation of its own.
SIMILARITIES = [
    ("same_direction", [1.0, 2.0, 3.0], [2.0, 4.0, 6.0], 1.0),
    ("orthogonal", [1.0, 0.0, 0.0], [0.0, 3.0, 0.0], 0.0),
    ("opposite", [1.0, 2.0], [-3.0, -6.0], -1.0),
    ("in_between", [1.0, 2.0, 0.0], [2.0, 1.0, 1.0], 4.0 / math.sqrt(30.0)),
    ("zero_first", [0.0, 0.0, 0.0], [1.0, 2.0, 3.0], 0.0),
    ("zero_second", [3.0, 4.0], [0.0, 0.0], 0.0),
    ("both_zero", [0.0, 0.0], [0.0, 0.0], 0.0),
]


def check_cosine_similarity(cosine_similarity, report: Report) -> None:
    report.require_function(cosine_similarity, "cosine_similarity")
    for key, a, b, expected in SIMILARITIES:
        report.enter(key, a=a, b=b)
        first, second = np.array(a), np.array(b)
        zero = not (any(a) and any(b))
        if zero:  # a division by zero warns (numpy) or raises (Python): here both are the learner's to avoid
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                try:
                    value = cosine_similarity(first, second)
                except (RuntimeWarning, ZeroDivisionError, FloatingPointError) as error:
                    raise report.failure("zero_divided", a=a, b=b, error=f"{type(error).__name__}: {error}") from None
        else:
            value = cosine_similarity(first, second)
        report.require(isinstance(value, (float, int)) and not isinstance(value, bool), "similarity_not_float",
                       kind=type(value).__name__, value=value)
        report.require(not math.isnan(value), "similarity_nan", a=a, b=b)
        report.require(abs(value - expected) <= CLOSE, "similarity_wrong", a=a, b=b, value=float(value),
                       expected=round(expected, 6))
    report.situation = None
    report.note("similarity_ok", count=len(SIMILARITIES))


# --- 7.3 nearest -------------------------------------------------------------------------------------------------

# The check's own vectors and queries, so that every score is exact and known (no rounding in any of them).
VECTORS = [[1.0, 0.0, 0.0], [4.0, 3.0, 0.0], [0.0, 1.0, 0.0], [3.0, 0.0, 4.0]]
TRAINS = [2.0, 0.0, 0.0]  # scores 1.0, 0.8, 0.0, 0.6
MUSEUM = [0.0, 5.0, 0.0]  # 0.0, 0.6, 1.0, 0.0: the nearest is not the first vector
LOST = [0.0, 0.0, -1.0]  # 0.0, 0.0, 0.0, -0.8: nothing near
BLANK = [0.0, 0.0, 0.0]  # a query no word of which is known: 0.0 everywhere
# (the query, its keyword arguments): nearest(query, vectors) alone applies the notebook's TOP_K and MIN_SCORE.
NEAREST_CALLS = [
    (TRAINS, {"top_k": 3, "min_score": 0.5}),
    (TRAINS, {"top_k": 4, "min_score": 0.7}),
    (TRAINS, {"top_k": 4, "min_score": 0.6}),  # a score equal to min_score is not below it: kept
    (TRAINS, {"top_k": 1, "min_score": 0.0}),
    (TRAINS, {}),
    (MUSEUM, {}),
    (LOST, {}),
    (BLANK, {"top_k": 4, "min_score": 0.0}),  # every score 0.0: all four, none below 0.0
]


def ranked(query: list[float], top_k: int = TOP_K, min_score: float = MIN_SCORE) -> list[tuple[float, int]]:
    """What nearest must return: the check's own reckoning of the scores (ties keep the vectors' order)."""
    wanted = np.array(query)
    scored = []
    for position, vector in enumerate(VECTORS):
        norms = float(np.linalg.norm(wanted) * np.linalg.norm(vector))
        scored.append((float(np.dot(wanted, vector)) / norms if norms else 0.0, position))
    scored.sort(key=lambda hit: hit[0], reverse=True)
    return [(score, position) for score, position in scored[:top_k] if score >= min_score]


def call_shown(query: list[float], options: dict) -> str:
    """How the check called nearest, as Python writes it."""
    return ", ".join([repr(query), "vectors"] + [f"{name}={value!r}" for name, value in options.items()])


def is_score(value: Any) -> bool:
    return isinstance(value, (float, int, np.floating, np.integer)) and not isinstance(value, bool)


def is_position(value: Any) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def hits_shown(hits: Any) -> Any:
    """Hits as a learner reads them: each score a plain float, rounded; each position a plain int."""
    if not isinstance(hits, (list, tuple)):
        return hits
    return [tuple(round(float(part), 4) if isinstance(part, (float, np.floating))
                  else int(part) if isinstance(part, np.integer) else part for part in hit)
            if isinstance(hit, (list, tuple)) else hit for hit in hits]


def check_nearest(nearest, report: Report) -> None:
    report.require_function(nearest, "nearest")
    for query, options in NEAREST_CALLS:
        shown = call_shown(query, options)
        report.enter("nearest_call", call=shown, vectors=VECTORS)
        hits = nearest(np.array(query), [np.array(vector) for vector in VECTORS], **options)
        expected = ranked(query, **options)
        report.require(isinstance(hits, list), "hits_not_list", call=shown, kind=type(hits).__name__)
        for hit in hits:
            pair = isinstance(hit, (tuple, list)) and len(hit) == 2
            report.require(pair, "hit_not_pair", call=shown, hit=hits_shown([hit])[0])
            report.require(not (is_position(hit[0]) and isinstance(hit[1], (float, np.floating))), "hit_reversed",
                           call=shown, hit=hits_shown([hit])[0])
            report.require(is_score(hit[0]) and is_position(hit[1]) and 0 <= hit[1] < len(VECTORS), "hit_not_pair",
                           call=shown, hit=hits_shown([hit])[0])
        top_k = options.get("top_k", TOP_K)
        min_score = options.get("min_score", MIN_SCORE)
        report.require(len(hits) <= top_k, "too_many_hits", call=shown, count=len(hits), top_k=top_k,
                       hits=hits_shown(hits))
        low = [hit for hit in hits if hit[0] < min_score - CLOSE]
        report.require(not low, "hit_below_min", call=shown, min_score=min_score, low=hits_shown(low))
        scores = [float(score) for score, _ in hits]
        report.require(scores == sorted(scores, reverse=True), "hits_order", call=shown, hits=hits_shown(hits))
        same = len(hits) == len(expected) and all(
            position == wanted and abs(score - exact) <= CLOSE
            for (score, position), (exact, wanted) in zip(hits, expected))
        if not same and len(hits) < len(expected) and all(hit in expected for hit in hits):
            raise report.failure("hit_left_out", call=shown, hits=hits_shown(hits), expected=hits_shown(expected),
                                 min_score=min_score)
        report.require(same, "hits_wrong", call=shown, hits=hits_shown(hits), expected=hits_shown(expected))
    report.situation = None
    report.note("nearest_ok", count=len(NEAREST_CALLS))


# --- 7.4 retrieve ------------------------------------------------------------------------------------------------

# Queries of CHECKED_STORE (looplab/knowledge.py: _CHECKED_VECTORS says their vectors): a best chunk below the
# threshold, one near chunk (the notebook's own store finds another), two near chunks (the nearer later in the
# corpus), no known word at all.
RETRIEVES = ["Is the parking free?", "time off", "Can I return a parcel?", "Is there a gift shop?"]


def retrieved(query: str) -> str:
    """What retrieve must return for a query of CHECKED_STORE."""
    hits = CHECKED_STORE.search(query)
    return lines_of([chunk for _, chunk in hits]) if hits else NOTHING_RELEVANT


def check_retrieve(retrieve, report: Report) -> None:
    report.require_function(retrieve, "retrieve")
    for query in RETRIEVES:
        report.enter("retrieve_query", query=query)
        expected = retrieved(query)
        output = retrieve(query)
        report.require(isinstance(output, str), "retrieve_not_text", query=query, kind=type(output).__name__,
                       output=output)
        if expected == NOTHING_RELEVANT:
            report.require(output == NOTHING_RELEVANT, "nothing_relevant_text", query=query, output=output,
                           expected=NOTHING_RELEVANT)
            continue
        report.require(output != NOTHING_RELEVANT, "retrieve_found_nothing", query=query, expected=expected)
        report.require(not found_in(output, CORPUS), "retrieve_not_store", query=query,
                       output=output)
        report.require(output == expected, "retrieve_lines", query=query, output=output, expected=expected)
    report.situation = None
    report.note("retrieve_ok", count=len(RETRIEVES))


# --- 7.5 TOOL_REGISTRY -------------------------------------------------------------------------------------------

NAMES = ["search", "retrieve"]
ENTRY_FIELDS = {"function", "schema"}
SCHEMA_FIELDS = {"description", "input_schema"}
PARAMETER = "query"
PARAMETER_TYPE = "string"
MAX_TOKENS = 256
GREETING = [{"role": "user", "content": said("Hello", fr="Bonjour")}]

# Two conversations through the loop with the learner's registry: (row, question, replies, the tool calls with what
# each must return: MISS_START for a miss, else the exact text). The chunk about leave, found by words then by meaning.
LEAVE = CHECKED_CORPUS[4]
CONVERSATIONS = [
    ("words_conversation", said("What holidays do new employees get?",
                                fr="Quels congés ont les nouveaux employés ?"),
     [reply(text("Let me search the documents.", fr="Je cherche dans les documents."),
            tool_use("search", {"query": "holidays"})),
      reply(text("Nothing: other words.", fr="Rien : d'autres mots."), tool_use("search", {"query": "leave"})),
      reply(text("New employees get twenty days of paid leave a year.",
                 fr="Les nouveaux employés ont vingt jours de congés payés par an."))],
     [("search", "holidays", MISS_START), ("search", "leave", lines_of([LEAVE]))]),
    ("meaning_conversation", said("How much time off do staff get?",
                                  fr="Combien de jours de repos ont les employés ?"),
     [reply(tool_use("retrieve", {"query": "time off"})),
      reply(text("Twenty days of paid leave a year.", fr="Vingt jours de congés payés par an."))],
     [("retrieve", "time off", lines_of([LEAVE]))]),
]


def kind_of(value: Any) -> str:
    """The type a message names: "function" for anything callable (in the grader, a proxy of the learner's)."""
    return "function" if callable(value) else type(value).__name__


def definitions(registry: dict) -> list[dict]:
    return [{"name": name, **entry["schema"]} for name, entry in registry.items()]


def request_with(tools: list[dict]) -> dict:
    return {"model": MODEL, "max_tokens": MAX_TOKENS, "messages": spoken(GREETING), "tools": tools}


def the_function(value: Any) -> Any:
    """The plain function behind a registry's entry (through functools.wraps and partial), whose globals the check
    fills; None for anything else (under the grader, a proxy: its kernel gets the check's names with each call)."""
    while isinstance(value, functools.partial):
        value = value.func
    try:
        unwrapped = getattr(value, "__wrapped__", None)
    except Exception:
        return None
    if unwrapped is not None and unwrapped is not value:
        return the_function(unwrapped)
    return value if isinstance(value, types.FunctionType) else None


def run_entry(function: Any, tool_input: dict) -> Any:
    """Call a registry's function as the loop does, with what the check puts in the notebook's names while 7.5 is
    checked (CORPUS and STORE of its own; a dict has no globals, so run_check cannot swap them for it)."""
    pieces = {name: resolve(target) for name, target in COURSE.earlier_pieces("7.5").items()}
    plain = the_function(function)
    if plain is None:
        return function(**tool_input)
    with isolated(plain, pieces):
        return function(**tool_input)


def not_written_yet(registry: Any, report: Report) -> None:
    if isinstance(registry, dict) and not registry:
        failure = report.failure("empty_registry")
        failure.kind = NOT_WRITTEN
        raise failure


def check_registry(registry, report: Report) -> None:
    not_written_yet(registry, report)
    report.require(isinstance(registry, dict), "registry_not_dict", kind=kind_of(registry))
    names = list(registry)
    for name in NAMES:
        report.require(name in registry, "registry_lacks", name=name, names=names)
    extra = [name for name in names if name not in NAMES]
    report.require(not extra, "registry_extra", extra=extra, names=names)
    for name in NAMES:
        entry = registry[name]
        report.require(isinstance(entry, dict) and set(entry) == ENTRY_FIELDS, "entry_fields", name=name,
                       fields=sorted(map(str, entry)) if isinstance(entry, dict) else kind_of(entry))
        report.require(callable(entry["function"]), "entry_function", name=name, kind=kind_of(entry["function"]))
        schema = entry["schema"]
        report.require(isinstance(schema, dict) and set(schema) == SCHEMA_FIELDS, "schema_fields", name=name,
                       fields=sorted(map(str, schema)) if isinstance(schema, dict) else kind_of(schema))
        description = schema["description"]
        report.require(isinstance(description, str) and description.strip() != "", "no_description", name=name)
    violation = check_request(request_with(definitions(registry)))
    report.require(violation is None, "registry_rejected", message=violation.message if violation else "")
    for name in NAMES:
        said_schema = registry[name]["schema"]["input_schema"]  # an object: the API took it
        properties = said_schema.get("properties") or {}
        report.require(sorted(map(str, properties)) == [PARAMETER], "schema_parameter", name=name,
                       properties=sorted(map(str, properties)))
        given = properties[PARAMETER]
        kind = given.get("type") if isinstance(given, dict) else None
        report.require(kind == PARAMETER_TYPE, "schema_type", name=name, kind=kind)
        required = said_schema.get("required")
        report.require(list(required or []) == [PARAMETER], "schema_required", name=name, required=required)
    report.note("registry_shape")
    for key, question, replies, calls in CONVERSATIONS:
        _converse(registry, key, question, replies, calls, report)
    report.situation = None
    report.note("registry_plays", count=len(CONVERSATIONS))


def _converse(registry: dict, key: str, question: str, replies: list, calls: list, report: Report) -> None:
    """One conversation through the course's loop, the tools run from the registry; each output as it must be."""
    client, _ = scripted_client(replies, call_limit=len(replies))
    tools = definitions(registry)
    messages: list[dict] = [{"role": "user", "content": spoken(question)}]
    expected = iter(calls)
    while True:
        report.enter(key)
        response = client.messages.create(model=MODEL, max_tokens=MAX_TOKENS, tools=tools, messages=messages)
        messages.append({"role": "assistant", "content": [block.model_dump(exclude_none=True)
                                                           for block in response.content]})
        if response.stop_reason != "tool_use":
            return
        results = []
        for block in response.content:
            if block.type != "tool_use":
                continue
            name, query, wanted = next(expected)
            report.enter("tool_call", name=name, query=query)
            output = run_entry(registry[block.name]["function"], dict(block.input))
            report.require(isinstance(output, str), "tool_not_text", name=name, query=query,
                           kind=type(output).__name__, output=output)
            if wanted == MISS_START:
                report.require(output.startswith(MISS_START), "tool_miss", name=name, query=query, output=output)
            else:
                report.require(output == wanted, "tool_output", name=name, query=query, output=output,
                               expected=wanted)
            results.append({"type": "tool_result", "tool_use_id": block.id, "content": output})
        messages.append({"role": "user", "content": results})


def blind_to_the_swap(checker):
    """A checker played on the corpus or store the check swaps in (Exercise.checked_with): the course's own search
    and retrieve read their module's, never the swapped ones, so a learner's function that only calls them fails
    on the swapped data; when it did call them, the verdict is the course's code (checks/__init__.py)."""
    @functools.wraps(checker)
    def checked(obj, report: Report) -> None:
        try:
            checker(obj, report)
        except Failure as failure:
            failure.course_code_blind = True
            raise
    return checked


CHECKERS = {"7.1": blind_to_the_swap(check_search), "7.2": check_cosine_similarity, "7.3": check_nearest,
            "7.4": blind_to_the_swap(check_retrieve), "7.5": check_registry}
