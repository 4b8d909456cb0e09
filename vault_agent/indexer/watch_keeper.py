"""Keeps the watcher attached to the vault folder that is there now.

A watch is on a folder (an inode), not on a path. When the vault folder is deleted, the
observer's emitter stops for good; when it is renamed away, the watch follows it and keeps
reporting its changes as if they were the vault's; when a new folder takes the path (a sync
tool, a checkout, a restored backup), nothing watches it at all. So the writer's heartbeat
calls `check()` every tick: it compares the root's (device, inode) with the one watched
and the observer's threads with alive ones, and answers

- `vanished`: the folder is gone now (once; `missing` while it stays gone): the observer is
  stopped (a folder renamed away must not feed the index), nothing may be committed;
- `reattached`: the folder is back, was replaced, or the observer died: a new observer
  watches the folder at the path now, and a rescan must catch up before `fresh`;
- `ok`.
A folder at the vault's path that holds nothing but the state dir counts as missing: it is
what a write into a state dir inside the vault (a conversation record, say) leaves while the
real folder is away, and taking it for the vault would commit "every note deleted".
A restart is counted under `watcher` in the writer's supervisor (status --verbose).
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Literal

from vault_agent.indexer.watcher import ObserverHandle, VaultEventHandler, observer_healthy, start_observer
from vault_agent.paths import Vault
from vault_agent.supervise import Supervisor

log = logging.getLogger("vault_agent.indexer.watch_keeper")

RootCheck = Literal["ok", "vanished", "missing", "reattached", "blind"]


class WatchKeeper:
    """The observer of one vault and the identity of the folder it watches (thread-safe)."""

    def __init__(
        self,
        vault: Vault,
        events_dir: Path,
        handler_factory: Callable[[], VaultEventHandler],
        supervisor: Supervisor,
        state_in_vault: str | None = None,
    ) -> None:
        self.vault = vault
        # The state dir's first path component when it lies inside the vault (see module doc).
        self._state_top = state_in_vault.split("/", 1)[0] if state_in_vault else None
        self.events_dir = events_dir
        self._handler_factory = handler_factory
        self._supervisor = supervisor
        self._lock = threading.Lock()
        self._observer: ObserverHandle | None = None
        self._identity: tuple[int, int] | None = None
        self.missing = False
        self._blind = False  # the last restart failed (logged once)

    def start(self) -> None:
        """Watch the vault folder at the root path now.

        Raises:
            OSError: the observer cannot start (no inotify watches left, folder gone).
        """
        with self._lock:
            self._identity = self.vault.io.root_identity()
            self._observer = start_observer(self.vault, self.events_dir, self._handler_factory())

    def stop(self) -> None:
        with self._lock:
            self._stop_locked()

    def _stop_locked(self) -> None:
        observer, self._observer = self._observer, None
        if observer is not None:
            observer.stop()
            observer.join(timeout=30)

    def healthy(self) -> bool:
        """True while the watch is sound, or deliberately stopped because the folder is gone
        (the stale reason is then `vault-missing`, not a watch error)."""
        observer = self._observer
        return self.missing or (observer is not None and observer_healthy(observer))

    def saw_missing(self) -> None:
        """A build found the root gone before a heartbeat did: the next check re-attaches."""
        self.missing = True

    def check(self) -> RootCheck:
        """Compare the folder at the root path with the watched one (see module doc)."""
        identity = self.vault.io.root_identity()
        if identity is not None and identity != self._identity and self._only_state_dir():
            identity = None
        with self._lock:
            if identity is None:
                was_missing, self.missing = self.missing, True
                if self._observer is None and was_missing:
                    return "missing"
                self._stop_locked()
                return "missing" if was_missing else "vanished"
            observer = self._observer
            if (
                not self.missing
                and identity == self._identity
                and observer is not None
                and observer_healthy(observer)
            ):
                return "ok"
            cause = (
                "vault folder returned"
                if self.missing
                else "vault folder replaced"
                if identity != self._identity
                else "observer stopped"
            )
            return self._restart_locked(cause)

    def _only_state_dir(self) -> bool:
        if self._state_top is None:
            return False
        try:
            return os.listdir(self.vault.root) == [self._state_top]
        except OSError:
            return True  # gone again, or not a folder we can list: not a vault to watch

    def restart(self, cause: str) -> RootCheck:
        """Watch again from scratch (e.g. the state dir, whose event folder was watched, was
        recreated); `blind` when the observer cannot start now (the next check retries)."""
        with self._lock:
            return self._restart_locked(cause)

    def _restart_locked(self, cause: str) -> RootCheck:
        self._stop_locked()
        self._supervisor.record("watcher", cause)
        try:
            self._identity = self.vault.io.root_identity()
            self._observer = start_observer(self.vault, self.events_dir, self._handler_factory())
        except OSError as exc:
            if not self._blind:  # one line per blind spell, not one per heartbeat
                log.warning("cannot watch the vault (%s); retrying every heartbeat", type(exc).__name__)
            self._blind = True
            return "blind"
        self.missing = self._blind = False
        log.info("watching the vault again (%s)", cause, extra={"event": "watch_reattached"})
        return "reattached"
