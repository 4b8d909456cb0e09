"""The embedding worker's protocol: each message is parsed once, into its model, at each end."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from vault_agent.contracts import SegmentRef
from vault_agent.semantic.worker_messages import (
    COMMANDS,
    EVENTS,
    BatchDone,
    CancelJob,
    EmbedJob,
    JobCancelled,
    JobDone,
    JobFailed,
    ModelFailed,
    WorkerReady,
    to_line,
)

EVENT_SAMPLES = [
    WorkerReady(model="e5-small", dim=384),
    ModelFailed(error="OSError"),
    BatchDone(notes=3, passages=7),
    JobDone(files={"emb_p1": "seg-1.emb1.parquet"}, complete=False, notes=3, embedded=5, reused=2),
    JobCancelled(),
    JobFailed(error="ValueError"),
]


@pytest.mark.parametrize("event", EVENT_SAMPLES, ids=lambda e: type(e).__name__)
def test_every_event_is_one_compact_line_read_back_as_its_model(event: object) -> None:
    assert isinstance(event, (WorkerReady, ModelFailed, BatchDone, JobDone, JobCancelled, JobFailed))
    line = to_line(event)
    assert line.endswith("\n") and line.count("\n") == 1
    assert ", " not in line and ": " not in line  # compact, as the writer has always read it
    assert EVENTS.validate_json(line) == event


def test_commands_are_told_apart_by_op() -> None:
    seg = SegmentRef(segment_id=4, files={"notes": "seg-4.notes.parquet"}, note_count=2, embedded_notes=1)
    job = EmbedJob(op="embed", segment=seg, parts=["a"], next_part=2, sources=["a", "b"], budget=40, batch=8)
    assert COMMANDS.validate_json(to_line(job)) == job
    assert COMMANDS.validate_json(to_line(CancelJob())) == CancelJob()
    assert COMMANDS.validate_json('{"op":"cancel"}') == CancelJob()


@pytest.mark.parametrize("line", ['{"ev":"done","files":{}}', '{"ev":"nope"}', "{}", "not json"])
def test_a_line_that_is_no_event_is_rejected_at_the_edge(line: str) -> None:
    with pytest.raises(ValidationError):
        EVENTS.validate_json(line)


@pytest.mark.parametrize("line", ['{"op":"embed"}', '{"op":"stop"}', "[]"])
def test_a_line_that_is_no_command_is_rejected_at_the_edge(line: str) -> None:
    with pytest.raises(ValidationError):
        COMMANDS.validate_json(line)
