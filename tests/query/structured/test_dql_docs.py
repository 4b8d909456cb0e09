"""Queries from Dataview's documentation, adapted to fixtures/query, with hand-checked answers.

Each case names the documentation page it comes from (docs/docs/… of blacksmithgu/
obsidian-dataview). The fixture's notes, their properties, tags and links are listed in
fixtures/query; the clock is 2024-05-15T12:00Z and file times are set by kit.py.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from query.structured.kit import copy_fixture, opened, query

from vault_agent.api.operation import AppContext

LOL = "Games/League of Legends.md"
POE = "Games/Pillars of Eternity 2.md"
SDV = "Games/finished/Stardew Valley.md"
DUNE, FOUND, COOK = "Books/Dune.md", "Books/Foundation.md", "Books/Cooking at Home.md"
CAKE, PANCAKES = "Recipes/Classic Cheesecake.md", "Recipes/Pancakes.md"
DASH = "30 School/School Dashboard Current To Dos.md"
HW1, HW2, HW3 = (
    "30 School/Homework 1.md",
    "30 School/32 Homeworks/Homework 2.md",
    "30 School/32 Homeworks/Homework 3.md",
)
ALPHA, BETA, GAMMA = "Projects/Alpha.md", "Projects/Beta.md", "Projects/Gamma.md"
D14, D15 = "Daily/2024-05-14.md", "Daily/2024-05-15.md"
MRL, README, WIP = "People/Mr. L.md", "README.md", "Scratch WIP.md"
ALL = sorted([LOL, POE, SDV, DUNE, FOUND, COOK, CAKE, PANCAKES, DASH, HW1, HW2, HW3, ALPHA, BETA, GAMMA, D14, D15,
              MRL, README, WIP])  # fmt: skip

# (query, expected paths (in answer order when the query sorts; else in path order, which
# the test applies), documentation page)
CASES: list[tuple[str, list[str], str]] = [
    ("LIST", ALL, "queries/structure"),
    ('LIST FROM "Books"', [COOK, DUNE, FOUND], "queries/structure"),
    ("LIST FROM #games", [LOL, POE, SDV], "reference/sources"),
    ("LIST FROM #games/moba OR #games/crpg", [LOL, POE], "queries/query-types"),
    ("LIST\nFROM #status/open OR #status/wip", [D14, D15], "queries/structure"),
    (
        'LIST FROM (#assignment AND "30 School") OR ("30 School/32 Homeworks" AND '
        "outgoing([[School Dashboard Current To Dos]]))",
        [HW1, HW2, HW3],
        "queries/structure",
    ),
    ("LIST WHERE due AND due < date(today)", [HW1, HW2], "queries/structure"),
    ("LIST FROM #status/open SORT file.ctime DESC LIMIT 10", [D14], "queries/structure"),
    ("LIST WHERE file.mtime >= date(today) - dur(1 day)", [D14, D15, GAMMA], "queries/data-commands"),
    ("LIST FROM #projects WHERE !completed", [ALPHA, GAMMA], "queries/data-commands"),
    (
        'TABLE rating AS "Rating", started FROM #games SORT rating DESC',
        [SDV, POE, LOL],
        "queries/dql-js-inline",
    ),
    ('TABLE recipe-type AS "type", portions, length FROM #recipes', [CAKE, PANCAKES], "queries/structure"),
    ('LIST FROM #assignment WHERE status = "open"', [HW1, HW3], "queries/structure"),
    ('LIST FROM "Games" WHERE price > 10', [POE, SDV], "reference/expressions"),
    ('LIST FROM #homework WHERE status != "done"', [HW1, HW3], "reference/expressions"),
    ('LIST WHERE contains(file.name, "WIP")', [WIP], "reference/expressions"),
    ("LIST FROM [[Alpha]]", [D14, BETA], "reference/sources"),
    ("LIST FROM outgoing([[Alpha]])", [BETA], "reference/sources"),
    ("LIST FROM [[Dune]]", [FOUND, D15], "reference/literals"),
    ("TABLE started, file.folder, file.etags FROM #games", [LOL, POE, SDV], "queries/query-types"),
    ('TABLE time-played, length, rating FROM "Games" sort rating desc', [SDV, POE, LOL], "index"),
    ('LIST WHERE file.name = "Pancakes"', [PANCAKES], "reference/expressions"),
    ('LIST FROM "Books" WHERE rating >= 8 SORT rating DESC', [DUNE, FOUND], "queries/data-commands"),
    ('LIST WHERE contains(cast, "Hari")', [FOUND], "reference/functions"),
    ("LIST WHERE length(cast) > 2", [DUNE], "reference/functions"),
    ("TABLE author FROM #book", [COOK, DUNE, FOUND], "queries/query-types"),
    ("LIST FROM #book/scifi", [DUNE, FOUND], "reference/sources"),
    ('LIST FROM #book and -"Books/Dune"', [COOK, FOUND], "queries/data-commands"),
    ("LIST FROM #games AND -#games/moba", [POE, SDV], "queries/data-commands"),
    ("LIST WHERE time-read >= date(2021-06-01)", [COOK, FOUND], "reference/literals"),
    (
        'TABLE finished - started AS "Played for" FROM #games WHERE finished',
        [POE, SDV],
        "queries/query-types",
    ),
    ('LIST WHERE econtains(follow-ups, "call")', [ALPHA], "reference/functions"),
    ("LIST WHERE follow-ups", [ALPHA], "queries/structure"),
    (
        'LIST WHERE !reviewer AND contains(file.folder, "Projects")',
        [ALPHA, BETA, GAMMA],
        "reference/expressions",
    ),
    ('LIST WHERE mood = "good" OR mood = "tired"', [D14, D15], "reference/expressions"),
    ("LIST WHERE date = date(today)", [D15], "reference/literals"),
    ("LIST WHERE date >= date(today) - dur(1 day) SORT date DESC", [D15, D14], "reference/literals"),
    ('LIST FROM "Daily" WHERE file.mday = date(2024-05-14)', [D14], "annotation/metadata-pages"),
    (
        'TABLE episode_metadata.next, episode_metadata["previous"] AS prev WHERE age > 40',
        [MRL],
        "reference/expressions",
    ),
    ('LIST WHERE contains(file.tags, "#games")', [LOL, POE, SDV], "annotation/metadata-pages"),
    ('LIST WHERE contains(file.etags, "#games")', [], "annotation/metadata-pages"),
    ('LIST WHERE contains(file.aliases, "Home")', [README], "annotation/metadata-pages"),
    ("LIST WHERE contains(file.outlinks, [[Beta]])", [D15, ALPHA], "annotation/metadata-pages"),
    ("LIST WHERE contains(file.inlinks, [[Beta]])", [ALPHA], "annotation/metadata-pages"),
    ("LIST WHERE length(file.outlinks) >= 2", [HW2, D15, SDV, ALPHA, README], "annotation/metadata-pages"),
    ("LIST WHERE rating > 8 SORT file.name", [DUNE, POE, SDV], "queries/data-commands"),
    ("LIST FROM #recipes LIMIT 1", [CAKE], "queries/data-commands"),
    ('LIST WHERE icontains(author, "asimov")', [FOUND], "reference/functions"),
    ('LIST WHERE contains(author, "Herbert")', [DUNE], "reference/functions"),
    (
        'LIST WHERE file.size > 0 AND contains(file.path, "Recipes/")',
        [CAKE, PANCAKES],
        "annotation/metadata-pages",
    ),
    ("LIST WHERE contains(contacts, [[Dune]])", [MRL], "queries/structure"),
    ("LIST WHERE steamid", [POE, SDV], "queries/query-types"),
    ("LIST FROM #y1984", [WIP], "annotation/add-metadata"),
    ("LIST FROM #book AND #classic", [DUNE], "reference/sources"),
]


@pytest.fixture(scope="module")
def ctx(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AppContext]:
    settings = copy_fixture(Path(tmp_path_factory.mktemp("dqldocs")))
    with opened(settings) as context:
        yield context


def test_there_are_thirty_or_more_documented_queries() -> None:
    assert len(CASES) >= 30


@pytest.mark.parametrize(("dql", "expected", "page"), CASES, ids=[c[0][:50] for c in CASES])
def test_documented_query(ctx: AppContext, dql: str, expected: list[str], page: str) -> None:
    out = query(ctx, dql=dql)
    if " sort " not in dql.lower():
        expected = sorted(expected)  # no SORT: path order (code points)
    assert [r.path for r in out.data.results] == expected, page
    assert out.data.total == len(expected)
    assert [w.code for w in out.warnings] == []


def _table(ctx: AppContext, dql: str) -> dict[str, dict[str, Any]]:
    return {r.path: r.properties for r in query(ctx, dql=dql).data.results}


def test_table_columns_are_evaluated_per_note(ctx: AppContext) -> None:
    assert _table(ctx, 'TABLE rating AS "Rating", started FROM #games SORT rating DESC') == {
        SDV: {"Rating": 10, "started": "2021-04-04"},
        POE: {"Rating": 9, "started": "2022-04-21"},
        LOL: {"Rating": 7, "started": "2021-05-16"},
    }
    assert _table(ctx, 'TABLE finished - started AS "Played for" FROM #games WHERE finished') == {
        POE: {"Played for": "P214D"},
        SDV: {"Played for": "P143D"},
    }
    assert _table(ctx, "TABLE started, file.folder, file.etags FROM #games")[LOL] == {
        "started": "2021-05-16",
        "file.folder": "Games",
        "file.etags": ["#games/moba"],
    }
    assert _table(
        ctx, 'TABLE episode_metadata.next, episode_metadata["previous"] AS prev WHERE age > 40'
    ) == {MRL: {"episode_metadata.next": "S01E04", "prev": "S01E02"}}
    assert _table(ctx, 'TABLE time-played, length FROM "Games/finished"') == {
        SDV: {"time-played": 200, "length": None}
    }
    assert _table(ctx, "TABLE file.inlinks, file.outlinks FROM outgoing([[Beta]])") == {
        ALPHA: {"file.inlinks": ["[[Daily/2024-05-14.md]]", "[[Projects/Beta.md]]"],
                "file.outlinks": ["[[Projects/Beta.md]]", "[[Missing Note]]"]},
    }  # fmt: skip


def test_list_shows_its_one_expression(ctx: AppContext) -> None:
    assert _table(ctx, 'LIST file.folder FROM "Books/Dune"') == {DUNE: {"file.folder": "Books"}}
    assert _table(ctx, 'LIST "Rated " + rating FROM #book/scifi') == {
        DUNE: {'"Rated " + rating': "Rated 9"},
        FOUND: {'"Rated " + rating': "Rated 8"},
    }


def test_a_type_mismatch_warns_and_matches_nothing_of_that_type(ctx: AppContext) -> None:
    out = query(ctx, dql="LIST WHERE priority > 1")
    assert [r.path for r in out.data.results] == [BETA]
    assert [(w.code, "'priority'" in w.message and "1 note" in w.message) for w in out.warnings] == [
        ("TYPE_MISMATCH", True)
    ]


def test_limit_caps_the_total_and_pages_within_it(ctx: AppContext) -> None:
    first = query(ctx, dql='LIST FROM "Books" LIMIT 2', limit=1)
    assert ([r.path for r in first.data.results], first.data.total) == ([COOK], 2)
    second = query(ctx, dql='LIST FROM "Books" LIMIT 2', limit=1, cursor=first.data.next_cursor)
    assert ([r.path for r in second.data.results], second.data.next_cursor) == ([DUNE], None)
