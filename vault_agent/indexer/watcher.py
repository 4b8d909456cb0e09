"""watchdog → path hints for the writer. Events are hints only; the disk decides at build.

Filtering: paths outside the vault, undecodable names, excluded and protected paths, and
files that are not notes (editor temp files, vim's `4913` probe, `*.swp`, `*~`, our own
`.vault-agent-tmp-*` files) are dropped here; a temp+rename save arrives as a move whose
destination is the note. Folder events become folder hints (the builder re-checks the
notes it knows under them; watchdog reports a moved-in folder's files itself).
Overflow: watchdog never tells the handler; it only logs "Inotify queue overflowed". A
handler on the `watchdog` logger turns that record (and observer errors) into a callback,
and swallows watchdog's own records because they carry absolute paths.
"""

from __future__ import annotations

import logging
import os
import threading
import warnings
from collections.abc import Callable
from pathlib import Path

from watchdog.events import FileSystemEvent, FileSystemEventHandler
from watchdog.observers import Observer
from watchdog.observers.api import BaseObserver

from vault_agent.paths import Vault
from vault_agent.text import nfc

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
_IGNORED_TYPES = frozenset({"opened", "closed_no_write"})


class _WatchdogLogTap(logging.Handler):
    """Receives watchdog's log records; reports overflow and errors to registered writers."""

    def __init__(self) -> None:
        super().__init__(level=logging.DEBUG)
        self.listeners: list[Callable[[str], None]] = []
        self.guard = threading.Lock()

    def emit(self, record: logging.LogRecord) -> None:
        try:
            msg = str(record.msg).lower()
        except Exception:
            return
        if "overflow" in msg:
            reason = "overflow"
        elif record.levelno >= logging.ERROR:
            reason = "watch-error"
        else:
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


def to_rel(vault: Vault, abs_path: str | bytes) -> str | None:
    """Vault-relative NFC path of a watchdog path, or None (outside, undecodable, root)."""
    if isinstance(abs_path, bytes):
        try:
            abs_path = abs_path.decode()
        except UnicodeDecodeError:
            return None
    root = str(vault.root)
    if not abs_path.startswith(root + os.sep):
        return None
    rel = abs_path[len(root) + 1 :].replace(os.sep, "/").strip("/")
    if not rel or any(0xD800 <= ord(ch) <= 0xDFFF for ch in rel):
        return None
    return nfc(rel)


class VaultEventHandler(FileSystemEventHandler):
    """Turns watchdog events into hints; wakes the writer when the event log grows."""

    def __init__(self, vault: Vault, events_dir: Path, sink: HintSink, on_log_change: Callable[[], None]):
        super().__init__()
        self.vault = vault
        self.events_dir = os.path.realpath(events_dir)
        self.sink = sink
        self.on_log_change = on_log_change

    def on_any_event(self, event: FileSystemEvent) -> None:
        if event.event_type in _IGNORED_TYPES:
            return
        paths = [event.src_path]
        dest = getattr(event, "dest_path", "")
        if dest:
            paths.append(dest)
        for raw in paths:
            path = raw.decode(errors="surrogateescape") if isinstance(raw, bytes) else raw
            if path.startswith(self.events_dir + os.sep) or path == self.events_dir:
                self.on_log_change()
                continue
            rel = to_rel(self.vault, path)
            if rel is None:
                continue
            if event.is_directory:
                if event.event_type == "modified":
                    continue
                if self.vault.exclusions.excluded(rel, True) or self.vault.is_protected(rel):
                    continue
                self.sink(rel, True)
                continue
            if not self.vault.is_note_name(rel):
                continue
            if self.vault.exclusions.excluded(rel, False) or self.vault.is_protected(rel):
                continue
            self.sink(rel, False)


def start_observer(vault: Vault, events_dir: Path, handler: VaultEventHandler) -> BaseObserver:
    """A started watchdog observer on the vault (recursive) and on the event log's folder."""
    observer = Observer()
    observer.daemon = True
    observer.schedule(handler, str(vault.root), recursive=True)
    ev_dir = os.path.realpath(events_dir)
    if not ev_dir.startswith(str(vault.root) + os.sep):
        events_dir.mkdir(parents=True, exist_ok=True)
        observer.schedule(handler, ev_dir, recursive=False)
    observer.start()
    return observer
