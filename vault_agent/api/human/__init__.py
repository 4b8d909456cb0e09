"""Human text of operations: the CLI renderers of their answers and parsers of their flags.

Each operation in `api/ops/` names its renderer (and any flag converter) from here. These
modules import neither pydantic nor the core, so a server-backed CLI command can render an
answer without building the catalog (tests/cli/test_thin_cli.py keeps it so).
"""
