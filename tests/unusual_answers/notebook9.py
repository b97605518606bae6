# Unusual but correct answers to notebook 9's exercises, each leaning on code of the learner's own. Each
# `# %% exercise N` section is the whole source of that exercise's cell: tests/test_series_stages.py runs
# solutions/09_subagent.ipynb with these cells instead of its own, checks them with the notebook's checks, and runs
# the series' stage 011 tests against the agent_subagent.py it writes. Not a module: read as text.

# %% exercise 9.1
# Each way a call can fail is a small function of the learner's own, tried in turn.
def unknown(registry, name, tool_input):
    if name not in registry:
        return f"Error: unknown tool {name!r} (known here: {sorted(registry)})"


def not_an_object(registry, name, tool_input):
    if not isinstance(tool_input, dict):
        return f"Error: bad arguments for {name!r}: tool input must be an object, not {type(tool_input).__name__}"


def not_fitting(registry, name, tool_input):
    try:
        inspect.signature(registry[name]["function"]).bind(**tool_input)
    except TypeError as problem:
        return f"Error: bad arguments for {name!r}: {problem}"


def run_tool(registry, name, tool_input):
    for problem in (unknown, not_an_object, not_fitting):
        message = problem(registry, name, tool_input)
        if message:
            return message, True
    try:
        value = registry[name]["function"](**tool_input)
    except Exception as problem:
        return f"Error: {name!r} raised {problem.__class__.__name__}: {problem}", True
    return f"{value}", False


# %% exercise 9.2
# The request's arguments gathered once; the results made by a helper of the learner's own.
def result_for(call, text, failed):
    block = {"type": "tool_result", "tool_use_id": call.id, "content": text}
    return {**block, "is_error": True} if failed else block


def agent_turn(client, system, registry, messages, output_stream, tag_prefix=""):
    request = {"model": MODEL, "max_tokens": 1024, "system": system,
               "tools": [dict(name=name, **entry["schema"]) for name, entry in registry.items()]}
    while True:
        reply = client.messages.create(messages=messages, **request)
        messages.append({"role": "assistant", "content": reply.content})
        calls = [block for block in reply.content if block.type == "tool_use"]
        if reply.stop_reason != "tool_use" or not calls:
            return "".join(block.text for block in reply.content if block.type == "text")
        results = []
        for call in calls:
            text, failed = run_tool(registry, call.name, call.input)
            print(f"[{tag_prefix}{'tool-error' if failed else 'tool'}] {call.name}({call.input}) -> {text}",
                  file=output_stream)
            results.append(result_for(call, text, failed))
        messages.append({"role": "user", "content": results})


# %% exercise 9.3
# The subagent's settings in one dict of the learner's own.
SUBAGENT = {"system": RESEARCHER_PROMPT, "registry": RESEARCHER_REGISTRY, "tag_prefix": "subagent:"}


def research(question, client, output_stream):
    own_history = [dict(role="user", content=question)]
    return agent_turn(client, messages=own_history, output_stream=output_stream, **SUBAGENT)


# %% exercise 9.4
# The research entry made by a function of the learner's own; the lines read with a for loop.
def research_entry(client, output_stream):
    return {"function": lambda question: research(question, client, output_stream), "schema": RESEARCH_SCHEMA}


def run(input_stream, output_stream, client=None, system=SYSTEM_PROMPT):
    if client is None:
        client = looplab.client("09_subagent")
    registry = {**PARENT_REGISTRY, "research": research_entry(client, output_stream)}
    conversation = []
    output_stream.write("User> ")
    for line in input_stream:
        if not line.strip():
            break
        conversation.append({"role": "user", "content": line.strip()})
        output_stream.write("Agent> " + agent_turn(client, system, registry, conversation, output_stream) + "\n")
        output_stream.write("User> ")
