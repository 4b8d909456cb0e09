#!/usr/bin/env bash
# Sets up a local virtualenv (first run only) and runs the whole check: ruff + pytest.
# Usage: bash ops/test.sh [pytest args]     (slow trials: bash ops/test.sh -m slow)
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
stamp=.venv/.installed-$(sha256sum pyproject.toml | cut -c1-16)
if [ ! -f "$stamp" ]; then
  .venv/bin/python -m pip install --quiet --upgrade pip
  .venv/bin/python -m pip install --quiet -e ".[test]"
  rm -f .venv/.installed-* && touch "$stamp"
fi
.venv/bin/ruff check vault_agent tests ops
.venv/bin/python -m pytest "$@"
