"""The engine writer's commit: on a thread of its own, and its I/O errors named.

tantivy's commit of a one-note change is mostly waiting: its indexing thread finishes the
new segment, and each new file, its file list (`.managed.json`) and `meta.json` are synced
one after another (about fifteen fsyncs). It releases the GIL meanwhile, so the writer
starts it as soon as the engine has every change of the build (`Indexer._write_segments`)
and writes and syncs the Parquet segment in the meantime; `SearchIndexWriter.freeze` then
waits for it. A failure is raised by `join`, in the writer's thread, as if the commit had
run there.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any


class BackgroundCommit:
    """`writer.commit()` running on a thread; `join()` waits and re-raises its error."""

    def __init__(self, writer: Any) -> None:
        self._error: BaseException | None = None
        self._thread = threading.Thread(
            target=self._run, args=(writer,), name="vault-agent-engine-commit", daemon=True
        )
        self._thread.start()

    def _run(self, writer: Any) -> None:
        try:
            writer.commit()
        except BaseException as exc:  # noqa: BLE001 - handed to the writer's thread by join()
            self._error = exc

    def join(self) -> None:
        """Wait for the commit.

        Raises:
            the commit's own error (tantivy's ValueError on an I/O failure, see engine_io).
        """
        self._thread.join()
        if self._error is not None:
            error, self._error = self._error, None
            raise error


@contextlib.contextmanager
def engine_io(work: Path) -> Iterator[None]:
    """Name the OS error behind a failure of tantivy's writer.

    tantivy reports an I/O failure of its indexing thread as a ValueError without the errno
    ("An index writer was killed ..."), so disk full and a read-only state dir would become
    INTERNAL. On such an error a small durable write probes the engine's dir: the OSError it
    raises (ENOSPC, EROFS, EACCES) is what the callers map to STORAGE_FULL / STORAGE_READ_ONLY.
    """
    try:
        yield
    except ValueError as exc:
        probe = work / ".io-probe"
        try:
            with open(probe, "wb") as f:
                f.write(bytes(1 << 16))
                f.flush()
                os.fsync(f.fileno())
        except OSError as os_error:
            raise os_error from exc
        finally:
            with contextlib.suppress(OSError):
                probe.unlink()
        raise
