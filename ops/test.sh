#!/usr/bin/env bash
# Sets up a local virtualenv (first run only) and runs the whole check: ruff + mypy + pytest.
# Usage: bash ops/test.sh [pytest args]     (slow trials: bash ops/test.sh -m slow)
set -euo pipefail
cd "$(dirname "$0")/.."
source ops/venv.sh
.venv/bin/ruff check vault_agent tests ops
.venv/bin/mypy vault_agent
.venv/bin/python -m pytest "$@"
