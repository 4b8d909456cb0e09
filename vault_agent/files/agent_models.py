"""Outputs of seed 003's agent-files aliases (SmartHole style: a one-line message + fields)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel


class ReadFileData(BaseModel):
    path: str
    content: str  # "N\tline" per line
    start_line: int
    end_line: int
    truncated: bool
    next_start_line: int | None
    message: str


class FileEntry(BaseModel):
    path: str
    type: Literal["file", "folder"]
    size_bytes: int | None


class ListFilesData(BaseModel):
    files: list[FileEntry]
    truncated: bool
    message: str


class Match(BaseModel):
    path: str
    line: int
    text: str
    context_before: list[str] | None = None
    context_after: list[str] | None = None


class SearchFilesData(BaseModel):
    matches: list[Match]
    truncated: bool
    message: str


class FileInfoData(BaseModel):
    path: str
    type: Literal["file", "folder"]
    size: int | None
    created: str | None
    modified: str
    sha256: str | None
    message: str


class Done(BaseModel):
    """Result of a write alias: what happened in one line, plus the core result fields."""

    message: str
    result: dict[str, Any]
