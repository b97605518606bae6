# Unusual but correct answers to notebook 6's exercises, each leaning on code of the learner's own: the kind of
# answer a program written from the named definitions alone broke (issue 35). Each `# %% exercise N` section is
# the whole source of that exercise's cell: tests/test_series_stages.py runs solutions/06_when_calls_go_wrong.ipynb
# with these cells instead of its own, checks them with the notebook's checks, and runs the series' stage 008 tests
# against the agent_robust.py it writes. Not a module: read as text.

# %% exercise 6.1
# A call that cannot be made is an exception of the learner's own, its reasons found by a generator; the inputs
# a call may carry are a set of types.
class ToolCallError(Exception):
    """A call the harness cannot make; its text is what the model reads."""


OBJECT_TYPES = {dict}  # what a tool's input may be: an object, as every input_schema says


def reasons_against(name, tool_input):
    """Why this call cannot be made, most basic reason first (the caller needs only the first)."""
    if not isinstance(name, str) or name not in TOOL_REGISTRY:
        yield f"Error: unknown tool {name!r}; the tools are {', '.join(TOOL_REGISTRY)}"
        return
    if not isinstance(tool_input, tuple(OBJECT_TYPES)):
        yield f"Error: bad arguments for {name!r}: the input must be an object, not {type(tool_input).__name__}"
        return
    try:
        inspect.signature(TOOL_REGISTRY[name]["function"]).bind(**tool_input)
    except TypeError as error:
        yield f"Error: bad arguments for {name!r}, which do not fit the function ({error})"


def checked_call(name, tool_input):
    """The tool's function, once the call is known to fit it; ToolCallError with the first reason otherwise."""
    for reason in reasons_against(name, tool_input):
        raise ToolCallError(reason)
    return TOOL_REGISTRY[name]["function"]


def run_tool(name: str, tool_input) -> tuple[str, bool]:
    """Run the tool the model asked for: (its text, False), or (an "Error: ..." text, True). Never raises."""
    try:
        function = checked_call(name, tool_input)
    except ToolCallError as error:
        return str(error), True
    try:
        return str(function(**tool_input)), False
    except Exception as error:  # the tool failed, whatever the exception
        return f"Error: {name!r} raised {type(error).__name__}: {error}", True


for name, tool_input in [("calculator", {"expression": "2 + 3"}), ("get_wether", {"city": "Paris"}),
                         ("get_weather", {"town": "Paris"}), ("get_weather", "Paris"),
                         ("calculator", {"expression": "1 / 0"})]:
    print(f"{name}({tool_input!r}) -> {run_tool(name, tool_input)}")

# %% exercise 6.3
# The calls that failed in this turn kept in a set of the learner's own, which knows how to hold a call (its
# input is a dict, which no set can hold as it is).
import json

NOT_RUN = "Error: not run: this very call already failed in this turn"


class FailedCalls(set):
    """The calls that failed in one turn, each as its tool's name and its input written out."""

    @staticmethod
    def key(call) -> tuple[str, str]:
        return call.name, json.dumps(call.input, sort_keys=True, default=repr)

    def note(self, call) -> None:
        self.add(self.key(call))

    def holds(self, call) -> bool:
        return self.key(call) in self


def agent_turn(client, messages: list, max_iterations: int = 10, system: str = SYSTEM_PROMPT) -> str:
    """agent_turn, stopping a model that repeats a call that failed in this turn."""
    failed = FailedCalls()
    for _ in range(max_iterations):
        reply = client.messages.create(
            model=MODEL, max_tokens=1024, system=system, tools=TOOLS, messages=messages,
        )
        messages.append({"role": "assistant", "content": reply.content})
        if reply.stop_reason != "tool_use":
            return "".join(block.text for block in reply.content if block.type == "text")
        calls = [block for block in reply.content if block.type == "tool_use"]
        repeated = next((call for call in calls if failed.holds(call)), None)
        results = []
        for call in calls:
            text, is_error = (NOT_RUN, True) if repeated else run_tool(call.name, call.input)
            result = {"type": "tool_result", "tool_use_id": call.id, "content": text}
            if is_error:
                result["is_error"] = True
                failed.note(call)
            results.append(result)
        messages.append({"role": "user", "content": results})
        if repeated:
            return f"(stopped: the model repeated a call that had failed, {repeated.name}({repeated.input}))"
    raise RuntimeError(f"the model was still asking for tools after {max_iterations} calls")


STUBBORN_QUESTION = "What is 7 / 0? Try the calculator again if it fails."
stubborn = [{"role": "user", "content": STUBBORN_QUESTION}]
agent_turn(client, stubborn)
