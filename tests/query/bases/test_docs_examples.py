"""Every expression of the Bases help pages (Bases syntax, Functions, Formulas, Views and the
layout pages), evaluated on the fixture vault.

Where a page states the result, the test asserts it; every value (stated or not) is also
kept in a golden file, so a change of any result is seen. Placeholders the pages use as
property names (`date`, `datetime`, `property`, `otherFile`, `image-property`) are fixture
properties (or missing ones, which read as null).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from query.bases.fixture import FixtureScope
from query.bases.render import plain
from testkit import check_golden

from vault_agent.query.bases.expr_parse import parse_expression
from vault_agent.query.bases.interpret import evaluate
from vault_agent.query.bases.support import check_supported
from vault_agent.query.bases.values import Value

GOLDEN = Path(__file__).parent / "golden" / "docs_examples.json"
FORMULAS = {
    "formatted_price": 'if(price, price.toFixed(2) + " dollars")',
    "ppu": "(price / age).toFixed(2)",
    "price_per_unit": "price / quantity",
    "Owned": "(now() - start_date).months",
}
SUMMARY_VALUES: list[Value] = [3.0, "x", 1.25, None, 7.0]
_ = object()  # the page states no value: the golden file records it

# (page, expression, the result the page states (as `plain` renders it) or _, options)
EXAMPLES: list[tuple[str, str, Any, dict[str, Any]]] = [
    # ---------------------------------------------------------------- Bases syntax
    ("syntax", 'file.hasTag("tag")', _, {}),
    ("syntax", 'file.hasTag("book")', True, {}),
    ("syntax", 'file.hasLink("Textbook")', True, {}),
    ("syntax", 'file.inFolder("Required Reading")', True, {"row": "Required Reading/Notes/Week 1.md"}),
    ("syntax", 'if(price, price.toFixed(2) + " dollars")', "12.50 dollars", {}),
    ("syntax", "(price / age).toFixed(2)", "2.50", {}),
    ("syntax", "values.mean().round(3)", 3.75, {"values": SUMMARY_VALUES}),
    ("syntax", 'status != "done"', True, {}),
    ("syntax", "formula.ppu > 5", False, {}),
    ("syntax", "price > 2.1", True, {}),
    ("syntax", 'file.ext == "md"', True, {}),
    ("syntax", "this.file.folder", "/", {}),
    ("syntax", "this.file.name", "Reading.base", {}),
    ("syntax", "file.hasLink(this.file)", True, {"this_path": "Frank Herbert.md"}),
    ("syntax", "radius * (2 * 3.14)", 12.56, {}),
    ("syntax", 'date + "1M"', {"datetime": "2025-06-01 10:00:00"}, {}),
    ("syntax", 'date - "2h"', {"datetime": "2025-05-01 08:00:00"}, {}),
    ("syntax", 'now() + "1 day"', {"datetime": "2025-05-28 14:30:15"}, {}),
    ("syntax", 'file.mtime > now() - "1 week"', True, {}),
    ("syntax", 'date("2024-12-01") + "1M" + "4h" + "3m"', {"datetime": "2025-01-01 04:03:00"}, {}),
    ("syntax", "now() - file.ctime", _, {}),
    ("syntax", "datetime.date()", {"date": "2025-05-02"}, {}),
    ("syntax", 'datetime.format("YYYY-MM-DD")', "2025-05-02", {}),
    ("syntax", 'date("2025-01-01 12:00:00")', {"datetime": "2025-01-01 12:00:00"}, {}),
    ("syntax", 'now() + "1 hour"', {"datetime": "2025-05-27 15:30:15"}, {}),
    ("syntax", 'today() + "7d"', {"date": "2025-06-03"}, {}),
    ("syntax", '(now() + "1d") - now()', {"duration_ms": 86400000}, {}),
    ("syntax", "now().hour", 14, {}),
    ("syntax", "now.time()", None, {}),  # the page's typo for now().time(): `now` is a (missing) property
    ("syntax", "property[0]", None, {}),
    ("syntax", "property.subprop", "nested", {}),
    ("syntax", 'property["subprop"]', "nested", {}),
    ("syntax", 'link("filename")', {"link": "filename", "path": None, "display": None}, {}),
    (
        "syntax",
        'link("https://obsidian.md")',
        {"link": "https://obsidian.md", "path": None, "display": None},
        {},
    ),
    (
        "syntax",
        "link(file.ctime.date().toString())",
        {"link": "2025-01-10", "path": None, "display": None},
        {},
    ),
    ("syntax", 'link("filename", "display")', {"link": "filename", "path": None, "display": "display"}, {}),
    (
        "syntax",
        'link("filename", icon("plus"))',
        {"link": "filename", "path": None, "display": {"icon": "plus"}},
        {},
    ),
    ("syntax", "file.asLink()", {"link": "Books/Dune.md", "path": "Books/Dune.md", "display": None}, {}),
    ("syntax", "author == this", True, {"this_path": "Frank Herbert.md"}),
    ("syntax", "authors.contains(this)", True, {"this_path": "Frank Herbert.md"}),
    # ---------------------------------------------------------------- Functions: global
    (
        "functions",
        "escapeHTML(\"<b>Tom & 'Jerry'</b>\")",
        "&lt;b&gt;Tom &amp; &#x27;Jerry&#x27;&lt;/b&gt;",
        {},
    ),
    ("functions", 'date("2025-05-27")', {"date": "2025-05-27"}, {}),
    ("functions", "now() + (duration('1d') * 2)", {"datetime": "2025-05-29 14:30:15"}, {}),
    ("functions", "duration('5h') * 2", {"duration_ms": 36000000}, {}),
    ("functions", "now() + '1d'", {"datetime": "2025-05-28 14:30:15"}, {}),
    ("functions", 'file(link("[[Books]]"))', {"file": "Books.md"}, {}),
    ("functions", 'file("Books/Textbook.md")', {"file": "Books/Textbook.md"}, {}),
    ("functions", 'html("<i>x</i>")', {"html": "<i>x</i>"}, {}),
    ("functions", 'if(isModified, "Modified", "Unmodified")', "Modified", {}),
    ("functions", "image(image-property)", _, {}),  # a placeholder name: `image - property`
    (
        "functions",
        'image("https://obsidian.md/images/obsidian-logo-gradient.svg")',
        {"image": "https://obsidian.md/images/obsidian-logo-gradient.svg"},
        {},
    ),  # fmt: skip
    ("functions", 'icon("arrow-right")', {"icon": "arrow-right"}, {}),
    ("functions", 'list("value")', ["value"], {}),
    ("functions", "max(3, 9, 4)", 9, {}),
    ("functions", "min(3, 9, 4)", 3, {}),
    ("functions", 'number("3.4")', 3.4, {}),
    ("functions", "number(true)", 1, {}),
    ("functions", 'number(date("1970-01-02"))', 86400000, {}),
    ("functions", "today()", {"date": "2025-05-27"}, {}),
    # ---------------------------------------------------------------- Functions: any, date
    ("functions", "1.isTruthy()", True, {}),
    ("functions", '"example".isType("string")', True, {}),
    ("functions", 'true.isType("boolean")', True, {}),
    ("functions", "123.toString()", "123", {}),
    ("functions", "now().date()", {"date": "2025-05-27"}, {}),
    ("functions", 'now().date().format("YYYY-MM-DD HH:mm:ss")', "2025-05-27 00:00:00", {}),
    ("functions", 'date("2025-05-27").format("YYYY-MM-DD")', "2025-05-27", {}),
    ("functions", "now().time()", "14:30:15", {}),
    ("functions", "file.mtime.relative()", "2 days ago", {}),
    ("functions", "now().isEmpty()", False, {}),
    ("functions", "now().year", 2025, {}),
    ("functions", "now().month", 5, {}),
    ("functions", "now().day", 27, {}),
    ("functions", "now().minute", 30, {}),
    ("functions", "now().second", 15, {}),
    ("functions", "now().millisecond", 0, {}),
    # ---------------------------------------------------------------- Functions: string
    ("functions", '"hello".length', 5, {}),
    ("functions", '"hello".contains("ell")', True, {}),
    ("functions", '"hello".containsAll("h", "e")', True, {}),
    ("functions", '"hello".containsAny("x", "y", "e")', True, {}),
    ("functions", '"hello".endsWith("lo")', True, {}),
    ("functions", '"Hello world".isEmpty()', False, {}),
    ("functions", '"".isEmpty()', True, {}),
    ("functions", '"Hello World".lower()', "hello world", {}),
    ("functions", '"a:b:c:d".replace(/:/, "-")', "a-b:c:d", {}),
    ("functions", '"a:b:c:d".replace(/:/g, "-")', "a-b-c-d", {}),
    ("functions", '"John Smith".replace(/(\\w+) (\\w+)/, "$2, $1")', "Smith, John", {}),
    ("functions", '"123".repeat(2)', "123123", {}),
    ("functions", '"hello".reverse()', "olleh", {}),
    ("functions", '"hello".slice(1, 4)', "ell", {}),
    ("functions", '"hello".slice(1)', "ello", {}),
    ("functions", '"a,b,c,d".split(",", 3)', ["a", "b", "c"], {}),
    ("functions", '"a,b,c,d".split(/,/, 3)', ["a", "b", "c"], {}),
    ("functions", '"hello".startsWith("he")', True, {}),
    ("functions", '"hello world".title()', "Hello World", {}),
    ("functions", '"  hi  ".trim()', "hi", {}),
    # ---------------------------------------------------------------- Functions: number
    ("functions", "(-5).abs()", 5, {}),
    ("functions", "(2.1).ceil()", 3, {}),
    ("functions", "(2.9).floor()", 2, {}),
    ("functions", "5.isEmpty()", False, {}),
    ("functions", "(2.5).round()", 3, {}),
    ("functions", "(2.3333).round(2)", 2.33, {}),
    ("functions", "(3.14159).toFixed(2)", "3.14", {}),
    # ---------------------------------------------------------------- Functions: list
    ("functions", "[1,2,3].length", 3, {}),
    ("functions", "[1,2,3].contains(2)", True, {}),
    ("functions", "[1,2,3].containsAll(2,3)", True, {}),
    ("functions", "[1,2,3].containsAny(3,4)", True, {}),
    ("functions", "[1,2,3,4].filter(value > 2)", [3, 4], {}),
    ("functions", "[1,[2,3]].flat()", [1, 2, 3], {}),
    ("functions", "[1,2,3].isEmpty()", False, {}),
    ("functions", '[1,2,3].join(",")', "1,2,3", {}),
    ("functions", "[1,2,3,4].map(value + 1)", [2, 3, 4, 5], {}),
    ("functions", "[1,2,3].reduce(acc + value, 0)", 6, {}),
    (
        "functions",
        'values.filter(value.isType("number")).reduce(if(acc == null || value > acc, value, acc), null)',
        7,
        {"values": SUMMARY_VALUES},
    ),  # fmt: skip
    ("functions", "[1,2,3].reverse()", [3, 2, 1], {}),
    ("functions", "[1,2,3,4].slice(1,3)", [2, 3], {}),
    ("functions", "[3, 1, 2].sort()", [1, 2, 3], {}),
    ("functions", '["c", "a", "b"].sort()', ["a", "b", "c"], {}),
    ("functions", "[1,2,2,3].unique()", [1, 2, 3], {}),
    # ---------------------------------------------------------------- Functions: link, file, object, regex
    ("functions", 'link("[[Books]]").asFile()', {"file": "Books.md"}, {}),
    ("functions", 'link("[[filename]]").asFile()', None, {}),
    ("functions", 'link("Books/Dune").linksTo(file("Books/Textbook.md"))', True, {}),
    ("functions", "file.name", "Dune.md", {}),
    ("functions", "file.basename", "Dune", {}),
    ("functions", "file.path", "Books/Dune.md", {}),
    ("functions", "file.folder", "Books", {}),
    ("functions", "file.size", 2048, {}),
    ("functions", "file.properties.status", "reading", {}),
    ("functions", "file.tags", _, {}),
    ("functions", "file.links", _, {}),
    ("functions", "file.embeds", _, {}),
    ("functions", "file.backlinks", _, {}),
    ("functions", "file.ctime", {"datetime": "2025-01-10 09:00:00"}, {}),
    ("functions", "file.mtime", {"datetime": "2025-05-25 08:15:00"}, {}),
    ("functions", "file.file", {"file": "Books/Dune.md"}, {}),
    ("functions", "file.hasLink(otherFile)", False, {}),
    ("functions", 'file.hasProperty("price")', True, {}),
    ("functions", 'file.hasTag("tag1", "tag2")', False, {}),
    ("functions", 'file.hasTag("tag1", "scifi")', True, {}),
    ("functions", 'file.inFolder("notes")', False, {}),
    ("functions", 'file.inFolder("Required Reading")', False, {}),
    ("functions", "{}.isEmpty()", True, {}),
    ("functions", '{"a": 1, "b": 2}.keys()', ["a", "b"], {}),
    ("functions", '{"a": 1, "b": 2}.values()', [1, 2], {}),
    ("functions", '/abc/.matches("abcde")', True, {}),
    ("functions", "[1, 2, 3, 4, 5, 6].mean()", 3.5, {}),
    ("functions", "[1, 2, 3, 4, 5, 6, 7].median()", 4, {}),
    ("functions", "[2, 2, 4, 5, 5, 8].median()", 4.5, {}),
    ("functions", "[1, 7, 3, 11, 22, 5].stddev().round(2)", 6.94, {}),
    # ---------------------------------------------------------------- Formulas
    ("formulas", "price * quantity", 50, {}),
    ("formulas", 'file.name + " - " + description', "Dune.md - a desert planet", {}),
    ("formulas", "formula.price_per_unit * 1.1", _, {}),
    ("formulas", "price + tax", 14, {}),
    ("formulas", "price - discount", 10.5, {}),
    ("formulas", "price / quantity", 3.125, {}),
    ("formulas", "(part / whole) * 100", 25, {}),
    ("formulas", "price > 100", False, {}),
    ("formulas", "age < 18", True, {}),
    ("formulas", 'status == "Done"', False, {}),
    ("formulas", 'status != "Done"', True, {}),
    ("formulas", "file.mtime > now() - '7d'", True, {}),
    ("formulas", "!completed", True, {}),
    ("formulas", "price > 0 && quantity > 0", True, {}),
    ("formulas", "urgent || important", True, {}),
    ("formulas", 'if(price, "$" + price.toFixed(2), "")', "$12.50", {}),
    ("formulas", "file.name.lower()", "dune.md", {}),
    ("formulas", 'tags.contains("urgent")', False, {}),
    ("formulas", 'tags.contains("scifi")', True, {}),
    ("formulas", 'due_date.format("YYYY-MM-DD")', "2025-05-20", {}),
    ("formulas", 'start_date + "2w"', {"date": "2025-05-15"}, {}),
    ("formulas", 'if(due_date < now() && status != "Done", "Overdue", "")', "Overdue", {}),
    ("formulas", "tasks.length", 3, {}),
    ("formulas", "(impact * urgency) / effort", 4, {}),
    ("formulas", 'first_name + " " + last_name', "Paul Atreides", {}),
    ("formulas", "monthlyUses * formula.Owned.round()", 3, {}),
    ("formulas", '"hello"', "hello", {}),
    ("formulas", "'world'", "world", {}),
    ("formulas", "42", 42, {}),
    ("formulas", "3.14", 3.14, {}),
    ("formulas", "(2 + 2)", 4, {}),
    ("formulas", "true", True, {}),
    ("formulas", "false", False, {}),
    ("formulas", "[1, 2, 3]", [1, 2, 3], {}),
    ("formulas", '{"name": "value"}', {"name": "value"}, {}),
    # ---------------------------------------------------------------- Views and layouts (Map view)
    ("views", "[latitude, longitude]", [48.85837, 2.294481], {}),
    ("views", "list(type)[0].asFile().properties.icon", "book-open", {}),
    (
        "views",
        'link("https://www.google.com/maps/search/" + file.name.replace(" ","+"),"Google Maps")',
        {"link": "https://www.google.com/maps/search/Dune.md", "path": None, "display": "Google Maps"},
        {},
    ),  # fmt: skip
    ("views", 'file.hasTag("example")', False, {}),
]


def _run(text: str, options: dict[str, Any]) -> Value:
    expr = parse_expression(text)
    check_supported(expr)
    scope = FixtureScope(
        options.get("row", "Books/Dune.md"), options.get("this_path", "Reading.base"), FORMULAS
    )
    variables = {"values": options["values"]} if "values" in options else None
    return evaluate(expr, scope, variables=variables)


def _same(got: Any, want: Any) -> bool:
    if isinstance(got, float) and isinstance(want, float | int):
        return math.isclose(got, want, rel_tol=1e-12)
    return bool(got == want)


@pytest.mark.parametrize(("page", "text", "stated", "options"), EXAMPLES, ids=[e[1] for e in EXAMPLES])
def test_the_stated_result(page: str, text: str, stated: Any, options: dict[str, Any]) -> None:
    got = plain(_run(text, options))
    if stated is not _:
        assert _same(got, stated), f"{page}: {text} gave {got!r}, the page says {stated!r}"


def test_every_example_in_a_golden_file() -> None:
    rows = [
        {"page": page, "expression": text, "value": plain(_run(text, options))}
        for page, text, _s, options in EXAMPLES
    ]
    check_golden(GOLDEN, json.dumps(rows, indent=1, ensure_ascii=False) + "\n")


def test_random_is_a_number_in_0_1() -> None:
    value = _run("random()", {})
    assert isinstance(value, float) and 0 <= value < 1
