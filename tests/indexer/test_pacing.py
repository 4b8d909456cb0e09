"""CommitPacer: bursts after a quiet moment go at once; a steady stream is paced to the gap."""

from __future__ import annotations

from vault_agent.indexer.pacing import CommitPacer


class FakeClock:
    """A monotonic clock the test moves by hand (the pacer takes its clock as a parameter)."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def commit(pacer: CommitPacer, clock: FakeClock, took: float) -> None:
    clock.now += pacer.delay_s()
    start = clock.now
    clock.now += took
    pacer.committed(start, clock.now)


def test_a_burst_after_a_quiet_moment_commits_at_once() -> None:
    clock = FakeClock()
    pacer = CommitPacer(min_gap_s=1.0, burst=4, clock=clock)
    waits = []
    for _ in range(4):
        waits.append(pacer.delay_s())
        commit(pacer, clock, took=0.05)
    # no pacing gap, only the half-the-time rule: each waits as long as the last commit took
    assert waits[0] == 0.0 and all(w <= 0.05 + 1e-9 for w in waits)
    assert pacer.delay_s() > 0.5  # the bucket is empty: the fifth waits for a token


def test_a_steady_stream_averages_one_commit_per_gap() -> None:
    clock = FakeClock()
    pacer = CommitPacer(min_gap_s=1.0, burst=4, clock=clock)
    start = clock.now
    for _ in range(104):
        commit(pacer, clock, took=0.05)
    # 4 from the full bucket, then one per second
    assert 99.0 <= clock.now - start <= 101.0


def test_never_more_than_half_the_time_committing() -> None:
    clock = FakeClock()
    pacer = CommitPacer(min_gap_s=1.0, burst=4, clock=clock)
    commit(pacer, clock, took=3.0)
    assert pacer.delay_s() == 3.0


def test_the_bucket_refills_while_quiet() -> None:
    clock = FakeClock()
    pacer = CommitPacer(min_gap_s=1.0, burst=2, clock=clock)
    commit(pacer, clock, took=0.0)
    commit(pacer, clock, took=0.0)
    assert pacer.delay_s() == 1.0
    clock.now += 5.0
    assert pacer.delay_s() == 0.0
