"""The readers' heap hygiene: Arrow on the C heap, and a trim that is safe to call anywhere."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from vault_agent.arrow_pool_env import ARROW_POOL_VARIABLE, prefer_system_arrow_pool
from vault_agent.heap import (
    ARROW_IO_THREADS,
    release_free_memory,
    release_if_grown,
    use_system_arrow_pool,
)


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


_MAPPED_CHILD = """
import ctypes, numpy as np
from vault_agent.heap import MMAP_THRESHOLD_BYTES, limit_arenas

class MallInfo2(ctypes.Structure):
    _fields_ = [(n, ctypes.c_size_t) for n in
                ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks", "fordblks", "keepcost")]

fn = getattr(ctypes.CDLL(None), "mallinfo2", None)
if fn is None:
    print("[]")
else:
    fn.restype = MallInfo2
    limit_arenas()
    deltas = []
    for _ in range(3):  # the second and third come after a free of the same size
        before = fn().hblks
        block = np.ones(16 * MMAP_THRESHOLD_BYTES, np.uint8)  # numpy allocates with malloc
        deltas.append(fn().hblks - before)
        del block
    print(deltas)
"""


def test_large_blocks_get_their_own_mapping_after_a_free_too() -> None:
    """glibc raises its mmap threshold when a large block is freed, so later transients up
    to 32 MB came from (and fragmented) the arenas; `limit_arenas` fixes the threshold: a
    large block the heap has no room for is mapped, also after a free of its size. Counted
    in a fresh process (glibc's `hblks`), whose heap holds no large free chunk yet."""
    out = subprocess.run([sys.executable, "-c", _MAPPED_CHILD], capture_output=True, text=True, check=True)
    deltas = out.stdout.strip()
    assert deltas in ("[]", "[1, 1, 1]"), deltas  # [] on another C library


def test_server_commands_choose_the_system_pool_for_arrows_own_buffers(tmp_path: Path) -> None:
    """Arrow's C++ code (Parquet pre-buffering) allocates from its default pool, which
    pyarrow picks when imported: a server command sets it to the C heap first, so mimalloc
    never holds a byte in `serve` (a one-shot command and a user's choice are left alone)."""
    env: dict[str, str] = {}
    assert not prefer_system_arrow_pool("index", env) and env == {}
    assert not prefer_system_arrow_pool("serve", {ARROW_POOL_VARIABLE: "jemalloc"})
    assert prefer_system_arrow_pool("serve", env) and env == {ARROW_POOL_VARIABLE: "system"}
    pq.write_table(pa.table({"n": list(range(50_000))}), tmp_path / "t.parquet", row_group_size=5_000)
    child = (
        "import sys, pyarrow as pa, pyarrow.parquet as pq\n"
        "pa.set_memory_pool(pa.system_memory_pool())\n"
        "pq.read_table(sys.argv[1], pre_buffer=True)\n"
        "print(pa.mimalloc_memory_pool().max_memory() if 'mimalloc' in pa.supported_memory_backends() else 0)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", child, str(tmp_path / "t.parquet")],
        env={**os.environ, **env}, capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert int(out.stdout) == 0
