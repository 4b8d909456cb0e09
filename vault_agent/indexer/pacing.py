"""How often the writer commits, and how long it waits after a failure.

`CommitPacer`: a token bucket. Under a steady stream of edits the writer commits at most
once per MIN_COMMIT_GAP_S on average and never spends more than half the time committing;
edits arriving meanwhile join the next batch, so readers see a bounded number of new
snapshots per second however fast the editor saves. A short burst of up to BURST_COMMITS
commits after a quiet moment goes at once: an agent making a few writes in a row with
`wait_for_index` waits for each commit, not for the pacing gap.
`Backoff`: a failed build is retried after MIN_BACKOFF_S, doubling up to MAX_BACKOFF_S, and
back to nothing after a success, so the writer resumes by itself once the cause is gone.
"""

from __future__ import annotations

import time
from collections.abc import Callable

MIN_COMMIT_GAP_S = 1.0
BURST_COMMITS = 4
MIN_BACKOFF_S = 0.5
MAX_BACKOFF_S = 30.0


class CommitPacer:
    """Remembers recent commits; says how long the next one should wait (see module doc)."""

    def __init__(
        self,
        min_gap_s: float = MIN_COMMIT_GAP_S,
        burst: int = BURST_COMMITS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.min_gap_s = min_gap_s
        self.burst = burst
        self._clock = clock
        self._tokens = float(burst)
        self._tokens_at = clock()
        self._done_at = float("-inf")
        self._took = 0.0

    def _tokens_now(self, now: float) -> float:
        return min(float(self.burst), self._tokens + (now - self._tokens_at) / self.min_gap_s)

    def delay_s(self) -> float:
        """Seconds to wait before the next commit (0 after a quiet moment or within a burst)."""
        now = self._clock()
        short = max(0.0, 1.0 - self._tokens_now(now))
        token_wait = short * self.min_gap_s
        busy_wait = self._done_at + self._took - now  # never more than half the time committing
        return max(0.0, token_wait, busy_wait)

    def committed(self, started: float, ended: float) -> None:
        """Record a commit's monotonic start and end (it spends one token)."""
        self._tokens = max(0.0, self._tokens_now(ended) - 1.0)
        self._tokens_at = ended
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
