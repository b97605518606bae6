# Unusual but correct answers to notebook 8's exercises, each leaning on code of the learner's own. Each
# `# %% exercise N` section is the whole source of that exercise's cell: tests/test_series_stages.py runs
# solutions/08_context_compaction.ipynb with these cells instead of its own, checks them with the notebook's checks,
# and runs the series' stage 010 tests against the agent_compaction.py it writes. Not a module: read as text.

# %% exercise 8.1
# A table of one small function per block type, each reading a block through a helper of the learner's own.
def field(block, key):
    """A block's field, whether the block is an SDK object or a dict."""
    return block[key] if isinstance(block, dict) else getattr(block, key)


def result_text(content):
    if isinstance(content, str):
        return content
    return " ".join(field(item, "text") for item in content if field(item, "type") == "text")


LINE_OF = {
    "text": lambda role, block: f"{role}: {field(block, 'text')}",
    "tool_use": lambda role, block: f"{role} called {field(block, 'name')}({field(block, 'input')})",
    "tool_result": lambda role, block: f"tool result: {result_text(field(block, 'content'))}",
}


def render_message(message):
    if isinstance(message["content"], str):
        return message["role"] + ": " + message["content"]
    lines = (LINE_OF[field(block, "type")](message["role"], block) for block in message["content"]
             if field(block, "type") in LINE_OF)
    return "\n".join(lines)


# %% exercise 8.2
# A loop, and a helper that says what a tool-results message is.
def holds_results(message):
    content = message["content"]
    return not isinstance(content, str) and any(field(block, "type") == "tool_result" for block in content)


def exchange_starts(messages):
    starts = []
    for index, message in enumerate(messages):
        if message["role"] == "user" and not holds_results(message):
            starts.append(index)
    return starts


# %% exercise 8.3
# The kept part found first, the fold written with a helper that builds the summary exchange.
def summary_exchange(summary):
    return [{"role": "user", "content": "[Conversation summary: " + summary + "]"},
            {"role": "assistant", "content": ACKNOWLEDGEMENT}]


def compact(messages, client, output_stream, context_limit=CONTEXT_LIMIT):
    starts = exchange_starts(messages)
    if len(starts) <= KEEP_RECENT or history_size(messages) <= context_limit:
        return messages[:]
    old, kept = messages[:starts[-KEEP_RECENT]], messages[starts[-KEEP_RECENT]:]
    new_history = summary_exchange(summarise(old, client)) + kept
    print(f"[compact] folded {len(old)} messages into a summary", file=output_stream)
    return new_history


# %% exercise 8.4
# The lines read with a for loop over the stream, the prompt written before each.
def run(input_stream, output_stream, client=None, context_limit=CONTEXT_LIMIT):
    if client is None:
        client = looplab.client("08_context_compaction")
    history = []
    output_stream.write("User> ")
    for line in input_stream:
        question = line.strip()
        if not question:
            break
        history = compact(history, client, output_stream, context_limit=context_limit)
        history.append({"role": "user", "content": question})
        answer = agent_turn(client, history)
        output_stream.write("Agent> " + answer + "\n")
        output_stream.write("User> ")
