"""Checksummed append-only framing shared by the event log and conversation records.

Frame: magic `VAE1`, u32 payload length, u32 crc32(payload), payload (compact JSON),
u32 payload length again (so a tail can be read backwards). A torn or corrupt frame ends
the valid prefix of a file: readers stop there, so a crash mid-append loses at most the
frame being written.
"""

from __future__ import annotations

import json
import struct
import zlib

MAGIC = b"VAE1"
HEAD = struct.Struct("<4sII")
FOOT = struct.Struct("<I")
MAX_PAYLOAD = 1 << 20


def frame(payload: dict[str, object]) -> bytes:
    """One frame holding `payload` as compact, key-sorted JSON."""
    body = json.dumps(payload, separators=(",", ":"), sort_keys=True, ensure_ascii=False).encode()
    return HEAD.pack(MAGIC, len(body), zlib.crc32(body)) + body + FOOT.pack(len(body))


def parse_frame_at(data: bytes | memoryview, off: int) -> tuple[dict[str, object], int] | None:
    """The payload of the frame at `off` and the offset after it, or None if invalid."""
    end_head = off + HEAD.size
    if end_head > len(data):
        return None
    magic, length, crc = HEAD.unpack_from(data, off)
    if magic != MAGIC or length > MAX_PAYLOAD:
        return None
    end_body = end_head + length
    if end_body + FOOT.size > len(data):
        return None
    body = bytes(data[end_head:end_body])
    if zlib.crc32(body) != crc or FOOT.unpack_from(data, end_body)[0] != length:
        return None
    try:
        payload = json.loads(body)
    except ValueError:
        return None
    if not isinstance(payload, dict):
        return None
    return payload, end_body + FOOT.size


def valid_frames(data: bytes) -> tuple[list[dict[str, object]], int]:
    """Every payload of the valid prefix of `data`, and where that prefix ends."""
    view = memoryview(data)
    out: list[dict[str, object]] = []
    off = 0
    while off < len(data):
        parsed = parse_frame_at(view, off)
        if parsed is None:
            break
        out.append(parsed[0])
        off = parsed[1]
    return out, off
