"""A failed build described for the log: where it failed, never what it was working on.

Exception messages are left out: an OSError's names the absolute file, a parser's may quote
note text. What remains is the chain of exception types (with the errno name of an OSError),
and for each frame the file relative to its package root, the line and the function. The log
handler of every process (api/logging_setup.py's Scrubber) scrubs the line once more.
"""

from __future__ import annotations

import errno
import os
import traceback

_ROOT_MARKERS = ("/site-packages/", "/dist-packages/")
_PACKAGE = "vault_agent"


def _relative(filename: str) -> str:
    """`vault_agent/indexer/build.py`, `pyarrow/parquet/core.py` or a bare file name."""
    path = filename.replace(os.sep, "/")
    for marker in _ROOT_MARKERS:
        if marker in path:
            return path.rsplit(marker, 1)[1]
    if f"/{_PACKAGE}/" in path:
        return _PACKAGE + "/" + path.rsplit(f"/{_PACKAGE}/", 1)[1]
    return path.rsplit("/", 1)[-1]


def _kind(exc: BaseException) -> str:
    name = type(exc).__qualname__
    if isinstance(exc, OSError) and exc.errno is not None:
        return f"{name} [{errno.errorcode.get(exc.errno, exc.errno)}]"
    return name


def describe_failure(exc: BaseException) -> str:
    """A traceback of `exc` and its causes with locations only (see module doc)."""
    chain: list[BaseException] = []
    seen: set[int] = set()
    cur: BaseException | None = exc
    while cur is not None and id(cur) not in seen:
        chain.append(cur)
        seen.add(id(cur))
        cur = cur.__cause__ or (None if cur.__suppress_context__ else cur.__context__)
    lines: list[str] = []
    for i, item in enumerate(reversed(chain)):
        if i:
            lines.append("which led to")
        lines.append(f"Traceback of {_kind(item)} (message omitted):")
        for frame in traceback.extract_tb(item.__traceback__):
            lines.append(f"  {_relative(frame.filename)}:{frame.lineno} in {frame.name}")
    return "\n".join(lines)
