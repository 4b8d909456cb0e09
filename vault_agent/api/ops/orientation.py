"""Orientation operations (seed 000): overview, tree, tags, facets on every surface."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import Field

from vault_agent.api.registry import AppContext, NoParams, Operation, Params, data_of, register
from vault_agent.contracts import Outcome
from vault_agent.lazy import LazyModule
from vault_agent.query import orientation_limits as limits

if TYPE_CHECKING:
    from vault_agent.query import orientation as core
else:  # the core is imported on first use (the CLI imports this module for the registry)
    core = LazyModule("vault_agent.query.orientation")

_FRESHNESS_NOTE = (
    " Answers come from the last committed index snapshot; data.indexFreshness is one of fresh, stale, "
    "pending, updating, unknown, and any state but fresh adds an INDEX_<STATE> warning. Errors: "
    "INDEX_NOT_FOUND (no index yet: run 'vault-agent index'), INDEX_INCOMPATIBLE (run 'vault-agent "
    "reindex'). Never returns note bodies, chunk text or absolute paths."
)


def _table(rows: list[tuple[str, str]], head: tuple[str, str]) -> list[str]:
    """Two aligned columns: a count right-aligned, then a name."""
    if not rows:
        return ["  (none)"]
    width = max(len(head[0]), *(len(r[0]) for r in rows))
    return [f"  {head[0]:>{width}}  {head[1]}"] + [f"  {a:>{width}}  {b}" for a, b in rows]


def _footer(body: dict[str, Any]) -> list[str]:
    data = data_of(body)
    # Warnings are not repeated here: the CLI prints every warning once, on stderr.
    return [f"index: {data.get('indexFreshness', 'unknown')}"]


def render_overview(body: dict[str, Any]) -> str:
    """Human output of `overview`: counts, then three small tables."""
    d = data_of(body)
    out = [f"notes: {d['noteCount']}   chunks: {d['chunkCount']}", "", "top-level folders:"]
    out += _table([(str(f["noteCount"]), f["path"] + "/") for f in d["topLevelFolders"]], ("notes", "folder"))
    out += ["", "top tags:"]
    out += _table([(str(t["noteCount"]), t["tag"]) for t in d["topTags"]], ("notes", "tag"))
    out += ["", "frontmatter fields:"]
    out += _table([(str(f["noteCount"]), f["name"]) for f in d["frontmatterFields"]], ("notes", "field"))
    return "\n".join([*out, "", *_footer(body)])


def render_tree(body: dict[str, Any]) -> str:
    """Human output of `tree`: one indented line per folder with its note count."""
    out: list[str] = []

    def walk(node: dict[str, Any], indent: int) -> None:
        name = node["path"].rsplit("/", 1)[-1] + "/" if node["path"] else "/"
        hidden = node["childFolders"] - len(node["children"])
        more = f"  (+{hidden} more)" if hidden > 0 else ""
        out.append(f"{'  ' * indent}{name}  {node['noteCount']}{more}")
        for child in node["children"]:
            walk(child, indent + 1)

    walk(data_of(body)["root"], 0)
    return "\n".join([*out, "", *_footer(body)])


def render_tags(body: dict[str, Any]) -> str:
    """Human output of `tags`: a count/tag table."""
    rows = [(str(t["noteCount"]), "#" + t["tag"]) for t in data_of(body)["tags"]]
    return "\n".join([*_table(rows, ("notes", "tag")), "", *_footer(body)])


def render_facets(body: dict[str, Any]) -> str:
    """Human output of `facets`: fields with counts, allowlisted values indented below."""
    out: list[str] = []
    fields = data_of(body)["fields"]
    width = max([5, *(len(str(f["noteCount"])) for f in fields)])
    out.append(f"  {'notes':>{width}}  field")
    for f in fields:
        out.append(f"  {f['noteCount']:>{width}}  {f['name']}")
        for v in f.get("values") or []:
            out.append(f"  {v['noteCount']:>{width}}      = {v['value']}")
    if not fields:
        out = ["  (none)"]
    return "\n".join([*out, "", *_footer(body)])


class TreeParams(Params):
    depth: int = Field(
        limits.TREE_DEPTH_DEFAULT,
        ge=limits.TREE_DEPTH_MIN,
        le=limits.TREE_DEPTH_MAX,
        description="Deepest folder level returned (1 = top-level folders). 1-10, default 2.",
    )
    limit: int = Field(
        limits.TREE_LIMIT_DEFAULT,
        ge=limits.TREE_LIMIT_MIN,
        le=limits.TREE_LIMIT_MAX,
        description="Maximum number of nodes, the root included. 1-500, default 50.",
    )
    direct_only: bool = Field(
        False, description="Count only notes directly in each folder instead of recursively. Default false."
    )


class TagsParams(Params):
    limit: int = Field(
        limits.TAGS_LIMIT_DEFAULT,
        ge=limits.TAGS_LIMIT_MIN,
        le=limits.TAGS_LIMIT_MAX,
        description="Maximum number of tags. 1-200, default 50.",
    )


class FacetsParams(Params):
    limit: int = Field(
        limits.FACETS_LIMIT_DEFAULT,
        ge=limits.FACETS_LIMIT_MIN,
        le=limits.FACETS_LIMIT_MAX,
        description="Maximum number of frontmatter fields. 1-200, default 50.",
    )


def _overview(ctx: AppContext, params: Any) -> Outcome[Any]:
    return core.overview(ctx.reader)


def _tree(ctx: AppContext, params: TreeParams) -> Outcome[Any]:
    return core.tree(ctx.reader, depth=params.depth, limit=params.limit, direct_only=params.direct_only)


def _tags(ctx: AppContext, params: TagsParams) -> Outcome[Any]:
    return core.tags(ctx.reader, limit=params.limit)


def _facets(ctx: AppContext, params: FacetsParams) -> Outcome[Any]:
    return core.facets(ctx.reader, limit=params.limit)


register(
    Operation(
        name="overview",
        mcp_name="vault_overview",
        http_method="GET",
        http_path="/overview",
        params=NoParams,
        func=_overview,
        description=(
            "Get compact vault-level metadata to orient before searching. Input: none. Output: "
            "data.noteCount and data.chunkCount (indexed notes and search chunks); data.topLevelFolders "
            "[{path, noteCount}] (immediate child folders of the root holding notes, recursive counts, at "
            "most 20); data.topTags [{tag, noteCount}] (frontmatter tags, note-level counts, at most 50); "
            "data.frontmatterFields [{name, noteCount}] (at most 50); data.indexFreshness. Lists are "
            "sorted by noteCount descending, then name ascending; limits are fixed, and a cut list adds "
            "TOP_LEVEL_FOLDERS_TRUNCATED, TOP_TAGS_TRUNCATED or FRONTMATTER_FIELDS_TRUNCATED to warnings "
            "(use vault_tree, vault_tags, vault_facets for more)." + _FRESHNESS_NOTE
        ),
        cli_help="Compact vault metadata: counts, top folders, tags, frontmatter fields.",
        render=render_overview,
    )
)

register(
    Operation(
        name="tree",
        mcp_name="vault_tree",
        http_method="GET",
        http_path="/tree",
        params=TreeParams,
        func=_tree,
        description=(
            "Get a bounded folder tree with note counts. Inputs: depth (1-10, default 2: deepest folder "
            "level returned), limit (1-500, default 50: maximum nodes, root included), direct_only "
            "(default false: count only notes directly in a folder). Output: data.root, a node {path, "
            "noteCount, childFolders, children} whose path is '' for the vault root; childFolders counts "
            "every immediate child folder holding notes, even ones cut by depth or limit; children are "
            "sorted alphabetically by path. Folders exist only through notes; excluded folders never "
            "appear. Nodes are chosen breadth-first; when limit cuts the tree, warnings has "
            "TREE_LIMIT_EXCEEDED. Out-of-range inputs fail with INVALID_PARAMETER." + _FRESHNESS_NOTE
        ),
        cli_help="Bounded folder tree with note counts, e.g. vault-agent tree --depth 3 --limit 100.",
        render=render_tree,
    )
)

register(
    Operation(
        name="tags",
        mcp_name="vault_tags",
        http_method="GET",
        http_path="/tags",
        params=TagsParams,
        func=_tags,
        description=(
            "Get frontmatter tag names with note-level usage counts. Input: limit (1-200, default 50). "
            "Output: data.tags [{tag, noteCount}] sorted by noteCount descending, then tag ascending; tags "
            "come from the frontmatter 'tags' field only (no leading '#', case kept, nested a/b is one "
            "tag). When more tags exist than limit, warnings has TAGS_TRUNCATED. Out-of-range limit fails "
            "with INVALID_PARAMETER." + _FRESHNESS_NOTE
        ),
        cli_help="Tag names with note counts, e.g. vault-agent tags --limit 100.",
        render=render_tags,
    )
)

register(
    Operation(
        name="facets",
        mcp_name="vault_facets",
        http_method="GET",
        http_path="/facets",
        params=FacetsParams,
        func=_facets,
        description=(
            "Get frontmatter field names with note counts, and the values of the allowlisted fields "
            "'type' and 'status'. Input: limit (1-200, default 50: number of fields). Output: data.fields "
            "[{name, noteCount, values?}] sorted by noteCount descending, then name ascending; only type "
            "and status carry values [{value, noteCount}] (array values expanded, case kept, numbers and "
            "booleans as strings, null/empty dropped; at most 50 values, sorted by noteCount descending "
            "then value); other fields have no values key, so arbitrary frontmatter values are never "
            "exposed. Warnings FACETS_TRUNCATED / FACET_VALUES_TRUNCATED mark cut lists. Out-of-range "
            "limit fails with INVALID_PARAMETER." + _FRESHNESS_NOTE
        ),
        cli_help="Frontmatter fields with counts and type/status values, e.g. vault-agent facets.",
        render=render_facets,
    )
)
