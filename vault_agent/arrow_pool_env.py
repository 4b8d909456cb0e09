"""Arrow's C++ default memory pool for the long-running commands, chosen before pyarrow loads.

`heap.use_system_arrow_pool` puts the buffers pyarrow allocates on the C heap, but Arrow's
C++ code allocates from its own default pool (mimalloc in the wheels): Parquet decoding
with pre-buffering and IPC reads. pyarrow resolves that pool once, when it is imported, from
`ARROW_DEFAULT_MEMORY_POOL`. In a `serve --watch` at 10k notes under edits, mimalloc's
region held 29 MB resident after 170 commits and 62 MB after 300, pages it keeps for itself
that glibc's `malloc_trim` cannot give back (issue 32, ops/bench/heap_profile.py). So the
server commands set the variable before anything imports pyarrow; the embedding worker
inherits it. One-shot commands (`index`, ...) keep Arrow's default: they exit.

Imports nothing heavy: `cli/main.py` calls it before it imports a command.
"""

from __future__ import annotations

from collections.abc import MutableMapping

ARROW_POOL_VARIABLE = "ARROW_DEFAULT_MEMORY_POOL"
LONG_RUNNING_COMMANDS = frozenset({"serve", "mcp", "watch", "web"})


def prefer_system_arrow_pool(command: str | None, environ: MutableMapping[str, str]) -> bool:
    """For a long-running `command`, make the C heap Arrow's default pool unless the user
    chose one; whether the variable is now `system`."""
    if command in LONG_RUNNING_COMMANDS:
        environ.setdefault(ARROW_POOL_VARIABLE, "system")
    return environ.get(ARROW_POOL_VARIABLE) == "system"
