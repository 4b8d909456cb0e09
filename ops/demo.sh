#!/usr/bin/env bash
# Sets up a local virtualenv (first run only), indexes the bundled demo vault and serves it
# with the watcher on http://127.0.0.1:8765 (MCP at /mcp; --port 0 picks a free port). Ctrl-C stops it.
# Usage: bash ops/demo.sh [extra serve options, e.g. --port 0 --allow-writes]
#        VENV=/path/to/env bash ops/demo.sh   (an environment with vault-agent installed; see ops/venv.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
source ops/venv.sh
VAULT=fixtures/demo
CLI="$VENV/bin/vault-agent"
"$CLI" index --vault "$VAULT"
# The CLI finds this server through the address `serve` records in the vault's state dir,
# so these commands reach it on any --port (0 included) without --server.
Q=$(printf %q "$VAULT")
C=$(printf %q "$CLI")
echo "In another terminal: $C overview --vault $Q   (token is read from $Q/.vault-agent/token)"
echo "Hybrid search (the server embeds the notes in the background; 'status --verbose' shows the share):"
echo "  $C search 'how do I wipe dust off the glass optics' --vault $Q"
exec "$CLI" serve --watch --vault "$VAULT" "$@"
