"""Bounds of the orientation parameters (seed 000), without the query engine.

The catalog's params models (imported by the CLI) use them; `query.orientation` too.
"""

TREE_DEPTH_MIN, TREE_DEPTH_MAX, TREE_DEPTH_DEFAULT = 1, 10, 2
TREE_LIMIT_MIN, TREE_LIMIT_MAX, TREE_LIMIT_DEFAULT = 1, 500, 50
TAGS_LIMIT_MIN, TAGS_LIMIT_MAX, TAGS_LIMIT_DEFAULT = 1, 200, 50
FACETS_LIMIT_MIN, FACETS_LIMIT_MAX, FACETS_LIMIT_DEFAULT = 1, 200, 50
