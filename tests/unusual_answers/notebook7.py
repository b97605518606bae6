# Unusual but correct answers to notebook 7's exercises, each leaning on code of the learner's own. Each
# `# %% exercise N` section is the whole source of that exercise's cell: tests/test_series_stages.py runs
# solutions/07_knowledge_tools.ipynb with these cells instead of its own, checks them with the notebook's checks,
# and runs the series' stage 009 tests against the agent_knowledge.py it writes. Not a module: read as text.

# %% exercise 7.1
# The corpus indexed by word once, lazily, in a helper of the learner's; the miss says more than the minimum.
def word_index(chunks):
    """Each word -> the positions of the chunks that hold it."""
    index = {}
    for position, chunk in enumerate(chunks):
        for word in set(words_of(chunk)):
            index.setdefault(word, set()).add(position)
    return index


def search(query: str) -> str:
    index = word_index(CORPUS)
    positions = sorted(set().union(*(index.get(word, set()) for word in words_of(query))))
    if not positions:
        return "No documents matched these words; the knowledge base may say it another way, so try synonyms."
    return "\n".join("- " + CORPUS[position] for position in positions)


# %% exercise 7.2
# Plain math, one helper for the length of a vector.
import math


def length(vector):
    return math.sqrt(sum(float(x) * float(x) for x in vector))


def cosine_similarity(a, b):
    if length(a) == 0 or length(b) == 0:
        return 0.0
    return sum(float(x) * float(y) for x, y in zip(a, b)) / (length(a) * length(b))


# %% exercise 7.3
# The vectors as one matrix, the scores in one comprehension, the order by argsort (positions as numpy ints).
def nearest(query_vector, vectors, top_k=2, min_score=0.5):
    matrix = np.array(vectors, dtype=float)
    scores = np.array([cosine_similarity(row, query_vector) for row in matrix])
    order = np.argsort(-scores, kind="stable")[:top_k]
    return [(scores[i], i) for i in order if scores[i] >= min_score]


# %% exercise 7.4
# A formatting helper of the learner's own, shared by nothing else.
def as_lines(chunks):
    return "\n".join(f"- {chunk}" for chunk in chunks)


def retrieve(query):
    found = [chunk for _, chunk in STORE.search(query)]
    return as_lines(found) if found else "No relevant documents found."


# %% exercise 7.5
# The schemas made by a helper; the registry built from a list of (name, function, description).
def query_tool(function, description, about):
    return {"function": function,
            "schema": {"description": description,
                       "input_schema": {"type": "object", "required": ["query"],
                                        "properties": {"query": {"type": "string", "description": about}}}}}


TOOL_REGISTRY = dict((name, query_tool(function, description, about)) for name, function, description, about in [
    ("search", search, "Chunks of the Halden Robotics documents sharing an exact word with the query; when none "
                       "does, search again with other or broader words.", "words"),
    ("retrieve", retrieve, "Chunks of the Halden Robotics documents nearest the query in meaning.", "a question"),
])
TOOLS = [{"name": name, **entry["schema"]} for name, entry in TOOL_REGISTRY.items()]
