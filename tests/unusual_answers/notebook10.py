# Unusual but correct answers to notebook 10's exercises, each leaning on code of the learner's own. Each
# `# %% exercise N` section is the whole source of that exercise's cell: tests/test_series_stages.py runs
# solutions/10_evals_and_tracing.ipynb with these cells instead of its own, checks them with the notebook's checks,
# and runs the series' stage 012 tests against the agent_evals.py it writes. Not a module: read as text.

# %% exercise 10.1
# The rates as dollars per token, computed once.
PER_TOKEN = {"input_tokens": PRICE_INPUT / 1e6, "output_tokens": PRICE_OUTPUT / 1e6}


def cost_of(usage):
    return sum(getattr(usage, field) * rate for field, rate in PER_TOKEN.items())


# %% exercise 10.2
# The entry and its line made by helpers of the learner's own.
def entry_for(reply, tag_prefix):
    return {"agent": tag_prefix[:-1] if tag_prefix.endswith(":") else (tag_prefix or "parent"),
            "stop_reason": reply.stop_reason,
            "tools": [block.name for block in reply.content if block.type == "tool_use"],
            "input_tokens": reply.usage.input_tokens, "output_tokens": reply.usage.output_tokens,
            "cost": cost_of(reply.usage)}


def line_for(entry, tag_prefix):
    tools = ",".join(entry["tools"]) if entry["tools"] else "-"
    return (f"[{tag_prefix}trace] stop={entry['stop_reason']} tools={tools} "
            f"tokens={entry['input_tokens']}+{entry['output_tokens']} cost=${entry['cost']:.6f}\n")


def agent_turn(client, system, registry, messages, output_stream, tag_prefix="", trace=None):
    definitions = [dict(name=name, **entry["schema"]) for name, entry in registry.items()]
    while True:
        reply = client.messages.create(model=MODEL, max_tokens=1024, system=system, tools=definitions,
                                       messages=messages)
        messages.append({"role": "assistant", "content": reply.content})
        if trace is not None:
            trace.append(entry_for(reply, tag_prefix))
            output_stream.write(line_for(trace[-1], tag_prefix))
        calls = [block for block in reply.content if block.type == "tool_use"]
        if reply.stop_reason != "tool_use":
            return "".join(block.text for block in reply.content if block.type == "text")
        results = []
        for call in calls:
            text, failed = run_tool(registry, call.name, call.input)
            print(f"[{tag_prefix}{'tool-error' if failed else 'tool'}] {call.name}({call.input}) -> {text}",
                  file=output_stream)
            result = {"type": "tool_result", "tool_use_id": call.id, "content": text}
            results.append({**result, "is_error": True} if failed else result)
        messages.append({"role": "user", "content": results})


# %% exercise 10.3
# One helper of the learner's own lists the tools a trace called, for the three expectations.
def tools_called(trace):
    return [tool for entry in trace for tool in entry["tools"]]


def expect_tool_call(name):
    def holds(trace, reply):
        if name in tools_called(trace):
            return None
        return f"expected a call to {name!r}, but the tools called were {tools_called(trace) or 'none'}"
    return holds


# %% exercise 10.4
def expect_no_tool_calls():
    def holds(trace, reply):
        made = tools_called(trace)
        return f"expected no tool calls, but {', '.join(made)} ran" if made else None
    return holds


# %% exercise 10.5
def expect_reply_contains(text):
    wanted = text.casefold()

    def holds(trace, reply):
        return None if wanted in reply.casefold() else f"expected the reply to contain {text!r}; it said {reply!r}"
    return holds


# %% exercise 10.6
# Each case played by a function of the learner's own, the lines gathered before they are written.
def play(client, output_stream, case):
    trace, history = [], [{"role": "user", "content": case["prompt"]}]
    reply = agent_turn(client, SYSTEM_PROMPT, build_registry(client, output_stream, trace), history, output_stream,
                       trace=trace)
    return [complaint for expectation in case["checks"] for complaint in [expectation(trace, reply)] if complaint]


def run_evals(client, output_stream, cases):
    failures = 0
    for case in cases:
        complaints = play(client, output_stream, case)
        lines = [f"[eval] {'FAIL' if complaints else 'PASS'} {case['name']}"]
        lines += [f"[eval]   - {complaint}" for complaint in complaints]
        output_stream.write("\n".join(lines) + "\n")
        failures += bool(complaints)
    output_stream.write(f"[eval] {len(cases) - failures}/{len(cases)} passed\n")
    return failures
