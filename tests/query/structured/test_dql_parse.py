"""The DQL parser and compiler: each supported construct, each refused one, errors with a
position and what was expected, and a parser that never crashes (only INVALID_QUERY)."""

from __future__ import annotations

import datetime as dt

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vault_agent.errors import InvalidQuery
from vault_agent.query.structured import dql_ast as A
from vault_agent.query.structured.dql_compile import compile_dql
from vault_agent.query.structured.dql_parse import parse_dql
from vault_agent.query.structured.plan import (
    AndP,
    FileCmp,
    FileContains,
    FileP,
    FolderP,
    LinkP,
    ListHas,
    ListLength,
    NotP,
    OrP,
    PropCmp,
    PropContains,
    PropExists,
    PropLength,
    PropTruthy,
    SortKey,
    TagP,
)
from vault_agent.query.structured.values import Duration, Lit

NOW = dt.datetime(2024, 5, 15, 12, 0, tzinfo=dt.UTC)
DAY = 86_400_000_000
TODAY = 19_858 * DAY  # 2024-05-15 at UTC midnight, in µs


def clock() -> dt.datetime:
    return NOW


def where(text: str) -> object:
    return compile_dql(text, clock).where


SUPPORTED: list[tuple[str, object]] = [
    ("LIST FROM #a/b", TagP("a/b")),
    ('LIST FROM "x/y"', OrP((FolderP("x/y"), FileP("x/y.md")))),
    ('LIST FROM "x/y.md"', FileP("x/y.md")),
    ("LIST FROM [[Note]]", LinkP("to", "Note")),
    ("LIST FROM [[Note|shown]]", LinkP("to", "Note")),
    ("LIST FROM outgoing([[Note#Heading]])", LinkP("from", "Note")),
    ("LIST FROM #a and -#b", AndP((TagP("a"), NotP(TagP("b"))))),
    ("LIST FROM #a or (#b and !#c)", OrP((TagP("a"), AndP((TagP("b"), NotP(TagP("c"))))))),
    ("LIST WHERE x = 1", PropCmp("x", "=", Lit("number", 1.0))),
    ("LIST WHERE X != true", NotP(PropCmp("x", "=", Lit("boolean", True)))),
    ('LIST WHERE "a" < Due-Date', PropCmp("due-date", ">", Lit("string", "a"))),
    ("LIST WHERE due <= date(2024-05-01)", PropCmp("due", "<=", Lit("date", 19_844 * DAY))),
    ("LIST WHERE due >= date(today) - dur(7 days)", PropCmp("due", ">=", Lit("date", TODAY - 7 * DAY))),
    ("LIST WHERE due > date(today) - dur(1 month)", PropCmp("due", ">", Lit("date", 19_828 * DAY))),
    (
        "LIST WHERE due < date(2024-05-01T10:30)",
        PropCmp("due", "<", Lit("date", 19_844 * DAY + 37_800_000_000)),
    ),
    ("LIST WHERE x = null", NotP(PropExists("x"))),
    ("LIST WHERE x = [[Home]]", PropCmp("x", "=", Lit("link", "Home"))),
    ("LIST WHERE x > 1 + 2 * 3", PropCmp("x", ">", Lit("number", 7.0))),
    ("LIST WHERE x > -1", PropCmp("x", ">", Lit("number", -1.0))),
    ("LIST WHERE a.b = 1", PropCmp("a.b", "=", Lit("number", 1.0))),
    ('LIST WHERE a["b c"] = 1', PropCmp("a.b-c", "=", Lit("number", 1.0))),
    ('LIST WHERE row["where"] = 1', PropCmp("where", "=", Lit("number", 1.0))),
    ("LIST WHERE x", PropTruthy("x")),
    ("LIST WHERE !x", NotP(PropTruthy("x"))),
    ("LIST WHERE x and (y or !z)", AndP((PropTruthy("x"), OrP((PropTruthy("y"), NotP(PropTruthy("z"))))))),
    ("LIST WHERE x & y | z", OrP((AndP((PropTruthy("x"), PropTruthy("y"))), PropTruthy("z")))),
    ('LIST WHERE contains(x, "a")', PropContains("x", Lit("string", "a"))),
    ('LIST WHERE icontains(x, "a")', PropContains("x", Lit("string", "a"), True)),
    ("LIST WHERE contains(x, 3)", PropContains("x", Lit("number", 3.0))),
    ("LIST WHERE length(x) > 2", PropLength("x", ">", 2.0)),
    ("LIST WHERE 2 < length(x)", PropLength("x", ">", 2.0)),
    ('LIST WHERE contains(file.tags, "#a")', TagP("a")),
    ('LIST WHERE contains(file.etags, "a/b")', TagP("a/b", nested=False)),
    ('LIST WHERE contains(file.aliases, "Home")', ListHas("aliases", "Home")),
    ("LIST WHERE contains(file.outlinks, [[N]])", LinkP("to", "N")),
    ("LIST WHERE contains(file.inlinks, [[N]])", LinkP("from", "N")),
    ("LIST WHERE length(file.outlinks) = 0", ListLength("outlinks", "=", 0.0)),
    ("LIST WHERE file.tags", ListLength("tags", ">", 0.0)),
    ('LIST WHERE contains(file.name, "WIP")', FileContains("name", "WIP")),
    ('LIST WHERE file.folder = "a"', FileCmp("folder", "=", Lit("string", "a"))),
    ("LIST WHERE file.size >= 10", FileCmp("size", ">=", Lit("number", 10.0))),
    ("LIST WHERE file.mtime > date(yesterday)", FileCmp("mtime", ">", Lit("date", TODAY - DAY))),
    ('LIST WHERE file.cday = "2024-05-15"', FileCmp("cday", "=", Lit("date", TODAY, "2024-05-15"))),
    ("LIST WHERE date(due) > date(sow)", PropCmp("due", ">", Lit("date", TODAY - 2 * DAY))),
]


@pytest.mark.parametrize(("text", "expected"), SUPPORTED, ids=[s[0] for s in SUPPORTED])
def test_supported_construct_compiles(text: str, expected: object) -> None:
    assert where(text) == expected


def test_query_types_columns_sort_and_limit() -> None:
    q = parse_dql(
        'table without id a AS "A", b + 1, file.name\nfrom #t\nwhere a\nsort b desc, file.mtime\nlimit 5'
    )
    assert (q.kind, q.without_id, [c.header for c in q.columns], q.limit) == (
        "table",
        True,
        ["A", "b + 1", "file.name"],
        5,
    )
    plan = compile_dql("TABLE a SORT b DESC, file.mtime ASC, file.cday LIMIT 5", clock)
    assert (plan.sort, plan.limit) == (
        (SortKey("b", True), SortKey("mtime", False, file=True), SortKey("ctime", False, file=True)),
        5,
    )
    assert [c.header for c in compile_dql("LIST file.folder", clock).columns] == ["file.folder"]
    assert parse_dql("list without id").columns == ()


def test_constants_fold() -> None:
    c = compile_dql("LIST WHERE x > date(today) + dur(1 w, 2 d) - dur(1 day)", clock).where
    assert c == PropCmp("x", ">", Lit("date", TODAY + 7 * DAY + DAY))
    assert (
        where("LIST WHERE 1 < 2") == where("LIST")
        and where('LIST WHERE "a" = "b"').__class__.__name__ == "FalseP"
    )
    assert where('LIST WHERE x = "a" + "b"') == PropCmp("x", "=", Lit("string", "ab"))
    plan = compile_dql("LIST WHERE d > date(today) - date(2024-05-14)", clock)
    assert plan.warnings and plan.warnings[0][0] == "TYPE_MISMATCH"  # a date compared with a duration
    assert isinstance(compile_dql("TABLE dur(1 month)", clock).columns[0].expr, A.DurLit)
    assert Duration(1, DAY).iso() == "P1M1D"


REFUSED: list[tuple[str, str]] = [
    ("CALENDAR file.ctime", "CALENDAR"),
    ("LIST GROUP BY type", "GROUP BY"),
    ("LIST FLATTEN authors", "FLATTEN"),
    ("TABLE map(x, (y) => y.a)", "lambda"),
    ("TABLE (a, b) => a", "lambda"),
    ("TABLE { a: 1 }", "object literal"),
    ('LIST WHERE this.file.name = "x"', "'this'"),
    ("LIST FROM [[]]", "[[]]"),
    ("LIST WHERE dv.pages()", "JavaScript"),
    ('LIST FROM csv("x.csv")', "csv"),
    ("LIST WHERE a > b", "comparing two fields"),
    ('LIST WHERE regexmatch("a", x)', "regexmatch()"),
    ("TABLE regexmatch(x, y)", "regexmatch()"),
    ("LIST WHERE file.day = date(today)", "file.day"),
    ("LIST WHERE file.frontmatter", "file.frontmatter"),
    ("LIST SORT a SORT b", "second SORT"),
    ("LIST LIMIT 5 SORT a", "SORT after LIMIT"),
    ("LIST SORT a WHERE b", "WHERE after SORT"),
    ("LIST LIMIT 1 LIMIT 2", "second LIMIT"),
    ("LIST FROM #a WHERE x FROM #b", "FROM"),
    ("LIST a, b", "LIST shows one expression"),
    ("LIST SORT a + 1", "SORT by an expression"),
    ("LIST SORT file.tags", "SORT by file.tags"),
    ("LIST WHERE file.tags = 3", "file.tags is a list"),
    ("LIST WHERE length(file.inlinks) > 1", "length(file.inlinks)"),
    ("LIST WHERE file.inlinks", "file.inlinks"),
    ('LIST WHERE contains(file.outlinks, "x")', "without a link"),
    ('LIST WHERE lower(x) = "a"', "lower()"),
]


@pytest.mark.parametrize(("text", "named"), REFUSED, ids=[r[0] for r in REFUSED])
def test_unsupported_construct_is_refused_by_name(text: str, named: str) -> None:
    with pytest.raises(InvalidQuery) as err:
        compile_dql(text, clock)
    assert err.value.code == "INVALID_QUERY"
    assert named in err.value.message


SYNTAX: list[tuple[str, str]] = [
    ("", "empty"),
    ("SELECT * FROM x", "expected a query type (LIST, TABLE or TASK) at line 1, column 1, found a name"),
    ("LIST WHERE x >", "expected an expression at line 1, column 15, found the end of the query"),
    ("LIST\nWHERE (x", "expected ')' at line 2, column 9, found the end of the query"),
    ('LIST WHERE x = "open', "unclosed string at line 1, column 16"),
    ("LIST FROM [[a", "unclosed link at line 1, column 11"),
    ("LIST FROM", "expected a source"),
    ("LIST LIMIT x", "expected a whole number after LIMIT at line 1, column 12"),
    ("LIST LIMIT 1.5", "expected a whole number"),
    ("LIST WHERE a = 1 = 2", "expected 'AND' or 'OR' between two comparisons"),
    ("LIST WITHOUT x", "expected 'ID' after 'WITHOUT'"),
    ("LIST WHERE x ~ 1", "unexpected character at line 1, column 14"),
    ("LIST WHERE due > dur(forever)", "expected a duration like dur(7 days) at line 1, column 18"),
    ("TABLE a AS", "expected a column name after AS"),
    ("LIST WHERE x SORT", "expected an expression"),
    ("LIST WHERE " + "(" * 100 + "x" + ")" * 100, "nested deeper than 64 levels"),
    ("LIST WHERE " + "x" * 5000, "at most 4000 characters"),
    ("LIST #tag", "expected an expression"),
    ("LIST BLAH x", "expected a data command (WHERE, SORT or LIMIT)"),
]


@pytest.mark.parametrize(("text", "message"), SYNTAX, ids=[s[0][:40] for s in SYNTAX])
def test_syntax_errors_give_position_and_expectation(text: str, message: str) -> None:
    with pytest.raises(InvalidQuery) as err:
        compile_dql(text, clock)
    assert message in err.value.message


def test_errors_do_not_quote_the_query() -> None:
    secret = "Tax return of Jane Roe"
    for text in (f'LIST WHERE x = "{secret}', f"LIST WHERE {secret.replace(' ', '_')} >", f"SELECT {secret}"):
        with pytest.raises(InvalidQuery) as err:
            compile_dql(text, clock)
        assert "Jane" not in err.value.message and "Roe" not in err.value.message


_atoms = st.sampled_from(
    ["LIST", "TABLE", "WITHOUT", "ID", "FROM", "WHERE", "SORT", "LIMIT", "GROUP", "BY", "FLATTEN", "AS", "and",
     "or", "-", "!", "#tag", '"folder"', "[[note]]", "outgoing(", "(", ")", "[", "]", "{", "}", ",", ".", "=", "!=",
     "<", ">=", "+", "*", "/", "%", "=>", "date(today)", "dur(1 day)", "date(", "dur(", "contains(", "length(",
     "file.name", "file.tags", "x", "y-z", "1", "2.5", "true", "null", "this", "'", '"', "\\", "\n", "ASC", "DESC"]
)  # fmt: skip


@settings(max_examples=600, deadline=None)
@given(st.one_of(st.lists(_atoms, max_size=25).map(" ".join), st.text(max_size=80)))
def test_the_parser_never_crashes(text: str) -> None:
    """Any text compiles or is refused with INVALID_QUERY; nothing else escapes."""
    try:
        compile_dql(text, clock)
    except InvalidQuery as err:
        assert err.message.startswith("dql: ")
