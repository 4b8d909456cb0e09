"""Fixtures: the real embedding model (loaded once per session), a copy of the synthetic
multilingual vault, a real writer that embeds it, and a real snapshot reader."""

from __future__ import annotations

import os
import shutil
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from vault_agent.config import Settings
from vault_agent.freshness import read_current_manifest, vault_for_settings
from vault_agent.indexer.engine import Writer
from vault_agent.query.snapshot import SnapshotReader
from vault_agent.semantic.encoder import Encoder, load_encoder
from vault_agent.semantic.progress import semantic_state

REPO = Path(__file__).resolve().parents[2]
FIXTURE = REPO / "fixtures" / "semantic"
# The fixture's 16 notes make 17 passages: one note is longer than a window of
# passages.PASSAGE_TOKENS tokens, so it has a second (passages.WINDOWS).
FIXTURE_PASSAGES = 17
WAIT_S = 120.0  # bound of every wait on the background embedder (a condition, not a sleep)

os.environ["HF_HUB_OFFLINE"] = "1"  # prove nothing is fetched from a model hub
os.environ["TRANSFORMERS_OFFLINE"] = "1"


def worker_children() -> list[int]:
    """Embedding worker processes this test process started and has not reaped."""
    found = []
    for task in Path(f"/proc/{os.getpid()}/task").glob("*/children"):
        for pid in task.read_text().split():
            try:
                cmd = Path(f"/proc/{pid}/cmdline").read_bytes()
            except OSError:
                continue
            if b"vault_agent.semantic.worker" in cmd and process_running(int(pid)):
                found.append(int(pid))
    return found


@pytest.fixture(autouse=True)
def no_worker_left() -> Iterator[None]:
    """Every test that starts an embedding worker (through a writer) stops it."""
    yield
    assert wait_until(lambda: not worker_children(), timeout_s=30), worker_children()


@pytest.fixture(scope="session")
def encoder() -> Encoder:
    enc = load_encoder()
    assert enc is not None, "the bundled model must load offline"
    return enc


def copy_vault(dst: Path) -> Path:
    shutil.copytree(FIXTURE, dst)
    return dst


def settings_for(vault: Path) -> Settings:
    return Settings(vault=vault, index_dir=vault / ".vault-agent")


def wait_until(pred: Callable[[], bool], timeout_s: float = WAIT_S) -> bool:
    """Poll a condition with a bound (the embedder runs on another thread)."""
    done = threading.Event()
    deadline = timeout_s
    step = 0.05
    waited = 0.0
    while waited < deadline:
        if pred():
            return True
        done.wait(step)
        waited += step
    return pred()


def fully_embedded(settings: Settings) -> bool:
    manifest = read_current_manifest(settings.index_dir)
    return manifest is not None and not semantic_state(manifest, settings.index_dir).pending


@pytest.fixture(scope="session")
def embedded_template(tmp_path_factory: pytest.TempPathFactory, encoder: Encoder) -> Path:
    """The fixture vault with its index, every note embedded by a real writer and its worker
    process, once per session (copied by `embedded_vault`)."""
    vault = copy_vault(tmp_path_factory.mktemp("embedded") / "vault")
    settings = settings_for(vault)
    with Writer(settings, watch=False) as writer:
        assert wait_until(lambda: fully_embedded(settings))
        assert writer._semantic.passages_embedded == FIXTURE_PASSAGES  # each passage once, in the worker
    return vault


@pytest.fixture
def embedded_vault(tmp_path: Path, embedded_template: Path) -> Iterator[tuple[Settings, Writer]]:
    """A copy of the embedded template (mtimes kept: nothing to re-index or re-embed) and a
    live writer on it; its embedding worker starts only when a change needs it."""
    vault = tmp_path / "vault"
    shutil.copytree(embedded_template, vault)
    settings = settings_for(vault)
    with Writer(settings, watch=False) as writer:
        assert fully_embedded(settings)
        yield settings, writer


def process_running(pid: int) -> bool:
    """The process exists and is not a zombie waiting for its parent to reap it."""
    try:
        status = Path(f"/proc/{pid}/status").read_text(encoding="utf-8")
    except OSError:
        return False
    return "\nState:\tZ" not in status


def reader_for(settings: Settings) -> SnapshotReader:
    return SnapshotReader(settings, vault_for_settings(settings), freshness=lambda _m: "fresh")
