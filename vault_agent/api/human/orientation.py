"""Human output of the orientation operations: overview, tree, tags, facets."""

from __future__ import annotations

from typing import Any

from vault_agent.api.human.common import data_of


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
