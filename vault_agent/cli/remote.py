"""Server-backed commands, generated from the registry: one command per HTTP operation.

`vault-agent OP [ARGS] [--options]` sends the operation's request to the running server
(`--server` / VAULT_AGENT_SERVER) with the bearer token (`--token` / VAULT_AGENT_TOKEN /
`<index-dir>/token` for a local server). `--json` prints the HTTP body exactly; otherwise
a compact rendering, with warnings (and the freshness of raw contracts) on stderr.
Errors come back as the canonical object and exit with the SPEC code; no server → exit 6.
"""

from __future__ import annotations

import inspect
import json
import sys
import urllib.error
import urllib.parse
import urllib.request
from typing import Annotated, Any, Literal, get_args, get_origin

import typer

from vault_agent.api.registry import CliOption, Operation, operations
from vault_agent.cli.common import (
    ConfigOpt,
    IndexDirOpt,
    JsonOpt,
    ServerOpt,
    TokenOpt,
    VaultOpt,
    run_command,
    settings_from,
)
from vault_agent.cli.main import app
from vault_agent.cli.render import render_body
from vault_agent.config import Settings
from vault_agent.errors import InvalidParameter, ServerUnavailable, VaultAgentError, from_body

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


def call_server(
    op: Operation, params: dict[str, Any], server: str, token: str | None, vault_id: str | None = None
) -> tuple[str, dict[str, str]]:
    """Send one operation to the server; the body text and headers of a success.

    `vault_id` (the fingerprint of the vault this CLI means) lets a server for another
    vault say so instead of refusing the token.

    Raises:
        ServerUnavailable: nothing answers at `server`.
        VaultAgentError: the server's canonical error (its code decides the exit code).
    """
    base = server.rstrip("/")
    headers = {"Accept": "application/json"}
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
            f"the server at {base} answered HTTP {exc.code}, not vault-agent; {START_HINT}"
        ) from None
    except (urllib.error.URLError, ConnectionError, TimeoutError, OSError):
        raise ServerUnavailable(f"no vault-agent server answers at {base}; {START_HINT}") from None


# ----------------------------------------------------------------------------- options
def _py_type(annotation: Any) -> type:
    for alt in [annotation, *get_args(annotation)]:
        if alt in (int, float, bool, str):
            return alt  # type: ignore[no-any-return]
        if get_origin(alt) is Literal:
            return str
    return str


def _is_scalar(annotation: Any) -> bool:
    alts = [a for a in (get_args(annotation) or (annotation,)) if a is not type(None)]
    return all(a in (int, float, bool, str) or get_origin(a) is Literal for a in alts)


def options_of(op: Operation) -> list[CliOption]:
    """Declared options, else every top-level scalar field not taken positionally."""
    if op.cli_options:
        return list(op.cli_options)
    out = []
    for name, info in op.params.model_fields.items():
        if name in op.cli_args or not _is_scalar(info.annotation):
            continue
        out.append(
            CliOption(
                flag="--" + name.replace("_", "-"),
                target=name,
                type=_py_type(info.annotation),
                help=(info.description or "").strip(),
            )
        )
    return out


def _param_name(flag: str) -> str:
    return "opt_" + flag.lstrip("-").replace("-", "_")


def _set_dotted(out: dict[str, Any], target: str, value: Any) -> None:
    parts = target.split(".")
    node = out
    for part in parts[:-1]:
        node = node.setdefault(part, {})
    node[parts[-1]] = value


# The command signatures are built at run time from each operation's params model, so the
# annotations are values here, not types mypy could check.
_Annotated: Any = Annotated


def _signature(op: Operation, opts: list[CliOption]) -> inspect.Signature:
    params: list[inspect.Parameter] = []
    fields = op.params.model_fields
    for name in op.cli_args:
        info = fields.get(name)
        required = info is not None and info.is_required()
        kind: Any = _py_type(info.annotation) if info is not None else str
        ann: Any = _Annotated[
            kind | None,
            typer.Argument(
                help=(info.description or "") if info else "", show_default=False, metavar=name.upper()
            ),
        ]
        default: Any = inspect.Parameter.empty if required else None
        params.append(
            inspect.Parameter(name, inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=ann, default=default)
        )
    for opt in opts:
        if opt.type is bool and not opt.multiple:
            ann = _Annotated[bool, typer.Option(opt.flag, help=opt.help)]
            default = False
        elif opt.multiple:
            ann = _Annotated[list.__class_getitem__(opt.type) | None, typer.Option(opt.flag, help=opt.help, show_default=False)]
            default = None
        else:
            ann = _Annotated[opt.type | None, typer.Option(opt.flag, help=opt.help, show_default=False)]
            default = None
        params.append(
            inspect.Parameter(
                _param_name(opt.flag), inspect.Parameter.KEYWORD_ONLY, annotation=ann, default=default
            )
        )
    for name, ann in (
        ("vault", VaultOpt),
        ("index_dir", IndexDirOpt),
        ("config", ConfigOpt),
        ("json_out", JsonOpt),
        ("server", ServerOpt),
        ("token", TokenOpt),
    ):
        params.append(
            inspect.Parameter(
                name,
                inspect.Parameter.KEYWORD_ONLY,
                annotation=ann,
                default=False if name == "json_out" else None,
            )
        )
    return inspect.Signature(params)


def _emit_warnings(op: Operation, body: Any, headers: dict[str, str]) -> None:
    if not op.envelope:
        freshness = headers.get("X-Index-Freshness")
        if freshness:
            sys.stderr.write(f"index freshness: {freshness}\n")
        warnings = json.loads(headers.get("X-Index-Warnings") or "[]")
    else:
        warnings = body.get("warnings", []) if isinstance(body, dict) else []
    for warning in warnings:
        sys.stderr.write(f"warning [{warning.get('code')}]: {warning.get('message')}\n")


def make_command(op: Operation) -> Any:
    """The typer command function of one operation."""
    opts = options_of(op)

    def command(**kwargs: Any) -> None:
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
            for name in op.cli_args:
                if kwargs.get(name) is not None:
                    params[name] = kwargs[name]
            for opt in opts:
                value = kwargs.get(_param_name(opt.flag))
                if (value is None or value is False) and not as_json and opt.human_default is not None:
                    value = opt.human_default  # e.g. grep: line numbers for people, the HTTP body for --json
                if value is None or value is False or value == []:
                    continue
                try:
                    value = opt.convert(value) if opt.convert else value
                except (TypeError, ValueError):
                    raise InvalidParameter(f"option {opt.flag} has an invalid value") from None
                _set_dotted(params, opt.target, value)
            server = settings.server
            # The vault is known when named (--vault) or when its state dir gave the token.
            vault_id = None
            if kwargs.get("vault") is not None or (not settings.token and _is_local(server)):
                from vault_agent.api.security import vault_fingerprint

                vault_id = vault_fingerprint(settings.vault)
            try:
                text, headers = call_server(op, params, server, resolve_token(settings, server), vault_id)
            except VaultAgentError as exc:
                raw = getattr(exc, "raw_body", None)
                if as_json and raw is not None:
                    sys.stdout.write(raw.rstrip("\n") + "\n")
                    sys.stdout.flush()
                    raise typer.Exit(exc.exit_code) from None
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
                sys.stdout.write(render_body(op.envelope, parsed, op.render) + "\n")
            sys.stdout.flush()
            return None

        run_command(as_json, body)

    command.__name__ = op.name.replace("-", "_")
    command.__signature__ = _signature(op, opts)  # type: ignore[attr-defined]
    return command


def _help_of(op: Operation) -> str:
    summary = op.cli_help or op.description.split(". ")[0]
    args = " ".join(a.upper() for a in op.cli_args)
    example = f"Example: vault-agent {op.name}{' ' + args if args else ''} --json"
    if "Example:" in summary:
        summary, _, rest = summary.partition("Example:")
        example = "Example:" + rest
    # "\b" keeps click from rewrapping the example (it would split "vault-agent" at the hyphen).
    return f"{summary.strip()}\n\n\b\n{example.strip()}\n\nNeeds a running server: vault-agent serve --watch --vault PATH."


GENERATED: set[str] = set()  # commands this module added (others are local, e.g. `status`)


def register_commands() -> None:
    """Add one command per HTTP operation that no other module already defines."""
    taken = {c.name or (c.callback.__name__ if c.callback else "") for c in app.registered_commands}
    for op in operations():
        if op.mcp_only or op.name in taken:
            continue
        fields = op.params.model_fields
        needs_args = any(fields[a].is_required() for a in op.cli_args if a in fields)
        app.command(name=op.name, help=_help_of(op), no_args_is_help=needs_args)(make_command(op))
        GENERATED.add(op.name)


register_commands()
