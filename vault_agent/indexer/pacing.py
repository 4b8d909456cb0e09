"""How often the writer commits, and how long it waits after a failure.

`CommitPacer`: under a steady stream of edits, commit at most every MIN_COMMIT_GAP_S and
never spend more than half the time committing; edits arriving meanwhile join the next
batch, so readers see a bounded number of new snapshots per second however fast the editor
saves. An edit after a quiet moment still commits at once.
`Backoff`: a failed build is retried after MIN_BACKOFF_S, doubling up to MAX_BACKOFF_S, and
back to nothing after a success, so the writer resumes by itself once the cause is gone.
"""

from __future__ import annotations

import time

MIN_COMMIT_GAP_S = 1.0
MIN_BACKOFF_S = 0.5
MAX_BACKOFF_S = 30.0


class CommitPacer:
    """Remembers the last commit; says how long the next one should wait."""

    def __init__(self, min_gap_s: float = MIN_COMMIT_GAP_S) -> None:
        self.min_gap_s = min_gap_s
        self._done_at = 0.0
        self._took = 0.0

    def delay_s(self) -> float:
        """Seconds to wait before the next commit (0 after a quiet moment)."""
        gap = max(self.min_gap_s, self._took)
        return max(0.0, self._done_at + gap - time.monotonic())

    def committed(self, started: float, ended: float) -> None:
        """Record a commit's monotonic start and end."""
        self._done_at, self._took = ended, ended - started


class Backoff:
    """Exponential backoff with a cap (see module doc)."""

    def __init__(self, min_s: float = MIN_BACKOFF_S, max_s: float = MAX_BACKOFF_S) -> None:
        self.min_s = min_s
        self.max_s = max_s
        self.current_s = 0.0

    def failed(self) -> float:
        """The wait before the next attempt: min_s, then doubling, at most max_s."""
        self.current_s = min(self.max_s, max(self.min_s, self.current_s * 2))
        return self.current_s

    def succeeded(self) -> None:
        self.current_s = 0.0
