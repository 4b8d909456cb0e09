"""The `.base` file format (help.obsidian.md "Bases syntax", "Views"): YAML → `BaseSpec`.

    filters:        a statement (text), or a mapping with exactly one of `and`, `or`, `not`
                    whose value is a list of statements and such mappings, recursively
                    (`not`: none of the list holds); an empty list holds no condition
    formulas:       name → expression (formulas may read each other, without a circle)
    properties:     property id → {displayName: text} (other keys kept, unused); early
                    releases wrote `display: {id: name}`, read too
    summaries:      name → expression over `values` (custom summaries)
    views:          a list of {type, name, filters, order, sort, limit, groupBy, summaries};
                    other keys (columnSize, image, a plugin's settings) are kept and ignored;
                    a sort key's `column` (early releases) is read as `property`

Only the structure is checked here; expressions are kept as text with where they start
(`Source`) and parsed when a view runs (views.py), so a broken formula refuses only the
views that use it. Every error is a `BaseFileError` naming the rule and the place: the
base, the YAML path and line/column (`Reading.base: views[1].sort[0].direction, line 9,
column 20`). A base without views has one: a table named "Table" (what Obsidian shows).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from vault_agent.query.bases.base_yaml import BaseFileError, YNode, expression_origin, load

Direction = Literal["ASC", "DESC"]
GroupOp = Literal["and", "or", "not"]
_GROUP_OPS: tuple[GroupOp, ...] = ("and", "or", "not")
_VIEW_KEYS = ("type", "name", "filters", "order", "sort", "limit", "groupBy", "summaries")
_TOP_KEYS = ("filters", "formulas", "properties", "summaries", "views", "display")
MAX_VIEWS = 1_000
MAX_LIMIT = 1_000_000


@dataclass(frozen=True, slots=True)
class Source:
    """An expression's text and where it starts: `context` names it (`formulas.ppu`)."""

    text: str
    context: str
    line: int
    column: int


@dataclass(frozen=True, slots=True)
class Statement:
    source: Source


@dataclass(frozen=True, slots=True)
class Group:
    op: GroupOp
    items: tuple[Filter, ...]
    context: str


Filter = Statement | Group


@dataclass(frozen=True, slots=True)
class SortKey:
    property: str
    direction: Direction
    context: str


@dataclass(frozen=True, slots=True)
class ViewSpec:
    index: int
    type: str
    name: str
    filters: Filter | None
    order: tuple[str, ...]
    sort: tuple[SortKey, ...]
    limit: int | None
    group_by: SortKey | None
    summaries: dict[str, str]  # property id → summary name
    ignored: tuple[str, ...]  # keys kept but not used by vault-agent
    context: str  # `views[2], line 30, column 5`


@dataclass(frozen=True, slots=True)
class BaseSpec:
    source: str  # the base's name in messages (its path, or `Note.md#1` for a block)
    filters: Filter | None
    formulas: dict[str, Source]
    display_names: dict[str, str]
    summaries: dict[str, Source]
    views: tuple[ViewSpec, ...]
    ignored: tuple[str, ...] = field(default=())


class _Reader:
    def __init__(self, text: str, source: str) -> None:
        self.text = text
        self.source = source

    def error(self, reason: str, node: YNode) -> BaseFileError:
        return BaseFileError(reason, f"{self.source}: {node.where()}")

    def expect(self, node: YNode, kind: str, what: str) -> None:
        if node.kind != kind:
            word = {"map": "a mapping", "list": "a list", "scalar": "a value"}[kind]
            raise self.error(f"{what} must be {word}", node)

    def text_of(self, node: YNode, what: str) -> str:
        if node.kind != "scalar" or node.value is None:
            raise self.error(f"{what} must be text", node)
        return node.value if isinstance(node.value, str) else node.raw

    def expression(self, node: YNode, what: str) -> Source:
        if node.kind != "scalar":
            raise self.error(f"{what} must be an expression (text)", node)
        text = node.value if isinstance(node.value, str) else node.raw if node.value is not None else ""
        line, column = expression_origin(node, self.text)
        return Source(text, f"{self.source} {node.path}", line, column)

    # ------------------------------------------------------------------ filters
    def filters(self, node: YNode) -> Filter | None:
        if node.kind == "scalar":
            if node.value is None:
                return None
            return Statement(self.expression(node, "a filter"))
        if node.kind == "list":
            raise self.error("filters must be a statement or one of and/or/not, not a bare list", node)
        keys = list(node.items)
        ops = [k for k in keys if k in _GROUP_OPS]
        if len(keys) != 1 or len(ops) != 1:
            if len(ops) > 1:
                raise self.error(
                    f"a filter object holds exactly one of and/or/not, not {' and '.join(ops)}", node
                )
            other = next((k for k in keys if k not in _GROUP_OPS), None)
            if other is not None:
                raise self.error(f"'{other}' is not a filter key (and, or, not)", node.items[other])
            raise self.error("a filter object needs one of and/or/not", node)
        op = ops[0]
        items_node = node.items[op]
        if items_node.kind == "scalar" and items_node.value is None:
            return Group(op, (), f"{self.source} {items_node.path}")
        self.expect(items_node, "list", f"'{op}'")
        items: list[Filter] = []
        for element in items_node.elements:
            if element.kind == "scalar" and element.value is None:
                raise self.error("an empty filter statement", element)
            item = self.filters(element)
            if item is not None:
                items.append(item)
        return Group(op, tuple(items), f"{self.source} {items_node.path}")

    # ------------------------------------------------------------------ sections
    def named_expressions(self, node: YNode, what: str) -> dict[str, Source]:
        if node.kind == "scalar" and node.value is None:
            return {}
        self.expect(node, "map", what)
        return {name: self.expression(value, f"{what}.{name}") for name, value in node.items.items()}

    def display_names(self, node: YNode) -> dict[str, str]:
        if node.kind == "scalar" and node.value is None:
            return {}
        self.expect(node, "map", "properties")
        out: dict[str, str] = {}
        for prop, config in node.items.items():
            if config.kind == "scalar" and config.value is None:
                continue
            self.expect(config, "map", f"properties.{prop}")
            name = config.items.get("displayName")
            if name is not None and name.value is not None:
                out[prop] = self.text_of(name, f"properties.{prop}.displayName")
        return out

    def legacy_display(self, node: YNode) -> dict[str, str]:
        """`display: {id: name}`, the early releases' form of display names."""
        if node.kind == "scalar" and node.value is None:
            return {}
        self.expect(node, "map", "display")
        return {
            prop: self.text_of(name, f"display.{prop}")
            for prop, name in node.items.items()
            if name.value is not None
        }

    def sort_key(self, node: YNode, what: str) -> SortKey:
        self.expect(node, "map", what)
        # `column` is the key early releases of Bases wrote (files of 2025 still hold it)
        prop = node.items.get("property", node.items.get("column"))
        if prop is None:
            raise self.error(f"{what} needs a property", node)
        direction = node.items.get("direction")
        text = "ASC" if direction is None or direction.value is None else self.text_of(direction, "direction")
        if text.upper() not in ("ASC", "DESC"):
            assert direction is not None
            raise self.error(f"direction is ASC or DESC, not '{text[:40]}'", direction)
        return SortKey(
            self.text_of(prop, f"{what}.property"),
            "DESC" if text.upper() == "DESC" else "ASC",
            f"{self.source}: {node.where()}",
        )

    def view(self, node: YNode, index: int) -> ViewSpec:
        self.expect(node, "map", f"views[{index}]")
        items = node.items
        kind = items.get("type")
        name = items.get("name")
        filters = items.get("filters")
        order_node = items.get("order")
        order: list[str] = []
        if order_node is not None and order_node.value is not None:
            self.expect(order_node, "list", "order")
            order = [self.text_of(e, "an order entry") for e in order_node.elements]
        sort: list[SortKey] = []
        sort_node = items.get("sort")
        if sort_node is not None and sort_node.value is not None:
            self.expect(sort_node, "list", "sort")
            sort = [self.sort_key(e, f"sort[{i}]") for i, e in enumerate(sort_node.elements)]
        group = items.get("groupBy")
        summaries: dict[str, str] = {}
        summaries_node = items.get("summaries")
        if summaries_node is not None and summaries_node.value is not None:
            self.expect(summaries_node, "map", "summaries")
            summaries = {p: self.text_of(v, f"summaries.{p}") for p, v in summaries_node.items.items()}
        return ViewSpec(
            index=index,
            type=self.text_of(kind, "type") if kind is not None and kind.value is not None else "table",
            name=self.text_of(name, "name")
            if name is not None and name.value is not None
            else f"View {index + 1}",
            filters=self.filters(filters) if filters is not None else None,
            order=tuple(order),
            sort=tuple(sort),
            limit=self.limit(items.get("limit")),
            group_by=self.sort_key(group, "groupBy")
            if group is not None and group.value is not None
            else None,
            summaries=summaries,
            ignored=tuple(k for k in items if k not in _VIEW_KEYS),
            context=f"{self.source}: {node.where()}",
        )

    def limit(self, node: YNode | None) -> int | None:
        if node is None or node.value is None:
            return None
        value = node.value
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_LIMIT:
            raise self.error(f"limit is a whole number from 1 to {MAX_LIMIT}", node)
        return value


def parse_base(text: str, source: str) -> BaseSpec:
    """A base's structure from its YAML text; `source` names it in messages.

    Raises:
        BaseFileError: not valid YAML, a guard refuses it, or a section breaks the format.
    """
    reader = _Reader(text, source)
    root = load_located(text, source)
    if root is None:
        return BaseSpec(source, None, {}, {}, {}, (_default_view(source),))
    if root.kind != "map":
        raise reader.error("a base is a mapping (filters, formulas, properties, summaries, views)", root)
    items = root.items
    views_node = items.get("views")
    views: list[ViewSpec] = []
    if views_node is not None and views_node.value is not None:
        reader.expect(views_node, "list", "views")
        if len(views_node.elements) > MAX_VIEWS:
            raise reader.error(f"a base holds at most {MAX_VIEWS} views", views_node)
        views = [reader.view(e, i) for i, e in enumerate(views_node.elements)]
    filters = items.get("filters")
    return BaseSpec(
        source=source,
        filters=reader.filters(filters) if filters is not None else None,
        formulas=reader.named_expressions(items["formulas"], "formulas") if "formulas" in items else {},
        display_names={
            **(reader.legacy_display(items["display"]) if "display" in items else {}),
            **(reader.display_names(items["properties"]) if "properties" in items else {}),
        },
        summaries=reader.named_expressions(items["summaries"], "summaries") if "summaries" in items else {},
        views=tuple(views) or (_default_view(source),),
        ignored=tuple(k for k in items if k not in _TOP_KEYS),
    )


def load_located(text: str, source: str) -> YNode | None:
    """`base_yaml.load` with the base's name in its error.

    Raises:
        BaseFileError: as `base_yaml.load`.
    """
    try:
        return load(text)
    except BaseFileError as err:
        raise BaseFileError(err.reason, f"{source}: {err.where}" if err.where else source) from None


def _default_view(source: str) -> ViewSpec:
    return ViewSpec(0, "table", "Table", None, (), (), None, None, {}, (), f"{source}: the file")
