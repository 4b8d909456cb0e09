"""The request and the output of a server-backed command, without typer.

`vault-agent OP [ARGS] [--options]` sends the operation's request to the running server
(`--server` / VAULT_AGENT_SERVER) with the bearer token (`--token` / VAULT_AGENT_TOKEN /
`<index-dir>/token` for a local server). `--json` prints the HTTP body exactly; otherwise
a compact rendering, with warnings (and the freshness of raw contracts) on stderr.
Errors come back as the canonical object and exit with the SPEC code; no server → exit 6.
The typer command (cli/remote.py) and the quick path (cli/main.py) both call `execute`.
"""

from __future__ import annotations

import contextlib
import json
import shlex
import sys
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from contextvars import ContextVar
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vault_agent.api.human.common import CONNECTION_FLAGS, REQUEST_PARAMS
from vault_agent.cli.command_spec import CommandSpec
from vault_agent.cli.render import render_body
from vault_agent.cli.running import run_command, settings_from
from vault_agent.errors import InvalidParameter, ServerUnavailable, VaultAgentError, from_body

if TYPE_CHECKING:
    from vault_agent.config import Settings

TIMEOUT_S = 120.0
START_HINT = "start one with: vault-agent serve --watch --vault PATH (or pass --server URL)"


# ----------------------------------------------------------------------------- HTTP call
def _flatten(prefix: str, value: Any, out: list[tuple[str, str]]) -> None:
    if isinstance(value, dict):
        for key, item in value.items():
            _flatten(f"{prefix}.{key}" if prefix else key, item, out)
    elif isinstance(value, list):
        if any(isinstance(v, dict | list) for v in value):
            out.append((prefix, json.dumps(value)))
        else:
            out.extend((prefix, _scalar(v)) for v in value)
    elif value is not None:
        out.append((prefix, _scalar(value)))


def _scalar(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _is_local(url: str) -> bool:
    from vault_agent.api.security import is_loopback_host

    host = urllib.parse.urlsplit(url).hostname or ""
    return is_loopback_host(host)


def resolve_token(settings: Settings, server: str) -> str | None:
    """--token / VAULT_AGENT_TOKEN (in settings), else the token file when the server is local."""
    if settings.token:
        return settings.token
    if _is_local(server):
        from vault_agent.api.security import read_token_file

        return read_token_file(settings.token_file)
    return None


def start_hint(vault: object = None) -> str:
    """How to start a server: the vault as the user named it, shell-quoted, when that is a
    relative path (an error never holds an absolute path), else a placeholder."""
    if vault is None or Path(str(vault)).is_absolute() or str(vault).startswith("~"):
        return START_HINT
    return f"start one with: {shlex.join(['vault-agent', 'serve', '--watch', '--vault', str(vault)])} (or pass --server URL)"


def call_server(
    op: CommandSpec,
    params: dict[str, Any],
    server: str,
    token: str | None,
    vault_id: str | None = None,
    hint: str = START_HINT,
) -> tuple[str, dict[str, str]]:
    """Send one operation to the server; the body text and headers of a success.

    `vault_id` (the fingerprint of the vault this CLI means) lets a server for another
    vault say so instead of refusing the token.

    Raises:
        ServerUnavailable: nothing answers at `server`.
        VaultAgentError: the server's canonical error (its code decides the exit code).
    """
    from vault_agent.api.security import SURFACE_HEADER

    base = server.rstrip("/")
    headers = {"Accept": "application/json", SURFACE_HEADER: "cli"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    if vault_id:
        from vault_agent.api.security import VAULT_ID_HEADER

        headers[VAULT_ID_HEADER] = vault_id
    data = None
    if op.http_method == "GET":
        pairs: list[tuple[str, str]] = []
        _flatten("", params, pairs)
        url = base + op.http_path + (("?" + urllib.parse.urlencode(pairs)) if pairs else "")
    else:
        url = base + op.http_path
        data = json.dumps(params, ensure_ascii=False).encode("utf-8")
        headers["Content-Type"] = "application/json"
    request = urllib.request.Request(url, data=data, method=op.http_method, headers=headers)
    try:
        # A loopback server is never reached through an HTTP proxy (the token must not leave).
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({})) if _is_local(base) else None
        open_url = opener.open if opener is not None else urllib.request.urlopen
        with open_url(request, timeout=TIMEOUT_S) as resp:
            return resp.read().decode("utf-8"), dict(resp.headers.items())
    except urllib.error.HTTPError as exc:
        text = exc.read().decode("utf-8", "replace")
        try:
            body = json.loads(text)
        except ValueError:
            body = None
        if isinstance(body, dict) and isinstance(body.get("error"), dict):
            err = from_body(body)
            err.raw_body = text  # type: ignore[attr-defined]
            raise err from None
        raise ServerUnavailable(
            f"the server at {base} answered HTTP {exc.code}, not vault-agent; {hint}"
        ) from None
    except (urllib.error.URLError, ConnectionError, TimeoutError, OSError):
        raise ServerUnavailable(f"no vault-agent server answers at {base}; {hint}") from None


def connection(settings: Settings, vault: object = None) -> tuple[str, str | None, str | None, str]:
    """Where a server-backed command goes: (server, token, vault id, start hint), for
    `call_server`. `vault` is --vault as given (None: not named)."""
    from vault_agent.server_address import server_url

    server = server_url(settings)
    # The vault is known when named (--vault) or when its state dir gives the token.
    vault_id = None
    if vault is not None or (not settings.token and _is_local(server)):
        from vault_agent.api.security import vault_fingerprint

        vault_id = vault_fingerprint(settings.vault)
    return server, resolve_token(settings, server), vault_id, start_hint(vault)


def param_name(flag: str) -> str:
    return "opt_" + flag.lstrip("-").replace("-", "_")


def _set_dotted(out: dict[str, Any], target: str, value: Any) -> None:
    parts = target.split(".")
    node = out
    for part in parts[:-1]:
        node = node.setdefault(part, {})
    node[parts[-1]] = value


def _emit_warnings(op: CommandSpec, body: Any, headers: dict[str, str]) -> None:
    if not op.envelope:
        freshness = headers.get("X-Index-Freshness")
        if freshness:
            sys.stderr.write(f"index freshness: {freshness}\n")
        warnings = json.loads(headers.get("X-Index-Warnings") or "[]")
    else:
        warnings = body.get("warnings", []) if isinstance(body, dict) else []
    for warning in warnings:
        sys.stderr.write(f"warning [{warning.get('code')}]: {warning.get('message')}\n")


def _connection_flags(kwargs: dict[str, Any]) -> tuple[str, ...]:
    """`--vault`, `--index-dir` and `--server` as given on this command line (never the token)."""
    out: list[str] = []
    for flag, name in (("--vault", "vault"), ("--index-dir", "index_dir"), ("--server", "server")):
        if kwargs.get(name) is not None:
            out += [flag, str(kwargs[name])]
    return tuple(out)


@contextlib.contextmanager
def _bound(var: ContextVar[Any], value: Any) -> Iterator[None]:
    token = var.set(value)
    try:
        yield
    finally:
        var.reset(token)


def execute(op: CommandSpec, kwargs: dict[str, Any]) -> None:
    """Send one command's request and print its answer (`kwargs` as the command function gets them).

    Raises:
        SystemExit: the SPEC exit code of a failure (the error is already printed).
    """
    as_json = bool(kwargs.get("json_out"))

    def body() -> int | None:
        settings = settings_from(
            kwargs.get("vault"),
            kwargs.get("index_dir"),
            kwargs.get("config"),
            require_vault=False,  # the server reads its own vault; --vault only locates the token
            server=kwargs.get("server"),
            token=kwargs.get("token"),
        )
        params: dict[str, Any] = {}
        for arg in op.args:
            if kwargs.get(arg.name) is not None:
                params[arg.name] = kwargs[arg.name]
            elif arg.required:  # the server's words for it, without needing a server
                raise InvalidParameter(
                    f"argument {arg.name.upper()} is required; see 'vault-agent {op.name} --help'"
                )
        for opt in op.options:
            value = kwargs.get(param_name(opt.flag))
            if (value is None or value is False) and not as_json and opt.human_default is not None:
                value = opt.human_default  # e.g. grep: line numbers for people, the HTTP body for --json
            if value is None or value is False or value == []:
                continue
            try:
                value = opt.convert(value) if opt.convert else value
            except (TypeError, ValueError):
                # Both converters read line ranges (--range, --delete-lines).
                raise InvalidParameter(f"option {opt.flag} must be a line range like 12-20") from None
            _set_dotted(params, opt.target, value)
        try:
            text, headers = call_server(op, params, *connection(settings, kwargs.get("vault")))
        except VaultAgentError as exc:
            raw = getattr(exc, "raw_body", None)
            if as_json and raw is not None:
                sys.stdout.write(raw.rstrip("\n") + "\n")
                sys.stdout.flush()
                raise SystemExit(exc.exit_code) from None
            raise
        parsed = json.loads(text)
        if as_json:
            if not op.envelope:
                # SPEC: a raw per-note contract's freshness (and warnings) go to stderr
                # always, --json included; stdout stays exactly the contract.
                _emit_warnings(op, parsed, headers)
            sys.stdout.write(text.rstrip("\n") + "\n")
        else:
            _emit_warnings(op, parsed, headers)
            # Suggested commands in the output point at this vault and server, as typed.
            flags = _connection_flags(kwargs)
            with _bound(CONNECTION_FLAGS, flags), _bound(REQUEST_PARAMS, params):
                sys.stdout.write(render_body(op.envelope, parsed, op.render) + "\n")
        sys.stdout.flush()
        return None

    run_command(as_json, body)
