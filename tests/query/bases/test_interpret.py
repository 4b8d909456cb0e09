"""The interpreter's semantics where the docs are silent (each choice as written in the
module docs), types, tags, links, files, and refusals by name."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from query.bases.fixture import FixtureScope, run
from query.bases.render import plain

from vault_agent.query.bases.expr_errors import EvaluationError, ExpressionSyntaxError, Unsupported
from vault_agent.query.bases.expr_parse import parse_expression
from vault_agent.query.bases.interpret import evaluate
from vault_agent.query.bases.support import check_supported
from vault_agent.query.bases.values import FileInfo, number_text, to_text, truthy


def value(text: str, **kwargs: Any) -> Any:
    return plain(run(text, **kwargs))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # truth: JavaScript's, but an empty list or object is false
        ("!!0", False),
        ("!!''", False),
        ("!![]", False),
        ("!!{}", False),
        ("!!null", False),
        ("!!(0/0)", False),
        ("!!'0'", True),
        ("!![0]", True),
        ("!!now()", True),
        ("!!file", True),
        ("!!/x/", True),
        ("!!duration('0s')", False),
        ("!!duration('1s')", True),
        ("if(missing, 1, 2)", 2),
        ("if(false, 1)", None),
        # && || give booleans and stop early
        ("1 && 'a'", True),
        ("0 || ''", False),
        ("false && x.y.z()", False),
        ("true || nope()", True),
        # null: arithmetic stays null, text is empty, ordering is false, equality with null only
        ("missing + 1", None),
        ("missing * 2", None),
        ("-missing", None),
        ("'a' + missing + 'b'", "ab"),
        ("missing < 1", False),
        ("missing > 1", False),
        ("missing == null", True),
        ("missing != 0", True),
        ("missing.lower()", None),
        ("missing.isEmpty()", True),
        ("missing.isTruthy()", False),
        ("missing.toString()", ""),
        ("missing.x.y", None),
        ("missing[0]", None),
        ("list(missing)", []),
        # numbers (JavaScript's doubles and text)
        ("0.1 + 0.2", 0.30000000000000004),
        ("(0.1 + 0.2).toString()", "0.30000000000000004"),
        ("7 % 3", 1),
        ("-7 % 3", -1),
        ("1 / 0", float("inf")),
        ("(1/0).toString()", "Infinity"),
        ("(2.5).toFixed(0)", "3"),
        ("(-2.5).round()", -2),
        ("(1.005).toFixed(2)", "1.00"),
        ("(1e21).toFixed(2)", "1e+21"),
        ("(1234.5678).round(1)", 1234.6),
        ("max()", None),
        ("max(1, missing, 3)", 3),
        ('number("12")', 12),
        # strings
        ("'a' + 1", "a1"),
        ("1 + 'a'", "1a"),
        ("'x' + [1, 2]", "x1, 2"),
        ("'abc'[1]", "b"),
        ("'abc'[5]", None),
        ('"Hello".contains("hello")', False),
        ('"abc".contains(missing)', False),
        ('"a-b-c".split("-")', ["a", "b", "c"]),
        ('"abc".split("")', ["a", "b", "c"]),
        ('"aXbX".replace("X", "-")', "a-b-"),
        ('"x".slice(-1)', "x"),
        ('"hello".slice(-3, -1)', "ll"),
        ('"ab".isType("string")', True),
        ("'o\\'k'", "o'k"),
        ('"a1b22".replace(/(?<d>\\d+)/g, "[$<d>]")', "a[1]b[22]"),
        ('"aa".replace(/a/g, "$&$&")', "aaaa"),
        ('"x".replace(/x/, "$$")', "$"),
        ('"abc".replace(/(b)/, "$2")', "a$2c"),
        ('/^a.c$/s.matches("a\\nc")', True),
        ('/ABC/i.matches("xabcx")', True),
        ("/x/.matches(missing)", False),
        ("\"it's o'neil\".title()", "It's O'neil"),
        # lists
        ("[1, 2] + [3]", [1, 2, 3]),
        ("[3, 'b', 1, 'a', null, true].sort()", [1, 3, "a", "b", True, None]),
        ("[[1], [1], 2, 2].unique()", [[1], 2]),
        ("[1, 2, 3][-1]", None),
        ("[1, 2, 3][1.5]", None),
        ("[1, [2, [3]]].flat()", [1, 2, [3]]),
        ("[1, 2].join()", "1,2"),
        ("[null, 1].join('-')", "-1"),
        ("['a', 'b'].map(value + index)", ["a0", "b1"]),
        ("[1, 2, 3].filter(index > 0)", [2, 3]),
        ("[[1, 2], [3]].map(value.map(value * 10))", [[10, 20], [30]]),
        ("[].mean()", None),
        ("['x', 2, 4].mean()", 3),
        ("[1, 2].reduce(acc + value)", None),
        # objects
        ('{"a": {"b": [1, 2]}}.a.b[1]', 2),
        ('{"a": 1}["a"]', 1),
        ('{"a": 1}.z', None),
        ('{"a": 1}[0]', None),
        ('{"a": 1} == {"a": 1}', True),
        ("{}.isEmpty()", True),
        ('{"k": 1}.isTruthy()', True),
        # equality keeps types apart (where the docs are silent)
        ("1 == '1'", False),
        ("true == 1", False),
        ("[1, 2] == [1, 2]", True),
        ("'10' > 9", True),
        ("'b' > 'a'", True),
        ("'x' > 1", False),
        ("true > false", True),
    ],
)
def test_semantics(text: str, expected: Any) -> None:
    assert value(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('date("2024-01-31") + "1M"', {"date": "2024-02-29"}),
        ('date("2024-03-10") - "1 week"', {"date": "2024-03-03"}),
        ('date("2024-03-10") + "1.5h"', {"datetime": "2024-03-10 01:30:00"}),
        ('date("2024-03-10 10:00") + "2h 30m"', {"datetime": "2024-03-10 12:30:00"}),
        ('date("2024-03-10") + "P1DT2H"', {"datetime": "2024-03-11 02:00:00"}),
        ('date("2024-03-10") + "-1d"', {"date": "2024-03-09"}),
        ('date("2024-03-10") + duration("1y") * 2', {"date": "2026-03-10"}),
        ('date("2024-03-10T10:00:00") == date("2024-03-10 10:00")', True),
        ('date("2024-03-10") > "2024-03-09"', True),
        ('date("2024-03-10") == "2024-03-10"', True),
        ('date("2024-03-10") < "not a date"', False),
        ('date("2024-03-10") - "2024-03-01"', {"duration_ms": 777600000}),
        ('(date("2024-03-10") - date("2024-03-01")).days', 9),
        ('(date("2024-03-10") - date("2024-03-01")).hours', 216),
        ('(date("2024-03-10") - date("2023-03-10")).years.floor()', 1),
        ('(date("2024-04-10") - date("2024-03-10")).weeks.round(2)', 4.43),
        ('duration("1d") > duration("23h")', True),
        ('duration("1d") == 86400000', True),
        ('duration("1d") + "2h"', {"duration_ms": 93600000}),
        ('duration("1d") / 2', {"duration_ms": 43200000}),
        ('duration("1 Week").days', 7),
        ('duration("2 fortnights")', None),
        ('date("2024-02-30")', None),
        ('date("yesterday")', None),
        (
            'date("2024-03-10 09:05:03").format("dddd, MMMM Do YYYY, h:mm:ss a [week] W, Q")',
            "Sunday, March 10th 2024, 9:05:03 am week 10, 1",
        ),  # fmt: skip
        (
            'date("2024-03-10").format("ddd D MMM YY, DDDD, ww, HH:mm SSS")',
            "Sun 10 Mar 24, 070, 11, 00:00 000",
        ),
        ('date("2024-03-10").time()', "00:00:00"),
        ('date("2024-03-10").toString()', "2024-03-10"),
        ('date("2024-03-10 08:00").toString()', "2024-03-10 08:00:00"),
        ("now().relative()", "a few seconds ago"),
        ('(now() + "3 days").relative()', "in 3 days"),
        ('(now() - "400d").relative()', "a year ago"),
        ('(now() - "50m").relative()', "an hour ago"),
        ('date("2024-03-10").isType("date")', True),
        ('number(duration("1m"))', 60000),
    ],
)
def test_dates_and_durations(text: str, expected: Any) -> None:
    assert value(text) == expected


def test_tags_match_nested_and_case_insensitively() -> None:
    assert value('file.hasTag("SCIFI")') is True
    assert value('file.hasTag("#scifi/classic")') is True
    assert value('file.hasTag("sci")') is False
    assert value('file.hasTag("scifi/classic/deep")') is False
    assert value('file.hasTag("reading")') is True
    assert value('file.tags.contains("Book")') is True
    assert value('note.tags.contains("scifi")') is True  # the tags property holds tags too
    assert value('tags.containsAny("x", "SciFi")') is True
    assert value('tags.contains("scifi/classic")') is True
    assert value('tags.join(" ")') == "book scifi/classic"
    assert value('tags.contains("book")', row="Books/Textbook.md") is True  # a string of tags is split
    assert value("file.tags.length") == 3


def test_links_files_and_this() -> None:
    assert value("author") == {"link": "Frank Herbert", "path": "Frank Herbert.md", "display": None}
    assert value('author == link("Frank Herbert")') is True
    assert value('author == link("Frank Herbert.md")') is True
    assert value('link("Nowhere") == link("Nowhere")') is True
    assert value('link("Nowhere") == link("nowhere")') is False
    assert value('author == "Frank Herbert"') is True
    assert value("author.asFile().born.year") == 1920  # a file's unknown field is its property
    assert value("author.asFile().note.born.year") == 1920
    assert value('author.contains("Herbert")') is True  # a link takes string methods on its target
    assert value('categories.contains(link("Books"))') is True
    assert value("list(type).contains(this)", this_path="Books.md") is True
    assert value("list(type).contains(this)", this_path=None) is False
    assert value("this") is not None and value("this", this_path=None) is None
    assert value("this.topics", this_path="Frank Herbert.md") == [
        {"link": "Books", "path": "Books.md", "display": None}
    ]
    assert value("file.hasLink(this)", this_path="Books/Textbook.md") is True
    assert value('file.hasLink("Books/Textbook.md")') is True
    assert value('file.hasLink(link("Textbook"))') is True
    assert value("file.hasLink(this)", this_path="Books.md") is True
    assert value("file.hasLink(missing)") is False
    assert value('file.hasLink("cover.jpg")') is True  # an embed is a link of the file
    assert value("file.links.contains(this.file)", this_path="Frank Herbert.md") is True
    assert value("this.file.hasLink(file)", this_path="Frank Herbert.md") is True
    assert value('file.hasProperty("PRICE")') is True and value('file.hasProperty("nope")') is False
    assert value("note.PRICE") == 12.5 and value("Price") == 12.5
    assert value('file.inFolder("Books/")') is True and value('file.inFolder("books")') is False
    assert value('file.inFolder("")') is True and value('file.inFolder("Boo")') is False
    assert value("file.folder", row="cover.jpg") == "/"
    assert value("file.ext", row="cover.jpg") == "jpg" and value("file.basename", row="cover.jpg") == "cover"
    assert value("file.properties", row="cover.jpg") == {}
    assert value('file["name"]') == "Dune.md"
    assert value("image(file.embeds[0])") == {"image": "cover.jpg"}
    assert value('file.embeds[0].containsAny("jpg", "png")') is True


@pytest.mark.parametrize(
    ("text", "construct"),
    [
        ("not(empty(note.last))", "the function not()"),
        ("upper(x)", "the function upper()"),
        ("title.upper()", "the method upper()"),
        ("[1, 2].sum()", "the method sum()"),
        ("file.status", "file.status (not a file field"),
        ("formula", "'formula' without a formula name"),
        ("/a/y.matches('a')", "the regular expression flag 'y'"),
    ],
)
def test_unsupported_is_refused_by_name_before_and_during_evaluation(text: str, construct: str) -> None:
    expr = parse_expression(text)
    with pytest.raises(Unsupported) as before:
        check_supported(expr)
    assert construct in before.value.message and "line 1, column" in before.value.message
    with pytest.raises(Unsupported) as during:
        evaluate(expr, FixtureScope())
    assert construct in during.value.message


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('"a" * 2', "'*' cannot combine a string and a number"),
        ("true + 1", "'+' cannot combine a boolean and a number"),
        ("now() + 3", "cannot combine a date and a number"),
        ("2 * duration('1h')", "cannot combine a number and a duration"),
        ('now() - "soon"', "needs a duration after a date"),
        ("(1).contains(1)", "contains() is not a method of a number"),
        ('"x".repeat(-1)', "repeat() needs a count of 0 or more"),
        ('number("twelve")', "number() cannot read this string"),
        ('"abc".length.foo', "a number has no field 'foo'"),
        ('[1][""]', "a list cannot be indexed by a string"),
        ('now() + "1000000y"', "the date is out of range"),
        ("if(1)", "if() does not take 1 argument"),
        ('"x".lower(1)', "lower() does not take 1 argument"),
    ],
)
def test_wrong_types_are_named_errors(text: str, message: str) -> None:
    with pytest.raises(EvaluationError) as caught:
        check_supported(parse_expression(text))
        run(text)
    assert message in caught.value.message


def test_an_invalid_regex_is_a_syntax_error_before_any_row() -> None:
    with pytest.raises(ExpressionSyntaxError, match="invalid regular expression"):
        check_supported(parse_expression('/(unclosed/.matches("x")'))


def test_values_text_and_truth_helpers() -> None:
    assert number_text(1e21) == "1e+21" and number_text(1.5e-7) == "1.5e-7" and number_text(-0.0) == "0"
    assert to_text([1.0, None, "x"]) == "1, , x"
    assert truthy([]) is False and truthy("0") is True
    info = FileInfo("a/.hidden")
    assert (info.name, info.ext, info.basename, info.folder) == (".hidden", "", ".hidden", "a")


def test_the_clock_is_the_scopes() -> None:
    scope = FixtureScope()
    assert plain(evaluate(parse_expression("today()"), scope)) == {"date": "2025-05-27"}
    assert dt.datetime(2025, 5, 27, 14, 30, 15) == scope.now()
