"""Views that must fail closed: each answers a named error (or a named column diagnostic)
within its budget, never rows the saved view would not show, never a read outside the vault.

Budgets are counted (steps, nodes, items), not timed; the regex bound is the regex
package's own timeout inside the matcher.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from query.bases.runkit import Runner, copy_fixture

OUTSIDE = "outside-secret.md"  # a note beside the vault, never to be read
HOSTILE: dict[str, str] = {
    "Hostile/Cycle.base": (
        "formulas:\n  a: formula.b + 1\n  b: formula.a * 2\nviews:\n"
        "  - name: Filter\n    filters: 'formula.a > 1'\n"
        "  - name: Column\n    order: [file.name, formula.a]\n"
    ),
    "Hostile/Regex.base": (
        "views:\n  - name: Slow\n    filters: '/^(a|a)*$/.matches(\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!\")'\n"
    ),
    "Hostile/Huge.base": (
        "formulas:\n  big: '\"x\".repeat(100000000)'\n  wide: '[1].map([value, value, value, value])'\n"
        "views:\n  - name: Big\n    filters: 'formula.big.length > 1'\n"
    ),
    "Hostile/Loop.base": (
        "views:\n  - name: Steps\n    filters: "
        "'[1,2,3,4,5,6,7,8,9,10].map([1,2,3,4,5,6,7,8,9,10].map([1,2,3,4,5,6,7,8,9,10].map("
        "[1,2,3,4,5,6,7,8,9,10].map([1,2,3,4,5,6,7,8,9,10].map(value))))).length > 0'\n"
    ),
    "Hostile/Deep.base": "views:\n  - name: Deep\n    filters: '" + "(" * 3000 + "1" + ")" * 3000 + "'\n",
    "Hostile/Long.base": "views:\n  - name: Long\n    filters: '\"" + "a" * 20_000 + '" != ""\'\n',
    "Hostile/Unsupported.base": (
        "formulas:\n  old: 'not(empty(price))'\n  fine: price * 2\nviews:\n"
        "  - name: In a filter\n    filters: formula.old\n"
        '  - name: Only a column\n    filters: file.hasTag("book")\n    order: [file.name, formula.old, formula.fine]\n'
        "  - name: Two columns\n    order: [formula.old, formula.old]\n"
        "  - name: Sorted by it\n    order: [file.name]\n    sort:\n      - property: formula.old\n"
        "  - name: Unknown formula\n    filters: 'formula.nope > 1'\n"
        "  - name: Unknown summary\n    summaries:\n      price: Mode\n"
    ),
    "Hostile/Outside.base": (
        "formulas:\n  f: 'file(\"../" + OUTSIDE + "\")'\n  l: 'link(\"../../" + OUTSIDE + "\").asFile()'\n"
        'views:\n  - name: Outside\n    filters: \'file.inFolder("../..") || file.hasLink("../'
        + OUTSIDE
        + "\")'\n"
        "    order: [file.name, formula.f, formula.l]\n"
    ),
    "Hostile/Many.base": "views:\n" + "".join(f"  - name: V{i}\n" for i in range(150)),
    "Hostile/Errors.base": (
        'views:\n  - name: Row errors\n    filters: \'(price * "x") > 1 || file.hasTag("book")\'\n'
        "    order: [file.name, status]\n"
    ),
}


@pytest.fixture(scope="module")
def runner(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Runner]:
    root = tmp_path_factory.mktemp("hostile")
    (root / OUTSIDE).write_text("---\nsecret: 1\n---\nnot a vault note [[Dune]]\n", encoding="utf-8")
    settings = copy_fixture(root / "vault", HOSTILE)
    run = Runner(settings)
    yield run
    run.close()


def _error(answer: dict[str, Any]) -> str:
    assert "error" in answer, answer
    assert answer["error"]["code"] == "INVALID_QUERY", answer
    return str(answer["error"]["message"])


def test_formula_cycles_are_named(runner: Runner) -> None:
    message = _error(runner(path="Hostile/Cycle.base", view="Filter"))
    assert "circle" in message and "formula.a" in message and "formula.b" in message
    assert "Hostile/Cycle.base formulas." in message and "line" in message
    column = runner(path="Hostile/Cycle.base", view="Column")
    assert [w["code"] for w in column["warnings"]] == ["FORMULA_ERROR"]
    assert all(row["values"]["formula.a"] is None for row in column["data"]["rows"])


@pytest.mark.parametrize(
    ("path", "view", "words"),
    [
        ("Hostile/Regex.base", "Slow", "regular expression"),
        ("Hostile/Huge.base", "Big", "1000000 characters"),
        ("Hostile/Loop.base", "Steps", "200000 steps"),
        ("Hostile/Deep.base", "Deep", "nest"),
        ("Hostile/Long.base", "Long", "16384"),
    ],
)
def test_runaway_expressions_end_with_a_named_error(runner: Runner, path: str, view: str, words: str) -> None:
    message = _error(runner(path=path, view=view))
    assert words in message and path in message, message


def test_unsupported_constructs_fail_closed(runner: Runner) -> None:
    base = "Hostile/Unsupported.base"
    message = _error(runner(path=base, view="In a filter"))
    assert "the function not() is not supported" in message and "formulas.old, line 2" in message
    only = runner(path=base, view="Only a column")
    assert [w["code"] for w in only["warnings"]] == ["UNSUPPORTED"]
    assert "column formula.old" in only["warnings"][0]["message"]
    rows = only["data"]["rows"]
    assert rows and all(r["values"]["formula.old"] is None for r in rows)
    assert {r["path"]: r["values"]["formula.fine"] for r in rows}["Books/Dune.md"] == 25
    for view in ("Two columns", "Sorted by it"):
        assert "not() is not supported" in _error(runner(path=base, view=view))
    assert "formula.nope (no formula of that name" in _error(runner(path=base, view="Unknown formula"))
    assert "the summary 'Mode'" in _error(runner(path=base, view="Unknown summary"))


def test_nothing_outside_the_vault_is_read(runner: Runner) -> None:
    answer = runner(path="Hostile/Outside.base", view="Outside")
    assert "error" not in answer
    # inFolder("../..") holds every file (the root, as a path that leaves the vault is
    # cut to ''), file()/link() of a path outside resolve to nothing
    assert all(
        row["values"]["formula.f"] is None and row["values"]["formula.l"] is None
        for row in answer["data"]["rows"]
    )
    text = repr(answer)
    assert "secret" not in text and OUTSIDE not in text.replace("Hostile/Outside.base", "")
    for raw in ("../" + OUTSIDE, "../../etc/passwd", "/etc/passwd.base"):
        error = runner(path=raw)["error"]
        assert error["code"] in ("INVALID_PATH", "NOT_FOUND"), error
    assert runner(path="Reading.base", view="0", this="../" + OUTSIDE)["error"]["code"] in (
        "INVALID_PATH",
        "NOT_FOUND",
    )


def test_a_value_error_of_one_row_is_that_rows(runner: Runner) -> None:
    """`price * "x"` is an error where price is a number: that row's `||` never reaches
    hasTag, so the row is not shown (fail closed); rows without a price give null * "x" =
    null, and reach hasTag."""
    answer = runner(path="Hostile/Errors.base", view="Row errors")
    paths = [row["path"] for row in answer["data"]["rows"]]
    assert paths == []  # every book has a price; the other rows are no books
    [warning] = answer["warnings"]
    assert warning["code"] == "ROW_ERRORS" and warning["message"].startswith("6 value(s)")
    assert "cannot combine a number and a string" in warning["message"]


def test_yaml_that_is_not_a_base_is_named_in_listings(tmp_path: Path) -> None:
    settings = copy_fixture(
        tmp_path / "vault", {"Bad.base": "views: [\n", "Map only.base": "views:\n  - type: map\n"}
    )
    run = Runner(settings)
    try:
        listed = {b["path"]: b for b in run()["data"]["bases"]}
        assert "not valid YAML" in listed["Bad.base"]["error"] and "Bad.base" in listed["Bad.base"]["error"]
        assert listed["Map only.base"]["views"][0]["runs"] is False
        assert "not valid YAML" in _error(run(path="Bad.base", view="0"))
    finally:
        run.close()


def test_a_base_with_many_views_lists_a_bounded_number(runner: Runner) -> None:
    base = runner(path="Hostile/Many.base")["data"]["base"]
    assert len(base["views"]) == 100 and base["view_count"] == 150
    assert runner(path="Hostile/Many.base", view="V149")["data"]["view"]["index"] == 149
