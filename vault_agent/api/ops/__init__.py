"""The operation catalog: every operation of every surface, in one explicit order.

Each module here declares its operations as module constants (`retrieval.SEARCH`) and
exports them in `OPERATIONS`; `CATALOG` concatenates those tuples. Composition roots pass
`CATALOG` to the transports (HTTP app, MCP server, CLI table and docs generators), which
serve exactly what they are given. The order is the order of the HTTP routes, of MCP's
`tools/list`, of the generated CLI table and of the docs. A new module is added here by
name (`tests/api/test_catalog.py` fails when an operation is left out).
"""

from vault_agent.api.operation import Catalog
from vault_agent.api.ops import (
    agent_files,
    bases,
    conversations,
    explore,
    files,
    index_ops,
    notes,
    orientation,
    query,
    rename_tag,
    retrieval,
)

CATALOG = Catalog(
    (
        *files.OPERATIONS,
        *agent_files.OPERATIONS,
        *conversations.OPERATIONS,
        *retrieval.OPERATIONS,
        *explore.OPERATIONS,
        *index_ops.OPERATIONS,
        *notes.OPERATIONS,
        *orientation.OPERATIONS,
        *query.OPERATIONS,
        *bases.OPERATIONS,
        *rename_tag.OPERATIONS,
    )
)
