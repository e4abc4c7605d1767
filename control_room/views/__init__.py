"""Views: files and screens derived from the state (SPEC §4 step 8, §7, §10).

- ``status``: ``control-room status``, the room on one screen
- ``context``: the auto block of CURRENT_CONTEXT.md
- ``refresh``: bring every view file up to date (DIGEST.md, CURRENT_CONTEXT.md)
- ``merge``: git's merge driver for those two (their generated part ours, the people's part three-way)
- ``mcp_server``, ``mcp_tools``: ``control-room mcp``, the room over MCP (an edge of its own:
  it refreshes the views after each call that changed the room); ``mcp_args``: what a client
  may send (the caps, a task's schema from the task table, each call checked against its schema)

Views are refreshed at the edge of a command (``cli``: the end of any command that appended to
the ledger, and after each cycle of ``run``), never from inside a change to the model, so data
flows one way. May import everything below it; only the edges (``cli``) import it.
"""
