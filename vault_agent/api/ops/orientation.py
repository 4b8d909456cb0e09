"""Orientation operations (seed 000): overview, tree, tags, facets on every surface."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import Field

from vault_agent.api.registry import AppContext, NoParams, Operation, Params, data_of, register
from vault_agent.contracts import Outcome
from vault_agent.lazy import LazyModule
from vault_agent.query import models
from vault_agent.query import orientation_limits as limits

if TYPE_CHECKING:
    from vault_agent.query import orientation as core
else:  # the core is imported on first use (the CLI imports this module for the registry)
    core = LazyModule("vault_agent.query.orientation")


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
        plural = "s" if hidden > 1 else ""
        more = f"  (+{hidden} subfolder{plural} not shown; raise --depth or --limit)" if hidden > 0 else ""
        out.append(f"{'  ' * indent}{name}  {node['noteCount']}{more}")
        for child in node["children"]:
            walk(child, indent + 1)

    walk(data_of(body)["root"], 0)
    return "\n".join([*out, "", *_footer(body)])


def render_tags(body: dict[str, Any]) -> str:
    """Human output of `tags`: a count/tag table, tags written as `overview` writes them."""
    rows = [(str(t["noteCount"]), t["tag"]) for t in data_of(body)["tags"]]
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
        description="1 = top-level folders",
    )
    limit: int = Field(
        limits.TREE_LIMIT_DEFAULT,
        ge=limits.TREE_LIMIT_MIN,
        le=limits.TREE_LIMIT_MAX,
        description="nodes, root included",
    )
    direct_only: bool = Field(False, description="count direct notes only")


class TagsParams(Params):
    limit: int = Field(
        limits.TAGS_LIMIT_DEFAULT,
        ge=limits.TAGS_LIMIT_MIN,
        le=limits.TAGS_LIMIT_MAX,
    )


class FacetsParams(Params):
    limit: int = Field(
        limits.FACETS_LIMIT_DEFAULT,
        ge=limits.FACETS_LIMIT_MIN,
        le=limits.FACETS_LIMIT_MAX,
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
        description="Counts, top folders, tags and fields; call it first to learn the vault's shape.",
        title="Vault overview",
        result=models.OverviewData,
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
        description="Folder tree with note counts; use it to see where notes live.",
        title="Folder tree",
        result=models.TreeData,
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
        description="Frontmatter tags with note counts; use it to pick tags to search for.",
        title="Tags",
        result=models.TagsData,
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
        description="Frontmatter fields with counts, type and status values; use it to see how notes are classified.",
        title="Frontmatter fields",
        result=models.FacetsData,
        cli_help="Frontmatter fields with counts and type/status values, e.g. vault-agent facets.",
        render=render_facets,
    )
)
