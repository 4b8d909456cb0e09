"""Index state operation: `status` (GET /status, MCP vault_status)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from vault_agent.api.registry import AppContext, NoParams, Operation, register
from vault_agent.contracts import Outcome
from vault_agent.lazy import lazy_functions
from vault_agent.query.models import StatusData

if TYPE_CHECKING:
    from vault_agent.query.status import index_status
else:  # the core is imported on first call (the CLI imports this module for the registry)
    (index_status,) = lazy_functions("vault_agent.query.status", "index_status")


def _status(ctx: AppContext, params: Any) -> Outcome[Any]:
    return index_status(ctx.settings, reader=ctx.reader)


def render_status(body: dict[str, Any]) -> str:
    """Human output of `status`: one `key: value` line per field."""
    d = body.get("data", body)
    lines = [
        f"index: {d['indexFreshness']}",
        f"snapshot: {d['snapshotId']} (committed {d['lastCommitAt']}, schema {d['schemaVersion']})",
        f"notes: {d['noteCount']}   chunks: {d['chunkCount']}   invalid frontmatter: "
        f"{d['invalidFrontmatterCount']}",
    ]
    details = d.get("details")
    if details:
        skipped = ", ".join(f"{k} {v}" for k, v in details["skipped"].items()) or "none"
        lines.append(f"segments: {details['segmentCount']}   applied seq: {details['appliedSeq']}")
        lines.append(f"skipped: {skipped}")
        if "semanticSearch" in details:
            share = round(details["embeddedShare"] * 100)
            lines.append(f"semantic search: {details['semanticSearch']} (embedded {share}% of notes)")
        for path in details["invalidFrontmatterPaths"]:
            lines.append(f"  invalid frontmatter: {path}")
        if details["invalidFrontmatterPathsTruncated"]:
            lines.append("  (more invalid-frontmatter notes not listed)")
        lines += [f"  binary (no outline): {path}" for path in details.get("binaryPaths", [])]
        lines += [f"  case twin: {path}" for path in details.get("caseTwinPaths", [])]
    lines += [f"warning {w['code']}: {w['message']}" for w in body.get("warnings", [])]
    return "\n".join(lines)


register(
    Operation(
        name="status",
        mcp_name="vault_status",
        http_method="GET",
        http_path="/status",
        params=NoParams,
        func=_status,
        description="Index freshness and counts; use it when answers look outdated.",
        title="Index status",
        result=StatusData,
        cli_help="State of the index (works without a server).",
        render=render_status,
    )
)
