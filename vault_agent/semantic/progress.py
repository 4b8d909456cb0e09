"""How far embeddings are, who computes them, and what search answers say about it (reader side).

- `semantic_state(manifest, index_dir)`: live notes and the notes with vectors of the
  current model, from the manifest alone (complete segments count whole; a segment being
  embedded counts the notes its published partial files cover: `SegmentRef.embedded_notes`).
- `embedder.json` in the state dir: the embedder's heartbeat, written by the process that
  computes embeddings (`serve --watch`, `mcp`, `watch`, `index --embed`; embedder.py) every
  HEARTBEAT_INTERVAL_S, removed when it stops. Any process reads it to tell "being
  computed" (with a rate, hence an ETA) from "nobody computes them".
- `semantic_warnings(reader, view)`: on every search answer while a live note lacks a
  vector: `SEMANTIC_PENDING` (with the share, and an ETA when known) when a live embedder
  works on it, `SEMANTIC_OFF` naming the commands that would compute them when none does;
  `SEMANTIC_UNAVAILABLE` when the model cannot be loaded; `SEMANTIC_OFF` naming why when
  this platform has no model (encoder.active_model). Nothing when semantic search is
  turned off (`VAULT_AGENT_SEMANTIC=off`).
- `no_model_warning()`: that last `SEMANTIC_OFF` alone, for answers about the index rather
  than a search (`status`, hence the web page's health view).
"""

from __future__ import annotations

import json
import math
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import BaseModel

from vault_agent.contracts import HEARTBEAT_STALE_S, SEGMENTS_DIR, Manifest, WarningItem
from vault_agent.freshness import pid_alive
from vault_agent.semantic.encoder import active_model, load_encoder, load_error
from vault_agent.semantic.ports import PinnedManifest, SettingsSource
from vault_agent.semantic.settings import semantic_enabled
from vault_agent.semantic.store import TABLE, file_model

EMBEDDER_STATE_FILE = "embedder.json"
COMPUTING_COMMANDS = "'vault-agent serve --watch', 'vault-agent mcp' or 'vault-agent watch'"

__all__ = [
    "EMBEDDER_STATE_FILE",
    "EmbedderState",
    "SemanticState",
    "embedder_alive",
    "format_eta",
    "no_model_warning",
    "read_embedder_state",
    "semantic_state",
    "semantic_warnings",
]

EmbedderPhase = Literal["starting", "running", "idle", "restarting", "failed"]


class EmbedderState(BaseModel):
    """`embedder.json`: published by the process that computes embeddings."""

    pid: int  # the process hosting the embedder (the writer, or `index --embed`)
    heartbeat_at: float  # time.time() of the last publish
    command: str  # "writer" (serve --watch, mcp, watch) | "index --embed"
    phase: EmbedderPhase
    worker_pid: int | None = None
    model: str | None = None
    restarts: int = 0  # worker processes restarted after a crash
    last_error: str | None = None  # exception type or exit status, never text of a note
    notes_per_s: float | None = None  # recent embedding rate (None: not measured yet)


def embedder_alive(state: EmbedderState | None, now: float | None = None) -> bool:
    """True when the embedder's heartbeat is recent and its process still exists."""
    if state is None:
        return False
    now = time.time() if now is None else now
    return now - state.heartbeat_at <= HEARTBEAT_STALE_S and pid_alive(state.pid)


_state_lock = threading.Lock()
_state_cache: dict[Path, tuple[tuple[int, int], EmbedderState | None]] = {}


def read_embedder_state(index_dir: Path) -> EmbedderState | None:
    """`embedder.json`, re-read only when it changed (a search reads it on every answer)."""
    path = Path(index_dir) / EMBEDDER_STATE_FILE
    try:
        st = path.stat()
    except OSError:
        return None
    key = (st.st_mtime_ns, st.st_ino)
    with _state_lock:
        known = _state_cache.get(path)
    if known is not None and known[0] == key:
        return known[1]
    try:
        state: EmbedderState | None = EmbedderState.model_validate(json.loads(path.read_bytes()))
    except (OSError, ValueError):
        state = None
    with _state_lock:
        _state_cache[path] = (key, state)
    return state


@dataclass(frozen=True)
class SemanticState:
    enabled: bool
    model_ok: bool
    embedded_notes: int
    live_notes: int
    embedder: EmbedderState | None = None  # a live embedder's state (None: nobody computes them)
    no_model: str | None = None  # why this installation has no embedding model (None: it has one)

    @property
    def share(self) -> float:
        return 1.0 if self.live_notes == 0 else round(self.embedded_notes / self.live_notes, 4)

    @property
    def pending(self) -> bool:
        return (
            self.enabled and self.model_ok and self.no_model is None and self.embedded_notes < self.live_notes
        )

    @property
    def computing(self) -> bool:
        """A live embedder is working on the missing notes (it did not fail for good)."""
        return self.embedder is not None and self.embedder.phase != "failed"

    @property
    def eta_s(self) -> float | None:
        """Seconds until every live note is embedded at the embedder's recent rate."""
        if not self.pending or not self.computing or self.embedder is None or not self.embedder.notes_per_s:
            return None
        return (self.live_notes - self.embedded_notes) / self.embedder.notes_per_s

    @property
    def label(self) -> str:
        """ready | pending | off (turned off, or no model here) | unavailable (the model
        failed to load)."""
        if not self.enabled or self.no_model is not None:
            return "off"
        if not self.model_ok:
            return "unavailable"
        return "pending" if self.pending else "ready"

    @property
    def embedder_label(self) -> str:
        """What computes embeddings now: the embedder's phase, or `none`."""
        return self.embedder.phase if self.embedder is not None else "none"


def semantic_state(
    manifest: Manifest, index_dir: Path | None = None, *, load_model: bool = True
) -> SemanticState:
    """How much of a snapshot is embedded, and whether a live process computes the rest.

    The writer tombstones a changed note in every older segment, so a segment's live notes
    are its note count minus its tombstones (exact, from the manifest). A complete segment
    counts whole when its file is of the current model (checked when `index_dir` is given);
    a segment being embedded counts the notes its published parts cover (a note edited
    after its part was published may count until the part is replaced: a progress figure,
    never used to decide whether anything is pending).
    """
    enabled = semantic_enabled()
    choice = active_model()
    model = choice.model_id
    if choice.kind is None:
        return SemanticState(enabled, False, 0, _live_notes(manifest), None, choice.reason)
    model_ok = enabled and (load_encoder() is not None if load_model else load_error() is None)
    seg_dir = Path(index_dir) / SEGMENTS_DIR if index_dir is not None else None
    live = embedded = 0
    for seg in manifest.segments:
        n = max(seg.note_count - len(seg.deleted), 0)
        live += n
        complete = TABLE in seg.files and (seg_dir is None or file_model(seg_dir / seg.files[TABLE]) == model)
        embedded += n if complete else min(seg.embedded_notes, n)
    embedder = None
    if enabled and index_dir is not None:
        found = read_embedder_state(index_dir)
        embedder = found if embedder_alive(found) else None
        if embedder is not None and embedder.phase == "failed" and embedded < live:
            model_ok = False  # the embedder cannot load the model: nothing more will come
    return SemanticState(enabled, model_ok, embedded, live, embedder)


def _live_notes(manifest: Manifest) -> int:
    return sum(max(seg.note_count - len(seg.deleted), 0) for seg in manifest.segments)


def format_eta(seconds: float) -> str:
    """'about 40 s', 'about 3 min', 'about 1 h 10 min'."""
    s = max(1, math.ceil(seconds))
    if s < 60:
        return f"about {s} s"
    minutes = math.ceil(s / 60)
    if minutes < 60:
        return f"about {minutes} min"
    return f"about {minutes // 60} h {minutes % 60} min"


def _coverage(state: SemanticState) -> str:
    pct = int(state.share * 100)  # floors: never 100% while a note is missing
    return f"embeddings cover {pct}% of notes ({state.embedded_notes:,} of {state.live_notes:,})"


def _no_model(reason: str) -> WarningItem:
    return WarningItem(code="SEMANTIC_OFF", message=f"semantic search is off: {reason}; results are lexical")


def no_model_warning() -> WarningItem | None:
    """`SEMANTIC_OFF` naming why when semantic search is on and this platform has no model
    (encoder.active_model); None otherwise. Loads nothing."""
    choice = active_model()
    if not semantic_enabled() or choice.kind is not None:
        return None
    return _no_model(str(choice.reason))


def semantic_warnings(
    reader: SettingsSource, view: PinnedManifest, *, lexical_answer: bool = False
) -> list[WarningItem]:
    """The embedding-state warning of one search answer (see the module doc); with
    `lexical_answer`, the answer was asked for semantic ranking and is lexical only."""
    state = semantic_state(view.manifest, Path(reader.settings.index_dir), load_model=False)
    if not state.enabled:
        return []
    tail = "; this answer is lexical" if lexical_answer else ""
    if state.no_model is not None:
        return [_no_model(state.no_model)]
    if not state.model_ok:
        why = load_error()
        return [
            WarningItem(
                code="SEMANTIC_UNAVAILABLE",
                message="the embedding model could not be loaded"
                + (f" ({why})" if why and " " in why else "")  # a sentence, not an exception type
                + "; results are lexical only",
            )
        ]
    if not state.pending:
        return []
    if state.computing:
        eta = state.eta_s
        when = f", {format_eta(eta)} left" if eta is not None else ""
        return [
            WarningItem(
                code="SEMANTIC_PENDING",
                message=f"{_coverage(state)} and are being computed{when}; "
                f"semantic ranking is partial until they catch up{tail}",
            )
        ]
    return [
        WarningItem(
            code="SEMANTIC_OFF",
            message=f"{_coverage(state)} and no process is computing them: run 'vault-agent index --embed', "
            f"or keep {COMPUTING_COMMANDS} running{tail}",
        )
    ]
