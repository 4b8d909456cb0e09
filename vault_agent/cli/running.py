"""Running one command, without typer: settings, error reporting and the exit code.

The typer commands (cli/common.py re-exports these) and the quick path of server-backed
commands (cli/main.py) share them. Exits are `SystemExit(code)`, which is what typer's
own `Exit` becomes in the console script, so the same code serves both.
The CLI is a composition root: it is one of the few places that read the environment.
"""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn

from vault_agent.config import Settings, load_settings
from vault_agent.errors import InvalidPath, NotFound, VaultAgentError, from_os_error, internal_error

log = logging.getLogger("vault_agent.cli")


def settings_from(
    vault: Path | None,
    index_dir: Path | None,
    config: Path | None,
    *,
    require_vault: bool = True,
    **flags: Any,
) -> Settings:
    """Settings for one CLI invocation (flags > env > config file > defaults).

    With `require_vault` (commands that read or index the vault here), a vault root that is
    not an existing folder fails instead of being created and indexed as an empty vault.

    Raises:
        InvalidParameter: a malformed option or config file.
        NotFound: `require_vault` and the vault root does not exist.
        InvalidPath: `require_vault` and the vault root is a file.
    """
    settings = load_settings({"vault": vault, "index_dir": index_dir, "config": config, **flags})
    _seen_paths[:] = [settings.vault, settings.index_dir]
    _scrub_paths_of(settings)
    if require_vault and not settings.vault.is_dir():
        if settings.vault.exists():
            raise InvalidPath(
                "--vault names a file, not a folder; pass the folder that holds your notes "
                "(for a single note, its parent folder)"
            )
        raise NotFound("the vault folder does not exist; pass an existing folder with --vault")
    return settings


def print_json(obj: Any) -> None:
    sys.stdout.write(json.dumps(obj, ensure_ascii=False, indent=None, separators=(",", ":")) + "\n")
    sys.stdout.flush()


def fail(exc: VaultAgentError, as_json: bool) -> NoReturn:
    """Report an error the SPEC way: error object on stdout with --json, message on stderr."""
    if as_json:
        print_json(exc.to_body())
    else:
        sys.stderr.write(f"error [{exc.code}]: {exc.message}\n")
    raise SystemExit(exc.exit_code)


_seen_paths: list[Path] = []  # vault and state dir of this invocation, for the log scrubber


def _scrub_paths_of(settings: Settings) -> None:
    """Point an installed scrubbing formatter at this invocation's vault and state dir."""
    from vault_agent.api.logging_setup import JsonFormatter, default_scrubber

    for handler in logging.getLogger().handlers:
        if isinstance(handler.formatter, JsonFormatter):
            handler.formatter.scrubber = default_scrubber(settings.vault, settings.index_dir)


def _ensure_scrubbed_logging() -> None:
    """Before logging a failure of a local command, route the log through the same
    path-scrubbing JSON formatter as `serve` (logs never carry absolute paths)."""
    from vault_agent.api.logging_setup import JsonFormatter, configure_logging

    root = logging.getLogger()
    if any(isinstance(h.formatter, JsonFormatter) for h in root.handlers):
        return  # serve / mcp already log through the scrubber
    vault, index_dir = (_seen_paths + [None, None])[:2]
    configure_logging(logging.getLevelName(root.level), vault=vault, index_dir=index_dir)


def run_command(as_json: bool, body: Callable[[], int | None]) -> None:
    """Run a command body, translating every failure into its SPEC exit code."""
    try:
        code = body()
    except VaultAgentError as exc:
        fail(exc, as_json)
    except KeyboardInterrupt:
        raise SystemExit(130) from None
    except OSError as exc:
        # Tool calls arrive already translated; what is left comes from index commands,
        # whose writes go to the state dir (disk full, read-only).
        mapped = from_os_error(exc, "state")
        if mapped is None:
            _ensure_scrubbed_logging()
            mapped = internal_error(log, "command failed")
        fail(mapped, as_json)
    except Exception:
        _ensure_scrubbed_logging()
        fail(internal_error(log, "command failed"), as_json)
    if code:
        raise SystemExit(code)
