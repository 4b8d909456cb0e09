"""Composition of a server process, above `api` and `web`: the context it serves from
(`context.py`) and the running HTTP server with MCP and the web page (`http_server.py`)."""
