"""The readers' heap hygiene: Arrow on the C heap, and a trim that is safe to call anywhere."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from vault_agent.heap import ARROW_IO_THREADS, release_free_memory, release_if_grown, use_system_arrow_pool


def test_arrow_buffers_come_from_the_system_pool_once_a_reader_asked() -> None:
    use_system_arrow_pool()
    use_system_arrow_pool()  # idempotent
    assert pa.default_memory_pool().backend_name == "system"
    before = pa.total_allocated_bytes()
    data = pa.array(range(100_000), pa.int64())
    assert pa.total_allocated_bytes() >= before + data.nbytes
    del data
    release_free_memory()  # never raises, whatever the C library
    assert pa.total_allocated_bytes() == before


def test_a_reader_process_keeps_few_arrow_io_threads(tmp_path: Path) -> None:
    """Arrow's IO pool (8 threads by default) holds its threads' buffers for the life of a
    `serve`; a reader's process keeps ARROW_IO_THREADS, and pre-buffered Parquet reads
    still work with them."""
    use_system_arrow_pool()
    assert pa.io_thread_count() == ARROW_IO_THREADS <= 2
    table = pa.table({"n": list(range(1000)), "s": [str(i) for i in range(1000)]})
    pq.write_table(table, tmp_path / "t.parquet", row_group_size=100)
    assert pq.read_table(tmp_path / "t.parquet", pre_buffer=True).equals(table)


def test_a_request_trims_only_after_the_resident_set_grew() -> None:
    use_system_arrow_pool()
    release_free_memory()
    from vault_agent import heap

    if heap._trim is None:  # not glibc: nothing to check
        return
    baseline = heap._after_trim
    release_if_grown()  # no growth: no trim, the mark stays
    assert heap._after_trim == baseline
    block = bytearray(2 * heap.TRIM_GROWTH_BYTES)  # resident growth past the threshold
    block[::4096] = b"x" * len(block[::4096])
    release_if_grown()
    assert heap._after_trim > baseline
    del block
