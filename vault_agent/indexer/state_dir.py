"""A new writer-side index in a state dir that was deleted under a running writer.

The writer notices the deletion at its next heartbeat (its lock file lost its name,
lock.py) and re-takes the lock on a new file at once; its build loop then calls
`reopen_indexer` and rebuilds from a full scan. Two numbers must not go back, because this
process keeps state keyed by them: event-log seqs (the writer's published log head is
compared with a snapshot's applied_seq: a log restarted at 1 would read `pending` for a
long time) and snapshot / segment ids (the reader keeps loaded per-segment columns by id,
and the embedder its finished files). So the new event log starts above the old head, and
the new ids above the old manifest's.
"""

from __future__ import annotations

from vault_agent.config import Settings
from vault_agent.indexer.build import Indexer
from vault_agent.indexer.eventlog import EventLog
from vault_agent.indexer.search_index import close_engine_writer
from vault_agent.indexer.snapshot import clear_tmp
from vault_agent.private_dir import make_state_dirs


def reopen_indexer(settings: Settings, old: Indexer, head_seq: int) -> Indexer:
    """An `Indexer` over the recreated state dir, with no snapshot yet (its first build is
    a full rebuild); seqs continue above `head_seq` (the writer's log head) and ids above
    `old`'s (see module doc)."""
    # The engine's writer holds files of the deleted folder; a new one starts from empty.
    close_engine_writer(old.index_dir)
    make_state_dirs(settings.index_dir, settings.index_dir)
    seq_floor = max(old.applied_seq, head_seq)
    idx = Indexer(settings, hooks=old.hooks)
    idx.log = EventLog(idx.index_dir, floor_seq=lambda: max(idx.applied_seq, seq_floor))
    idx.ids_above = old.manifest or old.ids_above
    idx.load()
    idx.log.recover()
    clear_tmp(idx.index_dir)
    return idx
