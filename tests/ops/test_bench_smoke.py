"""Every benchmark script still runs against the current code: each `ops/bench` script (a
file with a `__main__` guard) runs with `--smoke` (tiny sizes, one repetition; see
ops/bench/benchkit.py) as a child process and must exit 0. A new script is found by the
glob, so one without `--smoke` fails here. No figure is checked: benchmarks measure, tests
do not time."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "ops" / "bench"
SCRIPTS = sorted(
    p for p in BENCH.glob("*.py") if 'if __name__ == "__main__":' in p.read_text(encoding="utf-8")
)
# Smoke runs over ~8 s on a loaded 2-core box (valgrind, the model, servers, a minute of
# edits, a browser): `-m slow`. The others take ~40 s together and run with the suite.
SLOW = {
    "bench_body_flood.py",
    "bench_index.py",
    "bench_longrun.py",  # a serve --watch child for a few samples: ~20 s
    "bench_parse_cost.py",
    "bench_semantic.py",
    "bench_semantic_scale.py",
    "bench_serve_memory.py",
    "bench_sustained.py",
    "bench_web.py",  # two servers and Chromium: ~25 s
    "bench_write_phases.py",
    "bench_writes.py",
    "heap_profile.py",  # an in-process serve --watch, 6 commits: ~15 s
}


def _param(path: Path) -> object:
    marks = []
    if path.name in SLOW:
        marks.append(pytest.mark.slow)
    return pytest.param(path, id=path.stem, marks=marks)


def test_the_glob_finds_the_scripts() -> None:
    names = {p.name for p in SCRIPTS}
    assert {"bench_index.py", "bench_write_phases.py"} <= names
    assert "benchkit.py" not in names  # a module, not a script
    assert names >= SLOW  # no stale entries


@pytest.mark.parametrize("script", [_param(p) for p in SCRIPTS])
def test_smoke_run(script: Path, tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("VAULT_AGENT_")}
    env["TMPDIR"] = str(tmp_path)  # whatever a script leaves behind goes with the test
    proc = subprocess.run(
        [sys.executable, str(script), "--smoke"], cwd=tmp_path, env=env,
        capture_output=True, text=True, timeout=240,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
