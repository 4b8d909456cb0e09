"""Human output of `status`."""

from __future__ import annotations

from typing import Any


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
            lines.append(f"semantic search: {details['semanticSearch']}; {_embedding_line(d, details)}")
        for path in details["invalidFrontmatterPaths"]:
            lines.append(f"  invalid frontmatter: {path}")
        if details["invalidFrontmatterPathsTruncated"]:
            lines.append("  (more invalid-frontmatter notes not listed)")
        lines += [f"  binary (no outline): {path}" for path in details.get("binaryPaths", [])]
        lines += [f"  case twin: {path}" for path in details.get("caseTwinPaths", [])]
    lines += [f"warning {w['code']}: {w['message']}" for w in body.get("warnings", [])]
    return "\n".join(lines)


def _embedding_line(data: dict[str, Any], details: dict[str, Any]) -> str:
    """'4200 of 10000 notes embedded (42%), about 2 min left, embedder running'."""
    pct = int(details["embeddedShare"] * 100)
    line = f"{details.get('embeddedNotes', 0)} of {data['noteCount']} notes embedded ({pct}%)"
    eta = details.get("embeddingEtaSeconds")
    if eta is not None:
        from vault_agent.semantic.progress import format_eta  # only when there is one to show

        line += f", {format_eta(eta)} left"
    return line + f", embedder {details.get('embedder', 'none')}"
