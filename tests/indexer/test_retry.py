"""A failing build: logged with a traceback of locations only, retried with capped
exponential backoff, and the writer resumes by itself once the cause is gone."""

from __future__ import annotations

import errno
import logging
from pathlib import Path

import pytest
from engine_support import make_settings, note_text, write

from vault_agent.freshness import read_current_manifest
from vault_agent.indexer.build import Indexer
from vault_agent.indexer.engine import Writer
from vault_agent.indexer.eventlog import NewEvent
from vault_agent.indexer.failure import describe_failure
from vault_agent.indexer.pacing import MAX_BACKOFF_S, MIN_BACKOFF_S, Backoff

SECRET = "the body of a private note"


def test_backoff_doubles_up_to_its_cap_and_resets() -> None:
    backoff = Backoff()
    waits = [backoff.failed() for _ in range(9)]
    assert waits[:3] == [MIN_BACKOFF_S, 2 * MIN_BACKOFF_S, 4 * MIN_BACKOFF_S]
    assert waits == sorted(waits) and waits[-1] == waits[-2] == MAX_BACKOFF_S
    backoff.succeeded()
    assert backoff.failed() == MIN_BACKOFF_S


def _fail(path: str) -> None:
    try:
        raise OSError(errno.ENOSPC, "No space left on device", path)
    except OSError as exc:
        raise RuntimeError(f"could not write {path}: {SECRET}") from exc


def test_failure_description_keeps_locations_and_drops_messages(tmp_path: Path) -> None:
    secret_path = str(tmp_path / "vault" / "private.md")
    with pytest.raises(RuntimeError) as info:
        _fail(secret_path)
    text = describe_failure(info.value)
    assert "OSError [ENOSPC]" in text and "RuntimeError" in text
    assert "test_retry.py" in text and "in _fail" in text
    assert str(tmp_path) not in text and SECRET not in text and "private.md" not in text
    assert text.index("OSError") < text.index("RuntimeError")  # cause first, like Python's own


def test_failed_builds_back_off_and_resume(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    vault = tmp_path / "v"
    write(vault, "a.md", note_text(1))
    s = make_settings(vault, tmp_path / "state", debounce_ms=20)
    real_apply = Indexer.apply
    failures = {"left": 3}

    def flaky_apply(self: Indexer, *args: object, **kwargs: object) -> object:
        # Injected fault: the first builds after start fail with a message that names an
        # absolute path and note text (which must never reach the log).
        if failures["left"] > 0:
            failures["left"] -= 1
            _fail(str(vault / "b.md"))
        return real_apply(self, *args, **kwargs)  # type: ignore[arg-type]

    caplog.set_level(logging.ERROR, logger="vault_agent.indexer.engine")
    with Writer(s, watch=False) as writer:
        monkeypatch.setattr(Indexer, "apply", flaky_apply)
        write(vault, "b.md", note_text(2))
        seq = writer.append([NewEvent("upsert", "b.md", origin="tool")])
        assert writer.wait_for_seq(seq, 120) is not None  # resumed by itself
        failed = [r for r in caplog.records if r.name == "vault_agent.indexer.engine"]
        assert len(failed) == 3
        assert [r.getMessage().split("retrying in ")[1].split(" s")[0] for r in failed] == [
            "0.5",
            "1.0",
            "2.0",
        ]
        for record in failed:
            text = record.getMessage()
            assert "vault_agent/indexer/commit_loop.py" in text and "in commit" in text
            assert "OSError [ENOSPC]" in text
            assert str(tmp_path) not in text and SECRET not in text and record.exc_info is None
    m = read_current_manifest(s.index_dir)
    assert m is not None and m.note_count == 2
