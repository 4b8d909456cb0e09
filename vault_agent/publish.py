"""Listeners told about a snapshot just before it is published (CURRENT replaced).

The indexer knows nothing of this module: a composition root that runs a writer and
readers in one process (`server/context.py`) gives the writer a `ReaderPreload` hook over
its state dir (`commit_hook.CommitHook`: its `publishing` step).

A snapshot reader in the writer's own process (`serve --watch`) registers here and loads
the new snapshot's segments while the commit is still private, so the first request after
a write finds it loaded instead of paying for the load. Listeners are per state dir, run
on the writer's thread, and their failures never fail a commit. They are held weakly
(bound methods), so a reader nobody closes does not stay alive for them.
"""

from __future__ import annotations

import logging
import threading
import weakref
from collections.abc import Callable
from pathlib import Path

from vault_agent.commit_hook import CommitHook
from vault_agent.contracts import Manifest

log = logging.getLogger("vault_agent.publish")

Listener = Callable[[Manifest], None]
_lock = threading.Lock()
_listeners: dict[Path, list[weakref.WeakMethod[Listener]]] = {}


def _key(index_dir: Path) -> Path:
    return Path(index_dir).resolve()


def add_publish_listener(index_dir: Path, listener: Listener) -> None:
    """Register a bound method (held weakly) for commits to `index_dir`."""
    with _lock:
        _listeners.setdefault(_key(index_dir), []).append(weakref.WeakMethod(listener))


def remove_publish_listener(index_dir: Path, listener: Listener) -> None:
    with _lock:
        key = _key(index_dir)
        kept = [ref for ref in _listeners.get(key, []) if ref() is not None and ref() != listener]
        if kept:
            _listeners[key] = kept
        else:
            _listeners.pop(key, None)


def before_publish(index_dir: Path, manifest: Manifest) -> None:
    """Tell this process's listeners of `index_dir` about `manifest` (segments are durable)."""
    with _lock:
        if not _listeners:
            return
        listeners = [ref() for ref in _listeners.get(_key(index_dir), [])]
    for listener in listeners:
        if listener is None:
            continue  # its reader is gone
        try:
            listener(manifest)
        except Exception:  # a reader that cannot preload loads on its first request instead
            log.warning("preloading a snapshot before publishing it failed", exc_info=True)


class ReaderPreload(CommitHook):
    """The commit hook of a writer that shares its process with readers: each snapshot is
    handed to the readers of `index_dir` before it is published (`before_publish`)."""

    def __init__(self, index_dir: Path) -> None:
        self.index_dir = index_dir

    def publishing(self, manifest: Manifest) -> None:
        before_publish(self.index_dir, manifest)
