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


class _EmbedProgress:
    """Progress of `index --embed` on stderr: a bar on a TTY (at most 10 redraws a second),
    otherwise one plain line every PLAIN_EVERY_S seconds (logs, CI), and a last line."""

    PLAIN_EVERY_S = 10.0

    def __init__(self) -> None:
        self.tty = sys.stderr.isatty()
        self._last = 0.0
        self._drawn = False
        self.embedded = 0
        self.live = 0
        self._shown = -1  # `embedded` when last drawn

    def __call__(self, embedded: int, live: int, eta_s: float | None) -> None:
        from vault_agent.semantic.progress import format_eta

        self.embedded, self.live = max(self.embedded, embedded), live
        now = time.monotonic()
        every = 0.1 if self.tty else self.PLAIN_EVERY_S
        if (self._drawn or not self.tty) and now - self._last < every:
            return
        self._last = now
        self._draw(format_eta(eta_s) if eta_s is not None and self.embedded < live else None)

    def _draw(self, eta: str | None) -> None:
        left = f", {eta} left" if eta else ""
        live = self.live
        if self.tty:
            width = 30
            filled = int(width * self.embedded / live) if live else width
            sys.stderr.write(
                f"\rembed [{'#' * filled}{'.' * (width - filled)}] {self.embedded}/{live} notes{left}\033[K"
            )
            self._drawn = True
        else:
            pct = int(100 * self.embedded / live) if live else 100
            sys.stderr.write(f"embedding: {self.embedded} of {live} notes ({pct}%){left}\n")
        self._shown = self.embedded
        sys.stderr.flush()

    def close(self) -> None:
        """The last state, whatever the pace (a bar ends its line)."""
        if self.live and self._shown != self.embedded:
            self._draw(None)
        if self._drawn:
            sys.stderr.write("\n")
            sys.stderr.flush()


def _embedding_hint(settings: Settings, manifest: Manifest) -> str | None:
    """The line `index` prints on a TTY while notes lack embeddings and nothing computes
    them: how to get them (never a prompt: scripts must not block)."""
    from vault_agent.semantic.progress import COMPUTING_COMMANDS, semantic_state

    state = semantic_state(manifest, settings.index_dir, load_model=False)
    if not state.pending or state.computing:
        return None
    missing = state.live_notes - state.embedded_notes
    return (
        f"hint: {missing} of {state.live_notes} notes have no embeddings for semantic search yet; "
        f"run 'vault-agent index --embed' to compute them now, or {COMPUTING_COMMANDS} computes them "
        "in the background"
    )


def _no_notes_hint(folder: str, extensions: tuple[str, ...]) -> str:
    return (
        f"0 notes found in {folder}; pass --vault with the folder that holds your notes "
        f"(files ending {', '.join(extensions)})"
    )


def _manifest_body(
    manifest: Manifest, seconds: float, warnings: list[dict[str, str]], embedded: int | None = None
) -> dict[str, Any]:
    body: dict[str, Any] = {
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
    if embedded is not None:  # `--embed`: notes with embeddings once it finished
        body["data"]["embeddedNotes"] = embedded
    return body


def _print_manifest(
    verb: str,
    manifest: Manifest,
    seconds: float,
    as_json: bool,
    settings: Settings,
    typed: Path | None,
    embedded: tuple[int, list[dict[str, str]]] | None = None,
) -> None:
    # An empty index is valid (SPEC), but from a newcomer it usually means the wrong folder.
    # JSON and logs name the folder only (never an absolute path); the human line may echo
    # what the user typed.
    empty = manifest.note_count == 0
    extra = embedded[1] if embedded is not None else []
    if as_json:
        message = _no_notes_hint(settings.vault.name or "the vault", settings.extensions)
        hint = [{"code": "NO_NOTES", "message": message}] if empty else []
        print_json(
            _manifest_body(manifest, seconds, hint + extra, embedded[0] if embedded is not None else None)
        )
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
    if embedded is not None:
        lines.append(f"  embedded  {embedded[0]}")
    sys.stdout.write("\n".join(lines) + "\n")
    for w in extra:
        sys.stderr.write(f"warning [{w['code']}]: {w['message']}\n")
    if empty:
        folder = str(typed) if typed is not None else f"the current folder ({settings.vault.name})"
        sys.stderr.write(f"warning [NO_NOTES]: {_no_notes_hint(folder, settings.extensions)}\n")
        sys.stderr.flush()


def _build(
    vault: Path | None, index_dir: Path | None, config: Path | None, json_out: bool, full: bool, embed: bool
) -> None:
    from vault_agent.indexer.build import build_index

    def body() -> None:
        settings = settings_from(vault, index_dir, config)
        if embed:
            from vault_agent.errors import InvalidParameter
            from vault_agent.semantic.encoder import active_model
            from vault_agent.semantic.settings import semantic_enabled

            if not semantic_enabled():
                raise InvalidParameter(
                    "--embed computes embeddings for semantic search, which VAULT_AGENT_SEMANTIC turns off"
                )
            if active_model().kind is None:
                raise InvalidParameter(f"--embed has nothing to compute: {active_model().reason}")
        bar = _Bar("reindex" if full else "index")
        embed_bar = _EmbedProgress() if embed else None
        start = time.monotonic()
        try:
            manifest = build_index(settings, full=full, progress=bar, embed=embed_bar)
        finally:
            bar.close()
            if embed_bar is not None:
                embed_bar.close()
        seconds = time.monotonic() - start
        embedded = _embedded_outcome(settings, manifest) if embed else None
        _print_manifest(
            "reindexed" if full else "indexed", manifest, seconds, json_out, settings, vault, embedded
        )
        if not embed and not json_out and sys.stderr.isatty():
            hint = _embedding_hint(settings, manifest)
            if hint:
                sys.stderr.write(hint + "\n")
                sys.stderr.flush()

    run_command(json_out, body)


def _embedded_outcome(settings: Settings, manifest: Manifest) -> tuple[int, list[dict[str, str]]]:
    """Notes embedded after `--embed`, and the warning when some could not be."""
    from vault_agent.semantic.progress import semantic_state

    state = semantic_state(manifest, settings.index_dir, load_model=False)
    if not state.pending:
        return state.embedded_notes, []
    message = (
        f"{state.live_notes - state.embedded_notes} of {state.live_notes} notes could not be embedded "
        "(the log above says why); search uses what is there and stays lexical for the rest"
    )
    return state.embedded_notes, [{"code": "SEMANTIC_UNAVAILABLE", "message": message}]


EmbedOpt = Annotated[
    bool,
    typer.Option(
        "--embed",
        help="Then compute the embeddings of semantic search in the foreground, with progress "
        "(otherwise serve --watch, mcp or watch compute them in the background).",
    ),
]


def index(
    vault: VaultOpt = None,
    index_dir: IndexDirOpt = None,
    config: ConfigOpt = None,
    json_out: JsonOpt = False,
    embed: EmbedOpt = False,
) -> None:
    """Build the index, or catch it up with the vault (stat scan → changed notes only).

    Takes the writer lock; exits 5 (INDEX_BUSY) when another index, reindex or watch runs. With
    --embed, also computes the embeddings of semantic search now (a progress bar on a terminal, a
    line every 10 s otherwise; Ctrl-C keeps what is done).

    Example: vault-agent index --embed --vault ~/notes
    """
    _build(vault, index_dir, config, json_out, full=False, embed=embed)


def reindex(
    vault: VaultOpt = None,
    index_dir: IndexDirOpt = None,
    config: ConfigOpt = None,
    json_out: JsonOpt = False,
    embed: EmbedOpt = False,
) -> None:
    """Rebuild the whole index from scratch into a new snapshot.

    Readers keep answering from the previous snapshot until the new one commits.

    Example: vault-agent reindex --vault ~/notes
    """
    _build(vault, index_dir, config, json_out, full=True, embed=embed)


def watch(
    vault: VaultOpt = None, index_dir: IndexDirOpt = None, config: ConfigOpt = None, json_out: JsonOpt = False
) -> None:
    """Watch the vault in the foreground and keep the index fresh (Ctrl-C to stop).

    The engine `serve --watch` runs, without a server. Exits 5 (INDEX_BUSY) beside another writer.

    Example: vault-agent watch --vault ~/notes
    """
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


def status(
    vault: VaultOpt = None,
    index_dir: IndexDirOpt = None,
    config: ConfigOpt = None,
    json_out: JsonOpt = False,
    verbose: Annotated[
        bool, typer.Option("--verbose", help="Add skipped files by rule and invalid-frontmatter paths.")
    ] = False,
) -> None:
    """Show the index state: freshness, snapshot id, counts, last commit time.

    Works without a server (reads the state dir; stat-scans the vault when no writer runs). Exits 4
    (INDEX_NOT_FOUND) when there is no snapshot.

    Example: vault-agent status --json --vault ~/notes
    """
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
            if isinstance(value, list):
                value = ", ".join(map(str, value)) or "-"
            rows.append((key, "-" if value is None else value))
        width = max(len(k) for k, _ in rows)
        sys.stdout.write("".join(f"{k.ljust(width)}  {v}\n" for k, v in rows))
        for w in warnings:
            sys.stderr.write(f"warning [{w['code']}]: {w['message']}\n")

    run_command(json_out, body)
