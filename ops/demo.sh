#!/usr/bin/env bash
# Sets up a local virtualenv (first run only), indexes the bundled demo vault and serves it
# with the watcher on http://127.0.0.1:8765 (MCP at /mcp; --port 0 picks a free port). Ctrl-C stops it.
# Usage: bash ops/demo.sh [extra serve options, e.g. --port 0 --allow-writes]
set -euo pipefail
cd "$(dirname "$0")/.."
source ops/venv.sh
VAULT=fixtures/demo
.venv/bin/vault-agent index --vault "$VAULT"
# The CLI finds this server through the address `serve` records in the vault's state dir,
# so these commands reach it on any --port (0 included) without --server.
Q=$(printf %q "$VAULT")
echo "In another terminal: .venv/bin/vault-agent overview --vault $Q   (token is read from $Q/.vault-agent/token)"
echo "Hybrid search (the server embeds the notes in the background; 'status --verbose' shows the share):"
echo "  .venv/bin/vault-agent search 'how do I wipe dust off the glass optics' --vault $Q"
exec .venv/bin/vault-agent serve --watch --vault "$VAULT" "$@"
