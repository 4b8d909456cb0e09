"""Local commands that work on the state dir directly: index, reindex, watch, status.

`index`, `reindex` and `watch` take the writer lock (a second writer exits 5,
INDEX_BUSY); `status` only reads. A progress bar is drawn on stderr when it is a TTY.
"""

from __future__ import annotations

import signal
import sys
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from vault_agent.cli.app import app
from vault_agent.cli.common import (
    ConfigOpt,
    IndexDirOpt,
    JsonOpt,
    VaultOpt,
    print_json,
    run_command,
    settings_from,
)

if TYPE_CHECKING:  # annotations only: `vault-agent --help` stays free of the contracts
    from vault_agent.config import Settings
    from vault_agent.contracts import Manifest


class _Bar:
    """A minimal progress bar on stderr, drawn only on a TTY and at most 10 times a second."""

    def __init__(self, label: str) -> None:
        self.label = label
        self.enabled = sys.stderr.isatty()
        self._last = 0.0
        self._drawn = False

    def __call__(self, done: int, total: int) -> None:
        if not self.enabled or total <= 0:
            return
        now = time.monotonic()
        if done < total and now - self._last < 0.1:
            return
        self._last = now
        width = 30
        filled = int(width * done / total)
        sys.stderr.write(f"\r{self.label} [{'#' * filled}{'.' * (width - filled)}] {done}/{total}")
        sys.stderr.flush()
        self._drawn = True

    def close(self) -> None:
        if self._drawn:
            sys.stderr.write("\n")
            sys.stderr.flush()


def _no_notes_hint(folder: str, extensions: tuple[str, ...]) -> str:
    return (
        f"0 notes found in {folder}; pass --vault with the folder that holds your notes "
        f"(files ending {', '.join(extensions)})"
    )


def _manifest_body(manifest: Manifest, seconds: float, warnings: list[dict[str, str]]) -> dict[str, Any]:
    return {
        "data": {
            "snapshotId": manifest.snapshot_id,
            "noteCount": manifest.note_count,
            "chunkCount": manifest.chunk_count,
            "headingCount": manifest.heading_count,
            "invalidFrontmatterCount": manifest.invalid_frontmatter_count,
            "skipped": dict(sorted(manifest.skipped.items())),
            "appliedSeq": manifest.applied_seq,
            "lastCommitAt": manifest.created_at,
            "schemaVersion": manifest.schema_version,
            "durationMs": round(seconds * 1000),
        },
        "warnings": warnings,
    }


def _print_manifest(
    verb: str, manifest: Manifest, seconds: float, as_json: bool, settings: Settings, typed: Path | None
) -> None:
    # An empty index is valid (SPEC), but from a newcomer it usually means the wrong folder.
    # JSON and logs name the folder only (never an absolute path); the human line may echo
    # what the user typed.
    empty = manifest.note_count == 0
    if as_json:
        message = _no_notes_hint(settings.vault.name or "the vault", settings.extensions)
        hint = [{"code": "NO_NOTES", "message": message}] if empty else []
        print_json(_manifest_body(manifest, seconds, hint))
        return
    lines = [
        f"{verb} snapshot {manifest.snapshot_id} in {seconds:.2f} s",
        f"  notes     {manifest.note_count}",
        f"  chunks    {manifest.chunk_count}",
        f"  headings  {manifest.heading_count}",
        f"  invalid frontmatter  {manifest.invalid_frontmatter_count}",
    ]
    for rule, count in sorted(manifest.skipped.items()):
        lines.append(f"  skipped ({rule})  {count}")
    sys.stdout.write("\n".join(lines) + "\n")
    if empty:
        folder = str(typed) if typed is not None else f"the current folder ({settings.vault.name})"
        sys.stderr.write(f"warning [NO_NOTES]: {_no_notes_hint(folder, settings.extensions)}\n")
        sys.stderr.flush()


def _build(vault: Path | None, index_dir: Path | None, config: Path | None, json_out: bool, full: bool) -> None:
    from vault_agent.indexer.build import build_index

    def body() -> None:
        settings = settings_from(vault, index_dir, config)
        bar = _Bar("reindex" if full else "index")
        start = time.monotonic()
        try:
            manifest = build_index(settings, full=full, progress=bar)
        finally:
            bar.close()
        seconds = time.monotonic() - start
        _print_manifest("reindexed" if full else "indexed", manifest, seconds, json_out, settings, vault)

    run_command(json_out, body)


@app.command(
    help="Build the index, or catch it up with the vault (stat scan → changed notes only).\n\n"
    "Takes the writer lock; exits 5 (INDEX_BUSY) when another index, reindex or watch runs.\n\n"
    "Example: vault-agent index --vault ~/notes"
)
def index(
    vault: VaultOpt = None, index_dir: IndexDirOpt = None, config: ConfigOpt = None, json_out: JsonOpt = False
) -> None:
    _build(vault, index_dir, config, json_out, full=False)


@app.command(
    help="Rebuild the whole index from scratch into a new snapshot.\n\n"
    "Readers keep answering from the previous snapshot until the new one commits.\n\n"
    "Example: vault-agent reindex --vault ~/notes"
)
def reindex(
    vault: VaultOpt = None, index_dir: IndexDirOpt = None, config: ConfigOpt = None, json_out: JsonOpt = False
) -> None:
    _build(vault, index_dir, config, json_out, full=True)


@app.command(
    help="Watch the vault in the foreground and keep the index fresh (Ctrl-C to stop).\n\n"
    "The engine `serve --watch` runs, without a server. Exits 5 (INDEX_BUSY) beside another writer.\n\n"
    "Example: vault-agent watch --vault ~/notes"
)
def watch(
    vault: VaultOpt = None, index_dir: IndexDirOpt = None, config: ConfigOpt = None, json_out: JsonOpt = False
) -> None:
    from vault_agent.indexer.engine import Writer

    def body() -> None:
        settings = settings_from(vault, index_dir, config)
        stop = threading.Event()
        previous = {sig: signal.signal(sig, lambda *_: stop.set()) for sig in (signal.SIGINT, signal.SIGTERM)}
        writer = Writer(settings)
        try:
            manifest = writer.start()
            if manifest is not None:
                sys.stderr.write(
                    f"watching: snapshot {manifest.snapshot_id}, {manifest.note_count} notes; "
                    "Ctrl-C to stop\n"
                )
                sys.stderr.flush()
            stop.wait()
        finally:
            writer.stop()
            for sig, handler in previous.items():
                signal.signal(sig, handler)

    run_command(json_out, body)


@app.command(
    help="Show the index state: freshness, snapshot id, counts, last commit time.\n\n"
    "Works without a server (reads the state dir; stat-scans the vault when no writer runs). "
    "Exits 4 (INDEX_NOT_FOUND) when there is no snapshot.\n\n"
    "Example: vault-agent status --json --vault ~/notes"
)
def status(
    vault: VaultOpt = None,
    index_dir: IndexDirOpt = None,
    config: ConfigOpt = None,
    json_out: JsonOpt = False,
    verbose: Annotated[
        bool, typer.Option("--verbose", help="Add skipped files by rule and invalid-frontmatter paths.")
    ] = False,
) -> None:
    from vault_agent.query.status import index_status

    def body() -> None:
        from vault_agent.contracts import CURRENT_FILE

        # A vault folder that is gone (a sync tool, a checkout) while its index is kept
        # elsewhere is a state to report (stale, "vault-missing"), not a typo to refuse.
        settings = settings_from(vault, index_dir, config, require_vault=False)
        if not settings.vault.is_dir() and not (settings.index_dir / CURRENT_FILE).exists():
            settings_from(vault, index_dir, config)  # raises the usual NOT_FOUND / INVALID_PATH
        outcome = index_status(settings, verbose=verbose)
        data = outcome.data.model_dump(mode="json", by_alias=True)
        warnings = [w.model_dump() for w in outcome.warnings]
        if json_out:
            print_json({"data": data, "warnings": warnings})
            return
        rows = [
            ("freshness", data["indexFreshness"]),
            ("snapshot", data["snapshotId"]),
            ("notes", data["noteCount"]),
            ("chunks", data["chunkCount"]),
            ("invalid frontmatter", data["invalidFrontmatterCount"]),
            ("last commit", data["lastCommitAt"]),
            ("schema", data["schemaVersion"]),
        ]
        details = data.get("details") or {}
        for key, value in details.items():
            rows.append((key, value if not isinstance(value, list) else ", ".join(map(str, value)) or "-"))
        width = max(len(k) for k, _ in rows)
        sys.stdout.write("".join(f"{k.ljust(width)}  {v}\n" for k, v in rows))
        for w in warnings:
            sys.stderr.write(f"warning [{w['code']}]: {w['message']}\n")

    run_command(json_out, body)
