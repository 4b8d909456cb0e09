"""Agent-vs-editor races through the real write tool: no lost saves, no false CONFLICT.

The trial itself is ops/race_trial.py (an editor process saving in place and by
temp+rename while the agent writes with expected_sha256); here it runs short for CI with
the editor saving back to back (no pacing sleeps), and long under `-m slow`.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "ops"))

from race_trial import run_rounds  # noqa: E402


def test_short_race_trial_loses_nothing(tmp_path: Path) -> None:
    tally = run_rounds(tmp_path, rounds=150, gap_ms=(0.0, 0.0), seed=3)
    assert (tally.lost_ids, tally.false_conflict_ids) == ([], [])
    assert tally.agent_written + tally.agent_conflicts == 150


@pytest.mark.slow
@pytest.mark.parametrize("gap_ms", [(2.0, 30.0), (2.0, 300.0)])
def test_long_race_trial_loses_nothing(tmp_path: Path, gap_ms: tuple[float, float]) -> None:
    tally = run_rounds(tmp_path, rounds=5_000, gap_ms=gap_ms, seed=7, agent_pause_ms=5.0)
    assert (tally.lost_ids, tally.false_conflict_ids) == ([], [])
