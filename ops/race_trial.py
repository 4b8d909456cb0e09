"""Agent-vs-editor race trial: lost updates and false CONFLICTs of `vault_write`.

An "editor" process saves one note over and over (alternating in-place truncate+write and
temp+rename, a random 2-300 ms apart by default) while the agent, in this process, reads
the note and overwrites it through the real write tool with `expected_sha256`. Every
version names its parent (the version it was computed from), so afterwards:

- lost update: an editor version that nothing was derived from and that is not the final
  file (the agent's write replaced bytes it had not read);
- false CONFLICT: an agent version answered CONFLICT that still reached the file (some
  later version derives from it, or it is the final file).

    .venv/bin/python ops/race_trial.py --rounds 10000            # ~ minutes
    .venv/bin/python ops/race_trial.py --rounds 2000 --gap-ms 2 30

A short version runs in CI (tests/files/test_race_trial.py, no sleeps in the agent).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import random
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from multiprocessing.queues import Queue
from multiprocessing.synchronize import Event
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from vault_agent.api.operation import AppContext  # noqa: E402
from vault_agent.config import Settings  # noqa: E402
from vault_agent.errors import Conflict  # noqa: E402
from vault_agent.files.atomic import sha256_hex  # noqa: E402
from vault_agent.files.content import write_file  # noqa: E402
from vault_agent.files.models import WriteOptions  # noqa: E402
from vault_agent.paths import vault_for_settings  # noqa: E402
from vault_agent.query.snapshot import SnapshotReader  # noqa: E402

NOTE = "race.md"


@dataclass
class Tally:
    rounds: int = 0
    agent_written: int = 0
    agent_conflicts: int = 0
    editor_saves: int = 0
    lost_updates: int = 0
    false_conflicts: int = 0
    lost_ids: list[str] = field(default_factory=list)
    false_conflict_ids: list[str] = field(default_factory=list)


_FILLER = "filler line of the note\n"


def version(vid: str, parent: str) -> bytes:
    """One version of the note: its id, its parent's id, and a varying length."""
    return f"id: {vid}\nparent: {parent}\n{_FILLER * random.randint(1, 40)}".encode()


def parse_id(data: bytes) -> str:
    first = data.split(b"\n", 1)[0]
    return first[4:].decode() if first.startswith(b"id: ") else "?"


def _editor(path: str, gap_ms: tuple[float, float], stop: Event, out: Queue[Any], seed: int) -> None:
    """Save the note until told to stop; report (id, parent) of every completed save."""
    rnd = random.Random(seed)
    saves: list[tuple[str, str]] = []
    k = 0
    tmp = os.path.join(os.path.dirname(path), ".editor-save.tmp")
    while not stop.is_set():
        with open(path, "rb") as fh:
            parent = parse_id(fh.read())
        vid = f"e{k}"
        data = version(vid, parent)
        if k % 2:
            with open(path, "wb") as fh:  # in place: O_TRUNC then write
                fh.write(data)
        else:
            with open(tmp, "wb") as fh:
                fh.write(data)
            os.replace(tmp, path)
        saves.append((vid, parent))
        k += 1
        stop.wait(rnd.uniform(*gap_ms) / 1000)
    out.put(saves)


def run_rounds(
    workdir: Path, rounds: int, gap_ms: tuple[float, float], seed: int = 0, agent_pause_ms: float = 0.0
) -> Tally:
    """Run `rounds` agent writes against a live editor process; count losses."""
    vault = workdir / "vault"
    vault.mkdir(parents=True, exist_ok=True)
    path = vault / NOTE
    path.write_bytes(version("start", "-"))
    settings = Settings(vault=vault, index_dir=workdir / "state", writes_enabled=True)
    vault_ = vault_for_settings(settings)
    ctx = AppContext(settings=settings, vault=vault_, reader=SnapshotReader(settings, vault_))
    rnd = random.Random(seed)
    mpctx = mp.get_context("spawn")
    stop, out = mpctx.Event(), mpctx.Queue()
    editor = mpctx.Process(target=_editor, args=(str(path), gap_ms, stop, out, seed + 1))
    editor.start()
    agent: dict[str, str] = {}
    conflicted: set[str] = set()
    tally = Tally(rounds=rounds)
    try:
        for j in range(rounds):
            data = path.read_bytes()
            vid = f"a{j}"
            try:
                new = version(vid, parse_id(data)).decode()
                write_file(ctx, NOTE, new, "overwrite", WriteOptions(expected_sha256=sha256_hex(data)))
                agent[vid] = parse_id(data)
                tally.agent_written += 1
            except Conflict:
                conflicted.add(vid)
                tally.agent_conflicts += 1
            if agent_pause_ms:
                time.sleep(rnd.uniform(0, agent_pause_ms) / 1000)
    finally:
        stop.set()
        saves: list[tuple[str, str]] = out.get(timeout=60)
        editor.join(timeout=60)
    final = parse_id(path.read_bytes())
    derived = {parent for _, parent in saves} | set(agent.values()) | {final}
    tally.editor_saves = len(saves)
    tally.lost_ids = [vid for vid, _ in saves if vid not in derived]
    tally.false_conflict_ids = sorted(conflicted & derived)
    tally.lost_updates = len(tally.lost_ids)
    tally.false_conflicts = len(tally.false_conflict_ids)
    return tally


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=10_000)
    ap.add_argument("--gap-ms", type=float, nargs=2, default=(2.0, 300.0), help="editor save gap range")
    ap.add_argument("--agent-pause-ms", type=float, default=5.0, help="random agent pause upper bound")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="race-trial-", dir=os.environ.get("RACE_TRIAL_DIR")) as tmp:
        started = time.monotonic()
        tally = run_rounds(Path(tmp), args.rounds, tuple(args.gap_ms), args.seed, args.agent_pause_ms)
        report = asdict(tally) | {"gap_ms": args.gap_ms, "seconds": round(time.monotonic() - started, 1)}
        report["lost_ids"] = report["lost_ids"][:20]
        print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
