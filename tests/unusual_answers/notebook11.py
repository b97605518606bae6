# Unusual but correct answers to notebook 11's exercises, each leaning on code of the learner's own. Each
# `# %% exercise N` section is the whole source of that exercise's cell: tests/test_series_stages.py runs
# solutions/11_capstone.ipynb with these cells instead of its own, checks them with the notebook's checks, and runs
# the series' stage 013 tests against the agent_capstone.py it writes. Not a module: read as text.

# %% exercise 11.1
# The fold split in two helpers of the learner's own: where to cut, and the ledger's entry for one call.
def cut_point(messages, context_limit):
    """Where the old exchanges end, or None when there is nothing to fold."""
    starts = exchange_starts(messages)
    if history_size(messages) > context_limit and len(starts) > KEEP_RECENT:
        return starts[-KEEP_RECENT]
    return None


def ledger_entry(agent, reply):
    usage = reply.usage
    return dict(agent=agent, stop_reason=reply.stop_reason,
                tools=[block.name for block in reply.content if block.type == "tool_use"],
                input_tokens=usage.input_tokens, output_tokens=usage.output_tokens, cost=cost_of(usage))


def compact(messages, client, output_stream, trace=None, context_limit=CONTEXT_LIMIT):
    split = cut_point(messages, context_limit)
    if split is None:
        return messages[:]
    lines = [render_message(message) for message in messages[:split]]
    reply = client.messages.create(model=MODEL, max_tokens=SUMMARY_MAX_TOKENS, system=SUMMARY_PROMPT,
                                   messages=[{"role": "user", "content": "\n".join(lines)}])
    if trace is not None:
        entry = ledger_entry("compactor", reply)
        trace += [entry]
        tools = ",".join(entry["tools"]) or "-"
        print(f"[compactor:trace] stop={entry['stop_reason']} tools={tools} "
              f"tokens={entry['input_tokens']}+{entry['output_tokens']} cost=${entry['cost']:.6f}", file=output_stream)
    summary = " ".join(block.text for block in reply.content if block.type == "text")
    print(f"[compact] folded {split} messages into a summary", file=output_stream)
    return [dict(role="user", content=f"[Conversation summary: {summary}]"),
            dict(role="assistant", content=ACKNOWLEDGEMENT)] + messages[split:]


# %% exercise 11.2
# The lines read by a generator of the learner's own, and the total said by a helper.
def typed_lines(input_stream, output_stream, echo):
    while True:
        output_stream.write("User> ")
        line = input_stream.readline().strip()
        if not line:
            return
        if echo:
            print(line, file=output_stream)
        yield line


def say_total(trace, output_stream):
    if trace:
        print(f"[trace] session total: {len(trace)} model calls, ${sum(e['cost'] for e in trace):.6f}",
              file=output_stream)


def run(input_stream, output_stream, client, system=SYSTEM_PROMPT, context_limit=CONTEXT_LIMIT, echo_input=False):
    ledger = []
    tools = build_registry(client, output_stream, ledger)
    history = []
    for line in typed_lines(input_stream, output_stream, echo_input):
        history = compact(history, client, output_stream, ledger, context_limit=context_limit)
        history.append({"role": "user", "content": line})
        print(f"Agent> {agent_turn(client, system, tools, history, output_stream, trace=ledger)}", file=output_stream)
    say_total(ledger, output_stream)
