"""The owner's web page, served by `vault-agent serve` at `/` (docs/web.md).

Health, search with explain, a note's outline and sections, conversations with live
messages, replies to an agent's question, and undo: server-rendered HTML (Jinja2, in
`templates/`) with a little hand-written JavaScript and CSS (`static/`), no build step and
nothing loaded from elsewhere. Every view reads through the same operations and core
functions as the API, MCP and CLI; nothing here holds the index writer. Only `server.http_server`
imports this package (`tests/kernel/test_boundaries.py`).
"""
