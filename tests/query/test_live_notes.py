"""Per-segment columns reused across snapshots: same answers as a fresh open and as SQL.

A long-lived reader builds each new snapshot's live notes from the previous one (only the
new segments and tombstones are applied); a fresh reader builds them from scratch; the
snapshot's SQL views (the old way of counting) are an independent oracle. All three must
agree after every commit, and a request keeps the answers of the snapshot it pinned.
"""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from query.snapfactory import SnapFactory, settings_for, write_vault
from vault_agent.contracts import CURRENT_FILE, SNAPSHOTS_DIR, Manifest
from vault_agent.query import orientation
from vault_agent.query.outline import get_note_outline
from vault_agent.query.snapshot import SnapshotReader, SnapshotView

FOLDERS = ["", "a", "a/b", "a/b/c", "z", "z/y"]
TAGS = ["x", "y", "Y", "é", "", "tag-1"]


def _note(tags: list[str], typ: str | None, body: str) -> str:
    fm = [f"tags: {json.dumps(tags)}"]
    if typ is not None:
        fm.append(f"type: {json.dumps(typ)}")
    return "---\n" + "\n".join(fm) + "\n---\n# H\n\n" + body + "\n"


def _sql_oracle(view: SnapshotView) -> dict[str, object]:
    """Counts straight from the snapshot's SQL views (independent of the arrays)."""
    con = view.con

    def counted(column: str, skip_empty: bool) -> list[tuple[str, int]]:
        cond = "v IS NOT NULL" + (" AND v <> ''" if skip_empty else "")
        return [
            (v, int(n))
            for v, n in con.execute(
                f"SELECT v, count(*) AS n FROM (SELECT unnest({column}) AS v FROM notes) "
                f"WHERE {cond} GROUP BY v ORDER BY n DESC, v ASC"
            ).fetchall()
        ]

    totals = con.execute("SELECT count(*), coalesce(sum(chunk_count), 0) FROM notes").fetchone()
    assert totals is not None  # an aggregate always has its one row
    notes, chunks = totals
    folders = dict(con.execute("SELECT folder, count(*) FROM notes GROUP BY folder").fetchall())
    return {
        "notes": int(notes),
        "chunks": int(chunks),
        "folders": {f: int(n) for f, n in folders.items()},
        "tags": counted("tags", True),
        "fm_fields": counted("fm_fields", False),
        "type_values": counted("type_values", True),
    }


def _array_answers(view: SnapshotView) -> dict[str, object]:
    live = view.live
    return {
        "notes": live.note_count,
        "chunks": live.chunk_count(),
        "folders": live.folder_counts(),
        "tags": live.ranked("tags", 1000, skip_empty=True)[0],
        "fm_fields": live.ranked("fm_fields", 1000, skip_empty=False)[0],
        "type_values": live.ranked("type_values", 1000, skip_empty=True)[0],
    }


def _payloads(reader: SnapshotReader) -> list[object]:
    return [
        orientation.overview(reader).model_dump(),
        orientation.tree(reader, depth=3, limit=500).model_dump(),
        orientation.tree(reader, depth=1, limit=2, direct_only=True).model_dump(),
        orientation.tags(reader, limit=3).model_dump(),
        orientation.facets(reader, limit=200).model_dump(),
    ]


op = st.tuples(
    st.sampled_from(["upsert", "upsert", "delete"]),
    st.integers(0, 7),  # note number
    st.sampled_from(FOLDERS),
    st.lists(st.sampled_from(TAGS), max_size=3, unique=True),
    st.sampled_from([None, "idea", "", "Idea"]),
)


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(batches=st.lists(st.lists(op, min_size=1, max_size=4), min_size=1, max_size=5))
def test_reused_columns_equal_a_fresh_open_and_sql(tmp_path_factory, batches) -> None:
    from vault_agent.paths import vault_for_settings

    vault = tmp_path_factory.mktemp("vault")
    write_vault(vault, {"seed.md": _note(["x"], "idea", "seed")})
    cfg = settings_for(vault, tmp_path_factory.mktemp("state"))
    factory = SnapFactory(cfg)
    factory.commit(factory.walk())
    where: dict[int, str] = {}
    long_lived = SnapshotReader(cfg, vault_for_settings(cfg), freshness=lambda _m: "fresh")
    try:
        for batch in batches:
            upserts: set[str] = set()
            deletes: set[str] = set()
            for kind, num, folder, tags, typ in batch:
                old = where.get(num)
                if old is not None:  # a note moves: its old path goes
                    (vault / old).unlink()
                    upserts.discard(old)
                    deletes.add(old)
                    del where[num]
                if kind == "upsert":
                    rel = f"{folder}/n{num}.md".lstrip("/")
                    write_vault(vault, {rel: _note(tags, typ, f"body {num}")})
                    where[num] = rel
                    upserts.add(rel)
                    deletes.discard(rel)
            factory.commit(sorted(upserts), sorted(deletes & set(factory.notes)))
            fresh = SnapshotReader(cfg, vault_for_settings(cfg), freshness=lambda _m: "fresh")
            try:
                with long_lived.acquire() as view:
                    assert _array_answers(view) == _sql_oracle(view)
                    for rel in where.values():
                        found = view.live.lookup(rel)
                        assert found is not None and found[1].path == rel
                assert _payloads(long_lived) == _payloads(fresh)
            finally:
                fresh.close()
    finally:
        long_lived.close()


def test_newest_segment_wins_without_a_tombstone(snap, make_reader) -> None:
    """A manifest whose older segment does not tombstone a re-indexed path: the newer
    segment's row is the live one, for the arrays as for SQL, derived or from scratch."""
    settings, factory = snap({"a.md": _note(["old"], "idea", "a"), "b.md": _note(["b"], None, "b")})
    reader = make_reader(settings)
    assert orientation.tags(reader).data.tags[0].tag in {"old", "b"}
    write_vault(settings.vault, {"a.md": _note(["new"], "idea", "a2")})
    manifest = factory.commit(["a.md"])
    state = Path(settings.index_dir)
    raw = manifest.model_dump()
    for seg in raw["segments"]:
        seg["deleted"] = []  # drop the explicit tombstone: newest-wins must still hide a.md
    edited = Manifest.model_validate(raw | {"snapshot_id": 9})
    (state / SNAPSHOTS_DIR / "manifest-9.json").write_text(edited.model_dump_json(), encoding="utf-8")
    (state / CURRENT_FILE).write_text("manifest-9.json\n", encoding="utf-8")
    for rdr in (reader, make_reader(settings)):
        tags = {t.tag: t.note_count for t in orientation.tags(rdr).data.tags}
        assert tags == {"new": 1, "b": 1}
        with rdr.acquire() as view:
            assert _array_answers(view) == _sql_oracle(view)
            assert view.live.lookup("a.md")[0] == 2


def test_a_request_keeps_the_arrays_of_its_snapshot(snap, make_reader) -> None:
    settings, factory = snap({"a.md": _note(["x"], "idea", "a"), "b.md": _note(["x"], None, "b")})
    reader = make_reader(settings)
    with reader.acquire() as old:
        (settings.vault / "b.md").unlink()
        write_vault(settings.vault, {"c/d.md": _note(["y"], "task", "c")})
        factory.commit(["c/d.md"], ["b.md"])
        with reader.acquire() as new:
            assert new.manifest.snapshot_id == 2
            assert _array_answers(new) == _sql_oracle(new)
            assert new.live.ranked("tags", 10, True)[0] == [("x", 1), ("y", 1)]
            assert new.live.lookup("b.md") is None
        assert old.live.ranked("tags", 10, True)[0] == [("x", 2)]
        assert old.live.folder_counts() == {"": 2}
        assert _array_answers(old) == _sql_oracle(old)
        assert old.live.lookup("b.md") is not None
    assert get_note_outline(reader, "c/d.md").data.headings[0].text == "H"
