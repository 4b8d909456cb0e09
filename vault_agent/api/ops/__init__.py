"""Operation modules register themselves on import; each one is imported here by name.

A new module under `api/ops/` must be added to this list; `tests/kernel/test_boundaries.py`
fails when one is missing, so no operation can be forgotten by every surface at once.
"""

from vault_agent.api.ops import (  # noqa: F401 - imported for their registrations
    agent_files,
    agent_params,
    conversations,
    explore,
    files,
    index_ops,
    notes,
    orientation,
    query,
    rename_tag,
    retrieval,
    tasks,
)
