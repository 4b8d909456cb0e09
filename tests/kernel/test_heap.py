"""The readers' heap hygiene: Arrow on the C heap, and a trim that is safe to call anywhere."""

from __future__ import annotations

import pyarrow as pa

from vault_agent.heap import release_free_memory, use_system_arrow_pool


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
