"""Index state (`status`): the committed snapshot's counts and its freshness right now.

No snapshot → `INDEX_NOT_FOUND` on every surface (CLI exit 4, HTTP 409): the error *is*
the report that there is none, and its message says how to make one. An incompatible
snapshot → `INDEX_INCOMPATIBLE` (CLI exit 7, HTTP 409) like every index-backed answer
(SPEC: "incompatible → error, not a warning"); its message says to run `reindex`, and a
script can branch on the exit code.
"""

from __future__ import annotations

import time

from vault_agent.config import Settings
from vault_agent.contracts import Manifest, Outcome, WarningItem, WriterState, freshness_warning
from vault_agent.freshness import (
    StatChecker,
    compute_freshness,
    incompatible_error,
    is_compatible,
    missing_index_error,
    read_current_manifest,
    read_writer_state,
    stale_reason,
    vault_for_settings,
    writer_alive,
)
from vault_agent.query.models import Restarts, StatusData, StatusDetails
from vault_agent.query.snapshot import SnapshotReader
from vault_agent.semantic import no_model_warning, semantic_state

MAX_DETAIL_PATHS = 1000


def iso_utc(ts: float) -> str:
    """A `time.time()` value as ISO 8601 UTC to the second."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(ts))


_PATH_QUERIES = {
    "invalid": "SELECT path FROM notes WHERE fm_status = 'invalid' ORDER BY path LIMIT ?",
    "binary": "SELECT path FROM notes WHERE list_contains(flags, 'binary') ORDER BY path LIMIT ?",
    "case_twin": (
        "SELECT path FROM notes WHERE lower(path) IN "
        "(SELECT lower(path) FROM notes GROUP BY lower(path) HAVING count(*) > 1) ORDER BY path LIMIT ?"
    ),
}


def _restarts(writer: WriterState | None) -> dict[str, Restarts]:
    """The live writer's supervised components that were restarted at least once."""
    if not writer_alive(writer) or writer is None:
        return {}
    return {
        name: Restarts(
            restarts=h.restarts,
            last_error=h.last_error,
            last_failure_at=iso_utc(h.last_failure_at) if h.last_failure_at is not None else None,
        )
        for name, h in sorted(writer.components.items())
        if h.restarts
    }


def _details(
    settings: Settings,
    manifest: Manifest,
    reader: SnapshotReader | None,
    writer: WriterState | None,
    reason: str | None,
) -> StatusDetails:
    """Skipped counts by rule; invalid-frontmatter, binary and case-twin paths (CLI-local only)."""
    found: dict[str, list[str]] = {key: [] for key in _PATH_QUERIES}
    if is_compatible(settings, manifest):
        own = reader is None
        rdr = reader or SnapshotReader(settings, vault_for_settings(settings), freshness=lambda m: "unknown")
        try:
            with rdr.acquire() as view:
                for key, sql in _PATH_QUERIES.items():
                    rows = view.con.execute(sql, [MAX_DETAIL_PATHS + 1]).fetchall()
                    found[key] = [r[0] for r in rows]
        finally:
            if own:
                rdr.close()
    paths = found["invalid"]
    semantic = semantic_state(manifest, settings.index_dir, load_model=False)
    eta = semantic.eta_s
    return StatusDetails(
        semantic_search=semantic.label,
        embedded_share=semantic.share,
        embedded_notes=semantic.embedded_notes,
        embedding_eta_seconds=None if eta is None else round(eta),
        embedder=semantic.embedder_label,
        embedder_restarts=semantic.embedder.restarts if semantic.embedder is not None else 0,
        skipped=dict(sorted(manifest.skipped.items())),
        invalid_frontmatter_paths=paths[:MAX_DETAIL_PATHS],
        invalid_frontmatter_paths_truncated=len(paths) > MAX_DETAIL_PATHS,
        binary_paths=found["binary"][:MAX_DETAIL_PATHS],
        case_twin_paths=found["case_twin"][:MAX_DETAIL_PATHS],
        segment_count=len(manifest.segments),
        applied_seq=manifest.applied_seq,
        stale_reason=reason,
        restarts=_restarts(writer),
    )


def index_status(
    settings: Settings, *, verbose: bool = False, reader: SnapshotReader | None = None, recheck: bool = True
) -> Outcome[StatusData]:
    """State of the committed index: counts from its manifest and freshness now.

    Without a reader (the CLI), or when this process is not the writer, freshness comes
    from the writer's published state or an on-demand stat scan. `recheck=False` (the web
    page's live view, asked every second) takes the reader's freshness as every answer
    reports it, whose stat scans run at most every `recheck_seconds`, instead of one now.

    Raises:
        IndexNotFound: no committed snapshot exists.
        IndexIncompatible: the snapshot's schema, parser or index settings differ.
    """
    manifest = read_current_manifest(settings.index_dir)
    if manifest is None:
        raise missing_index_error(settings)
    warnings: list[WarningItem] = []
    if not is_compatible(settings, manifest):
        raise incompatible_error(settings, manifest)
    writer = read_writer_state(settings.index_dir)
    reason: str | None = None
    if reader is not None and not recheck:
        with reader.acquire() as view:
            state = view.freshness
        reason = reader.stale_reason()
    elif reader is not None:
        state = reader.recheck() or "unknown"
        reason = reader.stale_reason()
    else:
        state = compute_freshness(settings, manifest, writer, None)
        checker: StatChecker | None = None
        if state == "unknown":
            checker = StatChecker(settings)
            state = checker.check(manifest, force=True)
        reason = stale_reason(writer, checker)
    warning = freshness_warning(state, reason)
    if warning:
        warnings.append(warning)
    no_model = no_model_warning()  # this platform has no embedding model: say why here too
    if no_model:
        warnings.append(no_model)
    data = StatusData(
        index_freshness=state,
        snapshot_id=manifest.snapshot_id,
        note_count=manifest.note_count,
        chunk_count=manifest.chunk_count,
        invalid_frontmatter_count=manifest.invalid_frontmatter_count,
        last_commit_at=manifest.created_at,
        schema_version=manifest.schema_version,
        details=_details(settings, manifest, reader, writer, reason if state == "stale" else None)
        if verbose
        else None,
    )
    return Outcome(data=data, warnings=warnings, freshness=state)
