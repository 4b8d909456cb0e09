"""Regenerate the catalog tables of docs/http-api.md, docs/mcp.md and docs/cli.md.

Each doc keeps hand-written prose; only the block between the markers
`<!-- BEGIN GENERATED: name -->` and `<!-- END GENERATED: name -->` is rewritten from the
operation catalog (`api.ops.CATALOG`), so routes, tools, commands and parameters cannot drift from the code.

Usage: .venv/bin/python ops/gen_docs.py           (rewrite)
       .venv/bin/python ops/gen_docs.py --check   (exit 1 when a doc is out of date)
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from vault_agent.api.mcp_server import annotations_of  # noqa: E402
from vault_agent.api.operation import Catalog, Operation  # noqa: E402
from vault_agent.api.ops import CATALOG  # noqa: E402
from vault_agent.cli.command_table_gen import options_of  # noqa: E402


# ----------------------------------------------------------------------------- params
def _type_of(prop: dict[str, Any]) -> str:
    alts = [a for a in prop.get("anyOf", [prop]) if a.get("type") != "null"]
    names = []
    for alt in alts:
        if "enum" in alt:
            names.append("one of " + ", ".join(f"`{v}`" for v in alt["enum"]))
        elif "const" in alt:
            names.append(f"`{alt['const']}`")
        elif alt.get("type") == "array":
            names.append("list of " + _type_of(alt.get("items", {})))
        elif "$ref" in alt:
            names.append("object")
        else:
            names.append(str(alt.get("type", "any")))
    return " or ".join(names) or "any"


def _limits_of(prop: dict[str, Any]) -> str:
    alts = [a for a in prop.get("anyOf", [prop]) if a.get("type") != "null"] or [prop]
    parts = []
    for alt in alts:
        lo, hi = (
            alt.get("minimum", alt.get("exclusiveMinimum")),
            alt.get("maximum", alt.get("exclusiveMaximum")),
        )
        if lo is not None and hi is not None:
            parts.append(f"{lo}–{hi}")
        elif lo is not None:
            parts.append(f"≥ {lo}")
        elif hi is not None:
            parts.append(f"≤ {hi}")
        if "maxLength" in alt:
            parts.append(f"≤ {alt['maxLength']} chars")
        if "maxItems" in alt:
            parts.append(f"≤ {alt['maxItems']} items")
    return ", ".join(parts)


def param_rows(op: Operation) -> list[tuple[str, str, str, str, str, str, str]]:
    """(http name, mcp/cli name, type, required, default, limits, description) per leaf field."""
    snake = op.params.model_json_schema(by_alias=False)
    camel = op.params.model_json_schema(by_alias=True)
    rows: list[tuple[str, str, str, str, str, str, str]] = []

    def walk(s: dict[str, Any], c: dict[str, Any], ps: str, pc: str) -> None:
        required = set(s.get("required", []))
        for (sname, sprop), (cname, _) in zip(
            s.get("properties", {}).items(), c.get("properties", {}).items(), strict=True
        ):
            ref = next((a["$ref"] for a in sprop.get("anyOf", [sprop]) if "$ref" in a), None)
            if ref:
                name = ref.rsplit("/", 1)[1]
                walk(snake["$defs"][name], camel["$defs"][name], f"{ps}{sname}.", f"{pc}{cname}.")
                continue
            default = sprop.get("default")
            rows.append(
                (
                    pc + cname,
                    ps + sname,
                    _type_of(sprop),
                    "yes" if sname in required else "",
                    ""
                    if default is None
                    else f"`{default}`".replace("`True`", "`true`").replace("`False`", "`false`"),
                    _limits_of(sprop),
                    " ".join(str(sprop.get("description", "")).split()).replace("|", "\\|"),
                )
            )

    walk(snake, camel, "", "")
    return rows


def _param_table(op: Operation, *, http: bool) -> list[str]:
    rows = param_rows(op)
    if not rows:
        return ["No parameters.", ""]
    name_col = "parameter (HTTP)" if http else "argument"
    out = [
        f"| {name_col} | type | required | default | limits | meaning |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for h, s, typ, req, default, limits, desc in rows:
        name = f"`{h}`" + (f" / `{s}`" if http and h != s else "") if http else f"`{s}`"
        out.append(f"| {name} | {typ} | {req} | {default} | {limits} | {desc} |")
    return [*out, ""]


# ----------------------------------------------------------------------------- blocks
def _methods(op: Operation) -> str:
    return "GET, POST" if op.http_both else op.http_method


def http_block(catalog: Catalog) -> list[str]:
    ops = [op for op in catalog if not op.mcp_only]
    out = ["| method | route | body | CLI | MCP tool | kind |", "| --- | --- | --- | --- | --- | --- |"]
    for op in ops:
        body = "envelope" if op.envelope else "raw contract"
        kind = op.kind + (" (needs `--allow-writes`)" if op.kind == "write" else "")
        if not op.agent_tool:  # answering a question, undo: the person's own actions, not gated
            kind = "the person's (no MCP tool)"
        # The person's operations are local `conversations` subcommands and no MCP tool.
        cli = f"`{op.name}`" if op.agent_tool else f"`{op.name.replace('-', ' ', 1)}`"
        tool = f"`{op.mcp_name}`" if op.agent_tool else "–"
        out.append(f"| {_methods(op)} | `{op.http_path}` | {body} | {cli} | {tool} | {kind} |")
    out.append("")
    for op in ops:
        where = "query string" if op.http_method == "GET" else "JSON object body"
        if op.http_both:
            where = "JSON object body by POST, or the query string by GET"
        out += [f"### {_methods(op)} {op.http_path}", "", " ".join(op.description.split()), ""]
        out += [f"Parameters ({where}):", ""] + _param_table(op, http=True)
    return out


def mcp_block(catalog: Catalog) -> list[str]:
    out = [
        "| tool | profile | listed | readOnly | destructive | idempotent | answer ≤ (chars) |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    ops = [op for op in catalog if op.agent_tool]
    for op in ops:
        ann = annotations_of(op)
        listed = "with `--allow-writes`" if op.kind == "write" else "always"
        # Hints left out are MCP's defaults: not read-only, destructive, not idempotent.
        read_only = bool(ann.read_only_hint)
        destructive = True if ann.destructive_hint is None else ann.destructive_hint
        idempotent = bool(ann.idempotent_hint)
        out.append(
            f"| `{op.mcp_name}` | {op.profile} | {listed} | {read_only} | {destructive} | {idempotent} | "
            f"{op.max_answer_chars:,} |"
        )
    out.append("")
    for op in ops:
        out += [f"### {op.mcp_name}", "", f"**{op.title}.** " + " ".join(op.description.split()), ""]
        out += _param_table(op, http=False)
        if op.result is not None:
            out += [_result_line(op), ""]
    return out


def _fields_of(schema: dict[str, Any]) -> str:
    required = set(schema.get("required", []))
    return ", ".join(f"`{k}`" + ("" if k in required else "?") for k in schema.get("properties", {}))


def _result_line(op: Operation) -> str:
    """The fields of an operation's result model (what `data`, or the raw body, holds).

    A root model over a union (get_conversation) lists each alternative's fields.
    """
    model = op.result
    assert model is not None
    schema = model.model_json_schema(by_alias=True, mode="serialization")
    where = "`data` holds" if op.envelope else "the body (a versioned contract) holds"
    if "anyOf" in schema:
        defs = schema.get("$defs", {})
        alts = [defs[a["$ref"].rsplit("/", 1)[-1]] for a in schema["anyOf"] if "$ref" in a]
        fields = " or ".join(f"{alt.get('title', '')} ({_fields_of(alt)})" for alt in alts)
    else:
        fields = _fields_of(schema)
    return f"Returns ({model.__name__}): {where} {fields}."


def cli_block(catalog: Catalog) -> list[str]:
    out = []
    for op in catalog:
        if op.mcp_only or not op.agent_tool:
            continue
        args = " ".join(a.upper() for a in op.cli_args)
        out += [f"### vault-agent {op.name}{' ' + args if args else ''}", ""]
        out.append(" ".join((op.cli_help or op.description).split()))
        out.append("")
        opts = options_of(op)
        if opts:
            out += ["| option | sets | type |", "| --- | --- | --- |"]
            for opt in opts:
                typ = opt.type.__name__ + (" (repeatable)" if opt.multiple else "")
                out.append(f"| `{opt.flag}` | `{opt.target}` | {typ} |")
            out.append("")
    return out


BLOCKS = {
    "docs/http-api.md": ("routes", http_block),
    "docs/mcp.md": ("tools", mcp_block),
    "docs/cli.md": ("commands", cli_block),
}


def render(path: Path, name: str, lines: list[str]) -> str:
    text = path.read_text(encoding="utf-8")
    begin, end = f"<!-- BEGIN GENERATED: {name} -->", f"<!-- END GENERATED: {name} -->"
    pattern = re.compile(re.escape(begin) + r".*?" + re.escape(end), re.S)
    if not pattern.search(text):
        raise SystemExit(f"{path.name}: markers for '{name}' are missing")
    body = "\n".join([begin, "", *lines, end])
    return pattern.sub(lambda _m: body, text)


def main(argv: list[str]) -> int:
    check = "--check" in argv
    stale = []
    for rel, (name, block) in BLOCKS.items():
        path = ROOT / rel
        new = render(path, name, block(CATALOG))
        if new != path.read_text(encoding="utf-8"):
            stale.append(rel)
            if not check:
                path.write_text(new, encoding="utf-8")
    if check and stale:
        print("out of date (run ops/gen_docs.py): " + ", ".join(stale))
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
