"""The `.base` format: what is read, and every broken rule named with its place in the file."""

from __future__ import annotations

import pytest

from vault_agent.contracts import MAX_BASE_BYTES
from vault_agent.errors import InvalidQuery
from vault_agent.query.bases.base_file import Group, Statement, parse_base
from vault_agent.query.bases.base_yaml import MAX_NODES, BaseFileError

FULL = """\
filters:
  or:
    - file.hasTag("tag")
    - and:
        - file.hasTag("book")
        - file.hasLink("Textbook")
    - not:
        - file.hasTag("book")
formulas:
  ppu: "(price / age).toFixed(2)"
properties:
  status:
    displayName: Status
display:
  note.age: Age
summaries:
  customAverage: 'values.mean().round(3)'
views:
  - type: table
    name: "My table"
    limit: 10
    groupBy:
      property: note.age
      direction: DESC
    filters: 'status != "done"'
    order: [file.name, note.age]
    sort:
      - property: note.age
      - column: file.name
        direction: desc
    summaries:
      formula.ppu: Average
    columnSize:
      file.name: 200
  - type: cards
"""


def test_every_section_is_read() -> None:
    spec = parse_base(FULL, "My.base")
    assert isinstance(spec.filters, Group) and spec.filters.op == "or"
    inner = spec.filters.items[1]
    assert isinstance(inner, Group) and inner.op == "and" and len(inner.items) == 2
    first = spec.filters.items[0]
    assert isinstance(first, Statement) and first.source.text == 'file.hasTag("tag")'
    assert (first.source.line, first.source.column) == (3, 7)
    assert spec.formulas["ppu"].text == "(price / age).toFixed(2)"
    assert (spec.formulas["ppu"].line, spec.formulas["ppu"].column) == (10, 9)  # after the quote
    assert spec.display_names == {"note.age": "Age", "status": "Status"}
    view = spec.views[0]
    assert (view.name, view.type, view.limit, view.order) == (
        "My table",
        "table",
        10,
        ("file.name", "note.age"),
    )
    assert view.group_by is not None and (view.group_by.property, view.group_by.direction) == (
        "note.age",
        "DESC",
    )
    assert [(k.property, k.direction) for k in view.sort] == [("note.age", "ASC"), ("file.name", "DESC")]
    assert view.summaries == {"formula.ppu": "Average"} and view.ignored == ("columnSize",)
    assert (spec.views[1].type, spec.views[1].name) == ("cards", "View 2")


def test_an_empty_base_has_one_table_view() -> None:
    for text in ("", "# only a comment\n", "filters:\n"):
        spec = parse_base(text, "Empty.base")
        assert [(v.type, v.name) for v in spec.views] == [("table", "Table")]


@pytest.mark.parametrize(
    ("text", "words"),
    [
        (
            "filters:\n  and: [a]\n  or: [b]\n",
            ["exactly one of and/or/not", "and and or", "line 2, column 3"],
        ),
        ("filters:\n  any: [a]\n", ["'any' is not a filter key", "filters.any, line 2, column 8"]),
        ("filters:\n  - a\n", ["not a bare list", "filters, line 2"]),
        ("filters:\n  and: a\n", ["'and' must be a list", "filters.and"]),
        ("filters:\n  and:\n    - \n", ["an empty filter statement", "filters.and[0]"]),
        ("views: {a: 1}\n", ["views must be a list", "views, line 1"]),
        ("views:\n  - 3\n", ["views[0] must be a mapping"]),
        ("views:\n  - name: x\n    limit: -1\n", ["limit is a whole number", "views[0].limit, line 3"]),
        ("views:\n  - name: x\n    limit: ten\n", ["limit is a whole number"]),
        (
            "views:\n  - sort:\n      - property: a\n        direction: up\n",
            ["direction is ASC or DESC", "direction, line 4"],
        ),
        ("views:\n  - sort:\n      - direction: ASC\n", ["sort[0] needs a property"]),
        ("views:\n  - order: file.name\n", ["order must be a list"]),
        ("views:\n  - groupBy: [a]\n", ["groupBy must be a mapping"]),
        ("formulas: [a]\n", ["formulas must be a mapping"]),
        ("formulas:\n  x: [1, 2]\n", ["must be an expression", "formulas.x, line 2"]),
        ("properties:\n  a: text\n", ["properties.a must be a mapping"]),
        ("views: []\nviews: []\n", ["the key 'views' is given twice", "line 2, column 1"]),
        ("filters: [unclosed\n", ["not valid YAML", "line 2"]),
        ("a: b\n---\nc: d\n", ["not valid YAML"]),
        ("- just\n- a list\n", ["a base is a mapping"]),
        ("? [a, b]\n: c\n", ["a key must be text"]),
    ],
)
def test_broken_rules_are_named_with_their_place(text: str, words: list[str]) -> None:
    with pytest.raises(BaseFileError) as caught:
        parse_base(text, "Broken.base")
    message = caught.value.message
    assert isinstance(caught.value, InvalidQuery) and caught.value.code == "INVALID_QUERY"
    assert "Broken.base" in message
    for word in words:
        assert word in message, (word, message)


def test_yaml_bombs_deep_nesting_and_size_are_refused_by_name() -> None:
    laughs = ["a: &a [x, x, x, x, x, x, x, x, x, x]"]
    for level in "bcdefghi":  # 8 levels of 9 aliases each: more than the alias budget
        previous = chr(ord(level) - 1)
        laughs.append(f"{level}: &{level} [{', '.join('*' + previous for _ in range(9))}]")
    with pytest.raises(BaseFileError, match="more than 64 aliases"):
        parse_base("\n".join(laughs) + "\n", "Bomb.base")
    # within the alias budget, the expansion is counted node by node and stops
    few = ["a: &a [x, x, x, x, x, x, x, x, x, x]"]
    for level in "bcdef":
        previous = chr(ord(level) - 1)
        few.append(f"{level}: &{level} [{', '.join('*' + previous for _ in range(10))}]")
    with pytest.raises(BaseFileError, match=f"more than {MAX_NODES} nodes"):
        parse_base("\n".join(few) + "\n", "Bomb.base")
    with pytest.raises(BaseFileError, match="deeper than 64 levels"):
        parse_base("filters: " + "[" * 5_000 + "]" * 5_000 + "\n", "Deep.base")
    with pytest.raises(BaseFileError, match="larger than 512 KiB"):
        parse_base("formulas:\n  x: '" + "a" * MAX_BASE_BYTES + "'\n", "Huge.base")


def test_block_scalars_and_quotes_position_the_expression() -> None:
    spec = parse_base('formulas:\n  a: |\n    price\n      * 2\n  b: "x"\n  c: plain\n', "P.base")
    assert (spec.formulas["a"].line, spec.formulas["a"].column) == (3, 5)
    assert (spec.formulas["b"].line, spec.formulas["b"].column) == (5, 7)
    assert (spec.formulas["c"].line, spec.formulas["c"].column) == (6, 6)
