"""vault_query's bad input: unknown properties match nothing, mismatched types warn, malformed
filters and queries are INVALID_QUERY (which one, what was expected), limits and cursors are
checked, the time budget ends in PARTIAL; never INTERNAL, never note text in errors or logs."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from query.structured.kit import clock, copy_fixture, opened, paths, query, request

from vault_agent.api.invoke import invoke
from vault_agent.api.operation import AppContext
from vault_agent.api.ops import CATALOG
from vault_agent.errors import InvalidParameter, InvalidPath, InvalidQuery, VaultAgentError
from vault_agent.query.structured.run import vault_query


@pytest.fixture(scope="module")
def ctx(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AppContext]:
    settings = copy_fixture(Path(tmp_path_factory.mktemp("bad")))
    with opened(settings) as context:
        yield context


def test_an_unknown_property_matches_nothing_and_is_no_error(ctx: AppContext) -> None:
    out = query(ctx, where=[{"field": "no-such-field", "op": "=", "value": "x"}])
    assert (out.data.results, out.data.total, out.warnings) == ([], 0, [])
    assert len(paths(ctx, where=[{"field": "no-such-field", "op": "missing"}])) == 20
    assert len(paths(ctx, where=[{"field": "no-such-field", "op": "!=", "value": "x"}])) == 20


def test_a_type_mismatch_matches_nothing_and_warns_naming_the_field(ctx: AppContext) -> None:
    out = query(ctx, where=[{"field": "author", "op": ">", "value": 3}])
    assert (out.data.results, [w.code for w in out.warnings]) == ([], ["TYPE_MISMATCH"])
    assert "'author'" in out.warnings[0].message and "3 notes" in out.warnings[0].message
    out = query(ctx, where=[{"field": "file.size", "op": ">", "value": "big"}])
    assert (out.data.total, out.warnings[0].code, "'file.size'" in out.warnings[0].message) == (
        0,
        "TYPE_MISMATCH",
        True,
    )
    out = query(ctx, where=[{"field": "rating", "op": ">", "value": None}])
    assert (out.data.total, out.warnings[0].code) == (0, "TYPE_MISMATCH")


MALFORMED: list[tuple[dict[str, Any], str]] = [
    ({"where": [{"field": "status", "op": "~", "value": 1}]}, "where[0].op: expected one of = != <"),
    ({"where": [{"field": " ", "op": "="}]}, "where[0].field: expected a property name"),
    (
        {"where": [{"field": "a", "op": "=", "value": 1}, {"field": "b", "op": "in", "value": 3}]},
        "where[1].value: 'in' expects a list",
    ),
    ({"where": [{"field": "a", "op": "=", "value": {"x": 1}}]}, "where[0].value: expected a string, number"),
    (
        {"where": [{"field": "file.bogus", "op": "=", "value": 1}]},
        "the implicit field 'file.bogus' is not supported",
    ),
    ({"where": [{"field": "file.name", "op": "contains", "value": "x"}]}, "'contains' applies to properties"),
    ({"tags": ["#"]}, "tags[0]: expected a tag"),
    ({"any_tags": ["ok", ""]}, "any_tags[1]: expected a tag"),
    ({"modified_after": "last tuesday"}, "modified_after: expected an ISO date"),
    ({"created_before": "2024-13-01"}, "created_before: expected an ISO date"),
    ({"sort": "-"}, "sort[0]: expected a field name"),
    ({"select": ["ok", " "]}, "select[1]: expected a property name"),
    ({"dql": "LIST", "tags": ["x"]}, "dql is exclusive with the filters"),
    ({"dql": "LIST", "sort": "path"}, "dql is exclusive with the filters"),
    ({"dql": "GROUP BY x"}, "expected a query type"),
]


@pytest.mark.parametrize(("params", "message"), MALFORMED, ids=[m for _, m in MALFORMED])
def test_malformed_filters_are_invalid_query(ctx: AppContext, params: dict[str, Any], message: str) -> None:
    with pytest.raises(InvalidQuery) as err:
        query(ctx, **params)
    assert (err.value.code, err.value.http_status, err.value.exit_code) == ("INVALID_QUERY", 400, 2)
    assert message in err.value.message


def test_bounds_are_checked_like_every_tool(ctx: AppContext) -> None:
    op = CATALOG.named("query")
    for bad in (0, 501, "x"):
        with pytest.raises(InvalidParameter) as err:
            invoke(op, ctx, {"limit": bad})
        with pytest.raises(InvalidParameter) as grep_err:
            invoke(CATALOG.named("grep"), ctx, {"query": "x", "limit": bad})
        assert err.value.message == grep_err.value.message
    with pytest.raises(InvalidParameter, match="at most 50 items"):
        query(ctx, tags=["a"] * 51)
    with pytest.raises(InvalidParameter, match="at most 4096 characters"):
        query(ctx, folder="a" * 5000)
    with pytest.raises(InvalidParameter, match="unknown parameter 'tag'"):
        invoke(op, ctx, {"tag": "x"})
    with pytest.raises(InvalidPath):
        query(ctx, folder="../outside")


def test_cursors_are_checked(ctx: AppContext) -> None:
    first = query(ctx, limit=2, tags=["games"])
    assert first.data.next_cursor is not None
    for bad in ("not-a-cursor", "x" * 300, "LTE6YWJjOjE"):  # the last: a negative offset
        with pytest.raises(InvalidParameter, match="is not a cursor of vault_query"):
            query(ctx, limit=2, tags=["games"], cursor=bad)
    with pytest.raises(InvalidParameter, match="belongs to another query"):
        query(ctx, limit=2, tags=["book"], cursor=first.data.next_cursor)
    again = query(ctx, limit=5, tags=["games"], cursor=first.data.next_cursor)  # a new page size is fine
    assert [r.path for r in again.data.results] == ["Games/finished/Stardew Valley.md"]


def test_the_time_budget_ends_in_partial_not_an_error(ctx: AppContext) -> None:
    out = vault_query(
        ctx.reader, request(sort="-rating"), cache=ctx.snapshot_cache, clock=clock, time_budget_s=1e-9
    )
    assert (out.data.results, out.data.total, out.data.next_cursor) == ([], None, None)
    assert [w.code for w in out.warnings] == ["PARTIAL"]


def test_errors_and_logs_never_carry_note_text(ctx: AppContext, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    secret = "Frank Herbert"  # a property value of Books/Dune.md
    for params in (
        {"where": [{"field": "author", "op": "~", "value": secret}]},
        {"dql": f'LIST WHERE author = "{secret}'},
        {"where": [{"field": "author", "op": "=", "value": secret}], "select": ["author"]},
    ):
        try:
            query(ctx, **params)
        except VaultAgentError as err:
            assert "Herbert" not in err.message
    assert "Herbert" not in caplog.text


def test_odd_but_valid_input_is_answered(ctx: AppContext) -> None:
    assert paths(ctx, folder="/") == paths(ctx)  # the vault root
    assert paths(ctx, folder="Games/") == paths(ctx, folder="Games")
    assert paths(ctx, tags=["#GAMES/moba"]) == ["Games/League of Legends.md"]
    assert paths(ctx, sort="+rating")[:1] == ["Books/Cooking at Home.md"]
    rated_7_or_unrated = paths(ctx, where=[{"field": "rating", "op": "in", "value": [7, "7", None]}])
    assert len(rated_7_or_unrated) == 15 and "Games/League of Legends.md" in rated_7_or_unrated
    assert paths(ctx, links_to="Nothing Links Here") == []
    assert paths(ctx, links_to="Missing Note") == ["Projects/Alpha.md"]  # unresolved: matched by its text
    assert paths(ctx, linked_from="Missing Note") == []
