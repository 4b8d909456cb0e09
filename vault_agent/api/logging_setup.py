"""Structured logs for the servers: one JSON object per line on stderr, scrubbed of private paths.

Request lines carry only route, method, status, duration and sizes (SPEC.md "Logging").
Every record passes through `Scrubber`, which replaces the vault root, the state dir, the
home directory and the interpreter prefix with placeholders, so tracebacks logged for an
`INTERNAL` incident do not reveal where the vault lives.
"""

from __future__ import annotations

import json
import logging
import os
import re
import sys
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any, TextIO

# Extra attributes a record may carry into the JSON line; anything else is dropped, so a
# careless `extra={...}` cannot leak a query or a body into the log.
ALLOWED_FIELDS: tuple[str, ...] = (
    "event",
    "route",
    "method",
    "status",
    "duration_ms",
    "request_bytes",
    "response_bytes",
    "op",
    "code",
    "incident",
    "count",
)


class Scrubber:
    """Replaces private absolute path prefixes in text with short placeholders.

    Matching is by whole path components: `/home/u/v` is replaced in `/home/u/v/a.md` and
    `'/home/u/v'`, never inside `/home/u/vault` or `/x/home/u/v`, and a relative setting
    (`--vault v`) is made absolute first, so no letter or word of a log line is touched.
    """

    def __init__(self, replacements: Iterable[tuple[str, str]]) -> None:
        pairs: dict[str, str] = {}
        for prefix, placeholder in replacements:
            if not prefix:
                continue
            absolute = os.path.abspath(prefix).rstrip("/")
            if absolute:  # never the root "/" itself
                pairs.setdefault(absolute, placeholder)
        # Longest prefix first: the vault root may lie under the home directory.
        self.pairs = sorted(pairs.items(), key=lambda pr: len(pr[0]), reverse=True)
        self._patterns = [
            (re.compile(r"(?<![\w.\-/])" + re.escape(prefix) + r"(?![\w\-])"), placeholder)
            for prefix, placeholder in self.pairs
        ]

    def __call__(self, text: str) -> str:
        for (prefix, _), (pattern, placeholder) in zip(self.pairs, self._patterns, strict=True):
            if prefix in text:
                text = pattern.sub(placeholder.replace("\\", "\\\\"), text)  # literal replacement
        return text


def default_scrubber(vault: Path | None = None, index_dir: Path | None = None) -> Scrubber:
    """Scrubber for this process: vault, state dir, home, interpreter and package locations."""
    pairs: list[tuple[str, str]] = []
    for path, label in ((vault, "<vault>"), (index_dir, "<index-dir>")):
        if path is not None:
            pairs.append((str(path), label))
            pairs.append((os.path.realpath(path), label))
    package_parent = str(Path(__file__).resolve().parents[2])
    pairs += [
        (package_parent, "<src>"),
        (sys.prefix, "<python>"),
        (sys.base_prefix, "<python>"),
        (os.path.expanduser("~"), "~"),
    ]
    return Scrubber(pairs)


class JsonFormatter(logging.Formatter):
    """One JSON object per record: ts, level, logger, msg, allowed extras, scrubbed exc."""

    def __init__(self, scrubber: Scrubber) -> None:
        super().__init__()
        self.scrubber = scrubber

    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, Any] = {
            "ts": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
            + f".{int(record.msecs):03d}Z",
            "level": record.levelname,
            "logger": record.name,
            "msg": self.scrubber(record.getMessage()),
        }
        for key in ALLOWED_FIELDS:
            if key in record.__dict__:
                out[key] = record.__dict__[key]
        if record.exc_info:
            out["exc"] = self.scrubber(self.formatException(record.exc_info))
        return json.dumps(out, ensure_ascii=False, default=str)


def configure_logging(
    level: str = "INFO",
    *,
    vault: Path | None = None,
    index_dir: Path | None = None,
    stream: TextIO | None = None,
) -> logging.Handler:
    """Install the JSON handler on the root logger (replacing earlier handlers); returns it."""
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.setFormatter(JsonFormatter(default_scrubber(vault, index_dir)))
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level.upper())
    # Access logs of aiohttp carry query strings; ours replace them.
    logging.getLogger("aiohttp.access").setLevel(logging.WARNING)
    # The MCP SDK logs at INFO per session and echoes invalid Host headers; keep it quieter.
    logging.getLogger("mcp").setLevel(max(logging.WARNING, root.level))
    logging.getLogger("httpx").setLevel(logging.WARNING)
    return handler
