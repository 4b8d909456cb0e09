"""One voice for bad parameters, on every surface, for every operation (issue 23).

The table: every operation × {missing, wrong type, empty, too long, out of range} × {HTTP,
MCP (the real SDK client over Streamable HTTP), CLI (the typer app, against the same real
server)}. Cases are generated from each operation's schema (every constraint the server
enforces, `tool_schema.constraint_schema`); the expected code and wording are written here
independently of the server's code:

- the parameter is named the way the surface spells it: the MCP argument path
  (`range.start_line`), the HTTP name sent (aliases: `q`, `range.startLine`), the CLI flag or
  argument from the generated command table (`--start`, `argument PATH`);
- the problem is said in our words, with the allowed range from the schema;
- nothing leaks: no validation library's words, no absolute path, no echo of the value sent.

The second half checks every operation's answer budget (`Operation.max_answer_chars`) at its
largest parameters on a wide synthetic vault.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from api.serverkit import CANARY, ServerThread, http_mcp_client, serving
from api.widevault import write_wide_vault
from vault_agent.api.invoke import body_of, dump_json, invoke
from vault_agent.api.operation import Operation
from vault_agent.api.ops import CATALOG
from vault_agent.api.tool_schema import compact_schema, constraint_schema
from vault_agent.cli.command_table import COMMANDS
from vault_agent.cli.main import app
from vault_agent.config import Settings, load_settings
from vault_agent.errors import VaultAgentError, range_text
from vault_agent.indexer.build import build_index

LONG = "long/keeper-log-of-every-night-for-seven-years.md"
HANDBOOK = "long/handbook-with-six-hundred-sections.md"
NOTE = "areas/area-000-coastal-station-records/note-000.md"
WRONG_TEXT = "zq9wrongvalue"  # a distinctive bad value: it must never come back
LONG_CHAR = "Q"
# A valid value for each required parameter an operation declares (MCP names).
SAMPLES: dict[str, Any] = {
    "path": NOTE,
    "query": "needle",
    "pattern": "needle",
    "text": "hello",
    "content": "x",
    "mode": "append",
    "find": "keeper",
    "replace": "warden",
    "source": NOTE,
    "destination": "moved/note.md",
    "cited_ranges": [{"start_line": 1, "end_line": 2}],
    "artifact_path": NOTE,
    "source_path": LONG,
    "id": "20260101T000000Z-unknown",  # the person-only conversation routes (no such conversation)
    "old": "needle",  # vault_rename_tag: a tag no note carries (a dry run changes nothing)
    "new": "needle-2",
}
LEAKS = (
    "Input should", "String should", "should be", "less than or equal", "greater than or equal",
    "valid integer", "Field required", "Extra inputs", "pydantic", "type=", "input_value",
    "Value error", "is not a valid", WRONG_TEXT, LONG_CHAR * 12, CANARY,
)  # fmt: skip


@dataclasses.dataclass(frozen=True)
class Case:
    op: Operation
    kind: str  # missing | wrong type | empty | too long | out of range
    path: tuple[str, ...]
    args: dict[str, Any]  # MCP arguments (snake_case)
    problem: str | None  # the expected words after the name; None: any clean error (or success)
    cli_ok: bool = True  # the CLI can express this case
    http_get_ok: bool = True  # a query string can express it (its values are all text)

    @property
    def id(self) -> str:
        return f"{self.op.mcp_name}:{'.'.join(self.path)}:{self.kind}"


# ----------------------------------------------------------------------------- cases
def base_args(op: Operation) -> dict[str, Any]:
    schema = constraint_schema(op.params)
    args = {name: SAMPLES[name] for name in schema.get("required", [])}
    if "dry_run" in schema["properties"]:
        args["dry_run"] = True  # a write that passes validation changes nothing
    return args


def _put(args: dict[str, Any], path: tuple[str, ...], value: Any) -> dict[str, Any]:
    out = json.loads(json.dumps(args))
    node = out
    for part in path[:-1]:
        node = node.setdefault(part, {})
    node[path[-1]] = value
    return out


def _drop(args: dict[str, Any], path: tuple[str, ...]) -> dict[str, Any]:
    out = json.loads(json.dumps(args))
    node = out
    for part in path[:-1]:
        node = node.setdefault(part, {})
    node.pop(path[-1], None)
    return out


def _bounds(prop: dict[str, Any]) -> str:
    return range_text(prop.get("minimum"), prop.get("maximum"))


def _valid_object(schema: dict[str, Any]) -> dict[str, Any]:
    """An object with its required fields set (so a case about one field is about it alone)."""
    samples = {"integer": 1, "string": "x", "boolean": False}
    return {name: samples[schema["properties"][name]["type"]] for name in schema.get("required", [])}


def cases_of(op: Operation) -> list[Case]:
    out: list[Case] = []

    def walk(schema: dict[str, Any], prefix: tuple[str, ...], base: dict[str, Any]) -> None:
        required = set(schema.get("required", []))
        for name, prop in schema.get("properties", {}).items():
            path = (*prefix, name)
            kind = prop.get("type")
            if name in required and not prefix:
                out.append(Case(op, "missing", path, _drop(base, path), "is required"))
            if "enum" in prop:
                choices = ", ".join(prop["enum"])
                out.append(
                    Case(op, "wrong type", path, _put(base, path, WRONG_TEXT), f"must be one of: {choices}")
                )
            elif kind == "integer":
                what = f"must be an integer {_bounds(prop)}".rstrip()
                out.append(Case(op, "wrong type", path, _put(base, path, WRONG_TEXT), what))
                if "minimum" in prop:
                    out.append(Case(op, "out of range", path, _put(base, path, prop["minimum"] - 1), what))
                if "maximum" in prop:
                    out.append(Case(op, "out of range", path, _put(base, path, prop["maximum"] + 1), what))
            elif kind == "boolean":
                out.append(
                    Case(
                        op,
                        "wrong type",
                        path,
                        _put(base, path, WRONG_TEXT),
                        "must be true or false",
                        cli_ok=False,
                    )
                )
            elif kind == "string":
                wrong = _put(base, path, 12345)
                out.append(
                    Case(op, "wrong type", path, wrong, "must be a string", cli_ok=False, http_get_ok=False)
                )
                if prop.get("minLength") == 1:
                    out.append(Case(op, "empty", path, _put(base, path, ""), "must not be empty"))
                elif name in required:
                    out.append(Case(op, "empty", path, _put(base, path, ""), None))
                if "maxLength" in prop:
                    n = prop["maxLength"]
                    value = LONG_CHAR * (n + 1)
                    out.append(
                        Case(
                            op, "too long", path, _put(base, path, value), f"must be at most {n:,} characters"
                        )
                    )
            elif kind == "array":
                # A query string's or a repeatable flag's one value is a list of one: only bodies differ.
                out.append(
                    Case(
                        op,
                        "wrong type",
                        path,
                        _put(base, path, WRONG_TEXT),
                        "must be a list",
                        cli_ok=False,
                        http_get_ok=False,
                    )
                )
            elif kind == "object":
                out.append(
                    Case(op, "wrong type", path, _put(base, path, 12345), "must be an object", cli_ok=False)
                )
                walk(prop, path, _put(base, path, _valid_object(prop)))

    walk(constraint_schema(op.params), (), base_args(op))
    return out


ALL_CASES = [case for op in CATALOG for case in cases_of(op)]


def test_every_operation_with_parameters_has_cases() -> None:
    with_params = {op.mcp_name for op in CATALOG if constraint_schema(op.params)["properties"]}
    assert {c.op.mcp_name for c in ALL_CASES} == with_params
    kinds = {c.kind for c in ALL_CASES}
    print(f"{len(ALL_CASES)} cases over {len(with_params)} operations: {sorted(kinds)}")
    assert kinds == {"missing", "wrong type", "empty", "too long", "out of range"}


# ----------------------------------------------------------------------------- names per surface
def http_names(op: Operation) -> dict[tuple[str, ...], str]:
    """Each parameter path → its dotted HTTP name (aliases), from the alias schema."""
    snake = constraint_schema(op.params)
    camel = compact_schema(op.params.model_json_schema(by_alias=True))
    out: dict[tuple[str, ...], str] = {}

    def walk(s: dict[str, Any], c: dict[str, Any], ps: tuple[str, ...], pc: str) -> None:
        for (sname, sprop), (cname, cprop) in zip(
            s.get("properties", {}).items(), c.get("properties", {}).items(), strict=True
        ):
            out[(*ps, sname)] = pc + cname
            walk(sprop, cprop, (*ps, sname), f"{pc}{cname}.")

    walk(snake, camel, (), "")
    return out


def http_request(op: Operation, args: dict[str, Any]) -> tuple[str, str, bytes | None]:
    names = http_names(op)

    def aliased(node: Any, prefix: tuple[str, ...]) -> Any:
        if not isinstance(node, dict):
            return node
        return {names[(*prefix, k)].rsplit(".", 1)[-1]: aliased(v, (*prefix, k)) for k, v in node.items()}

    body = aliased(args, ())
    if op.http_method == "POST":
        return "POST", op.http_path, json.dumps(body).encode()
    pairs: list[tuple[str, str]] = []

    def flat(node: dict[str, Any], prefix: str) -> None:
        for key, value in node.items():
            if isinstance(value, dict):
                flat(value, f"{prefix}{key}.")
            elif isinstance(value, list):
                pairs.append((prefix + key, json.dumps(value)))
            else:
                pairs.append((prefix + key, json.dumps(value) if isinstance(value, bool) else str(value)))

    flat(body, "")
    return "GET", op.http_path + "?" + urllib.parse.urlencode(pairs), None


def label(op: Operation, path: tuple[str, ...], surface: str) -> str:
    if surface == "mcp":
        return f"parameter '{'.'.join(path)}'"
    if surface == "http":
        return f"parameter '{http_names(op)[path]}'"
    spec = COMMANDS[op.name]
    target = ".".join(path)
    flag = next((o.flag for o in spec.options if o.target == target), None)
    if flag is not None:
        return f"option {flag}"
    assert target in {a.name for a in spec.args}, (op.name, target)
    return f"argument {target.upper()}"


def cli_argv(case: Case) -> list[str] | None:
    """The command line of a case, or None when the CLI cannot say it."""
    spec = COMMANDS[case.op.name]
    argv = [spec.name]
    used: set[str] = set()
    for i, arg in enumerate(spec.args):
        if arg.name in case.args:
            argv.append(str(case.args[arg.name]))
            used.add(arg.name)
        elif any(a.name in case.args for a in spec.args[i + 1 :]):
            return None  # a later argument would take its place
    for opt in spec.options:
        node: Any = case.args
        for part in opt.target.split("."):
            node = node.get(part) if isinstance(node, dict) else None
        if node is None:
            continue
        used.add(opt.target.split(".")[0])
        if opt.type == "bool":
            if node is True:
                argv.append(opt.flag)
            elif node is not False:
                return None
        elif opt.convert is not None:  # a line range flag (--range 12-20, --delete-lines 3-4)
            items = node if isinstance(node, list) else [node]
            if not all(isinstance(i, dict) and set(i) == {"start_line", "end_line"} for i in items):
                if isinstance(node, dict | list):
                    return None  # one field of a range: the flag sets both
                items = [node]
            for item in items:
                argv += [
                    opt.flag,
                    f"{item['start_line']}-{item['end_line']}" if isinstance(item, dict) else str(item),
                ]
        else:
            argv += [opt.flag, str(node)]
    if set(case.args) - used:
        return None  # a parameter without a flag
    return argv


def cli_label_and_problem(case: Case) -> tuple[str, str | None]:
    spec = COMMANDS[case.op.name]
    target = ".".join(case.path)
    opt = next((o for o in spec.options if target == o.target or target.startswith(o.target + ".")), None)
    if opt is not None and opt.convert is not None and case.kind == "wrong type":
        return f"option {opt.flag}", "must be a line range like 12-20"
    return label(case.op, case.path, "cli"), case.problem


def expected_code(case: Case) -> str:
    limit_ops = {op.name for op in CATALOG if op.limit_error.__name__ == "InvalidLimit"}
    return "INVALID_LIMIT" if case.path == ("limit",) and case.op.name in limit_ops else "INVALID_PARAMETER"


# ----------------------------------------------------------------------------- the server
@pytest.fixture(scope="module")
def wide(tmp_path_factory: pytest.TempPathFactory) -> Settings:
    root = write_wide_vault(tmp_path_factory.mktemp("wide") / "vault")
    (root / "secret.md").write_text(f"# Secret\n\n{CANARY}\n", encoding="utf-8")
    settings = load_settings({"vault": root}, env={})
    build_index(settings, full=True)
    return dataclasses.replace(settings, writes_enabled=True, tool_profile="agent-files")


@pytest.fixture(scope="module")
def server(wide: Settings) -> Iterator[ServerThread]:
    with serving(wide) as thread:
        yield thread


def _leaks(text: str, settings: Settings) -> list[str]:
    home = str(Path.home())
    found = [word for word in LEAKS if word in text]
    for absolute in (str(settings.vault), str(settings.vault.resolve()), str(settings.index_dir), home + "/"):
        if absolute in text:
            found.append("an absolute path")
    return found


def _check(case: Case, surface: str, status: int | None, body: Any, problems: list[str]) -> None:
    where = f"{case.id} on {surface}"
    text = json.dumps(body, ensure_ascii=False)
    if leaks := _leaks(text, case_settings[0]):
        problems.append(f"{where}: leaks {leaks}: {text[:300]}")
    error = body.get("error") if isinstance(body, dict) else None
    if case.problem is None:
        if error is not None and set(error) != {"code", "message"}:
            problems.append(f"{where}: not the canonical error object: {text[:300]}")
        return
    if error is None:
        problems.append(f"{where}: expected an error, got {text[:200]}")
        return
    name, problem = (
        cli_label_and_problem(case)
        if surface == "cli"
        else (label(case.op, case.path, surface), case.problem)
    )
    message = f"{name} {problem}"
    if case.kind == "missing" and surface == "cli" and name.startswith("argument"):
        message += f"; see 'vault-agent {case.op.name} --help'"  # said by the CLI itself, without a server
    if (error["code"], error["message"]) != (expected_code(case), message):
        problems.append(
            f"{where}: {error['code']} {error['message']!r}, expected {expected_code(case)} {message!r}"
        )
    if status is not None and status != (400 if surface == "http" else 2):
        problems.append(f"{where}: status/exit {status}")


case_settings: list[Settings] = []  # the module's settings, for the leak check


def test_bad_parameters_speak_one_voice_on_every_surface(server: ServerThread, wide: Settings) -> None:
    case_settings[:] = [wide]
    problems: list[str] = []
    checked = {"http": 0, "mcp": 0, "cli": 0}
    # HTTP: the routed operations.
    for case in ALL_CASES:
        if case.op.mcp_only or (case.op.http_method == "GET" and not case.http_get_ok):
            continue
        method, target, request_body = http_request(case.op, case.args)
        status, _, text = server.request(method, target, body=request_body)
        _check(case, "http", status, json.loads(text), problems)
        checked["http"] += 1

    # MCP: every tool, through the real SDK client over Streamable HTTP.
    async def mcp_calls() -> list[Any]:
        async with http_mcp_client(server.url, server.token) as client:
            return [await client.call_tool(case.op.mcp_name, case.args) for case in mcp_cases]

    mcp_cases = [case for case in ALL_CASES if case.op.agent_tool]  # person-only routes are no tools
    for case, result in zip(mcp_cases, asyncio.run(mcp_calls()), strict=True):
        body = json.loads(result.content[0].text)
        if result.is_error != ("error" in body):
            problems.append(f"{case.id} on mcp: isError {result.is_error} for {result.content[0].text[:200]}")
        _check(case, "mcp", None, body, problems)
        checked["mcp"] += 1
    # CLI: the command line as a person types it, --json for the exact error object.
    runner = CliRunner()
    remote = ["--server", server.url, "--token", server.token, "--json"]
    for case in ALL_CASES:
        if case.op.mcp_only or not case.cli_ok or case.op.name not in COMMANDS:
            continue
        argv = cli_argv(case)
        if argv is None:
            continue
        result = runner.invoke(app, [*argv, *remote])
        lines = [ln for ln in result.stdout.splitlines() if ln.startswith("{")]
        body = json.loads(lines[-1]) if lines else {"stdout": result.stdout}
        _check(case, "cli", result.exit_code if "error" in body else None, body, problems)
        checked["cli"] += 1
    print(f"checked: {checked}")
    print("\n".join(problems))
    assert problems == []
    assert min(checked.values()) > 100


def test_http_names_the_parameter_as_it_was_sent(server: ServerThread) -> None:
    """Snake_case or camelCase over HTTP: the message repeats the caller's spelling."""
    answers = [server.get_json(f"/read?path=x.md&range.{name}=0")[2] for name in ("start_line", "startLine")]
    assert [a["error"]["message"] for a in answers] == [
        "parameter 'range.start_line' must be an integer of at least 1",
        "parameter 'range.startLine' must be an integer of at least 1",
    ]
    empty = server.get_json("/search?q=")[2]
    assert empty == {"error": {"code": "INVALID_PARAMETER", "message": "parameter 'q' must not be empty"}}


def test_core_checks_are_reworded_per_surface(server: ServerThread) -> None:
    """A check the core makes (not the schema) names the parameter per surface too."""
    status, _, body = server.get_json(f"/read?path={urllib.parse.quote(NOTE)}")
    assert (status, body["error"]["message"]) == (
        400,
        "give 'range' (the lines to read), 'sectionId' or 'heading' (one section), or 'full' to read to the end",
    )
    runner = CliRunner()
    result = runner.invoke(app, ["read", NOTE, "--server", server.url, "--token", server.token])
    assert (result.exit_code, result.stderr.strip()) == (
        2,
        "error [INVALID_PARAMETER]: give --start/--end (the lines to read), --section-id or --heading (one section), "
        "or --full to read to the end",
    )
    result = runner.invoke(
        app, ["read", NOTE, "--start", "9", "--end", "3", "--server", server.url, "--token", server.token]
    )
    assert result.stderr.strip() == "error [INVALID_PARAMETER]: option --end must not be before --start"


# ----------------------------------------------------------------------------- answer budgets
# The largest request of each operation (MCP arguments); others run with their base arguments.
LARGEST: dict[str, dict[str, Any]] = {
    "tree": {"depth": 10, "limit": 500},
    "tags": {"limit": 200},
    "facets": {"limit": 200},
    "ls": {"relative_dir": "flat", "limit": 1000},
    "list_files": {"path": "flat", "limit": 1000},
    "read": {"path": LONG, "full": True, "limits": {"max_chars": 100_000}},
    "read_file": {"path": LONG},
    "scan": {"path": LONG, "chunk_lines": 1000, "limits": {"max_chars": 100_000}},
    "get": {"path": LONG, "max_chars": 100_000},
    "find": {"query": "needle lamp", "budget": {"max_candidates": 10_000}},
    "grep": {"query": "needle", "limit": 500, "context_lines": 10},
    "search_files": {"pattern": "needle", "max_results": 500, "context_lines": 10},
    "search": {"query": "needle lamp keeper", "limit": 50},
    "related": {"path": NOTE, "limit": 50},
    "coverage": {
        "path": LONG,
        "cited_ranges": [{"start_line": 2 * k + 1, "end_line": 2 * k + 1} for k in range(1000)],
    },
    "audit": {"artifact_path": "artifacts/summary-with-three-hundred-uncited-claims.md", "source_path": LONG},
    "get-note-outline": {"path": HANDBOOK},
    "get-document-tree": {"path": HANDBOOK},
    "get-section-source": {"path": HANDBOOK},
    "get-metadata-facets": {"path": HANDBOOK},
    "edit": {"path": LONG, "old_text": "needle", "new_text": "pin", "replace_all": True, "dry_run": True},
    "edit_file": {
        "path": LONG,
        "old_text": "needle",
        "new_text": "pin",
        "replace_all": True,
        "dry_run": True,
    },
    "replace": {"path": LONG, "find": "needle", "replace": "pin", "max_replacements": 5000, "dry_run": True},
    "write": {"path": LONG, "content": "x\n" * 50_000, "mode": "overwrite", "dry_run": True},
    "write_file": {"path": LONG, "content": "x\n" * 50_000, "dry_run": True},
    "get-conversation": {"limit": 100},
}


def test_every_answer_stays_within_its_budget(wide: Settings) -> None:
    from api.serverkit import make_context
    from vault_agent.server.context import close_context

    ctx = make_context(wide)
    rows, over = [], []
    try:
        for op in CATALOG:
            args = LARGEST.get(op.name, base_args(op))
            try:
                text = dump_json(body_of(op, invoke(op, ctx, args)))
            except VaultAgentError as exc:  # e.g. create over an existing note: the error is the answer
                text = dump_json(exc.to_body())
            rows.append(f"{op.mcp_name:22} {len(text):>8,} / {op.max_answer_chars:,}")
            if len(text) > op.max_answer_chars:
                over.append((op.mcp_name, len(text), op.max_answer_chars))
    finally:
        close_context(ctx)
    print("\n".join(rows))
    assert over == []
