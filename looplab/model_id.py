"""`MODEL`: the one model id the course uses, in notebooks, references, checks and recordings alike.

A module of its own, with nothing else in it, so that the light modules (the tools, the reference pieces,
notebook 5's MCP server, which imports them) can name the model without importing the client, and with it
the SDK (about a second of CPU they would never use). client.py re-exports it: `looplab.MODEL` and
`looplab.client.MODEL` are this one string.
"""

MODEL = "claude-haiku-5-5"
