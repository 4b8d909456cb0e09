"""What every CLI command shares: the common options, settings, and the error runner.

The options are typer's; the rest lives in cli/running.py (no typer) and is re-exported.

The CLI is a composition root: it is one of the few places that read the environment.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

# Re-exported: the typer commands import them from here.
from vault_agent.cli.running import fail as fail
from vault_agent.cli.running import print_json as print_json
from vault_agent.cli.running import run_command as run_command
from vault_agent.cli.running import settings_from as settings_from

VaultOpt = Annotated[
    Path | None,
    typer.Option(
        "--vault", help="Vault root (env VAULT_AGENT_VAULT; default: current directory).", show_default=False
    ),
]
IndexDirOpt = Annotated[
    Path | None,
    typer.Option(
        "--index-dir",
        help="State dir (env VAULT_AGENT_INDEX_DIR; default: <vault>/.vault-agent).",
        show_default=False,
    ),
]
ConfigOpt = Annotated[
    Path | None,
    typer.Option(
        "--config", help="Config file (default: <vault>/.vault-agent/config.toml).", show_default=False
    ),
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print the exact JSON body instead of human output.")]
ServerOpt = Annotated[
    str | None,
    typer.Option(
        "--server",
        help="Server URL (env VAULT_AGENT_SERVER; default: the vault's running serve, else http://127.0.0.1:8765).",
        show_default=False,
    ),
]
TokenOpt = Annotated[
    str | None,
    typer.Option(
        "--token",
        help="Bearer token (env VAULT_AGENT_TOKEN; default: <index-dir>/token).",
        show_default=False,
    ),
]
