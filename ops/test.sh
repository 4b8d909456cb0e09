#!/usr/bin/env bash
# Sets up a local virtualenv (first run only) and runs the whole check: ruff (lint and the
# complexity ceiling), mypy (strict on the package, ops/mypy-tests.ini on tests and ops),
# the dead-code check, the shape check (no function with 8 or more parameters, no class
# over 250 lines), then pytest.
# Usage: bash ops/test.sh [pytest args]     (slow trials: bash ops/test.sh -m slow)
#        VENV=/path/to/env bash ops/test.sh (an environment with vault-agent[test]; ops/venv.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
source ops/venv.sh
"$VENV/bin/ruff" check vault_agent tests ops
"$VENV/bin/ruff" format --check vault_agent tests ops
"$VENV/bin/mypy" vault_agent
"$VENV/bin/mypy" --config-file ops/mypy-tests.ini tests ops
"$VENV/bin/python" ops/deadcode.py
"$VENV/bin/python" ops/check_shape.py
"$VENV/bin/python" -m pytest "$@"
