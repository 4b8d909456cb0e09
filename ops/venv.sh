# Sourced by ops/test.sh and ops/demo.sh: sets VENV, the environment they run. By default it
# is .venv, made on first run, with the project and its test extra installed whenever
# pyproject.toml changed since the last install. `VENV=/path/to/env` uses that environment as
# it is (vault-agent installed in it), e.g. one made outside the checkout.
if [ -n "${VENV:-}" ]; then
  return 0
fi
VENV=.venv
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
