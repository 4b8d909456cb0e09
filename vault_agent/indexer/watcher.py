"""watchdog → hints for the writer: the observer, its event handler and its problem reports.

What becomes a hint is `NoteFilter`'s decision (watch_filter.py); how hints are grouped into
batches is `HintBatcher`'s (watch_batches.py). A temp+rename save arrives as a move whose
destination is the note; folder events become folder hints (the builder re-checks the notes
it knows under them; watchdog reports a moved-in folder's files itself).
Overflow: watchdog 7 gives an event handler no overflow event (the kernel's IN_Q_OVERFLOW
reaches only its own watch groups, which rebuild their watches). What it does do is log a
WARNING from `watchdog.observers.inotify_c` / `watchdog.observers.inotify`, and those two
modules log no other warning. So a handler on the `watchdog` logger reports overflow by the
record's logger and level (never by its wording, which changes between releases), reports
any ERROR as a watch error, and swallows watchdog's records because they carry absolute paths.
"""

from __future__ import annotations

import logging
import os
import threading
import warnings
from collections.abc import Callable
from pathlib import Path

from watchdog.events import (
    DirCreatedEvent,
    DirDeletedEvent,
    DirModifiedEvent,
    DirMovedEvent,
    FileClosedEvent,
    FileCreatedEvent,
    FileDeletedEvent,
    FileModifiedEvent,
    FileMovedEvent,
    FileSystemEvent,
    FileSystemEventHandler,
)
from watchdog.observers import Observer
from watchdog.observers.api import BaseObserver

from vault_agent.indexer.watch_filter import IGNORED_EVENT_TYPES, NoteFilter
from vault_agent.paths import Vault
from vault_agent.private_dir import make_state_dirs

ObserverHandle = BaseObserver  # what the engine holds, without importing watchdog itself

log = logging.getLogger("vault_agent.indexer.watcher")

# watchdog's recursive inotify watch also covers the state dir when it lies inside the vault
# (the default `<vault>/.vault-agent/`), where the search engine creates a directory per
# commit. When the kernel reuses a watch descriptor for such a new directory, watchdog warns
# "Callback with id ... already exists for watch" from its emitter thread, with the absolute
# path in the text. The state dir is excluded from indexing anyway and the existing callback
# keeps delivering events, so the warning carries nothing for us but a path that must never
# reach a log (SPEC: no absolute paths).
WATCHDOG_DUPLICATE_CALLBACK = r"Callback with id .* already exists for watch"
warnings.filterwarnings("ignore", message=WATCHDOG_DUPLICATE_CALLBACK, category=RuntimeWarning)

HintSink = Callable[[str, bool], None]  # (vault-relative path, is_dir)
# The events a hint can come from: changes, never reads. Without a filter watchdog also asks
# the kernel for IN_OPEN and IN_CLOSE_NOWRITE, so every read of a note (a search's snippets,
# vault_read, grep, the parser, the reconcile's hash pass: 10k opens at 10k notes) queued two
# events, decoded on watchdog's thread while requests waited for the GIL, only for
# `IGNORED_EVENT_TYPES` to drop them; a hash pass alone could overflow the kernel's queue
# (16,384 events) and make the index stale until a rescan (issue 32).
HINT_EVENTS: tuple[type[FileSystemEvent], ...] = (
    FileCreatedEvent,
    DirCreatedEvent,
    FileDeletedEvent,
    DirDeletedEvent,
    FileModifiedEvent,
    DirModifiedEvent,
    FileMovedEvent,
    DirMovedEvent,
    FileClosedEvent,
)
# The watchdog modules whose only WARNING is "the inotify queue overflowed" (watchdog 7.x).
OVERFLOW_LOGGERS = frozenset({"watchdog.observers.inotify_c", "watchdog.observers.inotify"})


def problem_of(record: logging.LogRecord) -> str | None:
    """`overflow`, `watch-error` or None for one of watchdog's log records (see module doc)."""
    if record.levelno >= logging.ERROR:
        return "watch-error"
    if record.levelno >= logging.WARNING and record.name in OVERFLOW_LOGGERS:
        return "overflow"
    return None


class _WatchdogLogTap(logging.Handler):
    """Receives watchdog's log records; reports overflow and errors to registered writers."""

    def __init__(self) -> None:
        super().__init__(level=logging.DEBUG)
        self.listeners: list[Callable[[str], None]] = []
        self.guard = threading.Lock()

    def emit(self, record: logging.LogRecord) -> None:
        reason = problem_of(record)
        if reason is None:
            return
        with self.guard:
            listeners = list(self.listeners)
        for fn in listeners:
            try:
                fn(reason)
            except Exception:
                log.exception("watch listener failed")


_TAP = _WatchdogLogTap()


def _install_tap() -> None:
    wd = logging.getLogger("watchdog")
    if _TAP not in wd.handlers:
        wd.addHandler(_TAP)
        wd.setLevel(logging.WARNING)
        wd.propagate = False  # watchdog's messages name absolute paths; ours do not


def add_problem_listener(fn: Callable[[str], None]) -> None:
    _install_tap()
    with _TAP.guard:
        _TAP.listeners.append(fn)


def remove_problem_listener(fn: Callable[[str], None]) -> None:
    with _TAP.guard:
        if fn in _TAP.listeners:
            _TAP.listeners.remove(fn)


class VaultEventHandler(FileSystemEventHandler):
    """Passes each observed path through the filter to the sink; wakes the writer when the
    event log (watched too when it lies outside the vault) grows."""

    def __init__(
        self, note_filter: NoteFilter, events_dir: Path, sink: HintSink, on_log_change: Callable[[], None]
    ) -> None:
        super().__init__()
        self.note_filter = note_filter
        self.events_dir = os.path.realpath(events_dir)
        self.sink = sink
        self.on_log_change = on_log_change

    def on_any_event(self, event: FileSystemEvent) -> None:
        if event.event_type in IGNORED_EVENT_TYPES:
            return  # our own reads of the event log must not wake the writer
        paths = [event.src_path]
        dest = getattr(event, "dest_path", "")
        if dest:
            paths.append(dest)
        for raw in paths:
            path = raw.decode(errors="surrogateescape") if isinstance(raw, bytes) else raw
            if path.startswith(self.events_dir + os.sep) or path == self.events_dir:
                self.on_log_change()
                continue
            rel = self.note_filter(event.event_type, raw, event.is_directory)
            if rel is not None:
                self.sink(rel, event.is_directory)


def observer_healthy(observer: BaseObserver) -> bool:
    """True while the observer's thread and every emitter thread run (watchdog stops an
    emitter for good when its watched folder is deleted, and says nothing)."""
    return observer.is_alive() and all(emitter.is_alive() for emitter in observer.emitters)


def start_observer(vault: Vault, events_dir: Path, handler: VaultEventHandler) -> BaseObserver:
    """A started watchdog observer on the vault (recursive) and on the event log's folder."""
    observer = Observer()
    observer.daemon = True
    observer.schedule(handler, str(vault.root), recursive=True, event_filter=list(HINT_EVENTS))
    ev_dir = os.path.realpath(events_dir)
    if not ev_dir.startswith(str(vault.root) + os.sep):
        make_state_dirs(events_dir, events_dir.parent)
        observer.schedule(handler, ev_dir, recursive=False, event_filter=list(HINT_EVENTS))
    observer.start()
    return observer
