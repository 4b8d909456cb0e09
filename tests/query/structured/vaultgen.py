"""A generated vault for vault_query's tests, and an independent evaluation of its filters.

`generate(seed)` writes notes with nested and mixed-case tags (frontmatter and inline, with
decoys in code, code spans, URLs and link anchors), typed properties (numbers, booleans,
YAML dates and datetimes, ISO text, lists, null, empty lists, maps, missing), wikilinks
(one unresolved), case-twin paths and fixed mtimes. `Oracle` answers the same filters in
plain Python over the files themselves (PyYAML, line scans), not over the snapshot: the
tests compare the two.
"""

from __future__ import annotations

import datetime as dt
import os
import random
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

FOLDERS = ["", "projects", "projects/alpha", "areas", "areas/home", "Archive", "archive"]
TAGS = ["project", "project/alpha", "project/beta", "Project/Alpha", "area/home/garden", "area", "Inbox", "inbox",
        "meeting", "日本語", "x-1"]  # fmt: skip
STATUSES = ["active", "done", "draft", "Active"]
BASE = dt.datetime(2024, 1, 1, tzinfo=dt.UTC)


def _fm_value(rng: random.Random, kind: str) -> str | None:
    """A YAML source for a property of `kind`, or None (the property is left out)."""
    roll = rng.random()
    if roll < 0.2:
        return None
    if kind == "status":
        if roll < 0.3:
            return "[" + ", ".join(rng.sample(STATUSES, 2)) + "]"
        return rng.choice(STATUSES)
    if kind == "priority":
        if roll < 0.3:
            return rng.choice(["high", "null", "", "'3'"])
        return str(rng.randint(1, 5)) if roll < 0.8 else f"{rng.randint(1, 9) / 2}"
    if kind == "done":
        return rng.choice(["true", "false", "yes"])
    if kind == "due":
        day = (BASE + dt.timedelta(days=rng.randint(0, 200))).date()
        if roll < 0.35:
            return f'"{day.isoformat()}"'  # ISO text: compares as a date
        if roll < 0.45:
            return f"{day.isoformat()}T{rng.randint(0, 23):02d}:30:00"
        return day.isoformat()
    if kind == "authors":
        return "[" + ", ".join(rng.sample(["ann", "bob", "cy", "dee"], rng.randint(0, 3))) + "]"
    if kind == "rating":
        return f"{rng.randint(0, 50) / 10}"
    return None


def generate(root: Path, seed: int, notes: int = 70) -> dict[str, str]:
    """Write the vault under `root` and return {path: text}; mtimes fixed by the seed."""
    rng = random.Random(seed)
    files: dict[str, str] = {}
    names = [f"note-{i:03d}" for i in range(notes)]
    for i, name in enumerate(names):
        folder = rng.choice(FOLDERS)
        rel = f"{folder}/{name}.md" if folder else f"{name}.md"
        lines = ["---"]
        tags = rng.sample(TAGS, rng.randint(0, 3))
        if tags:
            if rng.random() < 0.3:
                lines.append("tags: " + " ".join(("#" + t) if rng.random() < 0.3 else t for t in tags))
            else:
                lines += ["tags:"] + [f"  - {t}" for t in tags]
        for kind in ("status", "priority", "done", "due", "authors", "rating"):
            value = _fm_value(rng, kind)
            if value is not None:
                lines.append(f"{kind}: {value}")
        if rng.random() < 0.1:
            lines.append("reviewer:")
        if rng.random() < 0.1:
            lines.append("labels: []")
        if rng.random() < 0.1:
            lines += ["meta:", f"  level: {rng.randint(1, 3)}"]
        lines.append("---")
        body = [f"# Note {i}", ""]
        if rng.random() < 0.5:
            body.append(f"Inline #{rng.choice(TAGS)} here, and `#code-span` and https://example.com/#frag.")
        if rng.random() < 0.2:
            body += ["```", f"#{rng.choice(TAGS)} in code", "```"]
        for _ in range(rng.randint(0, 3)):
            target = rng.choice(names)
            form = rng.choice(["[[{t}]]", "[[{t}|alias]]", "[[{t}#Heading]]"])
            body.append("See " + form.format(t=target) + ".")
        if rng.random() < 0.1:
            body.append("A [[missing-note]] link.")
        files[rel] = "\n".join(lines + body) + "\n"
    # Case twins: two notes whose paths differ by case only.
    files["areas/Todo.md"] = "---\ntags: [Inbox]\nstatus: active\n---\n# Todo\n"
    files["areas/todo.md"] = "---\ntags: [inbox/later]\nstatus: Active\npriority: 2\n---\n# todo\n#meeting\n"
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        when = BASE + dt.timedelta(days=rng.randint(0, 150), hours=rng.randint(0, 23))
        ns = int(when.timestamp()) * 1_000_000_000
        os.utime(path, ns=(ns, ns))
    return files


# ---------------------------------------------------------------------- the oracle
_ISO = re.compile(r"\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2})?)?")
_INLINE = re.compile(r"(?:^|(?<=\s))#([^\s`#.,;:!?'\"()\[\]{}]+)")


def _micros(value: dt.date | dt.datetime) -> int:
    if not isinstance(value, dt.datetime):
        value = dt.datetime(value.year, value.month, value.day)
    if value.tzinfo is None:
        value = value.replace(tzinfo=dt.UTC)
    return round(value.timestamp() * 1_000_000)


@dataclass
class Note:
    path: str
    fields: dict[str, Any]
    tags: list[str]
    links: list[str]
    mtime_us: int
    title: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


def read_note(root: Path, rel: str) -> Note:
    text = (root / rel).read_text(encoding="utf-8")
    fields: dict[str, Any] = {}
    body = text
    if text.startswith("---\n"):
        end = text.index("\n---\n", 3)
        fields = yaml.load(text[4:end], Loader=yaml.CSafeLoader) or {}
        body = text[end + 5 :]
    tags: list[str] = []
    raw = fields.get("tags")
    if isinstance(raw, str):
        raw = raw.replace(",", " ").split()
    for t in raw or []:
        t = str(t).lstrip("#")
        if t:
            tags.append(t)
    fenced = False
    links: list[str] = []
    for line in body.split("\n"):
        if line.startswith("```"):
            fenced = not fenced
            continue
        if fenced:
            continue
        links += [m.split("|")[0].split("#")[0] for m in re.findall(r"\[\[([^\]]*)\]\]", line)]
        line = re.sub(r"`[^`]*`", " ", re.sub(r"\[\[[^\]]*\]\]", " ", line))
        tags += [t for t in _INLINE.findall(line) if not t.isdigit()]
    once: dict[str, str] = {}
    for t in tags:
        once.setdefault(t.casefold(), t)
    return Note(rel, fields, list(once.values()), links, (root / rel).stat().st_mtime_ns // 1000)


def _as_date(text: str) -> int | None:
    if not _ISO.fullmatch(text):
        return None
    return _micros(dt.datetime.fromisoformat(text) if "T" in text else dt.date.fromisoformat(text))


@dataclass(frozen=True)
class Item:
    """One scalar of a property: its type, comparable value, text and date (if any)."""

    kind: str  # number boolean date string null
    value: Any
    text: str | None
    date: int | None


def item_of(x: Any) -> Item | None:
    if isinstance(x, bool):
        return Item("boolean", x, "true" if x else "false", None)
    if isinstance(x, int | float):
        return Item("number", float(x), str(x), None)
    if isinstance(x, dt.date):
        return Item("date", _micros(x), x.isoformat(), _micros(x))
    if isinstance(x, str):
        return Item("string", x, x, _as_date(x))
    if x is None:
        return Item("null", None, None, None)
    return None  # a nested list or map


def const_of(v: Any) -> Item:
    if isinstance(v, bool):
        return Item("boolean", v, None, None)
    if isinstance(v, int | float):
        return Item("number", float(v), None, None)
    if isinstance(v, str) and _as_date(v) is not None:
        return Item("date", _as_date(v), v, _as_date(v))
    if isinstance(v, str) and v.strip().lower() in ("true", "false"):  # text spelling a boolean
        return Item("boolean", v.strip().lower() == "true", v, None)
    if isinstance(v, str) and re.fullmatch(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?", v.strip()):
        return Item("number", float(v), v, None)  # text spelling a number (text-only clients)
    return Item("string", v, v, None)


ORDER = {
    "<": lambda a, b: a < b,
    "<=": lambda a, b: a <= b,
    ">": lambda a, b: a > b,
    ">=": lambda a, b: a >= b,
}


def item_matches(item: Item, op: str, c: Item, in_list: bool) -> bool:
    """docs/query.md's typed comparison of one item with a constant, written again."""
    if op == "contains":
        if c.kind == "string":
            return item.text == c.value if in_list else (item.kind == "string" and c.value in item.value)
        op = "="
    if op == "=":
        if c.kind in ("number", "boolean"):  # given as text, it also equals that text
            return (item.kind == c.kind and item.value == c.value) or (
                c.text is not None and item.kind == "string" and item.text == c.text
            )
        if c.kind == "date":
            return item.date == c.date or item.text == c.text
        return item.text is not None and item.text == c.value
    if c.kind == "date":
        return item.date is not None and ORDER[op](item.date, c.date)
    if c.kind != item.kind:
        return False
    return bool(ORDER[op](item.value, c.value))


class Oracle:
    """The filters evaluated over the files (docs/query.md's rules, written again)."""

    def __init__(self, root: Path, rels: list[str]) -> None:
        self.notes = {rel: read_note(root, rel) for rel in rels}
        by_name: dict[str, list[str]] = {}
        for rel in rels:
            by_name.setdefault(rel.rsplit("/", 1)[-1][:-3].casefold(), []).append(rel)
        self.by_name = by_name

    def resolve(self, target: str) -> str | None:
        hits = self.by_name.get(target.strip().casefold(), [])
        return hits[0] if len(hits) == 1 else None

    @staticmethod
    def has_tag(note: Note, tag: str) -> bool:
        want = tag.lstrip("#").casefold()
        return any(t.casefold() == want or t.casefold().startswith(want + "/") for t in note.tags)

    @staticmethod
    def value(note: Note, name: str) -> tuple[bool, Any]:
        """(present, value) of a property; names match case-insensitively, the first wins."""
        for key, value in note.fields.items():
            if str(key).casefold() == name.casefold():
                return True, value
        return False, None

    def exists(self, note: Note, name: str) -> bool:
        present, value = self.value(note, name)
        return present and value is not None

    def where(self, note: Note, cond: dict[str, Any]) -> bool:
        name, op, v = cond["field"], cond["op"], cond.get("value")
        if op == "exists":
            return self.exists(note, name)
        if op == "missing":
            return not self.exists(note, name)
        if op == "!=":
            return not self.where(note, {**cond, "op": "="})
        if op == "in":
            if isinstance(v, str):
                v = [x.strip() for x in v.split(",")]
            assert v is not None, "an `in` condition carries its values"
            return any(self.where(note, {"field": name, "op": "=", "value": x}) for x in v)
        if v is None:
            return not self.exists(note, name) if op == "=" else False
        present, value = self.value(note, name)
        if not present:
            return False
        in_list = isinstance(value, list)
        items = [item_of(x) for x in (value if in_list else [value])]
        c = const_of(v)
        return any(i is not None and i.kind != "null" and item_matches(i, op, c, in_list) for i in items)

    def select(self, filters: dict[str, Any]) -> list[Note]:
        out = []
        for note in self.notes.values():
            if not all(self.has_tag(note, t) for t in filters.get("tags") or []):
                continue
            anys = filters.get("any_tags") or []
            if anys and not any(self.has_tag(note, t) for t in anys):
                continue
            if not all(self.where(note, c) for c in filters.get("where") or []):
                continue
            folder = filters.get("folder")
            if folder and not note.path.startswith(folder.rstrip("/") + "/"):
                continue
            after, before = filters.get("modified_after"), filters.get("modified_before")
            if after and note.mtime_us < _as_date(after):  # type: ignore[operator]
                continue
            if before and note.mtime_us >= _as_date(before):  # type: ignore[operator]
                continue
            target = filters.get("links_to")
            if target and self.resolve(target) not in {self.resolve(x) for x in note.links}:
                continue
            source = filters.get("linked_from")
            if source:
                src = self.resolve(source)
                if src is None or note.path not in {self.resolve(x) for x in self.notes[src].links}:
                    continue
            out.append(note)
        return self.sort(out, filters.get("sort"))

    def sort(self, notes: list[Note], sort: str | None) -> list[Note]:
        """Path order; by mtime; or by a property's first item: numbers, dates, text,
        booleans, then nulls, then notes without it, each group by value (`-`: descending),
        ties by path."""
        notes = sorted(notes, key=lambda n: n.path)
        if not sort:
            return notes
        desc, name = sort.startswith("-"), sort.lstrip("-")
        if name == "mtime":
            return sorted(notes, key=lambda n: n.mtime_us, reverse=desc)
        rank = {"number": 0, "date": 1, "string": 2, "boolean": 3, "null": 4}
        groups: dict[int, list[tuple[Any, Note]]] = {}
        for n in notes:
            present, value = self.value(n, name)
            first = (value[0] if value else None) if isinstance(value, list) else value
            item = item_of(first) if present else None
            if not present:
                groups.setdefault(6, []).append((0, n))
            elif item is None or (isinstance(value, list) and not value):
                groups.setdefault(4, []).append((0, n))  # an empty list or a map: with nulls
            else:
                key = item.value if item.kind != "null" else 0
                groups.setdefault(rank[item.kind], []).append((key, n))
        out: list[Note] = []
        for g in sorted(groups):
            out += [n for _, n in sorted(groups[g], key=lambda kn: kn[0], reverse=desc)]
        return out
