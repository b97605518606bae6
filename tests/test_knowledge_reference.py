"""looplab/knowledge.py, the course's version of notebook 7's tools (the series' stage 009), on its own.

The tools are held to what the notebook will teach: exact words and their misses, cosine similarity's three
cases, retrieval by meaning with its threshold, each tool winning where the other misses; and the series' own
stage 009 tests pass against a program made of them (a small REPL around the registry, written here).
"""

import textwrap

import numpy as np
import pytest

from looplab import knowledge
from looplab.knowledge import (
    CORPUS, NO_MATCH, NOTHING_RELEVANT, TOOL_REGISTRY, TOOLS, VectorStore, cosine_similarity, embed, retrieve, search,
)

VACATION = "Permanent staff receive 25 days of paid vacation each year, plus two wellbeing days."
FOUNDING = "Halden Robotics was founded in 2019 by Dara Okonkwo, a former bridge engineer."


def test_search_finds_a_chunk_by_an_exact_word_whatever_its_case_and_punctuation():
    assert search("VACATION?") == f"- {VACATION}"
    assert search("Utrecht") == f"- {CORPUS[4]}"


def test_search_misses_when_the_words_differ_and_says_so():
    assert search("time off") == NO_MATCH and search("holidays") == NO_MATCH
    assert NO_MATCH.startswith("No documents matched")


def test_search_lists_every_chunk_sharing_a_word_in_the_corpus_order():
    assert search("founded cat") == f"- {FOUNDING}\n- {CORPUS[3]}"


def test_cosine_similarity_is_about_direction_not_length():
    assert cosine_similarity(np.array([1.0, 0.0]), np.array([3.0, 0.0])) == 1.0
    assert cosine_similarity(np.array([1.0, 0.0]), np.array([0.0, 2.0])) == 0.0
    assert cosine_similarity(np.zeros(2), np.array([1.0, 1.0])) == 0.0  # a zero vector points nowhere: no nan
    assert isinstance(cosine_similarity(np.array([1.0, 2.0]), np.array([2.0, 1.0])), float)


def test_embed_counts_the_concepts_a_texts_words_touch():
    vector = embed("Paid vacation days")
    assert vector[knowledge.CONCEPTS.index("leave")] == 3 and vector.sum() == 3
    assert not embed("quarterly revenue projections").any()


def test_the_store_returns_the_nearest_chunks_first_and_none_below_the_threshold():
    vectors = {"red apples": np.array([1.0, 0.0]), "blue ocean": np.array([0.0, 1.0]),
               "the deep sea": np.array([0.1, 1.0]), "purple": np.array([1.0, 1.0])}
    store = VectorStore(["red apples", "blue ocean"], embed=vectors.__getitem__)
    assert [chunk for _, chunk in store.search("the deep sea", top_k=2, min_score=0.0)] == ["blue ocean", "red apples"]
    assert [chunk for _, chunk in store.search("the deep sea", top_k=1)] == ["blue ocean"]
    assert store.search("purple", min_score=0.8) == []  # 0.71 from each: not about either


def test_retrieve_finds_by_meaning_what_search_misses():
    assert search("How many holidays do employees get?") == NO_MATCH
    assert retrieve("How many holidays do employees get?") == f"- {VACATION}"
    assert retrieve("time off") == f"- {VACATION}"


def test_exact_words_win_on_names_that_carry_no_meaning():
    assert retrieve("Who is Dara Okonkwo?") == NOTHING_RELEVANT
    assert search("Who is Dara Okonkwo?").startswith(f"- {FOUNDING}")


def test_retrieve_says_nothing_is_relevant_rather_than_the_least_bad_chunk():
    assert retrieve("quarterly revenue projections") == NOTHING_RELEVANT


def test_the_registry_offers_both_tools_with_one_required_string_query():
    assert list(TOOL_REGISTRY) == ["search", "retrieve"] and [tool["name"] for tool in TOOLS] == ["search", "retrieve"]
    for tool in TOOLS:
        assert tool["input_schema"] == {"type": "object", "required": ["query"], "properties": {
            "query": {"type": "string", "description": tool["input_schema"]["properties"]["query"]["description"]}}}


# The series' stage 009 tests, against the tools and a REPL in the series' shape around them (the notebook will
# write its own program from the learner's cells: tests/test_series_stages.py runs the stage against that too).
PROGRAM = textwrap.dedent('''
    import inspect
    import sys

    import looplab
    from looplab import MODEL
    from looplab.knowledge import *  # noqa: F403

    SYSTEM_PROMPT = "Answer questions about Halden Robotics from its knowledge base only."


    def run_tool(name, tool_input):
        entry = TOOL_REGISTRY.get(name)
        if entry is None:
            return f"Error: unknown tool {name!r}", True
        try:
            arguments = inspect.signature(entry["function"]).bind(**tool_input)
        except TypeError as error:
            return f"Error: bad arguments for {name!r}: {error}", True
        return str(entry["function"](*arguments.args, **arguments.kwargs)), False


    def run(input_stream, output_stream, client=None, system=SYSTEM_PROMPT):
        client = client or looplab.client("calculator")
        messages = []
        while True:
            output_stream.write("User> ")
            line = input_stream.readline()
            if not line.strip():
                return
            messages.append({"role": "user", "content": line.strip()})
            while True:
                reply = client.messages.create(model=MODEL, max_tokens=1024, system=system, tools=TOOLS,
                                               messages=messages)
                messages.append({"role": "assistant", "content": reply.content})
                if reply.stop_reason != "tool_use":
                    output_stream.write("Agent> " + "".join(b.text for b in reply.content if b.type == "text") + "\\n")
                    break
                results = []
                for block in reply.content:
                    if block.type == "tool_use":
                        output, is_error = run_tool(block.name, block.input)
                        result = {"type": "tool_result", "tool_use_id": block.id, "content": output}
                        if is_error:
                            result["is_error"] = True
                        results.append(result)
                messages.append({"role": "user", "content": results})
''')


def test_the_series_stage_009_tests_pass_against_these_tools(tmp_path):
    from tests.test_series_stages import a_program_passes_the_stage

    a_program_passes_the_stage("agent-009-knowledge-tools", PROGRAM, "agent_knowledge.py", tmp_path)


@pytest.mark.parametrize("query", ["time off", "who founded the company", "Utrecht", "cat"])
def test_the_two_tools_answer_every_query_in_the_same_form(query):
    for answer in (search(query), retrieve(query)):
        assert answer in (NO_MATCH, NOTHING_RELEVANT) or all(line.startswith("- ") for line in answer.split("\n"))
