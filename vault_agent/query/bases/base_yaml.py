"""A `.base` text as a tree of YAML nodes that know where they are, read with the one loader.

The text passes the kernel's guards first (`yaml_guard.guard`: size, nesting depth, alias
count; libyaml must never see a text that could crash the process), then libyaml's
composer (`yaml.CSafeLoader`) builds the node graph with the position of every node, and
this module turns it into `YNode`s: mappings (keys in file order, a key given twice is an
error), lists and scalars (typed as YAML types them; the raw text kept too, since an
expression is text whatever YAML thinks it is). Aliases are shared nodes; every visit of
one counts against MAX_NODES, so a "billion laughs" document stops with a named error
after a bounded walk instead of expanding. Every error is a `BaseFileError` naming the
rule and its place (`line L, column C`), never quoting the text.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Literal

import yaml
from yaml.constructor import ConstructorError, SafeConstructor

from vault_agent.contracts import MAX_BASE_BYTES
from vault_agent.errors import InvalidQuery
from vault_agent.yaml_guard import guard

MAX_BASE_DEPTH = 64  # YAML nesting (a real base nests filters a few levels)
MAX_BASE_ALIASES = 64
MAX_NODES = 100_000  # nodes visited, aliases counted at each use

_RULES = {
    "too_large": f"the base is larger than {MAX_BASE_BYTES // 1024} KiB",
    "too_deep": f"the YAML nests deeper than {MAX_BASE_DEPTH} levels",
    "too_many_aliases": f"the YAML uses more than {MAX_BASE_ALIASES} aliases",
}

Scalar = str | int | float | bool | None | dt.date | dt.datetime


class BaseFileError(InvalidQuery):
    """A `.base` text that is not valid YAML or breaks the Bases format; names the rule and where."""

    def __init__(self, reason: str, where: str = "") -> None:
        self.reason = reason
        self.where = where
        super().__init__(f"base file: {reason}" + (f" ({where})" if where else ""))


@dataclass(frozen=True, slots=True)
class YNode:
    """One node: `value` is a dict of YNodes (map), a list of YNodes (list) or a Scalar;
    `raw` is a scalar's text as written; `line`/`column` 1-based; `path` e.g. `views[0].sort`."""

    kind: Literal["map", "list", "scalar"]
    value: object
    raw: str
    style: str
    line: int
    column: int
    path: str

    def where(self) -> str:
        """`views[0].name, line 4, column 11` (the root is `the file`)."""
        return f"{self.path or 'the file'}, line {self.line}, column {self.column}"

    @property
    def items(self) -> dict[str, YNode]:
        assert isinstance(self.value, dict)
        return self.value

    @property
    def elements(self) -> list[YNode]:
        assert isinstance(self.value, list)
        return self.value


def decode(data: bytes) -> str:
    """A `.base` file's bytes as text (UTF-8, a BOM dropped).

    Raises:
        BaseFileError: not UTF-8.
    """
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise BaseFileError(f"the file is not UTF-8 text (byte {err.start + 1})") from None


def load(text: str) -> YNode | None:
    """The document's root node (None for an empty document).

    Raises:
        BaseFileError: a guard refuses the text, it is not valid YAML (or holds several
            documents), a key is given twice, or the document holds more than MAX_NODES nodes.
    """
    rule = guard(text, MAX_BASE_BYTES, MAX_BASE_DEPTH, MAX_BASE_ALIASES)
    if rule is not None:
        raise BaseFileError(_RULES[rule])
    try:
        root = yaml.compose(text, Loader=yaml.CSafeLoader)
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark or err.context_mark
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        raise BaseFileError(
            f"not valid YAML: {err.problem or err.context or 'syntax error'}", where
        ) from None
    except (yaml.YAMLError, RecursionError, ValueError):
        raise BaseFileError("not valid YAML") from None
    if root is None:
        return None
    return _Builder().node(root, "")


class _Builder:
    """Turns composed nodes into YNodes, counting every visit (aliases included)."""

    def __init__(self) -> None:
        self.visits = 0
        self.constructor = SafeConstructor()

    def node(self, node: yaml.Node, path: str) -> YNode:
        self.visits += 1
        if self.visits > MAX_NODES:
            raise BaseFileError(
                f"the YAML expands to more than {MAX_NODES} nodes (aliases repeat what they name)"
            )
        line, column = node.start_mark.line + 1, node.start_mark.column + 1
        if isinstance(node, yaml.MappingNode):
            items: dict[str, YNode] = {}
            for key_node, value_node in node.value:
                key = self._key(key_node)
                child = f"{path}.{key}" if path else key
                if key in items:
                    where = f"line {key_node.start_mark.line + 1}, column {key_node.start_mark.column + 1}"
                    raise BaseFileError(f"the key '{key}' is given twice in {path or 'the file'}", where)
                items[key] = self.node(value_node, child)
            return YNode("map", items, "", "", line, column, path)
        if isinstance(node, yaml.SequenceNode):
            elements = [self.node(item, f"{path}[{i}]") for i, item in enumerate(node.value)]
            return YNode("list", elements, "", "", line, column, path)
        assert isinstance(node, yaml.ScalarNode)
        return YNode(
            "scalar", self._scalar(node, path), str(node.value), node.style or "", line, column, path
        )

    def _scalar(self, node: yaml.ScalarNode, path: str) -> Scalar:
        try:
            value = self.constructor.construct_object(node)
        except (ConstructorError, ValueError, OverflowError):
            return str(node.value)  # a YAML type it cannot build (a date like 2024-02-30): its text
        if value is None or isinstance(value, str | int | float | bool | dt.date):
            return value
        return str(node.value)

    def _key(self, node: yaml.Node) -> str:
        if not isinstance(node, yaml.ScalarNode):
            where = f"line {node.start_mark.line + 1}, column {node.start_mark.column + 1}"
            raise BaseFileError("a key must be text, not a list or mapping", where)
        self.visits += 1
        return str(node.value)


def expression_origin(node: YNode, text: str) -> tuple[int, int]:
    """(line, column) in the file of the first character of a scalar's text: after the
    quote of a quoted scalar; the first non-blank line after `|` or `>` of a block scalar."""
    if node.style in ("'", '"'):
        return node.line, node.column + 1
    if node.style in ("|", ">"):
        lines = text.split("\n")
        for index in range(node.line, len(lines)):  # the lines after the indicator's
            stripped = lines[index].lstrip(" ")
            if stripped:
                return index + 1, len(lines[index]) - len(stripped) + 1
    return node.line, node.column
