"""The one version line: `vault-agent --version` prints it, with or without the typer app built."""

from __future__ import annotations

from importlib.metadata import version


def version_line() -> str:
    """`vault-agent X.Y.Z`, the installed package's version."""
    return f"vault-agent {version('vault-agent')}"
