"""Errors carry the parameters they name (issue 34 item 5): each surface spells them its own
way when the message is rendered, and no message is searched for a name to replace it.

The whole table of bad parameters is `test_param_table.py`; here: the structure itself, and
core checks (not the schema's) on every surface, through `invoke` as each transport calls it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any

import pytest

from api.serverkit import build_fixture_vault, make_context
from vault_agent.api.invoke import invoke
from vault_agent.api.operation import AppContext
from vault_agent.api.ops import CATALOG
from vault_agent.api.surface_names import spelling
from vault_agent.error_words import Mention
from vault_agent.errors import InvalidParameter, TooLarge, VaultAgentError, out_of_range
from vault_agent.server.context import close_context

NOTE = "projects/alpha/plan.md"  # 12 lines


# ----------------------------------------------------------------------------- the structure
def test_an_error_about_a_parameter_knows_which() -> None:
    err = out_of_range("range.start_line", 1, None)
    assert err.parameter == "range.start_line"
    assert err.mentions == (Mention("range.start_line", lead=True),)
    assert err.message == "parameter 'range.start_line' must be an integer of at least 1"  # MCP's words
    assert InvalidParameter("no parameter here").parameter is None


def test_a_template_names_several_and_its_values_stay_text() -> None:
    err = TooLarge.naming("{old_text:lead} is {size}; use {insert_after_line}", size="{not a field}")
    assert err.message == "parameter 'old_text' is {not a field}; use 'insert_after_line'"
    assert [m.name for m in err.mentions] == ["old_text", "insert_after_line"]
    assert err.parameter == "old_text"
    with pytest.raises(ValueError, match="no format but 'lead'"):
        InvalidParameter.naming("{limit:>9}")


def test_spelling_keeps_the_class_and_the_structure() -> None:
    err = InvalidParameter.about("limit", "must be an integer from 1 to 50")
    spelled = err.spelled(lambda m: f"<{m.name}>")
    assert type(spelled) is InvalidParameter and spelled is not err
    assert (spelled.message, str(spelled), spelled.parameter) == (
        "<limit> must be an integer from 1 to 50",
    ) * 2 + ("limit",)
    assert err.message == "parameter 'limit' must be an integer from 1 to 50"  # the original is unchanged
    plain = InvalidParameter("nothing to spell")
    assert plain.spelled(lambda m: "x") is plain


@pytest.mark.parametrize(
    ("surface", "expected"),
    [
        ("mcp", "parameter 'insert_after_line' must be an integer from 0 to 3 ('content' has 3 lines)"),
        ("http", "parameter 'insertAfterLine' must be an integer from 0 to 3 ('content' has 3 lines)"),
        ("cli", "option --insert-after-line must be an integer from 0 to 3 ('content' has 3 lines)"),
    ],
)
def test_words_that_look_like_a_parameter_are_not_one(surface: Any, expected: str) -> None:
    """A file named like a parameter stays a file name (a regex over the message renamed it)."""
    edit = CATALOG.named("edit")
    err = InvalidParameter.about(
        "insert_after_line", "must be an integer from 0 to 3 ('content' has 3 lines)"
    )
    assert err.spelled(spelling(edit, surface)).message == expected


def test_an_operation_that_calls_a_cores_parameter_otherwise_says_so() -> None:
    """search_files' `pattern` is the grep core's `query` (`Operation.core_params`)."""
    err = InvalidParameter.about("query", "must not contain a NUL character")
    spelled = err.spelled(spelling(CATALOG.named("search_files"), "mcp"))
    assert spelled.message == "parameter 'pattern' must not contain a NUL character"


def test_a_name_that_is_no_parameter_of_the_operation_stays_as_the_core_wrote_it() -> None:
    err = InvalidParameter.about("glob", "has an unclosed '{'")  # vault_find's is scope.glob
    for surface in ("mcp", "http", "cli"):
        assert err.spelled(spelling(CATALOG.named("find"), surface)).message == err.message  # type: ignore[arg-type]


# ----------------------------------------------------------------------------- core checks, every surface
@pytest.fixture(scope="module")
def ctx(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AppContext]:
    settings = build_fixture_vault(tmp_path_factory.mktemp("errors"))
    context = make_context(dataclasses.replace(settings, writes_enabled=True))
    yield context
    close_context(context)


def _message(ctx: AppContext, name: str, args: dict[str, Any], surface: Any) -> tuple[str, str | None]:
    with pytest.raises(VaultAgentError) as caught:
        invoke(CATALOG.named(name), ctx, args, surface)
    return caught.value.message, caught.value.parameter


def _camel(node: Any) -> Any:
    if isinstance(node, list):
        return [_camel(item) for item in node]
    if not isinstance(node, dict):
        return node
    out = {}
    for key, value in node.items():
        head, *rest = key.split("_")
        out[head + "".join(part.title() for part in rest)] = _camel(value)
    return out


CORE_CASES = [
    (
        "read",
        {"path": NOTE},
        "give 'range' (the lines to read), 'section_id' or 'heading' (one section), or 'full' to read to the end",
        "give 'range' (the lines to read), 'sectionId' or 'heading' (one section), or 'full' to read to the end",
        "give --start/--end (the lines to read), --section-id or --heading (one section), or --full to read "
        "to the end",
    ),
    (
        "read",
        {"path": NOTE, "range": {"start_line": 5, "end_line": 2}},
        "parameter 'range.end_line' must not be before 'range.start_line'",
        "parameter 'range.endLine' must not be before 'range.startLine'",
        "option --end must not be before --start",
    ),
    (
        "edit",
        {"path": NOTE, "old_text": "", "new_text": "y", "dry_run": True},
        "parameter 'old_text' must not be empty; use 'insert_after_line' to add text",
        "parameter 'oldText' must not be empty; use 'insertAfterLine' to add text",
        "option --old-text must not be empty; use --insert-after-line to add text",
    ),
    (
        "edit",
        {"path": NOTE, "delete_lines": {"start_line": 5, "end_line": 99}, "dry_run": True},
        "parameter 'delete_lines' must be a range of lines from 1 to 12, start first ('projects/alpha/plan.md' "
        "has 12 lines)",
        "parameter 'deleteLines' must be a range of lines from 1 to 12, start first ('projects/alpha/plan.md' "
        "has 12 lines)",
        "option --delete-lines must be a range of lines from 1 to 12, start first ('projects/alpha/plan.md' "
        "has 12 lines)",
    ),
    (
        "mv",
        {"source": "projects", "destination": "elsewhere", "expected_sha256": "0" * 64, "dry_run": True},
        "'expected_sha256' applies to files only, not to folders",
        "'expectedSha256' applies to files only, not to folders",
        "--expected-sha256 applies to files only, not to folders",
    ),
    (
        "ls",
        {"glob": "a{b"},
        "parameter 'glob' has an unclosed '{'",
        "parameter 'glob' has an unclosed '{'",
        "option --glob has an unclosed '{'",
    ),
    (
        "coverage",
        {"path": NOTE, "cited_ranges": [{"start_line": 0, "end_line": 0}]},
        "line numbers in 'cited_ranges' must be 1 or more",
        "line numbers in 'citedRanges' must be 1 or more",
        "line numbers in --range must be 1 or more",
    ),
]


@pytest.mark.parametrize(("name", "args", "mcp", "http", "cli"), CORE_CASES)
def test_a_core_check_names_its_parameter_per_surface(
    ctx: AppContext, name: str, args: dict[str, Any], mcp: str, http: str, cli: str
) -> None:
    first = None
    for surface, expected in (("mcp", mcp), ("http", http), ("cli", cli)):
        sent = _camel(args) if surface == "http" else args  # as docs/http-api.md spells them
        message, parameter = _message(ctx, name, sent, surface)
        assert message == expected, surface
        first = first or parameter
        assert parameter == first  # the core's name whatever the words
