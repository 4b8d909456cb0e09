"""Orientation operations (seed 000): overview, tree, tags, facets on every surface."""

from __future__ import annotations

from pydantic import Field

from vault_agent.api.human.orientation import render_facets, render_overview, render_tags, render_tree
from vault_agent.api.operation import AppContext, NoParams, Operation, Params
from vault_agent.contracts import Outcome
from vault_agent.query import models
from vault_agent.query import orientation as core
from vault_agent.query import orientation_limits as limits


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
    )
    direct_only: bool = False


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


def _overview(ctx: AppContext, params: NoParams) -> Outcome[models.OverviewData]:
    return core.overview(ctx.reader)


def _tree(ctx: AppContext, params: TreeParams) -> Outcome[models.TreeData]:
    return core.tree(ctx.reader, depth=params.depth, limit=params.limit, direct_only=params.direct_only)


def _tags(ctx: AppContext, params: TagsParams) -> Outcome[models.TagsData]:
    return core.tags(ctx.reader, limit=params.limit)


def _facets(ctx: AppContext, params: FacetsParams) -> Outcome[models.FacetsData]:
    return core.facets(ctx.reader, limit=params.limit)


OVERVIEW = Operation(
    name="overview",
    mcp_name="vault_overview",
    http_method="GET",
    http_path="/overview",
    params=NoParams,
    func=_overview,
    description="Call it first to learn the vault's shape.",
    title="Vault overview",
    result=models.OverviewData,
    cli_help="Compact vault metadata: counts, top folders, tags, frontmatter fields.",
    render=render_overview,
)

TREE = Operation(
    name="tree",
    mcp_name="vault_tree",
    http_method="GET",
    http_path="/tree",
    params=TreeParams,
    func=_tree,
    description="Use it to see where notes live.",
    title="Folder tree",
    result=models.TreeData,
    max_answer_chars=60_000,  # seed 000: up to 500 nodes
    cli_help="Bounded folder tree with note counts, e.g. vault-agent tree --depth 3 --limit 100.",
    render=render_tree,
)

TAGS = Operation(
    name="tags",
    mcp_name="vault_tags",
    http_method="GET",
    http_path="/tags",
    params=TagsParams,
    func=_tags,
    description="Use it to pick tags to search for.",
    title="Tag counts",
    result=models.TagsData,
    cli_help="Tag names with note counts, e.g. vault-agent tags --limit 100.",
    render=render_tags,
)

FACETS = Operation(
    name="facets",
    mcp_name="vault_facets",
    http_method="GET",
    http_path="/facets",
    params=FacetsParams,
    func=_facets,
    description="Use it to see how notes are classified.",
    title="Frontmatter fields",
    result=models.FacetsData,
    cli_help="Frontmatter fields with counts and type/status values, e.g. vault-agent facets.",
    render=render_facets,
)

OPERATIONS: tuple[Operation, ...] = (OVERVIEW, TREE, TAGS, FACETS)
