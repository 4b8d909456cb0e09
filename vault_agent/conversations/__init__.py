"""Conversations (seed 003's communication half): the server's record of each agent session.

`records` defines the lines of a record, `store` keeps them append-only and checksummed in
`<index-dir>/conversations/`, `hub` owns the open conversations of one process (boundaries,
idle timeout, listeners), `tools` holds the core functions behind send_message,
end_conversation and get_conversation, `digest` the deterministic summary, `undo` the
revert of a conversation's writes. Transports (MCP, HTTP SSE, CLI) live in api/ and cli/.
"""
