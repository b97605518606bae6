# Unusual but correct answers to notebook 5's exercises, each leaning on code of the learner's own: the kind of
# answer a program written from the named definitions alone broke (issue 35). Each `# %% exercise N` section is
# the whole source of that exercise's cell: tests/test_series_stages.py runs solutions/05_toolbox.ipynb with
# these cells instead of its own, checks them with the notebook's checks, and runs the series' stage 007 tests
# against the agent_toolbox.py it writes (and lists the tools of its toolbox_server.py). Not a module: read as text.

# %% exercise 5.1
# The registry built step by step: the calculator first, then the two new tools from a table of rows, each
# schema made by a helper.
TOOL_REGISTRY = {}  # name -> {"function": ..., "schema": {"description": ..., "input_schema": ...}}
TOOL_REGISTRY["calculator"] = {
    "function": calculator,
    "schema": {key: value for key, value in CALCULATOR_TOOL.items() if key != "name"},
}

NEW_TOOLS = [  # name, function, description, {parameter: what it is}
    ("get_weather", get_weather,
     "Gets the current weather in a city: the temperature in °C and the sky. Use it for any question about "
     "the weather somewhere; it knows only a few cities and says so for others.",
     {"city": "The city, e.g. 'Paris'."}),
    ("count_letters", count_letters,
     "Counts how many times one letter occurs in a text, ignoring case. Use it for any question about the "
     "letters of a word or a text.",
     {"text": "The word or text to look in.", "letter": "The single letter to count."}),
]


def schema_for(description: str, parameters: dict[str, str]) -> dict:
    """A tool's schema: its description, and an object of text parameters, all required."""
    properties = {name: {"type": "string", "description": about} for name, about in parameters.items()}
    return {"description": description,
            "input_schema": {"type": "object", "properties": properties, "required": list(parameters)}}


for name, function, description, parameters in NEW_TOOLS:
    TOOL_REGISTRY[name] = {"function": function, "schema": schema_for(description, parameters)}

list(TOOL_REGISTRY)

# %% exercise 5.3
# The dispatcher, with the unknown name's answer written by a helper.
def unknown_tool(name: str) -> str:
    """What the model reads when it asks for a tool the registry lacks: which tools there are."""
    return f"Error: unknown tool {name!r}; the tools are {', '.join(TOOL_REGISTRY)}"


def run_tool(name: str, tool_input: dict) -> str:
    """Run the tool the registry has under that name; an unknown name is answered with an error text."""
    if name not in TOOL_REGISTRY:
        return unknown_tool(name)
    return TOOL_REGISTRY[name]["function"](**tool_input)


run_tool("get_weather", {"city": "Paris"}), run_tool("teleporter", {})

# %% exercise 5.5
# The loop as a recursion: one model call per step, one call fewer left each time.
def _turn(client, messages: list, system: str, calls_left: int, max_iterations: int) -> str:
    """Call the model once; if it asks for tools, answer them all in one message and go on with one call fewer."""
    if calls_left == 0:
        raise RuntimeError(f"still asking for tools after {max_iterations} calls (max_iterations={max_iterations})")
    reply = client.messages.create(model=MODEL, max_tokens=1024, system=system, tools=TOOLS, messages=messages)
    messages.append({"role": "assistant", "content": reply.content})
    if reply.stop_reason != "tool_use":
        return "".join(block.text for block in reply.content if block.type == "text")
    messages.append({"role": "user", "content": [tool_result(block, run_tool(block.name, block.input))
                                                 for block in reply.content if block.type == "tool_use"]})
    return _turn(client, messages, system, calls_left - 1, max_iterations)


def agent_turn(client, messages: list, max_iterations: int = 10, system: str = SYSTEM_PROMPT) -> str:
    """Call the model and run the tools it asks for until it answers in words; return that answer."""
    return _turn(client, messages, system, max_iterations, max_iterations)


agent_turn(client, [{"role": "user", "content": BOTH_QUESTION}])
