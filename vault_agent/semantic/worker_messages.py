"""The embedding worker's protocol: one pydantic model per message, shared by both ends.

The writer (worker_client.py) and the worker process (worker.py) speak JSON lines, one
message a line. Each end parses a line once, into one of these models, through the tagged
unions below (`op` tells the commands apart, `ev` the events), so a field is named in one
place and a message that does not fit is rejected at the edge rather than half-read deep
inside. Nothing in a message is note text or an absolute path (errors are exception type
names).

stdin (writer → worker): `EmbedJob`s and `CancelJob`; EOF means stop.
stdout (worker → writer): `WorkerReady` or `ModelFailed` once, then per job `BatchDone`...
and one of `JobDone`, `JobCancelled`, `JobFailed`.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, Field, TypeAdapter

from vault_agent.contracts import SegmentRef

__all__ = [
    "COMMANDS",
    "EVENTS",
    "BatchDone",
    "CancelJob",
    "EmbedJob",
    "JobCancelled",
    "JobDone",
    "JobFailed",
    "ModelFailed",
    "WorkerCommand",
    "WorkerEvent",
    "WorkerReady",
    "to_line",
]


class EmbedJob(BaseModel):
    """What the writer asks of the worker: the next batch of one segment (embed_job.py)."""

    op: Literal["embed", "twin"]  # twin: write the mapped `_vec` file of a complete Parquet file
    segment: SegmentRef
    parts: list[str] = []  # this segment's partial files (committed or awaiting commit)
    next_part: int = 1  # number of the next partial file's key
    sources: list[str] = []  # embedding files whose vectors may be reused, newest first
    budget: int = 512  # passages to embed before publishing
    batch: int = 64  # passages per encoder call


class CancelJob(BaseModel):
    """Stop the job in flight at its next batch: its segment left the target meanwhile."""

    op: Literal["cancel"] = "cancel"


class WorkerReady(BaseModel):
    """The model loaded: the worker takes jobs."""

    ev: Literal["ready"] = "ready"
    model: str
    dim: int


class ModelFailed(BaseModel):
    """The model cannot load here: the embedder stops for good (search says why)."""

    ev: Literal["model_failed"] = "model_failed"
    error: str


class BatchDone(BaseModel):
    """One encoder batch of the job in flight (progress; nothing published yet)."""

    ev: Literal["batch"] = "batch"
    notes: int
    passages: int


class JobDone(BaseModel):
    """The job published its files (durable, not yet in any manifest)."""

    ev: Literal["done"] = "done"
    files: dict[str, str]  # SegmentRef.files entries to add
    complete: bool  # the segment's complete files (its parts are superseded)
    notes: int  # live notes the segment's files cover after this job
    embedded: int  # passages the model computed
    reused: int  # passages whose vectors came from the job's sources


class JobCancelled(BaseModel):
    """The job stopped on `CancelJob` before publishing anything."""

    ev: Literal["cancelled"] = "cancelled"


class JobFailed(BaseModel):
    """The job raised: its segment stays lexical; the worker takes the next job."""

    ev: Literal["failed"] = "failed"
    error: str


WorkerCommand = Annotated[EmbedJob | CancelJob, Field(discriminator="op")]
WorkerEvent = Annotated[
    WorkerReady | ModelFailed | BatchDone | JobDone | JobCancelled | JobFailed, Field(discriminator="ev")
]
# Built once: each parses one JSON line into its model (raises pydantic.ValidationError).
COMMANDS: TypeAdapter[EmbedJob | CancelJob] = TypeAdapter(WorkerCommand)
EVENTS: TypeAdapter[WorkerReady | ModelFailed | BatchDone | JobDone | JobCancelled | JobFailed] = TypeAdapter(
    WorkerEvent
)


def to_line(message: BaseModel) -> str:
    """One message as its protocol line (compact JSON and a newline)."""
    return message.model_dump_json() + "\n"
